"""The artifact audit: can a system that never reads the question find the evidence?

Runs, model-free, three query-blind systems (newest: the k newest turns; random: k turns drawn
with a seed fixed per case and question; cues: a reader of surface features learned on half the
cases' evidence labels and used on the other half, blind.py) beside real systems (the first of
--systems is the baseline), on any dataset in the contract format. Prints recall_any@k per kind
(meta.kind when the dataset names one, else the question type) and over all questions, each
system's paired difference to the baseline with its 95% cluster-bootstrap interval, and the
verdict, and writes the same as JSON (format artifacts/1).

The audit FAILs when a query-blind system, on some kind or over all questions, finds evidence
for more than --limit of the questions (default 0.15), or comes within the noise of the baseline:
its interval against the baseline does not lie below 0 (it includes 0, or the system is above;
with a single cluster there is no interval and nothing excludes it). Otherwise it PASSes.

Exit codes: 0 PASS; 4 FAIL; 2 bad input (an invalid dataset, an unknown system, bad options);
1 a bug.

Usage:
  python artifacts.py                                   # config.yaml's dataset, baseline keyword
  python artifacts.py --dataset data/imported/locomo.jsonl --out results/artifacts-locomo.json
  python artifacts.py --dataset data/cases-v2.jsonl --systems keyword bm25 --limit 0.10
  jq '.recall.cues' results/artifacts-locomo.json
  python artifacts.py --side-by-side v2=results/a-v2.json locomo=results/a-locomo.json   # a markdown table
"""
from __future__ import annotations

import argparse
import os
import sys

from blind import (ARTIFACTS_FORMAT, BLIND_BACKENDS, BLIND_SYSTEMS, DEFAULT_LIMIT, backend_records, blind_failures,
                   cue_records, differences_table, read_artifacts, recall_table, side_by_side, summary, table)
from cli import EXIT_CHECK_FAILED, EXIT_OK, InputError, run_cli
from config import load_config, results_dir
from contract import CONTROL_NAMES, kind_of
from dataset import load_dataset
from fileio import output_path, sha256_data, write_json_atomic
from stats import RESAMPLES, SEED



def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line, checked: a limit in [0, 1], at least one real system, no control."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="config.yaml", help="backend sections, top_k and flush timeout (default "
                                                             "config.yaml)")
    ap.add_argument("--dataset", help="the dataset to audit (default: the config's)")
    ap.add_argument("--systems", nargs="+", default=["keyword"],
                    help="real systems to run beside the query-blind ones; the first is the baseline (default keyword)")
    ap.add_argument("--k", type=int, help="hits per search (default: the config's top_k)")
    ap.add_argument("--limit", type=float, default=DEFAULT_LIMIT,
                    help=f"the most recall_any@k a query-blind system may reach on any kind (default {DEFAULT_LIMIT})")
    ap.add_argument("--resamples", type=int, default=RESAMPLES, help=f"bootstrap resamples (default {RESAMPLES})")
    ap.add_argument("--out", help="the JSON to write (default results/RUN_ID/artifacts-DATASET.json)")
    ap.add_argument("--side-by-side", nargs="+", metavar="TITLE=PATH",
                    help="run nothing: print these audits' JSON files side by side as a markdown table")
    a = ap.parse_args(argv)
    if not 0 <= a.limit <= 1:
        raise InputError(f"--limit {a.limit}: expected a share between 0 and 1")
    if a.k is not None and a.k < 1:
        raise InputError(f"--k {a.k}: expected at least 1")
    if a.resamples < 1:
        raise InputError(f"--resamples {a.resamples}: expected at least 1")
    for s in a.systems:
        if s in CONTROL_NAMES or s in BLIND_SYSTEMS:
            raise InputError(f"--systems {s}: name real memory systems; the query-blind ones ({', '.join(BLIND_SYSTEMS)}) "
                             f"always run, and the controls are not retrieval systems")
    if len(set(a.systems)) != len(a.systems):
        raise InputError(f"--systems {' '.join(a.systems)}: a system is named twice")
    return a


def print_side_by_side(specs: list[str]) -> int:
    """Several audits' JSON files as one markdown table, a column each."""
    audits = []
    for spec in specs:
        title, sep, path = spec.partition("=")
        if not sep or not title or not path:
            raise InputError(f"--side-by-side {spec}: expected TITLE=PATH, e.g. locomo=results/artifacts-locomo.json")
        audits.append((title, read_artifacts(path)))
    header, rows = side_by_side(audits)
    for row in [header, ["---"] * len(header)] + rows:
        print("| " + " | ".join(row) + " |")
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    """Load the dataset, run every system, compute the table and verdict, write and print them."""
    a = parse_args(argv)
    if a.side_by_side:
        return print_side_by_side(a.side_by_side)
    config = load_config(a.config)
    dataset = a.dataset or config["dataset"]
    k = a.k or config["top_k"]
    out = output_path(a.out or os.path.join(results_dir(config["run_id"]),
                                            f"artifacts-{os.path.splitext(os.path.basename(dataset))[0]}.json"),
                      "--out")
    # 1. The whole dataset, validated before anything runs.
    cases = load_dataset(dataset)
    kinds = sorted({kind_of(q) for c in cases for q in c["questions"]})
    # 2. Every system's ranked turns per question: the real ones, the query-blind backends, the cue reader.
    records = []
    for name in list(a.systems) + list(BLIND_BACKENDS):
        print(f"artifacts: running {name} on {len(cases)} cases", file=sys.stderr)
        records += backend_records(name, config, cases, k)
    cue, cue_reader = cue_records(cases, k)
    records += cue
    # 3. recall_any@k per kind, the paired intervals against the baseline, the verdict.
    recall = recall_table(records, kinds)
    differences = differences_table(records, a.systems[0], kinds, a.resamples, SEED)
    reasons = blind_failures(recall, differences, list(BLIND_SYSTEMS), a.limit)
    audit = {"format": ARTIFACTS_FORMAT, "dataset": dataset, "dataset_sha256": sha256_data(dataset),
             "cases": len(cases), "questions": sum(len(c["questions"]) for c in cases), "k": k, "limit": a.limit,
             "baseline": a.systems[0], "systems": list(a.systems), "blind_systems": list(BLIND_SYSTEMS),
             "kinds": kinds, "resamples": a.resamples, "seed": SEED, "recall": recall, "differences": differences,
             "cue_reader": cue_reader, "verdict": "FAIL" if reasons else "PASS", "reasons": reasons}
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    write_json_atomic(out, audit)
    # 4. The table and the verdict on stdout.
    header, rows = table(audit)
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    print(f"recall_any@{k} per kind on {dataset} (a system's difference to the baseline with its 95% paired "
          f"cluster-bootstrap interval in brackets)")
    for row in [header] + rows:
        print("  ".join(x.ljust(w) for x, w in zip(row, widths)).rstrip())
    print(f"{audit['verdict']}: {summary(audit)}")
    for reason in audit["reasons"][1:]:
        print(f"  {reason}")
    print(f"wrote {out}", file=sys.stderr)
    return EXIT_CHECK_FAILED if reasons else EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
