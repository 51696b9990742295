"""Take the README's picture: the first screen of a report.html, as headless Chromium shows it in
a 1,366 x 768 window, saved as a small PNG (64 colours; the page is text on white).

Needs what the browser test needs: Playwright (requirements-test.txt) and Debian's chromium, and
Pillow (installed with matplotlib, requirements-plots.txt).

Usage:
  python docs/screenshot.py results/latest/report.html docs/first-screen.png
"""
from __future__ import annotations

import argparse
import io
import os
import sys

CHROMIUM = os.environ.get("MEMBENCH_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run"]
WIDTH, HEIGHT, COLOURS = 1366, 768, 64


def main(argv: list[str] | None = None) -> int:
    """Open the report from disk, shoot its first screen, write it quantized."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("html", help="a report.html")
    ap.add_argument("png", help="the PNG to write")
    a = ap.parse_args(argv)
    from PIL import Image
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        page.goto("file://" + os.path.abspath(a.html))
        page.wait_for_selector("#qtable tbody tr.q")
        shot = page.screenshot(full_page=False)
        browser.close()
    image = Image.open(io.BytesIO(shot)).convert("RGB").quantize(colors=COLOURS, method=Image.Quantize.MEDIANCUT)
    image.save(a.png, optimize=True)
    print(f"wrote {a.png}: {os.path.getsize(a.png):,} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
