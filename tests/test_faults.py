"""Faults survived with nothing lost: kill -9 at random points, again and again, then the same
command; an endpoint that fails a third of its calls. The result equals an undisturbed run."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

from conftest import ROOT, write_config

DEV = os.path.join(ROOT, "data", "dev.jsonl")  # 12 cases, 64 questions
# Fields that differ between two runs of the same thing by design: when, how fast, from where.
TIMING = ("ingest_s", "flush_s", "search_ms", "search_calls_in_flight", "cached", "retries", "judge_served_model")


def records(path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def strip(recs: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in TIMING} for r in recs]


def kill_repeatedly(argv: list[str], out: str, kills: int, seed: int, fake_llm, most: int) -> list[int]:
    """Start the command and SIGKILL it at a random point, `kills` times in a row: once the
    endpoint has received a random number (2 to `most`) of new requests, so that the point is
    in the middle of the work however fast the machine runs it; the number of lines in `out`
    after each kill."""
    rng = random.Random(seed)
    lines = []
    for _ in range(kills):
        target = fake_llm.requests + rng.randint(2, most)
        p = subprocess.Popen([sys.executable, *argv], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while p.poll() is None and fake_llm.requests < target:
            time.sleep(0.005)
        p.send_signal(signal.SIGKILL)
        p.wait()
        lines.append(len(open(out, "rb").read().splitlines()) if os.path.exists(out) else 0)
    return lines


def finish(argv: list[str]) -> None:
    r = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]


def test_run_and_judge_killed_at_random_points_then_rerun_equal_an_undisturbed_run(tmp_path, fake_llm):
    fake_llm.delay_all_s = 0.02  # calls still in flight when a kill lands
    cfg = write_config(tmp_path, dataset=DEV, workers=4, judge_model="fake-judge")
    killed, clean = str(tmp_path / "killed.jsonl"), str(tmp_path / "clean.jsonl")
    argv = ["run.py", "--config", cfg, "--backend", "keyword", "--out", killed, "--budgets", "300,1200"]
    cut = kill_repeatedly(argv, killed, kills=4, seed=1, fake_llm=fake_llm, most=40)
    assert any(0 < n < 128 for n in cut), cut  # at least one kill landed mid-run
    finish(argv)
    # A separate cache, so that the undisturbed run really asks the endpoint.
    (tmp_path / "clean").mkdir()
    clean_cfg = write_config(tmp_path / "clean", dataset=DEV, workers=4, judge_model="fake-judge")
    finish(["run.py", "--config", clean_cfg, "--backend", "keyword", "--out", clean, "--budgets", "300,1200"])
    got, want = records(killed), records(clean)
    assert len(got) == len({(r["qid"], r["context_token_budget"]) for r in got}) == 128
    assert strip(got) == strip(want)

    vk, vc = str(tmp_path / "v-killed.jsonl"), str(tmp_path / "v-clean.jsonl")
    jargv = ["judge.py", "--config", cfg, "--runs", killed, "--out", vk, "--workers", "4"]
    fake_llm.delay_all_s = 0.2  # about a hundred judge calls over four workers: seconds
    cut = kill_repeatedly(jargv, vk, kills=3, seed=2, fake_llm=fake_llm, most=30)
    assert any(0 < n < 128 for n in cut), cut
    finish(jargv)
    finish(["judge.py", "--config", clean_cfg, "--runs", clean, "--out", vc, "--workers", "4"])
    key = lambda v: (v["qid"], v["context_token_budget"])
    got, want = sorted(records(vk), key=key), sorted(records(vc), key=key)
    assert len(got) == len({key(v) for v in got}) == 128
    assert strip(got) == strip(want)


def test_an_endpoint_failing_a_third_of_calls_gives_the_same_answers(tmp_path, fake_llm):
    clean_cfg = write_config(tmp_path, dataset=DEV, workers=4)
    clean = str(tmp_path / "clean.jsonl")
    finish(["run.py", "--config", clean_cfg, "--backend", "keyword", "--out", clean])
    (tmp_path / "faulty").mkdir()
    cfg = write_config(tmp_path / "faulty", dataset=DEV, workers=4, max_retries=12, request_timeout_s=0.5,
                       retry_backoff_s=0.01)
    fake_llm.fault_rate, fake_llm.fault_stall_s = 0.3, 1.0
    faulty = str(tmp_path / "faulty.jsonl")
    finish(["run.py", "--config", cfg, "--backend", "keyword", "--out", faulty])
    got = records(faulty)
    assert fake_llm.faults > 10
    assert sum(r["retries"] for r in got) >= fake_llm.faults - 4  # each fault cost its call a retry
    assert all(r["error"] is None for r in got)
    assert [(r["qid"], r["answer"]) for r in got] == [(r["qid"], r["answer"]) for r in records(clean)]
