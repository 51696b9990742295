"""A vendor's retrieval metric recomputed from run records: recall by session, as Engram counts it.

Engram's LoCoMo benchmark (benchmarks/locomo_bench.py in engram-search 0.1.7) counts a question
as found when one of its evidence sessions is among the first N distinct sessions of its ranked
documents. LoCoMo's turn ids name their session (`D3:5` is turn 5 of session 3), so the same
figure follows from a run's records: each record's `retrieved_ids` (its hits' source turns, in
rank order) mapped to their sessions, kept once each in that order, the first N. A question with
no evidence, or whose search failed (`retrieved_ids` null), is left out and counted apart.

docs/claims.md gives the figures beside recall_any@k over the turns themselves.

Usage:
  python bench/session_recall.py runs/locomo-k5/engram.jsonl runs/locomo-k5/bm25.jsonl --sessions 5
"""
from __future__ import annotations

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from cli import EXIT_OK, InputError, run_cli  # noqa: E402
from fileio import read_jsonl  # noqa: E402

# LoCoMo's dialogue ids: D, the session's number, a colon, the turn's number.
TURN_ID = re.compile(r"^D(\d+):\d+$")


def session_of(turn_id: str, where: str) -> int:
    """The session a LoCoMo turn id names; a clear error for any other id."""
    m = TURN_ID.match(turn_id)
    if not m:
        raise InputError(f"{where}: turn id {turn_id!r} is not LoCoMo's D<session>:<turn>")
    return int(m.group(1))


def first_sessions(retrieved_ids: list[str], n: int, where: str) -> list[int]:
    """The first n distinct sessions the ranked source ids name, in rank order."""
    seen: list[int] = []
    for turn_id in retrieved_ids:
        s = session_of(turn_id, where)
        if s not in seen:
            seen.append(s)
            if len(seen) == n:
                break
    return seen


def session_recall(path: str, n: int) -> dict:
    """Per system in the file: questions with evidence, how many found in n sessions, the share,
    and the questions left out because the search failed."""
    out: dict[str, dict] = {}
    for lineno, rec in read_jsonl(path):
        where = f"{path}:{lineno}"
        for field in ("backend_id", "evidence", "retrieved_ids"):
            if field not in rec:
                raise InputError(f"{where}: field {field!r} is missing; is this a run file (runs/)?")
        row = out.setdefault(rec["backend_id"], {"questions": 0, "found": 0, "no_provenance": 0})
        if not rec["evidence"]:
            continue
        if rec["retrieved_ids"] is None:
            row["no_provenance"] += 1
            continue
        wanted = {session_of(e, f"{where}: field 'evidence'") for e in rec["evidence"]}
        row["questions"] += 1
        row["found"] += bool(wanted & set(first_sessions(rec["retrieved_ids"], n,
                                                          f"{where}: field 'retrieved_ids'")))
    for row in out.values():
        row["share"] = round(row["found"] / row["questions"], 3) if row["questions"] else None
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="run files (runs/RUN_ID/NAME.jsonl) on the LoCoMo import")
    ap.add_argument("--sessions", type=int, default=5, help="the N of recall by session (default 5)")
    args = ap.parse_args(argv)
    if args.sessions < 1:
        raise InputError(f"--sessions must be at least 1, got {args.sessions}")
    print(f"system\tquestions\tfound in {args.sessions} sessions\tshare\tno provenance")
    for path in args.runs:
        for system, row in session_recall(path, args.sessions).items():
            print(f"{system}\t{row['questions']}\t{row['found']}\t{row['share']}\t{row['no_provenance']}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
