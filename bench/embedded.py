"""Measure the embedded default on this machine: the local model's answer calls per second, and
the wall time of the whole `make bench` pipeline (manifest, controls, keyword, judge, score)
with a cold response cache, then again with the warm cache.

It runs the same steps as `make pipeline`, each timed, inside one `serve.py` so the server start
is counted too. Outputs go to .cache/bench/<stamp>/ (git-ignored), never to runs/ or results/.
Timings are printed, never asserted.

Usage:
  python bench/embedded.py
  python bench/embedded.py --systems none oracle --dataset tests/data/tiny.jsonl
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYSTEMS = ("none", "oracle", "full_context", "keyword")


def timed(cmd: list[str], env: dict | None = None) -> float:
    """Run a command from the repository root; return its wall time; stop on failure."""
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=ROOT, env=env)
    if r.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd[:3])} ... failed with exit code {r.returncode}")
    return time.perf_counter() - t0


def pipeline(cfg: str, out: str, systems: list[str], label: str) -> dict:
    """The steps of `make pipeline`, each timed; returns seconds per step and calls per second."""
    py = sys.executable
    runs = [os.path.join(out, "runs", f"{s}.jsonl") for s in systems]
    steps: dict = {"manifest": timed([py, "manifest.py", cfg, "--backends", *systems,
                                      "--out-dir", os.path.join(out, "results")])}
    with open(cfg, encoding="utf-8") as fh:
        manifest = os.path.join(out, "results", f"manifest-{yaml.safe_load(fh)['run_id']}.json")
    rates = {}
    for s, path in zip(systems, runs):
        steps[f"run {s}"] = timed([py, "run.py", "--config", cfg, "--backend", s, "--out", path])
        with open(path, encoding="utf-8") as fh:
            recs = [json.loads(line) for line in fh]
        fresh = sum(1 for r in recs if not r["cached"])
        rates[s] = {"questions": len(recs), "model_calls": fresh,
                    "calls_per_s": round(fresh / steps[f"run {s}"], 3) if fresh else None}
    verdicts = os.path.join(out, "results", "verdicts.jsonl")
    steps["judge"] = timed([py, "judge.py", "--config", cfg, "--runs", *runs, "--out", verdicts])
    steps["score"] = timed([py, "score.py", "--runs", *runs, "--verdicts", verdicts, "--baseline",
                            "keyword" if "keyword" in systems else systems[-1],
                            "--markdown", os.path.join(out, "results", "report.md"), "--manifest", manifest])
    total = sum(steps.values())
    print(f"\n[{label}] " + ", ".join(f"{k} {v:.1f} s" for k, v in steps.items()) + f"; total {total:.1f} s",
          file=sys.stderr)
    for s, r in rates.items():
        print(f"[{label}] {s}: {r['model_calls']} model calls for {r['questions']} questions, "
              f"{r['calls_per_s']} calls/s", file=sys.stderr)
    return {"steps_s": {k: round(v, 2) for k, v in steps.items()}, "total_s": round(total, 2), "systems": rates}


def main(argv: list[str] | None = None) -> int:
    """Outer mode serves the model and re-runs this script inside; inner mode measures."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=os.path.join(ROOT, "config.yaml"))
    ap.add_argument("--dataset", help="override the config's dataset")
    ap.add_argument("--systems", nargs="+", default=list(SYSTEMS))
    ap.add_argument("--inner", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)

    if a.inner:
        cfg = os.path.join(a.inner, "config.yaml")
        result = {"cold": pipeline(cfg, os.path.join(a.inner, "cold"), a.systems, "cold cache"),
                  "warm": pipeline(cfg, os.path.join(a.inner, "warm"), a.systems, "warm cache")}
        with open(os.path.join(a.inner, "inner.json"), "w", encoding="utf-8") as fh:
            json.dump(result, fh)
        return 0

    out = os.path.join(ROOT, ".cache", "bench", time.strftime("%Y%m%dT%H%M%S"))
    os.makedirs(out)
    with open(a.config, encoding="utf-8") as fh:
        cfg = yaml.safe_load(fh)
    cfg["cache_dir"] = os.path.join(out, "llm-cache")  # cold: a cache of its own
    if a.dataset:
        cfg["dataset"] = os.path.abspath(a.dataset)
    elif not os.path.isabs(cfg["dataset"]):
        cfg["dataset"] = os.path.join(os.path.dirname(os.path.abspath(a.config)), cfg["dataset"])
    with open(os.path.join(out, "config.yaml"), "w", encoding="utf-8") as fh:
        yaml.safe_dump(cfg, fh, allow_unicode=True)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "serve.py", "--", sys.executable, os.path.abspath(__file__),
                        "--inner", out, "--systems", *a.systems], cwd=ROOT)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        return r.returncode
    with open(os.path.join(out, "inner.json"), encoding="utf-8") as fh:
        result = json.load(fh)
    result.update(wall_s_including_server=round(wall, 2), dataset=cfg["dataset"], cpus=os.cpu_count(),
                  answer_model=cfg["answer_model"], context_token_budget=cfg["context_token_budget"])
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=2)
    print(f"\nembedded bench: cold pipeline {result['cold']['total_s']} s, warm rerun {result['warm']['total_s']} s, "
          f"whole command with server start and both passes {wall:.1f} s on {os.cpu_count()} CPUs "
          f"(details: {os.path.relpath(out, ROOT)}/summary.json)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
