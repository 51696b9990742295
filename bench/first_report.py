"""Measure what a new user waits for: from `git clone` of this checkout to the first screen that
`make bench` prints, on the embedded model (no LLM_BASE_URL), with each phase's share: the
packages' set-up before the first stage, the model-free pass, the model's set-up (the engine's
and the model's wheels, the f16 conversion), the answered pass on its sample. With --retrieval,
only the set-up of the packages and `make retrieval` (the model-free report).

Each phase is timed as make prints its stage lines (stages.py), in a clone under .cache/bench/
(git-ignored) with its own empty response cache, and pip's own cache as it is on this machine
(--no-pip-cache: none, as on a fresh machine); the figures are printed, never asserted.

Usage:
  python bench/first_report.py                      # clone, then make bench to its first screen
  python bench/first_report.py --no-pip-cache       # the same with no package in pip's cache
  python bench/first_report.py --retrieval          # clone, set-up and make retrieval only
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

def run_timed(cmd: list[str], cwd: str, env: dict, t0: float) -> tuple[list[tuple[float, str]], str]:
    """Run cmd, stamping each stage line with the seconds since t0; (the stamped lines, the output's
    tail). Stops with the output's tail on failure."""
    stamps, tail = [], []
    with subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as p:
        for line in p.stdout:
            tail = (tail + [line])[-60:]
            if line.startswith("== stage "):
                stamps.append((time.perf_counter() - t0, line.strip()))
        code = p.wait()
    if code != 0:
        sys.stderr.write("".join(tail))
        raise SystemExit(f"`{' '.join(cmd)}` failed with exit {code}")
    return stamps, "".join(tail)


def phases(stamps: list[tuple[float, str]], end: float) -> list[tuple[str, float]]:
    """Each phase's wall time, from its first stage line to the next phase's (the last to end);
    the set-up before the first stage line first."""
    starts = [(0.0, "set-up of the packages, before the first stage")]
    for t, line in stamps:
        what = line.split(": ", 1)[1]
        if what.startswith("manifest.py (model-free)"):
            starts.append((t, "model-free pass"))
        elif what.startswith("the embedded model's set-up"):
            starts.append((t, "the model's set-up (engine and model wheels, f16 conversion)"))
        elif what.startswith("manifest.py;") or what == "manifest.py":
            starts.append((t, "answered pass (sample), judge, checks, score, report"))
    bounds = [t for t, _ in starts[1:]] + [end]
    return [(name, b - t) for (t, name), b in zip(starts, bounds)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--retrieval", action="store_true", help="only the packages' set-up and make retrieval")
    ap.add_argument("--no-pip-cache", action="store_true", help="pip without its cache, as on a fresh machine")
    ap.add_argument("--keep", action="store_true", help="keep the clone (default: removed afterwards)")
    a = ap.parse_args(argv)
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    if dirty.strip():
        print("warning: the checkout has uncommitted changes; the clone measures the last commit", file=sys.stderr)
    os.makedirs(os.path.join(ROOT, ".cache", "bench"), exist_ok=True)
    folder = tempfile.mkdtemp(prefix="first-report-", dir=os.path.join(ROOT, ".cache", "bench"))
    clone = os.path.join(folder, "memory-bench")
    env = {k: v for k, v in os.environ.items() if k not in ("LLM_BASE_URL", "LLM_API_KEY", "MAKEFLAGS", "MAKELEVEL")}
    if a.no_pip_cache:
        env["PIP_NO_CACHE_DIR"] = "1"
    target = ["retrieval"] if a.retrieval else ["bench"]
    print(describe(), flush=True)
    try:
        t0 = time.perf_counter()
        subprocess.run(["git", "clone", "-q", ROOT, clone], check=True)
        stamps, tail = run_timed(["make", "--no-print-directory", *target], clone, env, t0)
        total = time.perf_counter() - t0
        for name, seconds in phases(stamps, total):
            print(f"{name}: {seconds:.1f} s")
        what = "the model-free report" if a.retrieval else "the first screen of make bench"
        print(f"git clone to {what}{' (pip without its cache)' if a.no_pip_cache else ''}: {total:.1f} s "
              f"({total / 60:.1f} min)")
        if not a.retrieval:
            report = tail.rfind("wrote results/")
            print("its first screen:\n" + tail[tail.find("\nsystem ", report):].strip())
    finally:
        if not a.keep:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
