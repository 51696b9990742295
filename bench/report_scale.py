"""report.py and report.html at LongMemEval scale: 500 one-question cases of 300 turns, 10 systems
(the three controls, full_context retrieving every turn, and seven top-10 systems), graded at
random. Prints how long score.py and report.py take, the size of report.html and of its texts
(every context line as its model read it, and the turns shown, each text once), and, with
Playwright and Debian's chromium, how long the page takes to show its first rows, to filter, to
open a row and to follow a permalink. Asserts nothing: speed is measured here, not in tests.

Measured on the 2-core machine (shared), two runs each, with the context each model read in every
record: report.py 3.4 to 4.1 s (2.4 to 2.8 s of CPU; the code before, which showed turns rebuilt
from the dataset, cut at 1,200 characters, 2.0 s of CPU); report.html 18.7 MB, 15.8 MB of it texts;
first rows 0.7 to 1.1 s after opening; a filter 0.08 to 0.14 s; a row 0.13 to 0.19 s; a permalink
to the last page 0.1 s. Real LongMemEval turns are longer, and every line a model read is shown
whole.

Usage:
  python bench/report_scale.py --out .cache/bench-report
  python bench/report_scale.py --out .cache/bench-report --questions 100 --turns 100
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from cli import run_cli  # noqa: E402
from config import SAMPLING_DEFAULTS  # noqa: E402
from context import EMPTY_CONTEXT, render_line  # noqa: E402
from contract import Hit, session_items  # noqa: E402
from fileio import dumps, sha256_file  # noqa: E402
from formats import MANIFEST_FORMAT, RUN_FORMAT, VERDICT_FORMAT, verdict_identity  # noqa: E402
from rules import RULES_SHA256  # noqa: E402

WORDS = ("the billing ledger sync cluster postgres release freeze owner pager deploy migrate version team alert "
         "kafka redis staging rollout incident review budget").split()
TYPES = ("single_hop", "multi_hop", "temporal", "knowledge_update", "preference")
SYSTEMS = ("none", "oracle", "full_context", "keyword", "sys1", "sys2", "sys3", "sys4", "sys5", "sys6")


def text(rng: random.Random, lo: int, hi: int) -> str:
    """Generated words."""
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))


def write_dataset(path: str, questions: int, turns: int, rng: random.Random) -> list[dict]:
    """One question per case, as LongMemEval's importer writes them; returns the cases."""
    cases = []
    for c in range(questions):
        ts = [{"turn_id": f"c{c}-t{t}", "role": "user" if t % 2 == 0 else "assistant", "text": text(rng, 20, 90)}
              for t in range(turns)]
        sessions = [{"session_id": f"s{i}", "timestamp": f"2026-01-{1 + i // 24:02d}T{i % 24:02d}:00:00Z",
                     "turns": ts[i * 10:(i + 1) * 10]} for i in range((turns + 9) // 10)]
        q = {"qid": f"q{c}", "type": rng.choice(TYPES), "asked_at": "2026-03-01", "question": f"question {c}: "
             + text(rng, 6, 10), "gold_answer": f"gold {c}", "evidence": [f"c{c}-t{rng.randrange(turns)}"]}
        cases.append({"case_id": f"c{c}", "sessions": sessions, "questions": [q]})
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("".join(dumps(c) + "\n" for c in cases))
    return cases


def record(system: str, case: dict, sha: str, rng: random.Random) -> dict:
    """A run record as run.py writes it, with a retrieval that fits the system."""
    q = case["questions"][0]
    ids = [t["turn_id"] for s in case["sessions"] for t in s["turns"]]
    if system == "none":
        ret, ctx = [], []
    elif system == "oracle":
        ret = ctx = list(q["evidence"])
    elif system == "full_context":
        ret = ids[::-1]
        ctx = ret[:14]
    else:
        ret = rng.sample(ids, 10)
        if rng.random() < 0.5:
            ret[rng.randrange(10)] = q["evidence"][0]
        ret = list(dict.fromkeys(ret))
        ctx = ret[:rng.randint(4, len(ret))]
    items = {it.item_id: it for s in case["sessions"] for it in session_items(s)}
    lines = [render_line(i, Hit(text=items[t].text, score=1.0, timestamp=items[t].metadata["timestamp"]))
             for i, t in enumerate(ctx, 1)]
    context_text = "\n".join(reversed(lines) if system == "full_context" else lines) or EMPTY_CONTEXT
    answer = q["gold_answer"] if rng.random() < 0.4 else "something else: " + text(rng, 8, 16)
    return {"format": RUN_FORMAT, "run_id": "bench", "backend": system, "backend_id": system, "backend_version": "v",
            "backend_code_sha256": None, "repeat": 0,
            "time_aware": False, "extra_wait_s": 0.0, "shard": None, "dataset_sha256": sha, "answer_model": "m",
            "prompt_sha256": "p" * 64, "top_k": 10, "tokenizer": "approx", "answer_max_tokens": 64, "seed": 7,
            "answer_sampling": dict(SAMPLING_DEFAULTS),
            "retrieval_only": False, "limit": None, "context_token_budget": 1200, "internal_model": None,
            "flush_note": None, "deterministic": False, "case_id": case["case_id"], "cluster": case["case_id"],
            "qid": q["qid"],
            "type": q["type"], "question": q["question"], "asked_at": q["asked_at"], "gold_answer": q["gold_answer"],
            "evidence": q["evidence"], "meta": {}, "retrieved_ids": ret, "context_ids": ctx,
            "context_text": context_text,
            "context_tokens": 30 * len(ctx), "keyword_ranks": None, "hits_returned": len(ret),
            "hits_kept": len(ctx), "hits_cut": len(ret) - len(ctx), "k_limited": False, "answer": answer,
            "served_model": "m",
            "usage": None, "finish_reason": "stop", "retries": 0, "ingest_s": 0.1, "flush_s": 0.0,
            "added_items": 0 if system in ("none", "oracle", "full_context") else len(ids), "added_sha256": None,
            "internal_usage": None, "search_ms": None if system in ("none", "oracle", "full_context") else 1.0,
            "search_calls_in_flight": 0, "cached": False, "error": None}


def verdict(rec: dict) -> dict:
    """The verdict judge.py's rules would write (the answer is the gold, or no match)."""
    grader = {"rules_sha256": RULES_SHA256, "judge_model": None, "judge_prompt_sha256": None}
    right = rec["answer"] == rec["gold_answer"]
    return {"format": VERDICT_FORMAT, "run_id": rec["run_id"], "backend": rec["backend"], "backend_version": "v",
            "repeat": 0,
            "context_token_budget": 1200, "case_id": rec["case_id"], "qid": rec["qid"], "type": rec["type"],
            "question": rec["question"], "gold_answer": rec["gold_answer"], "answer": rec["answer"],
            **verdict_identity(rec, grader), "grader": "rules-only", "rubric": "default",
            "by": "exact" if right else "no_match", "verdict": "correct" if right else "incorrect",
            "judge_reason": None, "rules_only_verdict": None, "judge_served_model": None, "response_format": None,
            "cached": False,
            "judge_error": None}


def timed(argv: list[str]) -> float:
    """Seconds one script takes, run as a user runs it."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *argv], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def browse(html_path: str, last: str) -> None:
    """Time the page in headless Chromium, when Playwright and the browser are here."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("browser: playwright is not installed (pip install -r requirements-test.txt)")
        return
    if not os.access("/usr/bin/chromium", os.X_OK):
        print("browser: /usr/bin/chromium is not installed (apt-get install chromium)")
        return
    flags = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
             "--no-first-run"]
    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        context = p.chromium.launch_persistent_context(profile, executable_path="/usr/bin/chromium", headless=True,
                                                       args=flags, viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        steps = []
        t0 = time.perf_counter()
        page.goto("file://" + os.path.abspath(html_path))
        page.wait_for_selector("#qtable tbody tr.q")
        steps.append(("first rows after opening", time.perf_counter() - t0))
        t0 = time.perf_counter()
        page.select_option("#f-cause", "budget_miss")
        page.wait_for_selector("#qtable tbody tr.q")
        steps.append((f"a filter ({page.inner_text('#count')})", time.perf_counter() - t0))
        page.select_option("#f-cause", "")
        t0 = time.perf_counter()
        page.click("#qtable tbody tr.q >> nth=3")
        page.wait_for_selector("tr.detail")
        steps.append(("open a row", time.perf_counter() - t0))
        t0 = time.perf_counter()
        page.evaluate(f"location.hash = '#{last}'")
        page.wait_for_selector(f"tr.q.open >> text={last}")
        steps.append(("follow a permalink to the last page", time.perf_counter() - t0))
        context.close()
    for name, seconds in steps:
        print(f"browser: {name}: {seconds:.2f} s")


def main(argv: list[str] | None = None) -> int:
    """Build the comparison under --out, time score.py, report.py and the page."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="a folder for the generated files (not runs/ or results/)")
    ap.add_argument("--questions", type=int, default=500)
    ap.add_argument("--turns", type=int, default=300)
    a = ap.parse_args(argv)
    rng = random.Random(1)
    out = os.path.abspath(a.out)
    os.makedirs(os.path.join(out, "runs"), exist_ok=True)
    dataset = os.path.join(out, "cases.jsonl")
    cases = write_dataset(dataset, a.questions, a.turns, rng)
    sha = sha256_file(dataset)
    runs, verdicts = [], []
    for system in SYSTEMS:
        recs = [record(system, c, sha, rng) for c in cases]
        path = os.path.join(out, "runs", f"{system}.jsonl")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("".join(dumps(r) + "\n" for r in recs))
        runs.append(path)
        verdicts += [verdict(r) for r in recs]
    with open(os.path.join(out, "verdicts.jsonl"), "w", encoding="utf-8") as fh:
        fh.write("".join(dumps(v) + "\n" for v in verdicts))
    manifest = {"format": MANIFEST_FORMAT, "run_id": "bench", "created_utc": "2026-06-01T00:00:00Z", "git_commit": None, "git_dirty": None,
                "dataset": dataset, "dataset_sha256": sha,
                "dataset_counts": {"cases": len(cases), "sessions": sum(len(c["sessions"]) for c in cases),
                                   "turns": a.questions * a.turns, "questions": len(cases),
                                   "questions_by_type": {t: sum(c["questions"][0]["type"] == t for c in cases)
                                                         for t in TYPES}},
                "config": "config.yaml", "config_sha256": "f" * 64, "answer_model": "m", "judge_model": None,
                "top_k": 10, "context_token_budget": 1200, "tokenizer": "approx", "endpoint": "none",
                "served_model_info": None,
                # each system as its records name it: score.py and report.py hold the runs to it
                "backends": [{"name": s, "id": s, "version": "v", "code_sha256": None} for s in SYSTEMS]}
    with open(os.path.join(out, "manifest-bench.json"), "w", encoding="utf-8") as fh:
        json.dump(manifest, fh)
    scores, report = os.path.join(out, "scores.json"), os.path.join(out, "report", "report.md")
    s = timed(["score.py", "--runs", *runs, "--verdicts", os.path.join(out, "verdicts.jsonl"), "--baseline", "keyword",
               "--json", scores, "--resamples", "1000", "--manifest", os.path.join(out, "manifest-bench.json")])
    r = timed(["report.py", "--scores", scores, "--manifest", os.path.join(out, "manifest-bench.json"), "--runs", *runs,
               "--verdicts", os.path.join(out, "verdicts.jsonl"), "--out", report])
    html_path = report[:-3] + ".html"
    html_text = open(html_path, encoding="utf-8").read()
    blob = json.loads(html_text.split('id="report-data">', 1)[1].split("</script>", 1)[0])
    print(f"{a.questions} questions x {len(SYSTEMS)} systems, {a.turns} turns per case")
    print(f"score.py (1,000 resamples): {s:.1f} s; report.py: {r:.1f} s")
    print(f"report.html: {os.path.getsize(html_path) / 1e6:.1f} MB, of which texts (context lines and turns, each "
          f"once) {len(json.dumps(blob['texts'], ensure_ascii=False)) / 1e6:.1f} MB")
    browse(html_path, f"q{a.questions - 1}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
