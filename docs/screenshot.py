"""Take the README's picture: the first screen of a run's report.html, as headless Chromium shows
it in a 1,366 x 768 window, saved as a small PNG (64 colours; the page is text on white), with
what the run was written into the PNG (a text chunk `memory-bench`, JSON: run id, dataset and
its sha256, the answered systems and their sample, the model-free systems, the served model,
the commit), so that a test can tell when the picture no longer shows the default run.

Needs what the browser test needs: Playwright (requirements-test.txt) and Debian's chromium, and
Pillow (installed with matplotlib, requirements-plots.txt). `make picture` takes it from the last
`make bench`.

Usage:
  python docs/screenshot.py results/latest docs/first-screen.png
"""
from __future__ import annotations

import argparse
import glob
import io
import json
import os
import sys

CHROMIUM = os.environ.get("MEMBENCH_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run"]
WIDTH, HEIGHT, COLOURS = 1366, 768, 64


METADATA_KEY = "memory-bench"


def only(pattern: str) -> str:
    """The one file matching a glob pattern; exit 2 naming the pattern otherwise."""
    found = glob.glob(pattern)
    if len(found) != 1:
        sys.exit(f"error: {pattern}: expected one file, found {len(found)}: run make bench first")
    return found[0]


def run_facts(results: str) -> dict:
    """What the run in a results folder was, from its manifests: the answered comparison's and
    the model-free pass's (make bench writes both)."""
    answered = json.load(open(only(os.path.join(results, "manifest-*.json")), encoding="utf-8"))
    free = json.load(open(only(os.path.join(results, "model-free", "manifest-*.json")), encoding="utf-8"))
    served = answered["served_model_info"]
    return {"run_id": answered["run_id"], "dataset": answered["dataset"], "dataset_sha256": answered["dataset_sha256"],
            "systems": [b["id"] for b in answered["backends"]], "sample": answered["sample"],
            "model_free_systems": [b["id"] for b in free["backends"]],
            "served_model": served["served_model"] if served is not None else answered["answer_model"],
            "git_commit": answered["git_commit"]}


def main(argv: list[str] | None = None) -> int:
    """Open the run's report from disk, shoot its first screen, write it quantized with what the
    run was."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="a run's results folder (results/RUN_ID, or results/latest), with report.html")
    ap.add_argument("png", help="the PNG to write")
    a = ap.parse_args(argv)
    facts = run_facts(a.results)
    from PIL import Image, PngImagePlugin
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        page.goto("file://" + os.path.abspath(os.path.join(a.results, "report.html")))
        page.wait_for_selector("#qtable tbody tr.q")
        shot = page.screenshot(full_page=False)
        browser.close()
    image = Image.open(io.BytesIO(shot)).convert("RGB").quantize(colors=COLOURS, method=Image.Quantize.MEDIANCUT)
    info = PngImagePlugin.PngInfo()
    info.add_text(METADATA_KEY, json.dumps(facts, sort_keys=True))
    image.save(a.png, optimize=True, pnginfo=info)
    print(f"wrote {a.png}: {os.path.getsize(a.png):,} bytes, of run {facts['run_id']} on {facts['dataset']}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
