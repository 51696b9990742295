"""Compare runs across run ids: yesterday's run of a system against today's, or two settings of
one system, question by question, with the same 95% cluster-bootstrap intervals as score.py
(metrics.py computes both). The runs must share the fairness contract (dataset, reader, prompt,
sampling, top_k, tokenizer, budget, and the grader of their verdicts); anything else differing
is refused with the field named. What may differ is the memory system: its code, version and
settings. Given more than two runs, in the order they were made, it is a history: every run
against the first (the baseline), and each run against the one before it.

Writes compare.md, compare.html (in the report's style), compare.json (scores.json's shape:
systems, differences, retrieval_differences, questions, plus the runs and the steps) and one
CSV per table (compare-systems.csv, compare-differences.csv, ...), then rewrites the index of
the runs (results/index.html). Each run is named RUN_ID/BACKEND unless --labels names it.

Usage:
  python compare.py --runs runs/A/keyword.jsonl runs/B/keyword.jsonl \\
      --verdicts results/A/verdicts.jsonl results/B/verdicts.jsonl
  python compare.py --runs runs/A/model-free/bm25.jsonl runs/B/model-free/bm25.jsonl \\
      --manifest results/B/manifest-B.json --out results/compare/bm25-A-B/compare.md
  jq -c '.differences[] | {system, difference, ci_low, ci_high}' results/compare/*/compare.json
"""
from __future__ import annotations

import argparse
import html
import json
import os
import re
import sys
from datetime import datetime, timezone

import csvexport
import runindex
from cli import EXIT_OK, InputError, run_cli
from config import ROOT
from dataset import dataset_from
from fileio import output_path, sha256_file, write_atomic, write_json_atomic
from formats import (CONTRACT_FIELDS, VERDICT_IDENTITY_FIELDS, contract_problems, coverage, read_run_files,
                     record_key)
from metrics import Scoring, pair_verdicts, retrieval_differences
from report_document import md_plain
from stats import RESAMPLES, SEED
from wording import estimate_text, interval_text, rate, reading, separated_text, type_difference_text, whole

COMPARE_FORMAT = "compare/1"
# What may differ between the runs compared: the system (its name, version, code and settings,
# and whether its search used the question's date) and where and when it was run.
SYSTEM_FIELDS = ("run_id", "backend", "backend_id", "backend_version", "backend_code_sha256", "time_aware",
                 "extra_wait_s", "internal_model")
GRADER_FIELDS = VERDICT_IDENTITY_FIELDS[1:]  # rules, judge model, judge prompts


# ---------------------------------------------------------------------------------------------
# Inputs: each run file as one system of the comparison
# ---------------------------------------------------------------------------------------------

def read_run(path: str, verdicts: str | None, dataset) -> tuple[list, list]:
    """One run file's (path, line, record) rows and (record, verdict) pairs, refused when it holds
    more than one system (compare.py compares runs of one system each)."""
    rows = read_run_files([path], dataset)
    names = sorted({rec["backend"] for _, _, rec in rows})
    if len(names) > 1:
        raise InputError(f"{path}: holds the runs of {len(names)} systems ({', '.join(names)}); compare.py takes one "
                         f"system's run file per --runs entry (runs/RUN_ID/SYSTEM.jsonl)")
    return rows, pair_verdicts([rec for _, _, rec in rows], verdicts)


def default_label(rows: list) -> str:
    """RUN_ID/BACKEND of a run file, BACKEND being the name run.py was given (--backend)."""
    first = rows[0][2]
    return f"{first['run_id']}/{first['backend_id']}"


def run_identity(path: str, rows: list, label: str, verdicts: str | None) -> dict:
    """What a run is: its file, its label and the system fields that may differ."""
    first = rows[0][2]
    return {"label": label, "file": path, "sha256": sha256_file(path), "verdicts": verdicts,
            **{f: first[f] for f in SYSTEM_FIELDS}}


def relabel(rec: dict, label: str) -> dict:
    """A copy of a run record under the run's label, so two runs of one backend are two systems."""
    return {**rec, "backend": label}


def grader_problems(pairs_by_run: dict) -> list[str]:
    """Where the runs' verdicts come from different graders: a field of the grader, named, with
    the labels of each value."""
    values: dict = {}
    for label, pairs in pairs_by_run.items():
        for _, v in pairs:
            if v is not None:
                for f in GRADER_FIELDS:
                    values.setdefault(f, {}).setdefault(v[f], set()).add(label)
    return [f"field '{f}' differs: " + "; ".join(f"{v!r} in {', '.join(sorted(ls))}" for v, ls in seen.items())
            for f, seen in values.items() if len(seen) > 1]


def served_model_notes(records: list[dict]) -> list[str]:
    """A warning when the runs' answers came from more than one served model: the same model
    name behind a provider can change between two days' runs."""
    served: dict = {}
    for r in records:
        if r["served_model"] is not None:
            served.setdefault(r["served_model"], set()).add(r["backend"])
    if len(served) < 2:
        return []
    return ["The answers were served by more than one model (" + "; ".join(
        f"{m}: {', '.join(sorted(ls))}" for m, ls in sorted(served.items())) + "): the reader was not held "
        "constant, so differences between these runs are not differences of memory alone."]


def resolve_baseline(name: str | None, labels: list[str]) -> str:
    """The run every other is compared with: the first unless --baseline names another label."""
    if name is None:
        return labels[0]
    if name not in labels:
        raise InputError(f"--baseline {name!r} is not one of the runs: {', '.join(labels)}")
    return name


# ---------------------------------------------------------------------------------------------
# The history: each run against the one before it
# ---------------------------------------------------------------------------------------------

def steps(scoring: Scoring, labels: list[str]) -> list[dict]:
    """Each run minus the run before it, per budget, on answerable questions (the same paired
    interval as the differences to the baseline); empty for two runs (that is the difference)."""
    if len(labels) < 3:
        return []
    out = []
    for budget in scoring.budgets:
        rows = [scoring.row_of(label, budget) for label in labels]
        for before, after in zip(rows, rows[1:]):
            if before is None or after is None or not scoring.systems[after]["graded"]:
                continue
            d = scoring.paired(after, before)
            separated = None if d is None or d["ci_low"] is None else not d["ci_low"] <= 0 <= d["ci_high"]
            out.append({"system": after, "before": before, "budget": budget,
                        **(d or {"difference": None, "ci_low": None, "ci_high": None, "standard_error": None,
                                 "questions": 0, "clusters": 0}), "separated": separated})
    return out


# ---------------------------------------------------------------------------------------------
# The page: compare.md and compare.html, from compare.json
# ---------------------------------------------------------------------------------------------

def differing(runs: list[dict]) -> list[str]:
    """The system fields whose values differ between the runs (what changed)."""
    return [f for f in SYSTEM_FIELDS if len({json.dumps(r[f]) for r in runs}) > 1]


def tables(c: dict) -> list[tuple[str, str, list[str], list[list[str]]]]:
    """The page's tables as (anchor, title, header, rows), shared by the Markdown and the HTML."""
    out = []
    changed = differing(c["runs"]) or ["nothing but the file: the same system, code and settings"]
    out.append(("runs", "The runs", ["run", "file", *[f for f in SYSTEM_FIELDS if f in changed or f == "run_id"]],
                [[r["label"] + (" (baseline)" if r["label"] == c["baseline"] else ""), r["file"],
                  *[cell(f, r[f]) for f in SYSTEM_FIELDS if f in changed or f == "run_id"]] for r in c["runs"]]))
    answered = [s for s in c["systems"] if not s["retrieval_only"]]
    out.append(("numbers", "Each run", ["run", "budget", "n", "accuracy [95% CI]", "abstention", "recall_all ctx",
                                        "recall_any@k", "NDCG@k", "ctx tokens", "search p95 ms", "errors"],
                [[s["label"], str(s["budget"]), str(s["n"]),
                  estimate_text(s["accuracy"], s["accuracy_ci"]) if answered else "n/a (model-free)",
                  rate(s["abstention_accuracy"]), rate(s["recall_all_in_context"]), rate(s["recall_any_at_k"]),
                  rate(s["ndcg_at_k"]), whole(s["mean_context_tokens"]), rate(s["search_ms_p95"]), str(s["errors"])]
                 for s in c["systems"]]))
    if c["differences"]:
        out.append(("differences", f"Paired difference to {c['baseline']} on answerable questions",
                    ["run", "budget", "difference [95% CI]", "reading", "questions", "clusters",
                     "minimum detectable", "abstention"],
                    [[d["system"], str(d["budget"]), interval_text(d), reading(d), str(d["questions"]),
                      str(d["clusters"]), rate(d["minimum_detectable_difference"]), interval_text(d["abstention"])]
                     for d in c["differences"]]))
        types = sorted({t for d in c["differences"] for t in d["by_type"]})
        by_type = {s["label"]: s["by_type"] for s in c["systems"]}
        out.append(("by-type", "Paired difference per question type",
                    ["run", *types], [[d["system"], *[type_cell(d, t, by_type) for t in types]]
                                      for d in c["differences"]]))
    if c["steps"]:
        out.append(("steps", "Run over run: each run against the one before it",
                    ["run", "before", "budget", "difference [95% CI]", "separated"],
                    [[s["system"], s["before"], str(s["budget"]), interval_text(s),
                      separated_text(s)] for s in c["steps"]]))
    if c["retrieval_differences"]:
        out.append(("retrieval", f"Paired difference in retrieval to {c['baseline']} (needs no answer)",
                    ["run", "metric", "difference [95% CI]", "separated", "questions", "clusters"],
                    [[d["system"], d["metric"], interval_text(d), separated_text(d), str(d["questions"]),
                      str(d["clusters"])] for d in c["retrieval_differences"]]))
    return out


def cell(field: str, value) -> str:
    """A system field for reading: a code hash by its first 12 digits (compare.json holds all)."""
    return value[:12] if field == "backend_code_sha256" and value else str(value)


def type_cell(d: dict, t: str, by_type: dict) -> str:
    """A run's paired difference on one question type; where both runs got every question of the
    type wrong it says so, as 0.00 [0.00, 0.00] alone reads as a tie between two runs that each
    got some right."""
    x = d["by_type"][t] if t in d["by_type"] else None
    return type_difference_text(x, [by_type[label][t]["accuracy"] for label in (d["system"], d["baseline"])
                                    if t in by_type[label]])


def lines(c: dict) -> list[str]:
    """The sentences above the tables: the contract and what the comparison may say."""
    out = [f"Contract {c['fingerprint']}: dataset {os.path.basename(c['inputs']['dataset'])} "
           f"({c['contract']['dataset_sha256'][:12]}), reader {c['contract']['answer_model']}, budget "
           f"{', '.join(map(str, c['budgets']))}, top_k {c['contract']['top_k']}, tokenizer "
           f"{c['contract']['tokenizer']}; {c['resamples']} cluster-bootstrap resamples (seed {c['seed']}).",
           f"What differs between the runs: {', '.join(differing(c['runs'])) or 'nothing but the file'}."]
    out += [f"Warning: {w}" for w in c["warnings"]]
    return out


def render_markdown(c: dict) -> str:
    """compare.md."""
    # Labels, model ids and warnings come from the runs: shown as written (md_plain), so no
    # value opens markup or sends a control character.
    out = [f"# Across runs: {md_plain(', '.join(r['label'] for r in c['runs']), False)}", ""]
    out += [f"{md_plain(x, False)}  " for x in lines(c)] + [""]
    for _, title, header, rows in tables(c):
        out += [f"## {md_plain(title, False)}", "", "| " + " | ".join(md_plain(h, True) for h in header) + " |",
                "|" + "---|" * len(header)]
        out += ["| " + " | ".join(md_plain(cell, True) for cell in row) + " |" for row in rows]
        out.append("")
    out.append(f"CSV of every table: {', '.join(os.path.basename(p) for p in c['csv'])}; the exact numbers: "
               f"compare.json.")
    return "\n".join(out) + "\n"


def render_html(c: dict) -> str:
    """compare.html: the same tables, one file, no network."""
    with open(os.path.join(ROOT, "report.css"), encoding="utf-8") as f:
        css = f.read()
    body = [f"<h1>Across runs: {html.escape(', '.join(r['label'] for r in c['runs']))}</h1>\n"]
    body += [f"<p>{html.escape(x)}</p>\n" for x in lines(c)]
    for anchor, title, header, rows in tables(c):
        body.append(f'<h2 id="{anchor}">{html.escape(title)}</h2>\n<div class="scroll"><table class="summary">'
                    "<thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr></thead><tbody>\n")
        for row in rows:
            cls = ' class="baseline"' if row[0].startswith(c["baseline"]) and anchor in ("runs", "numbers") else ""
            body.append(f"<tr{cls}>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>\n")
        body.append("</tbody></table></div>\n")
    body.append("<p>CSV of every table: " + ", ".join(
        f'<a href="{html.escape(os.path.basename(p))}">{html.escape(os.path.basename(p))}</a>' for p in c["csv"])
        + '; the exact numbers: <a href="compare.json">compare.json</a>.</p>\n')
    return "".join([
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">\n",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<link rel=\"icon\" href=\"data:,\">\n",
        f"<title>memory-bench: across runs</title>\n<style>\n{css}</style>\n</head>\n<body>\n<main>\n",
        *body, "</main>\n</body>\n</html>\n"])


def default_out(labels: list[str]) -> str:
    """results/compare/LABEL-vs-LABEL/compare.md, the labels made safe as a folder name."""
    name = "-vs-".join(re.sub(r"[^A-Za-z0-9_.-]+", "_", label) for label in labels)
    return os.path.join(ROOT, "results", "compare", name[:150], "compare.md")


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------

def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line, its counts checked against each other."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", nargs="+", required=True, help="two or more run files, one system each, oldest first")
    ap.add_argument("--verdicts", nargs="+", help="each run's verdicts file (judge.py), in the order of --runs; not "
                                                  "needed for model-free runs")
    ap.add_argument("--labels", nargs="+", help="a name per run (default RUN_ID/BACKEND)")
    ap.add_argument("--baseline", help="the label every other run is compared with (default: the first run)")
    ap.add_argument("--config", default="config.yaml", help="names the dataset the runs are held against (default "
                                                            "config.yaml), unless --manifest is given")
    ap.add_argument("--manifest", help="a manifest-RUN.json: the dataset the runs are held against")
    ap.add_argument("--resamples", type=int, default=RESAMPLES)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--allow-partial", action="store_true",
                    help="compare on the questions every run holds, instead of refusing a run that lacks some")
    ap.add_argument("--out", help="compare.md to write; compare.html, compare.json and the CSV files go beside it "
                                  "(default results/compare/LABEL-vs-LABEL/compare.md)")
    a = ap.parse_args(argv)
    if len(a.runs) < 2:
        raise InputError("--runs: give two or more run files to compare")
    if len(set(map(os.path.abspath, a.runs))) < len(a.runs):
        raise InputError("--runs: a run file is given twice")
    if a.verdicts is not None and len(a.verdicts) != len(a.runs):
        raise InputError(f"--verdicts: give one verdicts file per run file, in the same order ({len(a.runs)} runs, "
                         f"{len(a.verdicts)} verdicts files)")
    if a.labels is not None and (len(a.labels) != len(a.runs) or len(set(a.labels)) < len(a.labels)):
        raise InputError(f"--labels: give one distinct label per run file ({len(a.runs)})")
    if a.resamples < 1:
        raise InputError("--resamples must be at least 1")
    return a


def read_runs(a: argparse.Namespace, dataset) -> tuple[list[dict], list[str], list, object, list]:
    """(the runs' identities, their labels, their verdicts files, the comparison, the
    (record, verdict) pairs of the questions every run holds); an InputError when the runs
    are not one comparison."""
    # 1. Each run read alone against the dataset and paired with its own verdicts, then named
    #    by its label, so that two runs of one backend are two systems of one comparison.
    verdicts = a.verdicts or [None] * len(a.runs)
    read = [read_run(path, v, dataset) for path, v in zip(a.runs, verdicts)]
    labels = a.labels or [default_label(rows) for rows, _ in read]
    if len(set(labels)) < len(labels):
        raise InputError(f"two runs have the same name ({', '.join(labels)}): the same run id and backend; name them "
                         f"with --labels")
    runs = [run_identity(path, rows, label, v) for path, (rows, _), label, v in zip(a.runs, read, labels, verdicts)]
    rows = [(path, line, relabel(rec, label)) for (rs, _), label in zip(read, labels) for path, line, rec in rs]
    pairs_by_run = {label: [(relabel(r, label), v) for r, v in pairs] for (_, pairs), label in zip(read, labels)}
    # 2. One contract: the run files' contract fields and the verdicts' grader, each named when
    #    it differs; then the questions every run holds.
    problems = contract_problems(rows) + grader_problems(pairs_by_run)
    if problems:
        raise InputError("these runs are not comparable (only the memory system may differ between them): "
                         + " | ".join(problems))
    comparison = coverage(rows, dataset, a.allow_partial)
    kept = {record_key(r) for r in comparison.records}
    pairs = [(r, v) for ps in pairs_by_run.values() for r, v in ps if record_key(r) in kept]
    return runs, labels, verdicts, comparison, pairs


def main(argv: list[str] | None = None) -> int:
    """Pair the runs question by question and write the comparison."""
    a = parse_args(argv)
    # 1 and 2: each run read alone, then all held to one contract (read_runs).
    dataset = dataset_from(a.config, a.manifest)
    runs, labels, verdicts, comparison, pairs = read_runs(a, dataset)
    # 3. The numbers, through metrics.py, as score.py computes them.
    scoring = Scoring(pairs, a.resamples, a.seed)
    baseline = resolve_baseline(a.baseline, labels)
    numbers = scoring.scores(baseline)
    first = comparison.records[0]
    contract = {f: first[f] for f in CONTRACT_FIELDS}
    out = a.out or default_out(labels)
    if not out.endswith(".md"):
        raise InputError(f"--out {out}: expected a .md path (compare.html, compare.json and the CSV go beside it)")
    output_path(out, "--out")
    folder = os.path.dirname(os.path.abspath(out))
    compared = {"format": COMPARE_FORMAT, "created_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "baseline": baseline, "runs": runs, "contract": contract,
                "fingerprint": runindex.contract_fingerprint(contract, numbers["budgets"]),
                **numbers, "retrieval_differences": retrieval_differences(comparison.records, baseline, a.resamples,
                                                                          a.seed),
                "steps": steps(scoring, labels), "coverage": comparison.coverage, "left_out": comparison.left_out,
                "warnings": served_model_notes(comparison.records),
                "inputs": {"dataset": dataset.path, "dataset_sha256": dataset.sha256,
                           "runs": {r["file"]: r["sha256"] for r in runs},
                           "verdicts": {v: sha256_file(v) for v in verdicts if v}}}
    # 4. The files: the CSV tables, the JSON, the page in both forms, then the index of the runs.
    compared["csv"] = [os.path.basename(p) for p in csvexport.write_tables(folder, compared, prefix="compare-")]
    write_json_atomic(os.path.join(folder, "compare.json"), compared)
    write_atomic(out, render_markdown(compared))
    page = os.path.join(folder, "compare.html")
    write_atomic(page, render_html(compared))
    index = runindex.update(page, runindex.compare_entry(compared, page))
    print(f"wrote {out}, {page}, compare.json and {len(compared['csv'])} CSV files"
          + (f"; the index of the runs: {index}" if index else ""), file=sys.stderr)
    print(render_markdown(compared))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
