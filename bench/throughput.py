"""Measure the harness itself at scale, against a local OpenAI-compatible endpoint that answers
after a fixed latency L (tests/fake_llm.py, in a process of its own): how close run.py and
judge.py come to the endpoint's capacity C / L with C concurrent calls, beside the ceilings of a
bare loop over the same client and over raw HTTP measured in the same run; the harness's own
time per question at L = 0; run.py's start-up; score.py's time on a large comparison; and the
peak memory of a run over a LongMemEval-S-sized input against the same run on a tenth of it.

Every figure is printed, never asserted: speed is measured here, not in tests. Outputs go to .cache/bench/ (git-ignored).

Usage:
  python bench/throughput.py                      # every part, at C = 16 and 32, L = 200 ms
  python bench/throughput.py --parts calls startup
  python bench/throughput.py --parts memory --memory-cases 500
  python bench/throughput.py --parts score --score-against main   # score.py beside main's, same input
"""
from __future__ import annotations

import argparse
import http.client
import io
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.parse

import requests
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from config import load_config  # noqa: E402
from formats import MANIFEST_FORMAT  # noqa: E402
from llm import LLMClient  # noqa: E402
from machine import describe  # noqa: E402

WORDS = ("billing search auth payments ingest reporting scheduler cache gateway notifications exports "
         "onboarding Postgres Redis Kafka nginx Python Rust Terraform Kubernetes migrated pinned owner "
         "release freeze incident rollback canary cluster deadline version").split()


# ---------------------------------------------------------------------------------------------
# Fixtures: a generated dataset, a config, and the endpoint in its own process
# ---------------------------------------------------------------------------------------------

def text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def make_dataset(path: str, cases: int, questions: int, sessions: int, turns: int, words: int, seed: int = 0) -> None:
    """A valid dataset of generated cases, written one line at a time (no whole file in memory)."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        for c in range(cases):
            cid = f"g{c:05d}"
            ss = [{"session_id": f"s{s}", "timestamp": f"2026-{1 + s // 28:02d}-{1 + s % 28:02d}T10:00:00Z",
                   "turns": [{"turn_id": f"{cid}-s{s}t{t}", "role": "user" if t % 2 == 0 else "assistant",
                              "text": text(rng, words)} for t in range(turns)]} for s in range(sessions)]
            qs = [{"qid": f"{cid}q{q}", "type": "single_hop", "asked_at": "2026-12-31T00:00:00Z",
                   "question": text(rng, 8) + "?", "gold_answer": text(rng, 2),
                   "evidence": [f"{cid}-s{rng.randrange(sessions)}t{rng.randrange(turns)}"]} for q in range(questions)]
            fh.write(json.dumps({"case_id": cid, "sessions": ss, "questions": qs}) + "\n")


def make_config(folder: str, dataset: str, **overrides) -> str:
    with open(os.path.join(ROOT, "config.yaml"), encoding="utf-8") as fh:
        cfg = yaml.safe_load(fh)
    cfg.update({"dataset": dataset, "cache_dir": os.path.join(folder, "cache"), "judge_model": None,
                "retry_backoff_s": 0.01, **overrides})
    path = os.path.join(folder, f"config-{len(os.listdir(folder))}.yaml")
    with open(path, "w", encoding="utf-8") as fh:
        yaml.safe_dump(cfg, fh)
    return path


class Endpoint:
    """tests/fake_llm.py in its own process, answering after delay_s."""

    def __init__(self, delay_s: float) -> None:
        self.proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "fake_llm.py"),
                                      "--delay-s", str(delay_s)], stdout=subprocess.PIPE, text=True)
        self.url = self.proc.stdout.readline().strip()

    def stats(self) -> dict:
        return requests.get(self.url + "/_stats", timeout=10).json()

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


def served_rate(ep: Endpoint) -> tuple[int, float]:
    """(question requests, requests per second from the first question request to the last
    reply), as the endpoint saw them: start-up, the stage's preflight and file writing outside
    that window are not counted."""
    s = ep.stats()
    n = s["requests"] - s["preflights"]
    if n == 0:  # nothing to time: a rate of 0 would read as a harness that cannot call at all
        raise RuntimeError("the endpoint saw no question request: the stage decided everything without it")
    return n, n / max(1e-9, s["last_at"] - s["first_at"])


class RawHTTP:
    """The floor of a chat call: http.client on one kept connection, no retries, no cache."""

    def __init__(self, url: str) -> None:
        u = urllib.parse.urlsplit(url)
        self.path = u.path + "/chat/completions"
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)

    def post(self, payload: dict) -> dict:
        self.conn.request("POST", self.path, json.dumps(payload).encode(), {"Content-Type": "application/json"})
        return json.loads(self.conn.getresponse().read())


# ---------------------------------------------------------------------------------------------
# Parts
# ---------------------------------------------------------------------------------------------

def stage_rate(folder: str, dataset: str, delay_s: float, workers: int, stage: str) -> float:
    """Calls per second of run.py (or judge.py, with an LLM judge) at this concurrency."""
    ep = Endpoint(delay_s)
    env = {**os.environ, "LLM_BASE_URL": ep.url, "LLM_API_KEY": "bench"}
    try:
        cfg = make_config(folder, dataset, workers=workers, judge_model="bench-judge")
        out = os.path.join(folder, f"{stage}-{workers}-{delay_s}.jsonl")
        if stage == "run":
            cmd = ["run.py", "--config", cfg, "--backend", "none", "--out", out, "--no-cache"]
        else:
            runs = os.path.join(folder, "judge-input.jsonl")
            if not os.path.exists(runs):  # answers to grade, made once with the same endpoint
                # oracle's: the endpoint answers with a memory line, which only the judge can grade;
                # none's "I don't know" to an answerable question is decided by the rules alone.
                subprocess.run([sys.executable, "run.py", "--config", cfg, "--backend", "oracle", "--out", runs],
                               cwd=ROOT, env=env, check=True, capture_output=True)
            requests.post(ep.url + "/_control", json={"script": []}, timeout=10)
            ep.stop()
            ep = Endpoint(delay_s)
            env = {**env, "LLM_BASE_URL": ep.url}
            cfg = make_config(folder, dataset, workers=workers, judge_model="bench-judge")
            cmd = ["judge.py", "--config", cfg, "--runs", runs, "--out", out]
        subprocess.run([sys.executable, *cmd], cwd=ROOT, env=env, check=True, capture_output=True)
        return served_rate(ep)[1]
    finally:
        ep.stop()


def bare_client(folder: str, dataset: str, ep: Endpoint, workers: int) -> LLMClient:
    """The harness's model client pointed at the endpoint, with no cache and no retries, for
    `workers` threads."""
    os.environ["LLM_BASE_URL"], os.environ["LLM_API_KEY"] = ep.url, "bench"
    cfg = {**load_config(make_config(folder, dataset)), "request_timeout_s": 60, "max_retries": 0,
           "retry_backoff_s": 0.0}
    return LLMClient(cfg, use_cache=False, workers=workers)


def bare_rate(folder: str, dataset: str, delay_s: float, workers: int, calls: int, raw: bool) -> float:
    """The ceiling: C threads calling LLMClient.complete (or raw HTTP) in a loop, no harness."""
    ep = Endpoint(delay_s)
    try:
        client = bare_client(folder, dataset, ep, workers)
        left = list(range(calls))
        lock = threading.Lock()

        def work() -> None:
            wire = RawHTTP(ep.url)
            while True:
                with lock:
                    if not left:
                        return
                    i = left.pop()
                messages = [{"role": "user", "content": f"Memories:\n(no memories)\nQuestion: q{i}"}]
                if raw:
                    wire.post({"model": "m", "messages": messages, "max_tokens": 64})
                else:
                    client.complete("m", messages, 64)
        threads = [threading.Thread(target=work) for _ in range(workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return served_rate(ep)[1]
    finally:
        ep.stop()


def part_calls(folder: str, concurrency: list[int], delay_s: float) -> None:
    dataset = os.path.join(folder, "calls.jsonl")
    make_dataset(dataset, cases=40, questions=10, sessions=3, turns=4, words=12)
    print(f"calls: 400 questions, endpoint latency L = {delay_s * 1000:.0f} ms; ratio = calls/s / (C / L)")
    for c in concurrency:
        ideal = c / delay_s
        r = stage_rate(folder, dataset, delay_s, c, "run") / ideal
        b = bare_rate(folder, dataset, delay_s, c, 400, raw=False) / ideal
        h = bare_rate(folder, dataset, delay_s, c, 400, raw=True) / ideal
        print(f"  C={c:>2}: run.py {r:.2f}   bare client loop {b:.2f}   raw HTTP loop {h:.2f}")
    c = concurrency[0]
    j = stage_rate(folder, dataset, delay_s, c, "judge") / (c / delay_s)
    print(f"  C={c:>2}: judge.py with an LLM judge {j:.2f}")


def part_overhead(folder: str, rounds: int = 5) -> None:
    """The harness's time per question at L = 0 (run.py, 4 workers, the endpoint's own time
    included) beside one call of the bare client, of raw HTTP on one kept connection (the floor)
    and of a `requests` session (the client's previous path), serially; medians of rounds that
    alternate them, so each sees the same share of a shared machine."""
    dataset = os.path.join(folder, "overhead.jsonl")
    make_dataset(dataset, cases=100, questions=10, sessions=3, turns=4, words=12)
    took: dict = {"run.py": [], "bare client": [], "raw HTTP": [], "requests": []}
    for round_ in range(rounds):
        ep = Endpoint(0.0)
        try:
            env = {**os.environ, "LLM_BASE_URL": ep.url, "LLM_API_KEY": "bench"}
            cfg = make_config(folder, dataset, workers=4)
            subprocess.run([sys.executable, "run.py", "--config", cfg, "--backend", "none", "--no-cache",
                            "--out", os.path.join(folder, f"overhead-{round_}.jsonl.out")], cwd=ROOT, env=env,
                           check=True, capture_output=True)
            n, rate = served_rate(ep)
            took["run.py"].append(1 / rate)
            client, wire, session = bare_client(folder, dataset, ep, 1), RawHTTP(ep.url), requests.Session()
            ask = lambda i: {"model": "m", "messages": [{"role": "user", "content": f"{round_}-{i}"}], "max_tokens": 64}
            calls = {"bare client": lambda i: client.complete("m", ask(i)["messages"], 64),
                     "raw HTTP": lambda i: wire.post(ask(i)),
                     "requests": lambda i: session.post(ep.url + "/chat/completions", json=ask(i), timeout=60).json()}
            for name, call in calls.items():
                t0 = time.perf_counter()
                for i in range(200):
                    call(i)
                took[name].append((time.perf_counter() - t0) / 200)
        finally:
            ep.stop()
    ms = {name: statistics.median(t) * 1000 for name, t in took.items()}
    print(f"overhead at L = 0, medians of {rounds} alternating rounds: run.py {ms['run.py']:.2f} ms per question "
          f"over {n} questions (4 workers; the endpoint's own time included)")
    print(f"  one call, serially: bare client {ms['bare client']:.2f} ms, raw HTTP on one kept connection "
          f"{ms['raw HTTP']:.2f} ms, a requests session {ms['requests']:.2f} ms")
    print(f"  ratio run.py per question / raw HTTP per call: {ms['run.py'] / ms['raw HTTP']:.2f} "
          f"(rounds: {', '.join(f'{a / b:.2f}' for a, b in zip(took['run.py'], took['raw HTTP']))}); "
          f"bare client / raw HTTP: {ms['bare client'] / ms['raw HTTP']:.2f}; requests / raw HTTP: "
          f"{ms['requests'] / ms['raw HTTP']:.2f}")


def part_startup(folder: str) -> None:
    dataset = os.path.join(folder, "startup.jsonl")
    make_dataset(dataset, cases=1, questions=1, sessions=1, turns=2, words=5)
    ep = Endpoint(0.0)
    try:
        env = {**os.environ, "LLM_BASE_URL": ep.url, "LLM_API_KEY": "bench"}
        times = []
        for i in range(5):
            cfg = make_config(folder, dataset)
            t0 = time.monotonic()
            subprocess.run([sys.executable, "run.py", "--config", cfg, "--backend", "none", "--no-cache",
                            "--out", os.path.join(folder, f"startup-{i}.jsonl")], cwd=ROOT, env=env, check=True,
                           capture_output=True)
            times.append(ep.stats()["first_at"] - t0 if i == 0 else None)
            ep.stop()
            ep = Endpoint(0.0)
            env["LLM_BASE_URL"] = ep.url
        t_import = []
        for _ in range(5):
            t0 = time.monotonic()
            subprocess.run([sys.executable, "-c", "import run"], cwd=ROOT, check=True)
            t_import.append(time.monotonic() - t0)
    finally:
        ep.stop()
    print(f"start-up of run.py: {times[0]:.2f} s to its first model request (one-question dataset); "
          f"python -c 'import run': median {sorted(t_import)[2]:.2f} s")


def scored_comparison(folder: str, systems: int, questions: int, cases: int) -> tuple[list[str], str, str]:
    """Run files and verdicts of `systems` systems over the same questions, built with the test
    suite's record builders (every field run.py and judge.py write), and a manifest naming the
    dataset they hold (the runs are held against it)."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from pathlib import Path

    from records import run_record, verdict_for, write_dataset  # noqa: E402
    rng = random.Random(3)
    every = [[run_record(f"s{s}", f"q{q}", f"c{q % cases}", "yes" if rng.random() < 0.3 + 0.05 * s else "no",
                         [f"t{q}"], [f"t{q}"] if rng.random() < 0.7 else [f"t{q + 1}"],
                         type=("single_hop", "temporal", "abstention")[q % 3]) for q in range(questions)]
             for s in range(systems)]
    dataset = os.path.join(folder, f"score-{cases}-cases.jsonl")
    sha = write_dataset(Path(dataset), [r for recs in every for r in recs])
    manifest = os.path.join(folder, f"score-{cases}-manifest.json")
    with open(manifest, "w", encoding="utf-8") as fh:
        json.dump({"format": MANIFEST_FORMAT, "dataset": dataset, "dataset_sha256": sha,
                   "backends": [{"name": r["backend"], "id": r["backend_id"], "version": r["backend_version"],
                                 "code_sha256": r["backend_code_sha256"]} for r in (recs[0] for recs in every)]}, fh)
    runs, verdicts = [], []
    for s, recs in enumerate(every):
        recs = [{**r, "dataset_sha256": sha} for r in recs]
        path = os.path.join(folder, f"score-{cases}-s{s}.jsonl")
        with open(path, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in recs)
        runs.append(path)
        verdicts += [verdict_for(r, "correct" if r["answer"] == "yes" else "incorrect") for r in recs]
    path = os.path.join(folder, f"score-{cases}-verdicts.jsonl")
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(v) + "\n" for v in verdicts)
    return runs, path, manifest


def plain_bootstrap(diff_by_case: dict, resamples: int, seed: int) -> tuple[float, float]:
    """The interval as score.py computed it before it drew count matrices: one random draw of a
    case at a time from Python's generator (nearest-rank 2.5% and 97.5% quantiles)."""
    cases = sorted(diff_by_case)
    sums = {c: (sum(diff_by_case[c]), len(diff_by_case[c])) for c in cases}
    rng = random.Random(seed)
    stats = []
    for _ in range(resamples):
        total = count = 0
        for _ in cases:
            s, n = sums[cases[rng.randrange(len(cases))]]
            total += s
            count += n
        stats.append(total / count)
    stats.sort()
    return tuple(stats[min(len(stats) - 1, max(0, math.ceil(p * len(stats)) - 1))] for p in (0.025, 0.975))


def reference_tree(folder: str, rev: str) -> str:
    """This repository's committed files at git revision `rev`, unpacked under folder, so that
    its score.py can be timed beside this one's on the same input."""
    path = os.path.join(folder, "ref-" + "".join(c if c.isalnum() or c in "._-" else "_" for c in rev))
    archive = subprocess.run(["git", "archive", "--format=tar", rev], cwd=ROOT, check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(path, filter="data")
    return path


def timed_score(root: str, args: list[str], out: str) -> float:
    """Wall seconds of one score.py process of the tree at root, interpreter start included."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "score.py", *args, "--json", out], cwd=root, check=True, capture_output=True)
    return time.perf_counter() - t0


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} s [{min(xs):.2f}-{max(xs):.2f}]"


def part_score(folder: str, resamples: int, against: str | None, rounds: int) -> None:
    """score.py on 6 systems x 2,000 questions, `rounds` times; with `against`, that revision's
    score.py on the same input in alternation (each round's first run swaps), the ratio of the
    two per round, and whether their scores.json are the same bytes."""
    ref = reference_tree(folder, against) if against else None
    for cases in (400, 2000):
        runs, verdicts, manifest = scored_comparison(folder, systems=6, questions=2000, cases=cases)
        args = ["--runs", *runs, "--verdicts", verdicts, "--baseline", "s0", "--manifest", manifest,
                "--resamples", str(resamples)]
        out, ref_out = os.path.join(folder, f"scores-{cases}.json"), os.path.join(folder, f"scores-{cases}-ref.json")
        ours, theirs = [], []
        for i in range(rounds):
            if ref and i % 2:
                theirs.append(timed_score(ref, args, ref_out))
            ours.append(timed_score(ROOT, args, out))
            if ref and not i % 2:
                theirs.append(timed_score(ref, args, ref_out))
        with open(out, encoding="utf-8") as fh:
            scores = json.load(fh)
        # The same interval by the plain per-draw method, for the first system against the baseline.
        diff: dict = {}
        rows = {(q["system"], q["qid"]): q for q in scores["questions"] if q["type"] != "abstention"}
        for (system, qid), q in rows.items():
            if system == "s1":
                base = rows["s0", qid]
                diff.setdefault(q["case_id"], []).append(int(q["verdict"] == "correct") - int(base["verdict"] == "correct"))
        lo, hi = plain_bootstrap(diff, resamples, 0)
        d = next(x for x in scores["differences"] if x["system"] == "s1")
        print(f"score.py: 6 systems x 2,000 questions, {cases} cases, {resamples} resamples: {spread(ours)} over "
              f"{rounds} runs; s1 - s0 interval [{d['ci_low']:+.4f}, {d['ci_high']:+.4f}], the plain per-draw method "
              f"[{lo:+.4f}, {hi:+.4f}]")
        if ref:
            with open(out, "rb") as a, open(ref_out, "rb") as b:
                same = a.read() == b.read()
            ratio = statistics.median(o / t for o, t in zip(ours, theirs))
            print(f"  {against}'s score.py on the same input, alternating: {spread(theirs)}; this / {against} "
                  f"{ratio:.2f} (median of the rounds' ratios); scores.json {'identical' if same else 'DIFFERENT'}")


def part_memory(folder: str, cases: int) -> None:
    """Peak RSS of run.py keyword over a LongMemEval-S-sized input and over a tenth of it."""
    peaks = {}
    for n in (max(1, cases // 10), cases):
        dataset = os.path.join(folder, f"memory-{n}.jsonl")
        # LongMemEval-S: ~500 haystacks of ~50 sessions, ~115k tokens each (about 0.5 MB of text).
        make_dataset(dataset, cases=n, questions=1, sessions=50, turns=10, words=118, seed=1)
        ep = Endpoint(0.0)
        try:
            env = {**os.environ, "LLM_BASE_URL": ep.url, "LLM_API_KEY": "bench"}
            cfg = make_config(folder, dataset, workers=4)
            code = ("import resource, runpy, sys; sys.argv = sys.argv[1:]; "
                    "sys.path.insert(0, '.'); "
                    "import run; rc = run.run_cli(run.main, sys.argv[1:]); "
                    "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr); sys.exit(rc)")
            r = subprocess.run([sys.executable, "-c", code, "run.py", "--config", cfg, "--backend", "keyword",
                                "--out", os.path.join(folder, f"memory-{n}.out.jsonl"), "--no-cache"],
                               cwd=ROOT, env=env, capture_output=True, text=True, check=True)
            peaks[n] = int(r.stderr.strip().splitlines()[-1]) / 1024
        finally:
            ep.stop()
        print(f"memory: keyword over {n} cases ({os.path.getsize(dataset) / 1e6:.0f} MB): peak RSS {peaks[n]:.0f} MB")
    small, big = sorted(peaks)
    print(f"  ratio {big} cases / {small} cases: {peaks[big] / peaks[small]:.2f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", nargs="+", default=["calls", "overhead", "startup", "score", "memory"])
    ap.add_argument("--concurrency", nargs="+", type=int, default=[16, 32])
    ap.add_argument("--delay-ms", type=float, default=200)
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--memory-cases", type=int, default=500)
    ap.add_argument("--score-rounds", type=int, default=3, help="score.py runs per input (medians are printed)")
    ap.add_argument("--score-against", metavar="REV", help="also time the score.py of this git revision (say, "
                                                           "main) on the same input, alternating, and compare")
    a = ap.parse_args(argv)
    os.makedirs(os.path.join(ROOT, ".cache", "bench"), exist_ok=True)
    folder = tempfile.mkdtemp(prefix="throughput-", dir=os.path.join(ROOT, ".cache", "bench"))
    print(f"{describe()}; outputs in {os.path.relpath(folder, ROOT)}")
    if "calls" in a.parts:
        part_calls(folder, a.concurrency, a.delay_ms / 1000)
    if "overhead" in a.parts:
        part_overhead(folder)
    if "startup" in a.parts:
        part_startup(folder)
    if "score" in a.parts:
        part_score(folder, a.resamples, a.score_against, a.score_rounds)
    if "memory" in a.parts:
        part_memory(folder, a.memory_cases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
