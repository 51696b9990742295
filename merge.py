"""Join the shard files of one run (run.py --shard I/N) or of one grading (judge.py --shard I/N)
into the file a single machine would have written.

A run is merged only when every shard has the same run identity and the same N, and every
question of the dataset (every budget and repeat the shards made) is present exactly once; the merged file is in dataset order with `shard` cleared, so it equals a single-machine
run record for record (timing fields aside) and can be resumed or extended like one. The
records must come from the config's dataset as it is now (its sha256). Verdict shards are
merged only when every answer of the merged run files (--runs, held against the config's
dataset as score.py holds them) has exactly one verdict, graded against what the record holds
now, by one grader: what score.py would refuse, merge.py refuses first.

Usage:
  RUN=$(python -c "import yaml; print(yaml.safe_load(open('config.yaml'))['run_id'])")   # config.yaml's run_id
  python merge.py --config config.yaml --out runs/$RUN/keyword.jsonl runs/$RUN/shards/keyword.*.jsonl
  python merge.py --verdicts --runs runs/$RUN/*.jsonl --out results/$RUN/verdicts.jsonl results/$RUN/shards/verdicts.*.jsonl
"""
from __future__ import annotations

import argparse
import os
import sys

from cli import EXIT_OK, InputError, run_cli
from dataset import Dataset, dataset_from, parse_shard, shard_of
from fileio import dumps, output_path, read_jsonl, write_atomic
from formats import (BUDGET_FIELD, RUN_IDENTITY_FIELDS, load_comparison, match_verdicts, read_verdicts, record_key,
                     run_key)
from rules import RULES_SHA256


def read_shards(paths: list[str]) -> list[tuple[str, int, dict]]:
    """(path, line, record) of every record of every shard file."""
    rows = [(path, lineno, rec) for path in paths for lineno, rec in read_jsonl(path)]
    if not rows:
        raise InputError("the shard files hold no records")
    return rows


def missing_cases(missing: list[tuple], dataset: Dataset, n: int) -> str:
    """The cases of the missing (qid, budget, repeat) records, each with the shard it belongs to,
    in dataset order: what to rerun. The first ten are named."""
    qids = {q for q, _, _ in missing}
    cases = [c for c in dataset.cases if any(x["qid"] in qids for x in c["questions"])]
    named = ", ".join(f"{c['case_id']!r} (shard {shard_of(c, n)}/{n})" for c in cases[:10])
    more = f" and {len(cases) - 10} more" if len(cases) > 10 else ""
    return f"{len(cases)} case(s): {named}{more}"


def merge_runs(paths: list[str], dataset: Dataset) -> list[dict]:
    """The records of one run from its shard files, checked complete, in dataset order."""
    rows = read_shards(paths)
    first_path, first_line, first = rows[0]
    shards: dict = {}
    for path, lineno, rec in rows:
        for f in RUN_IDENTITY_FIELDS:
            if f not in rec:
                raise InputError(f"{path}:{lineno}: not a run record (no field '{f}')")
            if rec[f] != first[f]:
                raise InputError(f"{path}:{lineno}: field '{f}' is {rec[f]!r}, but {first_path}:{first_line} has "
                                 f"{first[f]!r}: these shards are not of one run")
        shard = parse_shard(rec["shard"]) if rec["shard"] is not None else None
        if shard is None:
            raise InputError(f"{path}:{lineno}: not a shard (field 'shard' is null): this file is a whole run")
        shards.setdefault(shard[1], set()).add(shard[0])
    if len(shards) != 1:
        raise InputError(f"the files mix shard counts {sorted(shards)}: merge the shards of one --shard I/N split")
    n = next(iter(shards))
    if dataset.sha256 != first["dataset_sha256"]:
        raise InputError(f"{first_path}:{first_line}: these shards ran on another dataset (dataset_sha256 "
                         f"{first['dataset_sha256'][:12]}) than the config's {dataset.path} as it is now; merge with "
                         f"the config they ran with")
    # A missing shard shows as missing questions below (a share may hold no case at all, and
    # then its file is empty: present or not, it adds nothing).
    order = {qid: i for i, qid in enumerate(dataset.qids(first["limit"], None, first["sample"], first["seed"]))}
    budgets = sorted({rec[BUDGET_FIELD] for _, _, rec in rows})
    repeats = sorted({rec["repeat"] for _, _, rec in rows})
    seen: dict = {}
    for path, lineno, rec in rows:
        key = run_key(rec)
        if rec["qid"] not in order:
            raise InputError(f"{path}:{lineno}: question {rec['qid']!r} is not in the dataset {dataset.path}")
        if key in seen:
            raise InputError(f"{path}:{lineno}: question {rec['qid']!r} (budget {key[1]}, repeat {key[2]}) is also in "
                             f"{seen[key]}: a question must be in exactly one shard")
        seen[key] = f"{path}:{lineno}"
    missing = [(q, b, r) for q in order for b in budgets for r in repeats if (q, b, r) not in seen]
    if missing:
        q, b, r = missing[0]
        raise InputError(f"{len(missing)} record(s) are missing from the shards, of {missing_cases(missing, dataset, n)} "
                         f"(first: question {q!r}, budget {b}, repeat {r}); finish those shards (rerun their run.py "
                         f"command) before merging")
    merged = [{**rec, "shard": None} for _, _, rec in rows]
    merged.sort(key=lambda rec: (order[rec["qid"]], rec[BUDGET_FIELD], rec["repeat"]))
    return merged


def merge_verdicts(paths: list[str], runs: list[str], dataset: Dataset) -> list[dict]:
    """The verdicts of one grading from its shard files: each answer of the run files graded
    exactly once, against what its record holds now, by one grader, and nothing else (what
    score.py would refuse in the merged file is refused here, naming the shard)."""
    seen: dict = {}
    for path in paths:
        for key, (lineno, v) in read_verdicts(path).items():  # fields and one verdict per answer, per file
            if key in seen:
                raise InputError(f"{path}:{lineno}: {v['backend']!r} question {v['qid']!r} is also graded in "
                                 f"{seen[key][0]}")
            seen[key] = (f"{path}:{lineno}", v)
    if not seen:
        raise InputError("the shard files hold no records")
    graded = [r for r in load_comparison(runs, dataset).records if not r["retrieval_only"]]
    known = {record_key(r) for r in graded}
    for where, v in seen.values():
        if record_key(v) not in known:
            raise InputError(f"{where}: a verdict of {v['backend']!r} question {v['qid']!r}, which the run files do "
                             f"not hold: these shards graded other runs")
    m = match_verdicts(graded, seen, RULES_SHA256)
    m.refuse(None, "finish or rerun the judge.py shards, all with the same judge.py and config, before merging")
    return [v for _, v in m.pairs]


def main(argv: list[str] | None = None) -> int:
    """Merge shard files into --out (refused if it exists, unless --force)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("shards", nargs="+", help="the shard files of one run (or of one grading with --verdicts)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--config", default="config.yaml", help="its dataset is what a merged run must cover (default "
                                                            "config.yaml)")
    ap.add_argument("--verdicts", action="store_true", help="the shards are judge.py verdict files")
    ap.add_argument("--runs", nargs="+", help="with --verdicts: the (merged) run files the verdicts grade")
    ap.add_argument("--force", action="store_true", help="overwrite --out")
    a = ap.parse_args(argv)
    output_path(a.out, "--out")
    if os.path.exists(a.out) and not a.force:
        raise InputError(f"{a.out}: exists; pass --force to overwrite it")
    if a.verdicts and not a.runs:
        raise InputError("--runs is required with --verdicts (every answer of those run files must be graded "
                         "exactly once)")
    dataset = dataset_from(a.config, None)
    merged = merge_verdicts(a.shards, a.runs, dataset) if a.verdicts else merge_runs(a.shards, dataset)
    write_atomic(a.out, "".join(dumps(r) + "\n" for r in merged))
    print(f"wrote {a.out}: {len(merged)} records from {len(a.shards)} shard files", file=sys.stderr)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
