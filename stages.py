"""Where `make bench` is: before each of its steps, one line with the step's number of all, the
time spent and an estimate of the rest, from the steps it has timed.

The Makefile plans the steps by kind (the model-free runs, the set-up of the model, the answered
runs, judge, calibration, check, score, report) and calls `stages.py begin` once with the plan
(`make bench` with the whole plan; `make retrieval` or `make answers` typed alone, with theirs);
then `stages.py stage KIND "what it does"` before each step, and `stages.py end` after the last. A step's time is measured from its
line to the next. The rest is estimated kind by kind: each step still to come takes as long as
the mean of the steps of its kind already timed (the answered runs of one comparison take about
as long as each other); a kind with no step timed yet is named as not yet measured, so the
estimate never pretends. The state is a small JSON file under .cache/, one per run id.

Usage:
  python stages.py --state .cache/stages-RUN.json begin manifest run-free run-free check score report
  python stages.py --state .cache/stages-RUN.json stage run-free "run.py keyword --retrieval-only"
  python stages.py --state .cache/stages-RUN.json end
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

from cli import EXIT_OK, InputError, run_cli
from fileio import write_json_atomic
from formats import check_format

STATE_FORMAT = "stages/1"


def duration(seconds: float) -> str:
    """A duration for reading: 45 s, 3 min 12 s, 1 h 02 min."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def new_state(plan: list[str], now: float) -> dict:
    """The state of a run of the planned steps, none begun."""
    return {"format": STATE_FORMAT, "started": now, "plan": plan, "done": [], "current": None}


def close_current(state: dict, now: float) -> dict:
    """The state with the running step (if any) timed and done."""
    cur = state["current"]
    if cur is None:
        return state
    return {**state, "done": state["done"] + [{**cur, "seconds": now - cur["started"]}], "current": None}


def estimate(state: dict) -> tuple[float, list[str]]:
    """Seconds the steps from the current one on will take, from the kinds already timed, and
    the kinds of those steps that have no timed step yet."""
    timed: dict = {}
    for d in state["done"]:
        timed.setdefault(d["kind"], []).append(d["seconds"])
    rest = state["plan"][len(state["done"]):]
    seconds = sum(sum(timed[k]) / len(timed[k]) for k in rest if k in timed)
    return seconds, sorted({k for k in rest if k not in timed})


def stage_line(state: dict, kind: str, what: str, now: float) -> tuple[dict, str]:
    """Begin the next step: the new state and its line."""
    state = close_current(state, now)
    n, total = len(state["done"]) + 1, len(state["plan"])
    if n > total:
        raise InputError(f"step {n} ({kind}: {what}) is beyond the plan of {total} steps: the Makefile's plan and "
                         f"its steps disagree")
    if state["plan"][n - 1] != kind:
        raise InputError(f"step {n} is a {kind!r} step ({what}), but the plan has {state['plan'][n - 1]!r} there: the "
                         f"Makefile's plan and its steps disagree")
    state = {**state, "current": {"kind": kind, "what": what, "started": now}}
    seconds, unknown = estimate(state)
    timed = len(state["plan"]) - len(state["done"]) > sum(state["plan"][len(state["done"]):].count(k) for k in unknown)
    if not state["done"]:
        rest = "the rest is estimated once steps are timed"
    elif not timed:
        rest = f"to go: {', '.join(unknown)}, not yet measured"
    elif unknown:
        rest = f"about {duration(seconds)} to go, and {', '.join(unknown)}, not yet measured"
    else:
        rest = f"about {duration(seconds)} to go"
    return state, f"== stage {n} of {total}: {what}; {duration(now - state['started'])} spent; {rest}"


def read_state(path: str) -> dict:
    """The state file; an error naming `begin` when there is none."""
    if not os.path.exists(path):
        raise InputError(f"{path}: no plan begun; run `python stages.py --state {path} begin KIND ...` first")
    with open(path, encoding="utf-8") as fh:
        state = json.load(fh)
    check_format(state, STATE_FORMAT, path, "begin again")
    return state


def main(argv: list[str] | None = None) -> int:
    """begin, stage or end; prints the stage line on stderr."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--state", required=True, help="the state file (.cache/stages-RUN_ID.json)")
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("begin", help="a new plan: the kinds of its steps, in order")
    b.add_argument("plan", nargs="+")
    s = sub.add_parser("stage", help="the next step begins")
    s.add_argument("kind")
    s.add_argument("what")
    sub.add_parser("end", help="the last step is done: the total time")
    a = ap.parse_args(argv)
    now = time.time()
    if a.command == "begin":
        os.makedirs(os.path.dirname(os.path.abspath(a.state)), exist_ok=True)
        write_json_atomic(a.state, new_state(a.plan, now))
        return EXIT_OK
    state = read_state(a.state)
    if a.command == "stage":
        state, line = stage_line(state, a.kind, a.what, now)
        write_json_atomic(a.state, state)
        print(line, file=sys.stderr)
        return EXIT_OK
    state = close_current(state, now)
    print(f"== {len(state['done'])} of {len(state['plan'])} stages done in {duration(now - state['started'])}",
          file=sys.stderr)
    os.unlink(a.state)  # done: the next make begins a plan of its own
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
