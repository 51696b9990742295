"""Write the report people read: report.md, a self-contained
report.html to open from disk, and plots beside them (by default beside --scores, in
results/RUN_ID/), with the instrument's checks, and the judge's calibration and the human audit
when score.py was given them (it reads and checks them into scores.json). Every number comes
from scores.json (score.py, through metrics.py) and is written by wording.py's formatters; the
run records and the dataset give the answers, the context each model read and the turns the
question explorer shows, and nothing is computed here again.

The report opens on the answer: one compact table (each system's accuracy with its interval,
its paired difference to the baseline with the interval and whether it separates them, gap
closed, recall in context, tokens per question; the model-free report: recall in context, its
paired difference, recall_all@k, NDCG@k and R@k), then one line each for what the embedded
reader can show, the controls' verdict and every deviation from the contract, each linking to
its detail. Then every metric in one table (controls first, the baseline marked, a metric that
cannot be measured n/a with its reason as a footnote), the fairness contract, the paired
comparisons (accuracy, per question type, retrieval), what the controls say (check.py's
verdicts), every memory metric per question type with abstention apart, the budget curve,
where the wrong answers came from, cost and latency, repeats and the noise floor, the judge's
calibration on its tuning and held-out sets and the human agreement, the run's facts and the
commands that reproduce it. Every figure is over all repeats. Numbers are rounded for reading
(3 significant digits for rates, whole tokens); the exact values stay in scores.json. The same
first table, aligned, is printed on stdout.

report.html holds the same tables and plots, and every question as a row: each system's answer,
verdict, the layer that decided it and the judge's reason, the failure cause, the prompt the
model read (rebuilt from the record's context_text and the config's answer_prompt, checked by
its sha256), and its context lines in the order sent with the evidence highlighted and the
budget cut marked. Systems A and B can be picked and compared (A right and B wrong, or the
reverse), filtered by type, failure cause and layer, sorted; the view is kept in the address
(report.html#questions?a=...&b=...), each count of the summary links to its rows, and each
question has a permalink (report.html#QID). The rows are built in the browser from one JSON
blob, a page or an expanded row at a time, so the file stays usable at LongMemEval scale. No
network: everything is inline.

Plots (accuracy, budget curve, failure causes) need the optional extra: pip install -r
requirements-plots.txt. Without it the report says how to get them.

Usage:
  python report.py --scores results/RUN/scores.json --manifest results/RUN/manifest-RUN.json \\
      --runs runs/RUN/*.jsonl --verdicts results/RUN/verdicts.jsonl
  python report.py --scores results/RUN/scores.json --manifest results/RUN/manifest-RUN.json \\
      --runs runs/RUN/*.jsonl --verdicts results/RUN/verdicts.jsonl --checks results/RUN/checks.json \\
      --out results/RUN/report.md
  python report.py ... --panel results/RUN/panel.json --sweep results/sweep.json   # the ranking's stability
"""
from __future__ import annotations

import argparse
import os
import sys

import runindex
from blind import read_artifacts
from cli import EXIT_OK, InputError, run_cli
from dataset import dataset_from, iter_cases
from fileio import output_path, read_json, sha256_file, write_atomic
from formats import (SCORES_FORMAT, check_format, check_manifest_describes, load_comparison, read_checks, read_manifest,
                     read_verdicts)
from report_explorer import explorer_data, render_html
from report_cost import dollar_cost_blocks, frontier_blocks
from report_plots import draw_plots
from report_sections import (artifacts_section, budget_section, by_type_section,
                             contract_section, controls_section, cost_section, failures_section,
                             glance_section, grader_line, kind_recall_section, paired_section,
                             repeats_section, results_section, retrieval_only, retrieval_paired_section,
                             type_differences_section)
from report_document import Code, Heading, Link, Para, render_markdown, render_terminal, segs
from report_provenance import (checks_section, facts_section, judge_section, plots_note,
                               reproduce_section)
from report_stability import stability_line

PLOT_NAMES = ("accuracy", "budget", "failures", "frontier")
MANIFEST_FIELDS = ("run_id", "created_utc", "git_commit", "git_dirty", "dataset", "dataset_sha256", "dataset_counts",
                   "config", "config_sha256", "answer_model", "judge_model", "top_k", "context_token_budget",
                   "tokenizer", "endpoint", "served_model_info", "backends")


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------

def read_scores(path: str) -> dict:
    """score.py's JSON, of this code's format."""
    scores = read_json(path, "scores of score.py --json")
    check_format(scores, SCORES_FORMAT, path, "rerun score.py")
    return scores


def check_inputs(scores: dict, paths: dict) -> None:
    """The run files and the verdicts are exactly those scores.json was made from (by content):
    the report shows their answers beside score.py's numbers, never numbers of its own."""
    if sorted(scores["inputs"]["runs"].values()) != sorted(sha256_file(p) for p in paths["runs"]):
        raise InputError(f"{paths['scores']}: scores other run files than --runs (their sha256 differ); rerun "
                         f"score.py on these run files")
    scored = sorted(scores["inputs"]["verdicts"].values())
    if scored != ([sha256_file(paths["verdicts"])] if paths["verdicts"] else []):
        raise InputError(f"{paths['scores']}: scored other verdicts than --verdicts "
                         f"({', '.join(scores['inputs']['verdicts']) or 'none'}; a verdicts file graded again "
                         f"since is another): pass the verdicts it scored, or rerun score.py")


# What must be equal between a comparison and the model-free comparison that leads its first
# screen: the retrieval both measure (the same dataset, k, budgets, tokenizer and seed).
SAME_RETRIEVAL_CONTRACT = ("dataset_sha256", "top_k", "tokenizer", "seed")


def read_model_free(path: str, scores: dict) -> dict:
    """The model-free comparison (score.py's JSON of run.py --retrieval-only files) of the same
    retrieval as these answered runs; an InputError naming the field that differs."""
    free = read_scores(path)
    if not retrieval_only(free):
        raise InputError(f"--model-free {path}: scores answered runs; pass the model-free pass's scores.json (of "
                         f"run.py --retrieval-only files)")
    for field in SAME_RETRIEVAL_CONTRACT:
        if free["contract"][field] != scores["contract"][field]:
            raise InputError(f"--model-free {path}: field '{field}' is {free['contract'][field]!r}, these runs have "
                             f"{scores['contract'][field]!r}: not the same retrieval; score the model-free runs of "
                             f"this comparison")
    if free["budgets"] != scores["budgets"]:
        raise InputError(f"--model-free {path}: budgets {free['budgets']}, these runs have {scores['budgets']}")
    return free


def verdicts_by_key(path: str) -> dict:
    """Verdicts keyed by formats.record_key (the audit is checked against them)."""
    return {key: v for key, (_, v) in read_verdicts(path).items()}


def questions_text(coverage: dict) -> str:
    """How many of the dataset's questions a comparison scored: "378 questions", or "36 of 378
    questions" for a sample, a --limit, a shard or a partial comparison."""
    scored, total = coverage["scored_questions"], coverage["dataset_questions"]
    return f"{total:,} questions" if scored == total else f"{scored:,} of {total:,} questions"


# ---------------------------------------------------------------------------------------------
# The whole report, in reading order
# ---------------------------------------------------------------------------------------------

def build_blocks(scores: dict, manifest: dict, verdicts: dict | None, checks: dict | None, calibration: dict | None,
                 audit: dict | None, plots: dict | None, paths: dict, artifacts: dict | None = None,
                 model_free: dict | None = None, stability: list | None = None) -> list:
    """The whole report: first the answer (the compact table, the reader, the checks and the
    deviations in a line each; the model-free comparison's table first when the reader cannot
    compare systems by accuracy), then the rest: every metric, the contract, the paired
    comparisons, the controls, the breakdowns, the judge, the checks, the facts and the commands."""
    order = scores["systems"]
    got = plots or {}
    kind = "model-free report (retrieval only)" if retrieval_only(scores) else "report"
    html_name = os.path.basename(paths["html"])
    blocks: list = [Heading(1, f"memory-bench {kind}: {manifest['run_id']}", "top"),
                    Para(segs(f"{len(order)} system rows on {questions_text(scores['coverage'])} of ",
                              Code(manifest["dataset"]), ", baseline ", Code(scores["baseline"]),
                              ". Every question, with " + ("what each system retrieved and the context it built"
                                                           if retrieval_only(scores) else
                                                           "each system's answer and the prompt it read") + ": ",
                              Link(html_name, "#questions"), "."))]
    free_page = (os.path.relpath(os.path.join(os.path.dirname(os.path.abspath(paths["model_free"])), "report.html"),
                                 os.path.dirname(os.path.abspath(paths["html"]))) if paths["model_free"] else "")
    blocks += glance_section(scores, order, manifest, checks,
                             grader_line(scores, calibration), model_free, artifacts, free_page,
                             stability)
    blocks += results_section(scores, order, got)
    blocks += plots_note(plots)
    blocks += contract_section(scores, manifest, checks)
    blocks += paired_section(scores, order)
    blocks += retrieval_paired_section(scores)
    blocks += type_differences_section(scores, order)
    blocks += controls_section(scores, order, checks)
    blocks += by_type_section(scores, order)
    blocks += kind_recall_section(scores, order)
    blocks += artifacts_section(scores, artifacts, manifest, paths["artifacts"])
    blocks += budget_section(scores, order, got)
    blocks += failures_section(scores, order, got, html_name)
    blocks += cost_section(scores, order) + dollar_cost_blocks(scores, order) + frontier_blocks(scores, order, plots)
    blocks += repeats_section(scores, order)
    blocks += judge_section(scores, verdicts, calibration, audit, paths, manifest["config"])
    blocks += checks_section(checks, paths)
    blocks += facts_section(scores, manifest, order)
    blocks += reproduce_section(scores, manifest, paths, checks)
    return blocks


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    """Read the run's files, write report.md, report.html and the plots beside them."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scores", required=True, help="results/$RUN/scores.json from score.py --json")
    ap.add_argument("--manifest", required=True, help="results/$RUN/manifest-$RUN.json from manifest.py")
    ap.add_argument("--runs", nargs="+", required=True, help="the run files score.py scored")
    ap.add_argument("--verdicts", help="results/$RUN/verdicts.jsonl (not needed for retrieval-only runs)")
    ap.add_argument("--checks", help="results/$RUN/checks.json from check.py (optional)")
    ap.add_argument("--artifacts", help="results/$RUN/model-free/artifacts.json from artifacts.py (optional; the "
                                        "model-free report shows it, the first screen says its verdict)")
    ap.add_argument("--model-free", help="results/$RUN/model-free/scores.json, the model-free comparison of the same "
                                         "retrieval (optional): when check.py finds the reader inadequate for "
                                         "accuracy, the first screen leads with its table, linked to the report.html "
                                         "beside it")
    ap.add_argument("--panel", help="results/$RUN/panel.json from panel.py: did the ranking hold under every judge")
    ap.add_argument("--sweep", help="sweep.py's JSON holding these scores: did the ranking hold under every reader")
    ap.add_argument("--dataset", help="the dataset, when it is no longer where the manifest says (checked by sha256)")
    ap.add_argument("--out", help="report.md to write; report.html and the plots go beside it (default: report.md "
                                  "beside --scores)")
    a = ap.parse_args(argv)
    a.out = a.out or os.path.join(os.path.dirname(a.scores), "report.md")
    if not a.out.endswith(".md"):
        raise InputError(f"--out {a.out}: expected a .md path (report.html and the plots are written beside it)")
    output_path(a.out, "--out")
    stem = a.out[:-3]
    paths = {"scores": a.scores, "manifest": a.manifest, "runs": a.runs, "verdicts": a.verdicts, "checks": a.checks,
             "artifacts": a.artifacts, "model_free": a.model_free, "out": a.out, "html": stem + ".html"}

    # 1. The comparison: scores.json, and the very run files and verdicts it was made from, held
    #    against the dataset the manifest names (the turn texts the explorer shows).
    scores = read_scores(a.scores)
    check_inputs(scores, paths)
    manifest = read_manifest(a.manifest, MANIFEST_FIELDS)
    dataset = dataset_from(None, a.manifest, a.dataset)
    records = load_comparison(a.runs, dataset, allow_partial=scores["coverage"]["partial"]).records
    check_manifest_describes(a.manifest, records)
    verdicts = verdicts_by_key(a.verdicts) if a.verdicts else None
    # 2. The optional inputs; a given file must be readable, an absent one is said in the report.
    checks = read_checks(a.checks, list(scores["inputs"]["runs"].values()),
                         list(scores["inputs"]["verdicts"].values())) if a.checks else None
    # The judge's calibration and the human audit as score.py read and checked them into scores.json.
    calibration, audit = scores["calibration"], scores["audit"]
    paths["calibration"], paths["audit"] = (x["file"] if x else None for x in (calibration, audit))
    artifacts = read_artifacts(a.artifacts) if a.artifacts else None
    model_free = read_model_free(a.model_free, scores) if a.model_free else None
    stability = stability_line(scores, a.scores, a.panel, a.sweep)
    # 3. Plots, then the report in both forms.
    order = scores["systems"]
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    drawn = draw_plots(scores, order)
    plots, images = {}, {}
    for name in PLOT_NAMES:
        path = f"{stem}-{name}.png"
        if drawn is not None and name in drawn:
            write_atomic(path, drawn[name])
            plots[name], images[path] = path, drawn[name]
        elif os.path.exists(path):
            os.unlink(path)  # a plot of an earlier report that this one does not draw
    blocks = build_blocks(scores, manifest, verdicts, checks, calibration, audit, plots if drawn is not None else None,
                          paths, artifacts, model_free, stability)
    write_atomic(a.out, render_markdown(blocks, os.path.basename(paths["html"])))
    # The cases of the records, read again from the file dataset_from validated.
    cases = list(iter_cases(dataset.path, {r["case_id"] for r in records}))
    data = explorer_data(scores, order, records, cases, verdicts, manifest)
    write_atomic(paths["html"], render_html(blocks, images, data, f"memory-bench report: {manifest['run_id']}"))
    index = runindex.update(paths["html"], runindex.report_entry(scores, manifest, paths["html"]))
    print(f"wrote {a.out}, {paths['html']}" + (f" and {len(plots)} plot(s)" if drawn is not None else
          "; plots not drawn: pip install -r requirements-plots.txt")
          + (f"; the index of the runs: {index}" if index else ""), file=sys.stderr)
    # 4. The answer on the terminal too: the first table, aligned, and its lines.
    print(render_terminal(blocks, paths["html"]))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
