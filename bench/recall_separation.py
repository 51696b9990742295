"""How far apart systems' retrieval recall is: each system's recall_any@k minus the baseline's
on the same questions, with the 95% cluster-bootstrap interval score.py draws for accuracy
(metrics.ClusterBootstrap, 10,000 resamples of whole cases). Reads run files of run.py, answered
or --retrieval-only; score.py prints each recall, this prints their paired differences, which
it does not (issue 25 asks that bm25 and dense each differ from keyword with an interval that
excludes 0).

Usage:
  python bench/recall_separation.py --baseline runs/model-free/keyword.jsonl runs/model-free/bm25.jsonl runs/model-free/dense.jsonl
"""
from __future__ import annotations

import argparse
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from interface import InputError, read_jsonl, run_cli  # noqa: E402
from metrics import RESAMPLES, SEED, ClusterBootstrap, interval, interval_text, recall_metrics  # noqa: E402


def recall_any(path: str) -> dict:
    """{qid: (cluster, evidence found among the retrieved)} for the questions whose recall
    score.py measures, by score.py's own definition (metrics.recall_metrics, one record at a time)."""
    out = {}
    for _, r in read_jsonl(path):
        hit = recall_metrics([r])["recall_any_at_k"]
        if hit is not None:
            out[r["qid"]] = (r["cluster"], bool(hit))
    return out


def paired_difference(by_cluster: dict) -> tuple[float, float | None, float | None]:
    """The mean of per-question differences and its 95% interval, resampling whole clusters;
    no interval from a single cluster (resampling it always draws it)."""
    point = sum(sum(ds) for ds in by_cluster.values()) / sum(len(ds) for ds in by_cluster.values())
    boot = ClusterBootstrap(list(by_cluster), RESAMPLES, SEED)
    t = boot.totals(np.column_stack([boot.column({c: sum(ds) for c, ds in by_cluster.items()}),
                                     boot.column({c: len(ds) for c, ds in by_cluster.items()})]))
    with np.errstate(divide="ignore", invalid="ignore"):
        lo, hi = interval(np.where(t[:, 1] > 0, t[:, 0] / t[:, 1], np.nan))
    return (point, lo, hi) if len(by_cluster) > 1 else (point, None, None)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", required=True, help="the baseline's run file")
    ap.add_argument("runs", nargs="+", help="the other systems' run files")
    a = ap.parse_args(argv)
    base = recall_any(a.baseline)
    print(f"{a.baseline}: recall_any@k {sum(hit for _, hit in base.values()) / len(base):.3f} (n={len(base)})")
    for path in a.runs:
        other = recall_any(path)
        shared = sorted(set(base) & set(other))
        if not shared:
            raise InputError(f"{path}: no question with measured recall in common with {a.baseline}; "
                             f"pass run files of one comparison (the same dataset)")
        by_cluster = defaultdict(list)
        for qid in shared:
            by_cluster[base[qid][0]].append(int(other[qid][1]) - int(base[qid][1]))
        point, lo, hi = paired_difference(dict(by_cluster))
        excludes = lo is not None and (lo > 0 or hi < 0)
        difference = interval_text({"difference": point, "ci_low": lo, "ci_high": hi})
        print(f"{path}: recall_any@k {sum(other[q][1] for q in shared) / len(shared):.3f}, minus the baseline "
              f"{difference} over {len(shared)} questions in {len(by_cluster)} cases"
              f"{'' if excludes or lo is None else ' (the interval includes 0)'}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
