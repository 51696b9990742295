"""Grade every answer in the run files, blinded and shuffled across systems.

Layers, in order (seed guide, section 6), each verdict naming the layer that decided it:
  exact       the normalized answer equals the normalized gold (Unicode NFKC, case, punctuation,
              whitespace, numbers and dates written one way)
  abstention  the gold says the fact is unknown and the answer declines: correct
  declined    the gold is a fact and the answer declines: incorrect
  contains    the normalized gold appears in the answer on token boundaries, and the answer
              neither hedges between options, negates, nor also names a known outdated value
  llm         otherwise, when judge_model is set: an LLM judge that sees only the question, the
              gold and the answer (never the system, the context or other answers), with the
              rubric of the question's source benchmark; non-JSON output is `unparseable`
  no_match    otherwise, with no judge model: incorrect (a strict lower bound, said in reports)

Usage:
  python judge.py --config config.yaml --runs runs/*.jsonl --out results/verdicts.jsonl
  python judge.py --config config.yaml --runs runs/*.jsonl --out results/verdicts.jsonl --fresh
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import random
import sys
import threading

from grading import (GRADER_SHA, RESPONSE_FORMATS, deterministic, judge_prompt, parse_verdict, rubric_for,
                     rubric_template)
from interface import (EXIT_OK, EXIT_TOO_MANY_ERRORS, InputError, dumps, load_config, load_runs,
                       read_resumable, run_cli, sha256_text, verdict_key, write_atomic)
from llm import LLMClient

# ---------------------------------------------------------------------------------------------
# Resuming and the response format
# ---------------------------------------------------------------------------------------------

class FormatChooser:
    """The response format the judge endpoint accepts, shared by the judge threads: start
    with the strictest and step down when the server rejects one with a 400. A 400 caused by
    the question itself also steps down once; the verdict is still parsed strictly."""

    def __init__(self) -> None:
        self._i = 0
        self._lock = threading.Lock()

    def current(self) -> dict | None:
        with self._lock:
            return RESPONSE_FORMATS[self._i]

    def reject(self, fmt: dict | None) -> None:
        with self._lock:
            if RESPONSE_FORMATS[self._i] is fmt and self._i < len(RESPONSE_FORMATS) - 1:
                self._i += 1


def load_verdicts(path: str, grader: str) -> tuple[dict, int]:
    """Finished verdicts in `path` by the same grader, keyed by verdict_key; failed ones and a
    cut last line are dropped, and the file is rewritten without them."""
    rows, dropped = read_resumable(path)
    done = {}
    for lineno, v, line in rows:
        if v.get("grader") != grader:  # .get: a foreign file may lack the field
            raise InputError(f"{path}:{lineno}: written by grader {v.get('grader')!r}, this one is "
                             f"{grader!r}; use --fresh to regrade everything or choose another --out")
        if v["judge_error"] is not None:
            dropped += 1
            continue
        done[(v["run_id"], v["backend"], v["repeat"], v["qid"], v["answer_sha256"])] = line
    if dropped:
        write_atomic(path, "".join(done.values()))
    return done, dropped


def main(argv: list[str] | None = None) -> int:
    """Judge all records; exit 3 when judge calls failed beyond max_error_rate."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", required=True)
    ap.add_argument("--runs", nargs="+", required=True, help="run files written by run.py")
    ap.add_argument("--out", required=True, help="results/verdicts.jsonl (resumable)")
    ap.add_argument("--workers", type=int, help="concurrent judge calls (default: config workers)")
    ap.add_argument("--fresh", action="store_true", help="discard --out and regrade everything")
    a = ap.parse_args(argv)

    cfg = load_config(a.config)
    workers = a.workers if a.workers is not None else cfg["workers"]
    records = load_runs(a.runs)
    judge_model = cfg["judge_model"]
    grader = f"{judge_model or 'deterministic'}:{GRADER_SHA[:12]}"
    if a.fresh and os.path.exists(a.out):
        os.unlink(a.out)
    done, dropped = load_verdicts(a.out, grader)

    # Interleave all systems with the config seed, so that judge drift over time or a warm
    # cache cannot favour one system (seed guide, section 6).
    records.sort(key=lambda r: (r["backend"], r["repeat"], r["qid"]))
    random.Random(cfg["seed"]).shuffle(records)
    # Each record with an answer gets its rule verdict once, here; None leaves it to the judge.
    todo = [(r, deterministic(r, bool(judge_model)) if r["answer"] is not None else None)
            for r in records if verdict_key(r) not in done]
    need_llm = [r for r, decided in todo if r["answer"] is not None and decided is None]
    client = LLMClient(cfg) if judge_model and need_llm else None
    print(f"judge: {len(records)} records, {len(records) - len(todo)} already graded, {len(todo)} to grade "
          f"({len(need_llm)} undecided by rules; judge model: {judge_model or 'none, deterministic only'})",
          file=sys.stderr)

    chooser = FormatChooser()

    def ask(rec: dict, rubric: str) -> dict:
        prompt = judge_prompt(rubric, rec["question"], rec["gold_answer"], rec["answer"])
        for _ in RESPONSE_FORMATS:  # at most one try per response format
            fmt = chooser.current()
            c = client.complete(judge_model, [{"role": "user", "content": prompt}], cfg["judge_max_tokens"],
                                response_format=fmt)
            if not (c.error and c.error.startswith("bad_request") and fmt is not None):
                break
            chooser.reject(fmt)
        if c.error:
            return {"verdict": None, "by": "llm", "judge_error": c.error, "cached": False, "rubric": rubric}
        return {"verdict": parse_verdict(c.text), "by": "llm", "judge_error": None,
                "judge_served_model": c.served_model, "cached": c.cached, "rubric": rubric}

    def base(rec: dict) -> dict:
        return {"run_id": rec["run_id"], "backend": rec["backend"], "backend_version": rec["backend_version"],
                "repeat": rec["repeat"], "case_id": rec["case_id"], "qid": rec["qid"], "type": rec["type"],
                "question": rec["question"], "gold_answer": rec["gold_answer"], "answer": rec["answer"],
                "answer_sha256": verdict_key(rec)[-1], "grader": grader, "judge_model": judge_model,
                "judge_prompt_sha256": None, "judge_served_model": None, "rubric": rubric_for(rec),
                "cached": False, "judge_error": None}

    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    counts = {"written": 0, "llm": 0, "judge_errors": 0}
    pool = cf.ThreadPoolExecutor(max(1, workers))
    with open(a.out, "a", encoding="utf-8") as fh:
        def write(v: dict) -> None:
            fh.write(dumps(v) + "\n")
            fh.flush()
            counts["written"] += 1
            counts["judge_errors"] += v["judge_error"] is not None

        futures = {}
        try:
            for rec, decided in todo:
                v = base(rec)
                if rec["answer"] is None:
                    # The run failed for this question: no answer to grade. Counted as an error
                    # in score.py; rerunning run.py then judge.py grades the new answer.
                    write({**v, "verdict": None, "by": "run_error"})
                    continue
                if decided is not None:
                    write({**v, "verdict": decided[0], "by": decided[1]})
                elif client is None:
                    write({**v, "verdict": "incorrect", "by": "no_match"})
                else:
                    v["judge_prompt_sha256"] = sha256_text(rubric_template(v["rubric"]))
                    futures[pool.submit(ask, rec, v["rubric"])] = v
            for fut in cf.as_completed(futures):
                write({**futures[fut], **fut.result()})
                counts["llm"] += 1
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    print(f"wrote {a.out}: {counts['written']} new verdicts ({counts['llm']} by the LLM judge), "
          f"{counts['judge_errors']} judge errors", file=sys.stderr)
    if counts["judge_errors"] and counts["judge_errors"] / len(records) > cfg["max_error_rate"]:
        print("error: some judge calls failed; rerun the same command to retry them", file=sys.stderr)
        return EXIT_TOO_MANY_ERRORS
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
