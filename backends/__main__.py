"""Check a config file, every backend section included, without starting any system.

Usage:
  python -m backends check-config config.yaml
  python -m backends check-config              # config.yaml, as the stages default to
"""
from __future__ import annotations

import argparse
import os
import sys

from backends import check_section
from cli import EXIT_OK, run_cli
from config import load_config


def main(argv: list[str] | None = None) -> int:
    """Validate the config and each backends: section; print what it holds."""
    ap = argparse.ArgumentParser(prog="python -m backends", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("check-config", help="validate a config file").add_argument(
        "path", nargs="?", default="config.yaml", help="the config (default: config.yaml, as the stages)")
    a = ap.parse_args(argv)
    cfg = load_config(a.path)
    for name in cfg["backends"]:
        check_section(name, cfg)
    print(f"{a.path}: ok (run_id {cfg['run_id']}, dataset {os.path.relpath(cfg['dataset'])}, "
          f"backend sections {', '.join(cfg['backends']) or 'none'})")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
