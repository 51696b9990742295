"""Measure what a new user waits for: from a fresh clone of this checkout, the set-up of the core
and plot packages, then `make retrieval` (the model-free report, the first thing `make bench`
writes), then, with --engine, the answer model's set-up (the compiled engine from its kept wheel,
or its first build when there is none).

Each step is timed as the Makefile runs it, in a clone under .cache/bench/ (git-ignored), with
pip's own cache as it is on this machine; the figures are printed, never asserted.

Usage:
  python bench/first_report.py            # set-up of the core, then the first report
  python bench/first_report.py --engine   # and then the engine and the model
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from machine import describe  # noqa: E402


def timed(label: str, cmd: list[str], cwd: str) -> float:
    """Run cmd in cwd, print and return its wall time; stop on failure with its output."""
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        sys.stderr.write(r.stdout[-3000:] + r.stderr[-3000:])
        raise SystemExit(f"{label}: `{' '.join(cmd)}` failed with exit {r.returncode}")
    print(f"{label}: {wall:.1f} s", flush=True)
    return wall


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", action="store_true", help="also time the engine's and the model's set-up")
    ap.add_argument("--keep", action="store_true", help="keep the clone (default: removed afterwards)")
    a = ap.parse_args(argv)
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    if dirty.strip():
        print("warning: the checkout has uncommitted changes; the clone measures the last commit", file=sys.stderr)
    os.makedirs(os.path.join(ROOT, ".cache", "bench"), exist_ok=True)
    folder = tempfile.mkdtemp(prefix="first-report-", dir=os.path.join(ROOT, ".cache", "bench"))
    clone = os.path.join(folder, "memory-bench")
    print(describe(), flush=True)
    try:
        subprocess.run(["git", "clone", "-q", ROOT, clone], check=True)
        setup = timed("set-up of the core and plot packages (make .venv/.core .venv/.plots)",
                      ["make", "--no-print-directory", ".venv/.core", ".venv/.plots"], clone)
        first = timed("the model-free report (make retrieval)", ["make", "--no-print-directory", "retrieval"], clone)
        print(f"time to the first report from a fresh clone: {setup + first:.1f} s")
        if a.engine:
            timed("the engine and the model (make setup)",
                  ["make", "--no-print-directory", "setup"], clone)
    finally:
        if not a.keep:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
