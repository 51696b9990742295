"""A reader sweep: one comparison answered by several pinned readers (answer models), each its own
run id with the rest of the contract equal, and what changes with the reader. Reads each
reader's scores.json (score.py --json) and prints, and writes with --json:

- each system's accuracy under each reader, and the ranking of the systems (the controls aside)
  under each, budget by budget;
- Kendall's tau-b between each pair of readers' rankings, and each pair of systems whose order
  changes;
- whether each paired difference to the baseline keeps its sign and its verdict (separated or
  not) under every reader.

Comparisons whose contracts differ in anything but the answer model are refused (exit 2, naming
the file and the field): the dataset, the prompt, top_k, the tokenizer, the sampling, the seed,
--limit, --sample, the budgets, the baseline, the questions scored and the systems compared must
be equal, since the sweep asks what the reader alone changes. report.py --sweep puts its one line
on the first screen of any of the sweep's reports.

Usage:
  python sweep.py --scores results/RUN-A/scores.json results/RUN-B/scores.json --json results/sweep.json
  python report.py --scores results/RUN-A/scores.json ... --sweep results/sweep.json
"""
from __future__ import annotations

import argparse
import sys

from agreement import SWEEP_FORMAT, publish, stability, stability_lines, stability_text, view_figures
from cli import InputError, run_cli
from contract import CONTROL_NAMES
from fileio import output_path, read_json, sha256_file
from formats import CONTRACT_FIELDS, SCORES_FORMAT, check_format
from wording import estimate_text

# What the sweep reads of a scores.json, and the fields that must be equal across its readers
# besides the contract's (the answer model alone may differ).
SCORES_FIELDS = ("format", "baseline", "budgets", "contract", "coverage", "systems", "differences")
HELD_EQUAL = ("baseline", "budgets", "coverage.scored_questions", "coverage.dataset_questions")
READER_FIELD = "answer_model"


def field(scores: dict, name: str, path: str):
    """A dotted field of a scores.json, or an InputError naming the file and the field."""
    value = scores
    for part in name.split("."):
        if not isinstance(value, dict) or part not in value:
            raise InputError(f"{path}: no field '{name}'; rerun score.py --json")
        value = value[part]
    return value


def systems_of(scores: dict, path: str) -> list:
    """The system rows of a scores.json compared across readers: (label, budget) of each."""
    rows = field(scores, "systems", path)
    for i, s in enumerate(rows):
        for f in ("label", "backend", "budget", "accuracy", "accuracy_ci"):
            if not isinstance(s, dict) or f not in s:
                raise InputError(f"{path}: systems[{i}] has no field '{f}'; rerun score.py --json")
    return sorted((s["label"], s["budget"]) for s in rows)


def read_reader(path: str) -> dict:
    """One reader's scores.json, of this code's format, answered (not retrieval-only)."""
    scores = read_json(path, "scores of score.py --json", SCORES_FIELDS)
    check_format(scores, SCORES_FORMAT, path, "rerun score.py")
    for name in CONTRACT_FIELDS:
        field(scores, f"contract.{name}", path)
    if scores["contract"]["retrieval_only"]:
        raise InputError(f"{path}: field 'contract.retrieval_only' is true: a reader sweep compares answered runs")
    for i, d in enumerate(scores["differences"]):
        for f in ("system", "baseline", "budget", "difference", "ci_low", "ci_high", "separated"):
            if not isinstance(d, dict) or f not in d:
                raise InputError(f"{path}: differences[{i}] has no field '{f}'; rerun score.py --json")
    return scores


def refuse_other_contracts(readers: list[tuple[str, dict]]) -> None:
    """Refuse readers whose comparisons differ in anything but the answer model, naming the
    file and the field that differs; and one answer model twice."""
    first_path, first = readers[0]
    held = [f"contract.{f}" for f in CONTRACT_FIELDS if f != READER_FIELD] + list(HELD_EQUAL)
    for path, scores in readers[1:]:
        for name in held:
            mine, theirs = field(scores, name, path), field(first, name, first_path)
            if mine != theirs:
                raise InputError(f"{path}: field '{name}' is {mine!r}, {first_path} has {theirs!r}: only the answer "
                                 f"model may differ between the readers of a sweep")
        if systems_of(scores, path) != systems_of(first, first_path):
            raise InputError(f"{path}: field 'systems' holds {systems_of(scores, path)}, {first_path} holds "
                             f"{systems_of(first, first_path)}: a sweep compares the same systems under every reader")
    seen: dict = {}
    for path, scores in readers:
        model = scores["contract"][READER_FIELD]
        if model in seen:
            raise InputError(f"{path}: field 'contract.{READER_FIELD}' is {model!r}, as in {seen[model]}: a sweep "
                             f"needs each reader once")
        seen[model] = path


def render_text(sweep: dict) -> str:
    """The sweep's tables, in the order of its JSON."""
    out = [f"reader sweep: {', '.join(r['label'] for r in sweep['readers'])} (baseline {sweep['baseline']})",
           "\naccuracy on answerable questions [95% CI] under each reader"]
    for label, view in sweep["views"].items():
        out.append(f"{label}: " + ", ".join(f"{s['system']} {estimate_text(s['accuracy'], s['accuracy_ci'])}"
                                            for s in view["systems"] if s["backend"] not in CONTROL_NAMES))
    out += stability_lines(sweep["stability"], "reader")
    out.append(f"\n{stability_text(None, sweep)}.")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Read each reader's scores, refuse other contracts, print and write the sweep."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scores", nargs="+", required=True, help="each reader's scores.json (score.py --json), one "
                                                               "run id per reader")
    ap.add_argument("--json", help="write the figures here, for report.py --sweep")
    a = ap.parse_args(argv)
    if a.json:
        output_path(a.json, "--json")
    readers = [(path, read_reader(path)) for path in a.scores]
    refuse_other_contracts(readers)
    views = {scores["contract"][READER_FIELD]: view_figures(scores) for _, scores in readers}
    sweep = {"format": SWEEP_FORMAT, "baseline": readers[0][1]["baseline"],
             "readers": [{"label": scores["contract"][READER_FIELD], "scores": path, "sha256": sha256_file(path)}
                         for path, scores in readers],
             "views": views, "stability": stability(views),
             "note": None if len(readers) > 1 else "one reader: whether the ranking holds under another reader is "
                                                   "not measured; score the same comparison answered by another"}
    return publish(sweep, a.json, render_text)


if __name__ == "__main__":
    sys.exit(run_cli(main))
