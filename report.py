"""Write the report people read (seed guide, section 10; the issue "The report people read"):
results/report.md, a self-contained results/report.html to open from disk, and plots beside
them, with the instrument's checks, the judge's calibration and the human audit when they
exist. Every number comes from scores.json (score.py, through metrics.py) and is written by
metrics.py's formatter; the run records and the dataset give the answers and the context turns
the question explorer shows, and nothing is computed here again.

The report states the fairness contract (what was held constant, and every deviation from it,
only when present), then the main table (controls first, the baseline marked, each system's
paired difference to the baseline with its interval, the noise floor; a metric that cannot be
measured is n/a with its reason as a footnote), the paired difference per question type, what
the controls say (check.py's verdicts), accuracy and every memory metric per question type with
abstention apart, the budget curve, where the wrong answers came from, cost and latency, repeats
and the noise floor, the judge's calibration and human agreement, the run's facts and the
commands that reproduce it. Every figure is over all repeats. Numbers are rounded for reading
(3 significant digits for rates, whole tokens); the exact values stay in scores.json. A
retrieval-only run (run.py --retrieval-only) gets the model-free report: the retrieval columns,
and accuracy marked as not measured.

report.html holds the same tables and plots, and every question as a row: each system's answer,
verdict and the layer that decided it, the failure cause, and the context lines it retrieved
(turn texts from the dataset the manifest names) with the evidence highlighted and the budget
cut marked; filters, a search box and a permalink per question (report.html#QID). The rows are
built in the browser from one JSON blob, a page or an expanded row at a time, so the file stays
usable at LongMemEval scale. No network: everything is inline.

Plots (accuracy, budget curve, failure causes) need the optional extra: pip install -r
requirements-plots.txt. Without it the report says how to get them.

Usage:
  python report.py --scores results/scores.json --manifest results/manifest-RUN.json \\
      --runs runs/*.jsonl --verdicts results/verdicts.jsonl --out results/report.md
  python report.py --scores results/scores.json --manifest results/manifest-RUN.json \\
      --runs runs/*.jsonl --verdicts results/verdicts.jsonl --checks results/checks.json \\
      --calibration results/calibration.json --audit results/audit.json --out results/report.md
"""
from __future__ import annotations

import argparse
import base64
import html
import io
import json
import os
import sys
from collections import defaultdict
from typing import NamedTuple

from interface import (BUDGET_FIELD, CHECKS_FORMAT, CONTROL_NAMES, EXIT_OK, QUESTION_TYPES, SCORES_FORMAT, InputError,
                       check_format, dataset_from, load_comparison, load_dataset, read_json, read_jsonl, read_verdicts,
                       record_key, run_cli, sha256_file, write_atomic)
from metrics import (FAILURE_CAUSES, RESAMPLES, SEED, control_lines, disclosures, interval_text, mdd_text,
                     rate, reading, whole)

ROOT = os.path.dirname(os.path.abspath(__file__))
# The question explorer of report.html: context lines kept per answer (the budget bounds them
# anyway), lines shown after the budget cut, and characters kept of a turn's text. They bound
# the file at LongMemEval scale (500 questions x 10 systems, full_context retrieving every turn).
CONTEXT_LINES_MAX = 50
AFTER_CUT_LINES = 5
TURN_TEXT_MAX = 1200
PLOT_NAMES = ("accuracy", "budget", "failures")
MANIFEST_FIELDS = ("run_id", "created_utc", "git_commit", "git_dirty", "dataset", "dataset_sha256", "dataset_counts",
                   "config", "config_sha256", "answer_model", "judge_model", "top_k", "context_token_budget",
                   "tokenizer", "endpoint", "served_model_info", "backends")


# ---------------------------------------------------------------------------------------------
# The document: blocks that render as markdown and as HTML from one description
# ---------------------------------------------------------------------------------------------
# Text is a list of segments: a plain str (escaped by each renderer), Code, Strong or Link.
# Questions, answers, system names and check summaries are untrusted text: they only ever
# enter as segments, so no renderer can mistake them for markup.

class Code(NamedTuple):
    """Inline code: a name, a command, an id."""
    text: str


class Strong(NamedTuple):
    """Emphasis for what must not be missed."""
    text: str


class Link(NamedTuple):
    """A link to a file beside the report."""
    text: str
    href: str


class Heading(NamedTuple):
    """A section heading; anchor is its id in report.html."""
    level: int
    text: str
    anchor: str


class Para(NamedTuple):
    """A paragraph of segments."""
    segments: list


class Bullets(NamedTuple):
    """A list of items, each a segment list."""
    items: list  # of segment lists


class Table(NamedTuple):
    """A table with a header row."""
    header: list   # of str
    rows: list     # of lists of cells; a cell is a str or a segment list
    classes: list  # one CSS class per row ("" for none): control, baseline
    numeric: list  # per column: right-aligned


class Image(NamedTuple):
    """A plot: linked from report.md, inlined in report.html."""
    path: str      # the PNG beside the report
    alt: str


class Pre(NamedTuple):
    """Commands, shown as they are."""
    text: str


def segs(*parts) -> list:
    """A segment list from strings and segments."""
    return list(parts)


def ticked(text: str) -> list:
    """score.py's words, whose names are in `backticks`, as segments: the names as Code (escaped
    by each renderer like any text), so markdown shows them as code, not as \\`name\\`."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: plain text, escaped as such
        return segs(text)
    return [Code(p) if i % 2 else p for i, p in enumerate(parts) if p]


def md_plain(text: str, in_table: bool) -> str:
    """Plain text for markdown: characters that would start markup or HTML are escaped."""
    out = (text.replace("\\", "\\\\").replace("`", "\\`").replace("*", "\\*").replace("&", "&amp;")
           .replace("<", "&lt;").replace("\r", " ").replace("\n", " "))
    return out.replace("|", "\\|") if in_table else out


def md_segments(parts, in_table: bool = False) -> str:
    """A segment list (or a plain cell string) as markdown."""
    if isinstance(parts, str):
        parts = [parts]
    out = []
    for p in parts:
        if isinstance(p, Code):
            body = " ".join(p.text.split())
            if in_table:
                body = body.replace("|", "\\|")
            fence = "``" if "`" in body else "`"
            out.append(f"{fence}{body}{fence}" if fence == "`" else f"{fence} {body} {fence}")
        elif isinstance(p, Strong):
            out.append(f"**{md_plain(p.text, in_table)}**")
        elif isinstance(p, Link):
            out.append(f"[{md_plain(p.text, in_table)}]({p.href})")
        else:
            out.append(md_plain(p, in_table))
    return "".join(out)


def render_markdown(blocks: list) -> str:
    """The blocks as GitHub-flavoured markdown."""
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out += ["#" * b.level + " " + md_plain(b.text, False), ""]
        elif isinstance(b, Para):
            out += [md_segments(b.segments), ""]
        elif isinstance(b, Bullets):
            out += [f"- {md_segments(item)}" for item in b.items] + [""]
        elif isinstance(b, Table):
            out.append("| " + " | ".join(md_plain(h, True) for h in b.header) + " |")
            out.append("|" + "|".join("---:" if num else "---" for num in b.numeric) + "|")
            out += ["| " + " | ".join(md_segments(c, True) for c in row) + " |" for row in b.rows]
            out.append("")
        elif isinstance(b, Image):
            out += [f"![{md_plain(b.alt, False)}]({os.path.basename(b.path)})", ""]
        elif isinstance(b, Pre):
            out += ["```sh", b.text, "```", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def html_segments(parts) -> str:
    """A segment list (or a plain cell string) as HTML, every text escaped."""
    if isinstance(parts, str):
        parts = [parts]
    out = []
    for p in parts:
        if isinstance(p, Code):
            out.append(f"<code>{html.escape(p.text)}</code>")
        elif isinstance(p, Strong):
            out.append(f"<strong>{html.escape(p.text)}</strong>")
        elif isinstance(p, Link):
            out.append(f'<a href="{html.escape(p.href)}">{html.escape(p.text)}</a>')
        else:
            out.append(html.escape(p))
    return "".join(out)


def render_html_blocks(blocks: list, images: dict) -> str:
    """The blocks as HTML; images are inlined as data URIs (images: path -> PNG bytes)."""
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out.append(f'<h{b.level} id="{html.escape(b.anchor)}">{html.escape(b.text)}</h{b.level}>')
        elif isinstance(b, Para):
            out.append(f"<p>{html_segments(b.segments)}</p>")
        elif isinstance(b, Bullets):
            out.append("<ul>" + "".join(f"<li>{html_segments(i)}</li>" for i in b.items) + "</ul>")
        elif isinstance(b, Table):
            head = "".join(f'<th{" class=num" if num else ""}>{html.escape(h)}</th>'
                           for h, num in zip(b.header, b.numeric))
            rows = []
            for row, cls in zip(b.rows, b.classes):
                cells = "".join(f'<td{" class=num" if num else ""}>{html_segments(c)}</td>'
                                for c, num in zip(row, b.numeric))
                rows.append(f'<tr class="{html.escape(cls)}">{cells}</tr>' if cls else f"<tr>{cells}</tr>")
            out.append(f'<div class="scroll"><table class="summary"><thead><tr>{head}</tr></thead>'
                       f'<tbody>{"".join(rows)}</tbody></table></div>')
        elif isinstance(b, Image):
            data = base64.b64encode(images[b.path]).decode("ascii")
            out.append(f'<figure><img alt="{html.escape(b.alt)}" src="data:image/png;base64,{data}"></figure>')
        elif isinstance(b, Pre):
            out.append(f"<pre>{html.escape(b.text)}</pre>")
    return "\n".join(out)


class Footnotes:
    """Why a number is n/a (or measured on part of the questions): one numbered note per
    distinct reason, naming the systems it applies to."""

    def __init__(self) -> None:
        self.notes: dict = {}  # (metric, reason) -> [number, [labels]]

    def mark(self, label: str, metric: str, reason: str | None) -> str:
        """The marker to put beside a cell, or '' when there is no reason to give."""
        if not reason:
            return ""
        key = (metric, reason)
        if key not in self.notes:
            self.notes[key] = [len(self.notes) + 1, []]
        if label not in self.notes[key][1]:
            self.notes[key][1].append(label)
        return f" [{self.notes[key][0]}]"

    def cell(self, value: str, label: str, metric: str, reason: str | None) -> str:
        """A cell with its marker."""
        return value + self.mark(label, metric, reason)

    def bullets(self) -> Bullets | None:
        """The notes, in number order."""
        if not self.notes:
            return None
        return Bullets([segs(f"[{n}] {metric}: {reason} ({', '.join(labels)})")
                        for (metric, reason), (n, labels) in sorted(self.notes.items(), key=lambda kv: kv[1][0])])

    def blocks(self, heading: str = "Notes (n/a means not measurable, never 0):") -> list:
        """The notes under their heading, to end a section; nothing when there are none."""
        footnotes = self.bullets()
        return [Para(segs(heading)), footnotes] if footnotes else []


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


def verdicts_by_key(path: str) -> dict:
    """Verdicts keyed by interface.record_key (the audit is checked against them)."""
    return {key: v for key, (_, v) in read_verdicts(path).items()}


def optional_json(path: str | None, what: str, fields: tuple) -> dict | None:
    """An optional input: None when not given; a given file must be readable."""
    return read_json(path, what, fields) if path else None


# ---------------------------------------------------------------------------------------------
# Who is who: rows in score.py's order (controls, the baseline, the systems)
# ---------------------------------------------------------------------------------------------

def is_control(s: dict) -> bool:
    """A control validates the harness; it is not a memory system."""
    return s["backend"] in CONTROL_NAMES


def is_baseline(s: dict, scores: dict) -> bool:
    """The system every other is compared with (one row per budget)."""
    return s["backend"] == scores["baseline"]


def display(s: dict, scores: dict) -> list:
    """A row's name, with its role."""
    if is_baseline(s, scores):
        return segs(Strong(s["label"]), " (baseline)")
    if is_control(s):
        return segs(s["label"], " (control)")
    return segs(s["label"])


def retrieval_only(scores: dict) -> bool:
    """No answer model was asked (run.py --retrieval-only; the contract holds it equal across files)."""
    return scores["contract"]["retrieval_only"]


def served_models(scores: dict) -> list[str]:
    """Every model the endpoint said answered, over all budgets and systems."""
    return sorted({m for by in scores["served_models"].values() for counts in by.values() for m in counts})


# ---------------------------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------------------------

def coverage_para(scores: dict) -> list:
    """For the first screen: how much of the dataset was scored, when it is not all of it."""
    c = scores["coverage"]
    if c["scored_questions"] == c["dataset_questions"]:
        return []
    why = ", ".join(([f"--limit {', '.join(map(str, c['limit']))}"] if c["limit"] else [])
                    + ([f"--shard {', '.join(c['shards'])}"] if c["shards"] else [])
                    + (["--allow-partial left out the questions some system lacks"] if c["partial"] else []))
    return [Para(segs(Strong(f"Partial comparison: {c['scored_questions']} of the dataset's {c['dataset_questions']} "
                             f"questions"), f" ({why}). These numbers are not comparable to a run on the whole "
                                            f"dataset."))]


def contract_section(scores: dict, manifest: dict, checks: dict | None, checks_current: bool) -> list:
    """What was held constant, in plain words, and every deviation that is present."""
    first = scores["contract"]
    served = served_models(scores)
    budgets = scores["budgets"]
    counts = manifest["dataset_counts"]
    held = [
        segs("Dataset ", Code(manifest["dataset"]), f" (sha256 {manifest['dataset_sha256'][:16]}…): "
             f"{counts['cases']} cases, {counts['questions']} questions; every system gets the same turns, one add "
             f"per session in order, in a namespace reset per case."),
        segs("Reads: only search, with the raw question as the query, top_k ", Code(str(first["top_k"])),
             " for every system."),
        segs("Context: one builder, lines cut by rank at ",
             f"{', '.join(f'{b:,}' for b in budgets)} tokens" if len(budgets) > 1 else f"{budgets[0]:,} tokens",
             " counted by ", Code(first["tokenizer"]), ", never over."),
        segs("Answer model ", Code(first["answer_model"]),
             *((" (served as ", Code(served[0]), ")") if len(served) == 1 else ()),
             f", temperature 0, seed {first['seed']}, at most {first['answer_max_tokens']} tokens; one prompt, "
             f"sha256 ", Code(first["prompt_sha256"][:16]), "."),
        segs("Grading, blinded and shuffled across systems: ", scores["grading"]),
    ]
    if retrieval_only(scores):
        held[3] = segs("No answer model was asked: a retrieval-only run (run.py --retrieval-only).")
        held[4] = segs("Grading: nothing graded; accuracy is not measured.")
    elif len(served) > 1:
        # The model requested was the same, the model that answered was not: not held constant.
        held[3] = segs("Prompt and decoding: one prompt, sha256 ", Code(first["prompt_sha256"][:16]),
                       f", temperature 0, seed {first['seed']}, at most {first['answer_max_tokens']} tokens. The answer "
                       f"model ", Code(first["answer_model"]), " was requested of every system, but ",
                       Strong(f"{len(served)} served models answered"), " (see the deviations).")
    blocks: list = [Heading(2, "The fairness contract", "contract"),
                    Para(segs("Held constant for every system:")), Bullets(held)]
    # score.py's words: each system's disclosures, then its warnings (a served-model change, a
    # --limit run, a partial comparison), then the checks that failed or warned.
    found = [ticked(x) for x in disclosures(scores["systems"]) + scores["warnings"]]
    if checks is not None and checks_current:
        found += [segs(f"Check {c['status']}: ", Code(c["id"]), f": {c['summary']}") for c in checks["checks"]
                  if c["status"] in ("FAIL", "WARN")]
    if found:
        blocks += [Para(segs(Strong("Deviations from the contract"), " (read every number with these in mind):")),
                   Bullets(found)]
    else:
        blocks.append(Para(segs("No deviation from the contract was recorded.")))
    return blocks


# The main table's metric columns: header, scores.json key, the name its footnotes use, format.
# The model-free report keeps the ones that need no answer.
METRIC_COLUMNS = (("accuracy", "accuracy", "accuracy", rate), ("abstention", "abstention_accuracy", "abstention", rate),
                  ("gap closed", "gap_closed", "gap closed", rate), ("EM", "exact_match", "EM/F1", rate),
                  ("F1", "token_f1", "EM/F1", rate), ("recall@k", "recall_any_at_k", "recall", rate),
                  ("recall in ctx", "recall_all_in_context", "recall", rate),
                  ("kw recall@k", "keyword_recall_at_k", "keyword recall", rate),
                  ("kw recall in ctx", "keyword_recall_in_context", "keyword recall", rate),
                  ("staleness", "staleness", "staleness", rate), ("contradiction", "contradiction", "contradiction", rate),
                  ("write precision", "write_precision", "write precision", rate),
                  ("ctx tokens", "mean_context_tokens", "context tokens", whole),
                  ("search p95 ms", "search_ms_p95", "search latency", rate))
MODEL_FREE_KEYS = ("recall_any_at_k", "recall_all_in_context", "keyword_recall_at_k", "keyword_recall_in_context",
                   "staleness", "mean_context_tokens", "search_ms_p95")
# score.py's note beside a metric: why it is null, or that it was measured on part of the questions.
NOTE_OF = {"accuracy": "accuracy_note", "gap_closed": "gap_closed_note", "recall_any_at_k": "recall_note",
           "recall_all_in_context": "recall_note", "keyword_recall_at_k": "keyword_recall_note",
           "keyword_recall_in_context": "keyword_recall_note", "staleness": "staleness_note",
           "contradiction": "contradiction_note", "write_precision": "write_precision_note",
           "noise_floor": "noise_floor_note"}


def qualifier(s: dict, key: str) -> str | None:
    """The reason to give beside a metric: score.py's note for it, or, where score.py writes none,
    why the metric is null (from the counts beside it)."""
    note = s[NOTE_OF[key]] if key in NOTE_OF else None
    if note or s[key] is not None:
        return note
    graded = s["accuracy_note"] or "no answerable question was graded"
    return {"accuracy": "no answerable question was graded",
            "abstention_accuracy": s["accuracy_note"] or "no unanswerable (abstention) question was graded",
            "exact_match": graded, "token_f1": graded,
            "mean_context_tokens": s["context_tokens_note"], "search_ms_p95": s["search_ms_note"]}.get(key)


def main_table(scores: dict, order: list[dict], notes: Footnotes) -> Table:
    """The main table: one row per system (controls first, the baseline marked); each metric
    with its footnote, the paired difference to the baseline and the noise floor."""
    diffs = {d["system"]: d for d in scores["differences"]}
    model_free = retrieval_only(scores)
    columns = [c for c in METRIC_COLUMNS if not model_free or c[1] in MODEL_FREE_KEYS]
    header = ["system", "n"] + (["accuracy"] if model_free else []) + [c[0] for c in columns] + ["errors"]
    if not model_free:
        header += ["Δ accuracy vs baseline [95% CI]", "noise floor"]
    rows, classes = [], []
    for s in order:
        row = [display(s, scores), str(s["n"])] + (["not measured"] if model_free else [])
        row += [notes.cell(fmt(s[key]), s["label"], name, qualifier(s, key)) for _, key, name, fmt in columns]
        row.append(str(s["errors"]))
        if not model_free:
            row += [difference_cell(s, scores, diffs, notes),
                    notes.cell(interval_text(s["noise_floor"]), s["label"], "noise floor", qualifier(s, "noise_floor"))]
        rows.append(row)
        classes.append("baseline" if is_baseline(s, scores) else "control" if is_control(s) else "")
    return Table(header, rows, classes, [False] + [True] * (len(header) - 1))


def difference_cell(s: dict, scores: dict, diffs: dict, notes: Footnotes) -> str:
    """A system's paired difference to the baseline; controls are not compared."""
    if is_baseline(s, scores):
        return "baseline"
    if is_control(s):
        return "control: not compared"
    d = diffs.get(s["label"])
    if d is None or d["difference"] is None:
        return notes.cell("n/a", s["label"], "paired difference", "no graded answerable question shared with the "
                                                                  "baseline")
    return f"{interval_text(d)} ({reading(d)})"


def results_section(scores: dict, order: list[dict], plots: dict) -> list:
    """The main table, what its columns mean, the noise floor and the footnotes."""
    notes = Footnotes()
    blocks: list = [Heading(2, "Results", "results")]
    if retrieval_only(scores):
        blocks.append(Para(segs(Strong("Accuracy: not measured."), " This is a retrieval-only run (run.py "
                                "--retrieval-only): no answer model was asked and nothing was graded. The columns "
                                "below need no model: whether the evidence was retrieved and reached the context, "
                                "keyword recall, staleness, context size and search latency.")))
    blocks.append(main_table(scores, order, notes))
    if "accuracy" in plots:
        blocks.append(Image(plots["accuracy"], "Accuracy per system" if not retrieval_only(scores)
                            else "Evidence in context per system"))
    legend = ("Rows: controls first (they validate the harness and are not compared), then the systems. "
              "recall@k: any evidence turn retrieved; recall in ctx: every evidence turn inside the token budget; "
              "kw recall: a retrieved hit holds the question's keywords (needs no provenance); staleness: share of "
              "context items superseded by a newer stored item; ctx tokens: mean context size; search p95 ms: "
              "measured from this machine, so for a service over the network it includes the round trips")
    contended = [s for s in order if s["search_contended_share"]]
    if contended:
        legend += (", and searches that ran while answer calls were in flight share the CPU with a local model "
                   "(" + ", ".join(f"{s['label']} {rate(s['search_contended_share'])}" for s in contended) + ")")
    if not retrieval_only(scores):
        legend += ("; accuracy is on answerable questions, abstention on unanswerable ones apart; gap closed: "
                   "(system - none) / (oracle - none); EM and F1 need no judge and are on answerable questions too "
                   "(the unanswerable types have theirs in the per-type tables); contradiction: answers stating a "
                   "replaced value; write precision: share of stored items that ever reached the context of a "
                   "correct answer")
    blocks.append(Para(segs(legend + ".")))
    if not retrieval_only(scores):
        blocks.append(Para(segs("Noise floor: each system's repeat 1 minus its repeat 0, question by question, with "
                                "its interval (run-to-run variation; run.py --repeat 2). Minimum detectable "
                                "difference: a property of this sample of questions, not of the runs.")))
        for budget, m in sorted(scores["minimum_detectable_difference"].items(), key=lambda kv: int(kv[0])):
            at = f" at budget {int(budget):,}" if len(scores["budgets"]) > 1 else ""
            blocks.append(Para(segs(f"Minimum detectable difference{at}: {mdd_text(m)}.")))
    blocks += notes.blocks()
    return blocks


def paired_section(scores: dict, order: list[dict]) -> list:
    """The paired comparison: systems only, against the baseline, with intervals."""
    if retrieval_only(scores):
        return []
    diffs = {d["system"]: d for d in scores["differences"]}
    compared = [s for s in order if not is_control(s) and not is_baseline(s, scores) and s["label"] in diffs]
    blocks: list = [Heading(2, "Paired comparison", "paired"),
                    Para(segs("Each system minus the baseline ", Code(scores["baseline"]), ", question by question, "
                              f"on answerable questions (abstention apart), with a 95% cluster-bootstrap interval "
                              f"over cases ({scores['resamples']:,} resamples). An interval that contains 0 means "
                              f"this dataset does not separate the two. The controls are not compared."))]
    if not compared:
        blocks.append(Para(segs("No system besides the baseline and the controls: nothing to compare.")))
        return blocks
    rows = []
    for s in compared:
        d = diffs[s["label"]]
        rows.append([segs(s["label"]), interval_text(d), interval_text(d["abstention"]), f"{d['questions']:,}",
                     f"{d['clusters']:,}", rate(d["noise_floor"]), rate(d["minimum_detectable_difference"]),
                     reading(d)])
    blocks.append(Table(["system", "Δ accuracy [95% CI]", "Δ abstention", "questions", "clusters",
                         "noise floor (±)", "minimum detectable", "reading"], rows, [""] * len(rows),
                        [False, True, True, True, True, True, True, False]))
    return blocks


def controls_section(scores: dict, order: list[dict], checks: dict | None, current: bool) -> list:
    """What the controls say about the instrument (seed guide, section 9.1). Whether `none` is
    low enough and `oracle` high enough is check.py's verdict, per question type against
    config.yaml's `checks:` thresholds: quoted from checks.json when it belongs to these runs;
    otherwise the numbers only (a threshold of this report's own would contradict check.py's)."""
    if retrieval_only(scores):
        return []
    lines = []
    if checks is not None and current:
        lines += [segs(f"{c['status']} ", Code(c["id"]), f": {c['summary']}") for c in checks["checks"]
                  if c["check"] == "controls"]
        intro = ("check.py's verdicts on the controls (per question type, thresholds from config.yaml's checks: "
                 "section):")
    else:
        intro = ("What the controls scored. Whether that is within their limits is check.py's verdict, per question "
                 "type (config.yaml checks.none_max and checks.oracle_min); no checks.json of these runs was given.")
        lines += [ticked(line) for line in control_lines(scores)]
    if not lines:
        lines.append(segs("Neither the ", Code("none"), " nor the ", Code("oracle"), " control is in this comparison: "
                          "nothing checks the instrument's floor and ceiling. Run them (make bench does)."))
    return [Heading(2, "What the controls say", "controls"), Para(segs(intro)), Bullets(lines)]


def type_order(scores: dict) -> tuple[list[str], set]:
    """Question types as the tables list them, and those shown apart (no question of the type is
    answerable): the answerable types in the dataset contract's order, then the apart ones,
    then any type of an importer's own."""
    present = {t for s in scores["systems"] for t in s["by_type"]}
    apart = {t for s in scores["systems"] for t, x in s["by_type"].items() if not x["answerable_n"]}
    known = [t for t in QUESTION_TYPES if t in present]
    return ([t for t in known if t not in apart] + [t for t in known if t in apart]
            + sorted(present - set(QUESTION_TYPES))), apart


def row_class(s: dict, scores: dict) -> str:
    """A row's CSS class: the baseline and the controls stand out."""
    return "baseline" if is_baseline(s, scores) else "control" if is_control(s) else ""


# The per-type table's columns: header, by_type key, footnote name, by_type key of its note.
TYPE_COLUMNS = (("accuracy", "accuracy", "accuracy", "accuracy_note"), ("EM", "exact_match", "EM/F1", "accuracy_note"),
                ("F1", "token_f1", "EM/F1", "accuracy_note"), ("recall@k", "recall_any_at_k", "recall", "recall_note"),
                ("recall in ctx", "recall_all_in_context", "recall", "recall_note"),
                ("kw recall@k", "keyword_recall_at_k", "keyword recall", "keyword_recall_note"),
                ("kw recall in ctx", "keyword_recall_in_context", "keyword recall", "keyword_recall_note"),
                ("staleness", "staleness", "staleness", "staleness_note"),
                ("contradiction", "contradiction", "contradiction", "contradiction_note"))


def by_type_section(scores: dict, order: list[dict]) -> list:
    """Accuracy per question type, the unanswerable types apart; then every memory metric per
    type (score.py computes them with the same functions on each type's questions)."""
    types, apart = type_order(scores)
    blocks: list = [Heading(2, "Per question type", "types")]
    model_free = retrieval_only(scores)
    if model_free:
        blocks.append(Para(segs("Accuracy is not measured: a retrieval-only run has no answers to grade. The retrieval "
                                "metrics per type follow.")))
    else:
        rows = [[display(s, scores)] + [f"{rate(s['by_type'][t]['accuracy'])} ({s['by_type'][t]['n']})"
                                        if t in s["by_type"] else "–" for t in types] for s in order]
        header = ["system"] + [f"{t} (apart)" if t in apart else t for t in types]
        blocks += [Para(segs("Accuracy (questions) per type, over all repeats. Unanswerable types (",
                             ", ".join(t for t in types if t in apart) or "none here",
                             ") are apart: a system that always declines gets them right and fails everything else.")),
                   Table(header, rows, [row_class(s, scores) for s in order], [False] + [True] * (len(header) - 1))]
    columns = [c for c in TYPE_COLUMNS if not model_free or c[1] in MODEL_FREE_KEYS]
    notes = Footnotes()
    rows, classes = [], []
    for s in order:
        for t in types:
            if t not in s["by_type"]:
                continue
            m = s["by_type"][t]
            row = [display(s, scores), segs(t + (" (apart)" if t in apart else "")), str(m["n"])]
            row += [notes.cell(rate(m[key]), s["label"], name, m[note] if note else None) for _, key, name, note in columns]
            rows.append(row)
            classes.append(row_class(s, scores))
    header = ["system", "type", "n"] + [c[0] for c in columns]
    em = "" if model_free else (" (EM and F1 on all of them: for an unanswerable type they are its abstention "
                                "scores)")
    blocks += [Para(segs(f"Every memory metric per type, on that type's questions{em}. Write precision is per stored "
                         f"item, so it has no type.")),
               Table(header, rows, classes, [False, False] + [True] * (len(header) - 2))]
    blocks += notes.blocks()
    return blocks


def type_differences_section(scores: dict, order: list[dict]) -> list:
    """Each system's paired difference to the baseline per question type, with its interval."""
    if retrieval_only(scores):
        return []
    diffs = {d["system"]: d for d in scores["differences"]}
    compared = [s for s in order if not is_control(s) and not is_baseline(s, scores) and s["label"] in diffs]
    if not compared:
        return []
    types, apart = type_order(scores)
    types = [t for t in types if any(t in diffs[s["label"]]["by_type"] for s in compared)]
    rows = [[segs(s["label"])] + [interval_text(diffs[s["label"]]["by_type"].get(t)) for t in types] for s in compared]
    return [Heading(3, "Paired difference per question type", "paired-types"),
            Para(segs("The same paired difference to ", Code(scores["baseline"]), ", per question type (all of the "
                      "type's questions; the unanswerable types are the abstention difference), with its 95% "
                      "cluster-bootstrap interval; no interval when the type's questions sit in a single cluster.")),
            Table(["system"] + [f"{t} (apart)" if t in apart else t for t in types], rows,
                  [""] * len(rows), [False] + [True] * len(types))]


def budget_section(scores: dict, order: list[dict], plots: dict) -> list:
    """The budget curve (run.py --budgets), when there is one, with the share of questions whose
    context k bounded rather than the budget."""
    if len(scores["budgets"]) < 2:
        return []
    budgets = scores["budgets"]
    backends = list(dict.fromkeys(s["backend"] for s in order))
    cell = {(s["backend"], s["budget"]): s for s in order}
    model_free = retrieval_only(scores)
    notes = Footnotes()
    rows = []
    for b in backends:
        row = [segs(b)]
        for budget in budgets:
            s = cell.get((b, budget))
            if s is None:
                row.append("–")
                continue
            k = notes.cell(rate(s["k_limited_share"]), s["label"], "k-limited share", s["k_limited_note"])
            first = "" if model_free else f"{rate(s['accuracy'])} / "
            row.append(f"{first}{rate(s['recall_all_in_context'])} / {k}")
        rows.append(row)
    what = "recall in context / k-limited share" if model_free else "accuracy / recall in context / k-limited share"
    blocks: list = [Heading(2, "Budget curve", "budget"),
                    Para(segs(f"{what.capitalize()} per context budget (tokens): one search per question, the "
                              f"context cut at each budget. The k-limited share is the share of questions whose "
                              f"search returned exactly top_k hits and the budget cut none of them: there k, not the "
                              f"budget, bounded the context, so a flat curve there says k ran out.")),
                    Table(["system"] + [f"{b:,}" for b in budgets], rows, [""] * len(rows),
                          [False] + [True] * len(budgets))]
    blocks += notes.blocks("Notes:")
    if "budget" in plots:
        blocks.append(Image(plots["budget"], "Budget curve"))
    return blocks


def failures_section(scores: dict, order: list[dict], plots: dict, html_name: str) -> list:
    """Where the wrong answers came from, per system."""
    if retrieval_only(scores):
        return []
    causes = list(order[0]["failure_causes"])
    rows = [[display(s, scores), str(sum(s["failure_causes"].values()))] + [str(s["failure_causes"][c]) for c in causes]
            for s in order]
    blocks: list = [Heading(2, "Where the wrong answers came from", "failures"),
                    Para(segs("One cause per wrong answer, the first that applies, in this order: "
                              + "; ".join(f"{c}: {FAILURE_CAUSES[c]}" for c in causes) + ".")),
                    Table(["system", "wrong"] + causes, rows,
                          ["baseline" if is_baseline(s, scores) else "control" if is_control(s) else "" for s in order],
                          [False] + [True] * (len(causes) + 1))]
    if "failures" in plots:
        blocks.append(Image(plots["failures"], "Failure causes per system"))
    blocks.append(Para(segs("Open the questions behind each number in ", Link(html_name, html_name),
                            " (filter by system and failure cause).")))
    return blocks


def cost_section(scores: dict, order: list[dict]) -> list:
    """Tokens, calls and latency per system (over all repeats), each n/a with its reason."""
    notes = Footnotes()
    rows = []
    for s in order:
        label = s["label"]
        u = s["internal_usage"]
        ing, fl = s["ingest_s"], s["flush_s"]
        # The usage note goes beside a count that is n/a or left calls out, not beside a complete one.
        prompt_note = s["usage_note"] if s["prompt_tokens"] is None or s["prompt_tokens_missing"] else None
        completion_note = s["usage_note"] if s["completion_tokens"] is None or s["completion_tokens_missing"] else None
        row = [display(s, scores),
               notes.cell(whole(s["mean_context_tokens"]), label, "context tokens", s["context_tokens_note"]),
               whole(s["total_context_tokens"]),
               notes.cell(whole(s["prompt_tokens"]), label, "token usage", prompt_note),
               notes.cell(whole(s["completion_tokens"]), label, "token usage", completion_note),
               f"{whole(s['mean_prompt_tokens'])} / {whole(s['mean_completion_tokens'])}",
               f"{s['answer_calls']:,} ({s['answer_calls_cached']:,} cached, {s['answer_requests']:,} sent)",
               (f"{u['calls']:,} ({u['cached']:,} cached), {whole(u['prompt_tokens'])} + "
                f"{whole(u['completion_tokens'])} tokens" if u else
                notes.cell("n/a", label, "internal model", s["internal_usage_note"])),
               (f"{rate(ing['mean'])} (max {rate(ing['max'])})" if ing else
                notes.cell("n/a", label, "ingest", s["ingest_s_note"])),
               f"{rate(fl['mean'])} (max {rate(fl['max'])})" if fl else notes.cell("n/a", label, "ingest",
                                                                                  s["ingest_s_note"]),
               (f"{rate(s['search_ms_p50'])} / {rate(s['search_ms_p95'])} / {rate(s['search_ms_max'])}"
                if s["search_ms_p95"] is not None else notes.cell("n/a", label, "search latency", s["search_ms_note"])),
               (f"{whole(s['store_items_mean'])} (max {whole(s['store_items_max'])})" if s["store_items_mean"] is not None
                else notes.cell("n/a", label, "store size", s["store_items_note"])),
               notes.cell(rate(s["search_contended_share"]), label, "searches during answer calls",
                          s["search_contended_note"])]
        rows.append(row)
    header = ["system", "ctx tokens (mean)", "ctx tokens (total)", "prompt tokens", "completion tokens",
              "per question: prompt / completion", "answer calls", "internal model calls", "ingest s per case",
              "flush s per case", "search ms p50 / p95 / max", "store items per namespace",
              "searches during answer calls"]
    blocks: list = [Heading(2, "Cost and latency", "cost"),
                    Para(segs("Per system, over all repeats. Tokens are whole; prompt and completion tokens are the "
                              "endpoint's "
                              "own counts, over the calls that reported one (a call without a count is left out and "
                              "counted in a note, never taken as 0). Internal model: the calls a system makes to a "
                              "model of its own, apart from the answer calls. Search latency is measured at the store "
                              "size beside it, from this machine; the last column is the share of searches made while "
                              "answer calls were in flight, which share the CPU with a local model.")),
                    Table(header, rows, [row_class(s, scores) for s in order], [False] + [True] * (len(header) - 1))]
    blocks += notes.blocks()
    return blocks


def repeats_section(scores: dict, order: list[dict]) -> list:
    """Accuracy per repeat, its mean and spread, and each system's noise floor (its repeat 1
    against its repeat 0, paired, with the interval)."""
    if retrieval_only(scores):
        return []
    notes = Footnotes()
    rows = []
    for s in order:
        rep = s["repeat_accuracy"]
        if rep is None:
            na = notes.cell("n/a", s["label"], "repeats", s["noise_floor_note"])
            rows.append([display(s, scores), str(s["repeats"]), na, "n/a", "n/a", "n/a", "n/a"])
            continue
        rows.append([display(s, scores), str(s["repeats"]), ", ".join(rate(a) for a in rep["per_repeat"]),
                     rate(rep["mean"]), rate(rep["sd"]), f"{rate(rep['min'])} – {rate(rep['max'])}",
                     notes.cell(interval_text(s["noise_floor"]), s["label"], "noise floor", s["noise_floor_note"])])
    header = ["system", "repeats", "accuracy per repeat", "mean", "sd", "min – max", "noise floor: repeat 1 − 0 [95% CI]"]
    blocks: list = [Heading(2, "Repeats and noise floor", "repeats"),
                    Para(segs("Every other figure of this report is over all repeats; here, accuracy on answerable "
                              "questions in each repeat (run.py --repeat N), and the noise floor: repeat 1 minus "
                              "repeat 0, question by question, with its cluster-bootstrap interval. A difference "
                              "between systems no larger than either one's noise floor (the larger end of that "
                              "interval) is marked as within it.")),
                    Table(header, rows, [row_class(s, scores) for s in order], [False] + [True] * (len(header) - 1))]
    blocks += notes.blocks("Notes:")
    return blocks


def grader_of(verdicts: dict | None) -> dict | None:
    """The grader identity of these verdicts (one grader: score.py refuses a mix)."""
    if not verdicts:
        return None
    v = next(iter(verdicts.values()))
    return {k: v[k] for k in ("rules_sha256", "judge_model", "judge_prompt_sha256")}


def judge_section(scores: dict, verdicts: dict | None, calibration: dict | None, audit: dict | None,
                  paths: dict) -> list:
    """The judge's calibration rates and the human agreement, or how to get them."""
    blocks: list = [Heading(2, "The judge: calibration and human audit", "judge")]
    if retrieval_only(scores):
        return blocks + [Para(segs("Nothing was graded (a retrieval-only run)."))]
    grader = grader_of(verdicts)
    if calibration is None:
        blocks.append(Para(segs("No judge calibration yet: run ", Code(
            "python judge.py --config config.yaml --calibrate data/calibration.jsonl --out results/calibration.json"),
            " and pass --calibration to report.py. A judge model is trusted only after its calibration.")))
    elif calibration["grader"] != grader:
        theirs = calibration["grader"]
        blocks.append(Para(segs(f"{paths['calibration']} rates another grader (judge model ",
                                Code(str(theirs["judge_model"])), ", rules ",
                                Code(str(theirs["rules_sha256"])[:12]), ") than the one that graded these "
                                "verdicts (judge model ", Code(str(grader["judge_model"])), ", rules ",
                                Code(grader["rules_sha256"][:12]), "): its rates do not apply. Rerun judge.py "
                                "--calibrate with this run's config.")))
    else:
        o = calibration["overall"]
        kappa = calibration["kappa"]
        blocks.append(Para(segs(f"Calibration ({calibration['grading']}) on {o['n']} labelled answers of ",
                                Code(calibration["calibration_set"]), f": false accepts {o['false_accepts']} of "
                                f"{o['known_wrong']} known-wrong answers ({rate(o['false_accept_rate'])}), false "
                                f"rejects {o['false_rejects']} of {o['known_right']} known-right answers "
                                f"({rate(o['false_reject_rate'])}), Cohen's kappa {rate(kappa)}. A false accept "
                                f"inflates every accuracy; a false reject deflates it.")))
        rows = [[segs(kind), str(r["n"]),
                 f"{r['false_accepts']}/{r['known_wrong']} ({rate(r['false_accept_rate'])})" if r["known_wrong"] else "–",
                 f"{r['false_rejects']}/{r['known_right']} ({rate(r['false_reject_rate'])})" if r["known_right"] else "–"]
                for kind, r in calibration["by_kind"].items()]
        blocks.append(Table(["kind of answer", "n", "false accepts", "false rejects"], rows, [""] * len(rows),
                            [False, True, True, True]))
    if audit is None:
        blocks.append(Para(segs("No human audit yet: run ", Code(
            "python audit.py sample --verdicts results/verdicts.jsonl --n 100 --seed 11"), ", label the sheet blind, "
            "then ", Code("python audit.py join results/audit-sheet.csv results/audit-key.jsonl --out results/audit.json"),
            " and pass --audit to report.py (seed guide, 6.1).")))
        return blocks
    stale = audit_mismatch(audit, verdicts)
    if stale:
        blocks.append(Para(segs(f"{paths['audit']} {stale}: its agreement does not apply to these verdicts. Draw a new "
                                "sample (audit.py sample) and label it.")))
        return blocks
    o = audit["overall"]
    text = (f"Human audit: {audit['labelled']} of {audit['sampled']} sampled answers labelled; the grader agrees with "
            f"the person on {o['agree']} of {o['n']} ({rate(o['agreement'])}, Cohen's kappa {rate(o['kappa'])}); "
            f"grader correct where the person said incorrect: {o['judge_correct_human_incorrect']}, the reverse: "
            f"{o['judge_incorrect_human_correct']}.")
    if not audit["complete"]:
        text += " The audit is incomplete: some sampled answers have no readable label."
    blocks.append(Para(segs(text)))
    rows = [[segs(name), str(s["n"]), rate(s["agreement"]), rate(s["kappa"])] for name, s in audit["by_system"].items()]
    if rows:
        blocks.append(Table(["system", "labelled", "agreement", "kappa"], rows, [""] * len(rows),
                            [False, True, True, True]))
    for f in audit["flagged"]:
        blocks.append(Para(segs(Strong("The judge is not neutral here:"), " ", Code(f["system"]),
                                f" agreement {rate(f['agreement'])} against {rate(f['others_agreement'])} for the "
                                f"others (one-sided Fisher p={f['p_value']:.2g}); tighten the rubric before reading "
                                f"the scores.")))
    return blocks


def audit_mismatch(audit: dict, verdicts: dict | None) -> str | None:
    """Why an audit does not belong to these verdicts, or None when it does: every answer its
    key sampled must still be graded the same, from the same inputs, by the same grader."""
    key_path = audit["key"]
    if not os.path.exists(key_path):
        return f"names its key {key_path}, which is not here, so nothing shows that it audited these verdicts"
    sampled, other = 0, 0
    for lineno, k in read_jsonl(key_path):
        for f in ("backend", "repeat", BUDGET_FIELD, "qid", "verdict", "inputs_sha256", "rules_sha256", "judge_model"):
            if f not in k:
                raise InputError(f"{key_path}:{lineno}: not an audit key line of audit.py (no field '{f}')")
        sampled += 1
        v = (verdicts or {}).get(record_key(k))  # an answer no longer graded is counted, not defaulted
        if v is None or any(v[f] != k[f] for f in ("verdict", "inputs_sha256", "rules_sha256", "judge_model")):
            other += 1
    if other:
        return f"audited other verdicts ({other} of its {sampled} sampled answers are not graded so now)"
    return None


def checks_section(checks: dict | None, current: bool, paths: dict) -> list:
    """check.py's results: one line per check, or how to run it."""
    blocks: list = [Heading(2, "Instrument checks", "checks")]
    run_it = Code("python check.py --runs runs/*.jsonl --verdicts results/verdicts.jsonl "
                  "--manifest results/manifest-RUN.json --config config.yaml")
    if checks is None:
        return blocks + [Para(segs("No instrument checks yet: run ", run_it, " (seed guide, section 9) and pass "
                                   "--checks to report.py."))]
    if not current:
        return blocks + [Para(segs(f"{paths['checks']} checked other run files than these (their sha256 differ): its "
                                   "results do not apply. Rerun ", run_it, "."))]
    rows = [[c["status"], segs(Code(c["id"])), segs(c["summary"])] for c in checks["checks"]]
    counts = ", ".join(f"{n} {s}" for s, n in checks["counts"].items() if n)
    return blocks + [Para(segs(f"Overall: {checks['status']} ({counts}). FAIL and WARN are listed among the "
                               f"deviations above.")),
                     Table(["status", "check", "result"], rows, [c["status"].lower() for c in checks["checks"]],
                           [False, False, False])]


def checks_current(checks: dict | None, run_paths: list[str]) -> bool:
    """Whether checks.json was made from exactly these run files (by content)."""
    if checks is None:
        return False
    theirs = sorted(checks["inputs"]["runs"].values())
    return theirs == sorted(sha256_file(p) for p in run_paths)


def facts_section(scores: dict, manifest: dict, order: list[dict]) -> list:
    """Counts, model ids, top_k and budget, the systems and their versions."""
    counts = manifest["dataset_counts"]
    types = ", ".join(f"{t} {n}" for t, n in counts["questions_by_type"].items())
    served = served_models(scores)
    repeats = max(s["repeats"] for s in order)
    first = scores["contract"]
    items = [
        segs("Run ", Code(manifest["run_id"]), f", manifest written {manifest['created_utc']}, git ",
             Code(str(manifest["git_commit"])[:12]), " (uncommitted changes)" if manifest["git_dirty"] else ""),
        segs(f"{counts['cases']} cases, {counts['sessions']:,} sessions, {counts['turns']:,} turns, "
             f"{counts['questions']} questions ({types}); scored: {scores['questions_scored']:,} question records per "
             f"system over {len(scores['budgets'])} budget(s), {repeats} repeat(s)"),
        segs("Answer model ", Code(first["answer_model"]),
             *((", served as ", Code(", ".join(served))) if served else ()),
             "; judge model ", Code(manifest["judge_model"]) if manifest["judge_model"] else "none (rules only)",
             f"; endpoint: {manifest['endpoint']}"),
        segs(f"top_k {first['top_k']}" + (f" (the manifest's {manifest['top_k']}, scaled for the largest budget)"
                                          if first["top_k"] != manifest["top_k"] else ""),
             f", context budget {', '.join(f'{b:,}' for b in scores['budgets'])} tokens ({first['tokenizer']})"),
    ]
    info = manifest["served_model_info"]
    if info:
        items.append(segs(f"Served locally by {info['server']} {info['server_version']} as ", Code(info["served_model"]),
                          " from ", Code(info["model_file"]), f" (sha256 {info['model_sha256'][:16]}…)",
                          *((", converted to ", Code(info["served_file"]), f" (sha256 {info['served_sha256'][:16]}…)")
                            if info["served_file"] else ())))
    versions = {s["backend"]: s["backend_version"] for s in order}
    items.append(segs("Systems: ", "; ".join(f"{b} ({v})" for b, v in versions.items())))
    return [Heading(2, "Run", "run"), Bullets(items)]


def reproduce_section(scores: dict, manifest: dict, paths: dict) -> list:
    """The commands that made these files, in the seed guide's run order."""
    config = manifest["config"]
    files: dict = {}  # backend_id -> run file, in the order given
    for path in paths["runs"]:
        for _, rec in read_jsonl(path):
            files.setdefault(rec["backend_id"], path)
            break
    first = scores["contract"]
    budgets = scores["budgets"]
    repeats = max(s["repeats"] for s in scores["systems"])
    extra = ""
    if len(budgets) > 1 or budgets[0] != manifest["context_token_budget"]:
        extra += f" --budgets {','.join(map(str, budgets))}"
    if repeats > 1:
        extra += f" --repeat {repeats}"
    if first["retrieval_only"]:
        extra += " --retrieval-only"
    if first["limit"] is not None:
        extra += f" --limit {first['limit']}"
    run_files = " ".join(paths["runs"])
    dirty = ", with uncommitted changes: the commit alone does not reproduce it" if manifest["git_dirty"] else ""
    lines = [f"git checkout {manifest['git_commit']}   # config {config} sha256 {manifest['config_sha256'][:16]}{dirty}",
             f"python manifest.py {config} --backends {' '.join(b['name'] for b in manifest['backends'])}"]
    lines += [f"python run.py --config {config} --backend {b} --out {p}{extra}" for b, p in files.items()]
    score_flags = ""
    if scores["resamples"] != RESAMPLES:
        score_flags += f" --resamples {scores['resamples']}"
    if scores["seed"] != SEED:
        score_flags += f" --seed {scores['seed']}"
    if scores["left_out"]:
        score_flags += " --allow-partial"
    verdicts = f" --verdicts {paths['verdicts']}" if paths["verdicts"] else ""
    if paths["verdicts"]:
        lines.append(f"python judge.py --config {config} --runs {run_files} --out {paths['verdicts']}")
    lines.append(f"python score.py --runs {run_files}{verdicts} --baseline {scores['baseline']}{score_flags} "
                 f"--json {paths['scores']} --manifest {paths['manifest']}")
    optional = "".join(f" --{k} {paths[k]}" for k in ("checks", "calibration", "audit") if paths[k])
    lines.append(f"python report.py --scores {paths['scores']} --manifest {paths['manifest']} --runs {run_files}"
                 f"{verdicts}{optional} --out {paths['out']}")
    return [Heading(2, "How to reproduce", "reproduce"),
            Para(segs("With the same dataset, config and code (the manifest holds their sha256), in this order; each "
                      "step resumes, and answers come from the response cache when nothing changed:")),
            Pre("\n".join(lines))]


def plots_note(plots: dict | None) -> list:
    """How to get the plots when the optional extra is missing."""
    if plots is not None:
        return []
    return [Para(segs("Plots are not drawn: the optional plotting extra is not installed. ",
                      Code("pip install -r requirements-plots.txt"), " (matplotlib), then rerun report.py."))]


def build_blocks(scores: dict, manifest: dict, verdicts: dict | None, checks: dict | None, calibration: dict | None,
                 audit: dict | None, plots: dict | None, paths: dict) -> list:
    """The whole report, in the seed guide's order: contract, table, controls, breakdowns,
    judge, checks, facts, commands."""
    order = scores["systems"]
    current = checks_current(checks, paths["runs"])
    got = plots or {}
    kind = "model-free report (retrieval only)" if retrieval_only(scores) else "report"
    html_name = os.path.basename(paths["html"])
    blocks: list = [Heading(1, f"memory-bench {kind}: {manifest['run_id']}", "top"),
                    Para(segs(f"{len(order)} system rows on {manifest['dataset_counts']['questions']} questions of ",
                              Code(manifest["dataset"]), ", baseline ", Code(scores["baseline"]),
                              ". Every question, with each system's answer and context: ",
                              Link(html_name, html_name), " (one file, open it from disk)."))]
    blocks += coverage_para(scores)
    blocks += contract_section(scores, manifest, checks, current)
    blocks += results_section(scores, order, got)
    blocks += plots_note(plots)
    blocks += paired_section(scores, order)
    blocks += type_differences_section(scores, order)
    blocks += controls_section(scores, order, checks, current)
    blocks += by_type_section(scores, order)
    blocks += budget_section(scores, order, got)
    blocks += failures_section(scores, order, got, html_name)
    blocks += cost_section(scores, order)
    blocks += repeats_section(scores, order)
    blocks += judge_section(scores, verdicts, calibration, audit, paths)
    blocks += checks_section(checks, current, paths)
    blocks += facts_section(scores, manifest, order)
    blocks += reproduce_section(scores, manifest, paths)
    return blocks


# ---------------------------------------------------------------------------------------------
# Plots (the optional extra: requirements-plots.txt)
# ---------------------------------------------------------------------------------------------

CONTROL_COLOR, BASELINE_COLOR, SYSTEM_COLOR = "#a0a0a0", "#1f5fa8", "#5b9bd5"
# One colour per cause in every plot: memory failures warm, reader and grading failures cool.
CAUSE_COLORS = {"error": "#333333", "unparseable": "#8c6d31", "judge_disagreement": "#b5a642",
                "unmeasurable": "#c7c7c7", "retrieval_miss": "#d62728", "budget_miss": "#ff9f40",
                "reader_miss": "#4c78a8"}


def figure_bytes(fig) -> bytes:
    """A figure as PNG bytes (no timestamp in the file, so the same numbers give the same bytes)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()


def accuracy_plot(plt, scores: dict, order: list[dict]) -> bytes:
    """Accuracy per row with each system's paired interval against the baseline (retrieval-only:
    the share of questions with all evidence in context, no intervals)."""
    model_free = retrieval_only(scores)
    key = "recall_all_in_context" if model_free else "accuracy"
    diffs = {d["system"]: d for d in scores["differences"]}
    labels = [s["label"] for s in order]
    values = [s[key] if s[key] is not None else 0.0 for s in order]
    colors = [BASELINE_COLOR if is_baseline(s, scores) else CONTROL_COLOR if is_control(s) else SYSTEM_COLOR
              for s in order]
    fig, ax = plt.subplots(figsize=(max(5.0, 0.75 * len(order) + 2), 3.6))
    bars = ax.bar(range(len(order)), values, color=colors, edgecolor="#333333", linewidth=0.5)
    for i, s in enumerate(order):
        d = diffs.get(s["label"])
        if not model_free and not is_control(s) and d and d["ci_low"] is not None and s[key] is not None:
            # The paired interval of the difference, drawn around the system's own accuracy: where it
            # crosses the baseline's line, the two are not separated.
            ax.errorbar(i, s[key], yerr=[[d["difference"] - d["ci_low"]], [d["ci_high"] - d["difference"]]],
                        fmt="none", ecolor="#222222", capsize=4, linewidth=1.2)
        ax.annotate("n/a" if s[key] is None else rate(s[key]), (bars[i].get_x() + bars[i].get_width() / 2, values[i]),
                    textcoords="offset points", xytext=(0, 3), ha="center", fontsize=8)
    for s in order:
        if is_baseline(s, scores) and s[key] is not None and not model_free:
            # across the bars of its own budget only: a sweep has one baseline per budget
            at = [i for i, x in enumerate(order) if x["budget"] == s["budget"]]
            ax.hlines(s[key], at[0] - 0.45, at[-1] + 0.45, colors=BASELINE_COLOR, linestyles="--", linewidth=0.8)
    ax.set_xticks(range(len(order)), labels, rotation=30 if len(order) > 4 else 0, ha="right" if len(order) > 4 else "center")
    ax.set_ylim(0, 1.08)
    ax.set_ylabel("all evidence in context" if model_free else "accuracy (answerable)")
    title = ("Evidence in context per system (retrieval only: accuracy not measured)" if model_free else
             "Accuracy; bars on systems: paired 95% interval vs the baseline (dashed)")
    ax.set_title(title, fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    return figure_bytes(fig)


def budget_plot(plt, scores: dict, order: list[dict]) -> bytes:
    """One line per system over the budgets: accuracy, and all evidence in context."""
    model_free = retrieval_only(scores)
    panels = [("recall_all_in_context", "all evidence in context")]
    if not model_free:
        panels.insert(0, ("accuracy", "accuracy (answerable)"))
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 3.6), squeeze=False)
    backends = list(dict.fromkeys(s["backend"] for s in order))
    for ax, (key, name) in zip(axes[0], panels):
        for b in backends:
            points = [(s["budget"], s[key]) for s in order if s["backend"] == b and s[key] is not None]
            if points:
                style = ":" if b in CONTROL_NAMES else "-"
                ax.plot([p[0] for p in points], [p[1] for p in points], style, marker="o", label=b)
        ax.set_xscale("log")
        ax.set_xticks(scores["budgets"], [f"{b:,}" for b in scores["budgets"]])
        ax.minorticks_off()
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("context budget (tokens)")
        ax.set_ylabel(name)
        ax.spines[["top", "right"]].set_visible(False)
    axes[0][-1].legend(fontsize=8, frameon=False, loc="best")
    fig.suptitle("Budget curve", fontsize=10)
    return figure_bytes(fig)


def failures_plot(plt, order: list[dict]) -> bytes:
    """Wrong answers per system, stacked by cause."""
    causes = list(order[0]["failure_causes"])
    fig, ax = plt.subplots(figsize=(7.5, max(2.2, 0.42 * len(order) + 1.2)))
    left = [0] * len(order)
    for cause in causes:
        counts = [s["failure_causes"][cause] for s in order]
        if any(counts):
            ax.barh(range(len(order)), counts, left=left, color=CAUSE_COLORS.get(cause, "#bbbbbb"), label=cause)
            left = [a + b for a, b in zip(left, counts)]
    ax.set_yticks(range(len(order)), [s["label"] for s in order])
    ax.invert_yaxis()
    ax.set_xlabel("wrong answers")
    ax.set_title("Where the wrong answers came from", fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.spines[["top", "right"]].set_visible(False)
    return figure_bytes(fig)


def draw_plots(scores: dict, order: list[dict]) -> dict | None:
    """{name: PNG bytes} for the plots that apply, or None without matplotlib (the optional
    extra): a missing extra is not an error, the report says how to get it."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")  # no display here, and none needed
    import matplotlib.pyplot as plt
    plots = {"accuracy": accuracy_plot(plt, scores, order)}
    if len(scores["budgets"]) > 1:
        plots["budget"] = budget_plot(plt, scores, order)
    if not retrieval_only(scores):
        plots["failures"] = failures_plot(plt, order)
    plt.close("all")
    return plots


# ---------------------------------------------------------------------------------------------
# report.html: the summary, and every question from one JSON blob
# ---------------------------------------------------------------------------------------------

def clip(text: str) -> str:
    """A turn's text, cut for the explorer (the dataset holds it whole)."""
    return text if len(text) <= TURN_TEXT_MAX else text[:TURN_TEXT_MAX] + " … [cut for the report]"


def answer_entry(r: dict, q: dict) -> dict:
    """One system's record of one question, as the explorer shows it: the answer, the verdict
    and its layer, the cause (score.py's question row), and the retrieved source ids up to and
    just past the budget cut."""
    entry = {"rep": r["repeat"], "a": r["answer"], "v": q["verdict"], "by": q["by"], "c": q["cause"],
             "err": r["error"], "jerr": q["judge_error"], "ro": q["rules_only_verdict"],
             "budget": r[BUDGET_FIELD], "tok": r["context_tokens"], "kept": r["hits_kept"],
             "returned": r["hits_returned"], "ids": None, "cut": [], "n_ctx": None, "n_ret": None, "multi": False,
             "more": [], "miss": []}
    if r["retrieved_ids"] is None or r["context_ids"] is None:
        return entry  # no provenance, or the question failed: nothing to show but the counts
    ret, n_ctx = r["retrieved_ids"], len(r["context_ids"])
    shown = min(n_ctx, CONTEXT_LINES_MAX)
    after = ret[n_ctx:n_ctx + AFTER_CUT_LINES]
    visible = set(range(shown)) | set(range(n_ctx, n_ctx + len(after)))
    evidence = set(r["evidence"])
    entry.update(ids=ret[:shown], cut=after, n_ctx=n_ctx, n_ret=len(ret),
                 # several source ids per hit: positions are not ranks
                 multi=r["hits_returned"] is not None and len(ret) != r["hits_returned"],
                 more=[[i + 1, t, i < n_ctx] for i, t in enumerate(ret) if t in evidence and i not in visible],
                 miss=[t for t in r["evidence"] if t not in set(ret)])
    return entry


def explorer_data(scores: dict, order: list[dict], records: list[dict], cases: list[dict]) -> dict:
    """The JSON blob report.html renders from: systems in report order, questions in dataset
    order with one list of answers (one per repeat) per system, and the turn texts they cite."""
    labels = {(s["backend"], s["budget"]): s["label"] for s in order}
    turns = {(c["case_id"], t["turn_id"]): (s["timestamp"], t["role"], t["text"])
             for c in cases for s in c["sessions"] for t in s["turns"]}
    index = {s["label"]: i for i, s in enumerate(order)}
    rows = {(q["system"], q["qid"], q["budget"], q["repeat"]): q for q in scores["questions"]}
    scored = {r["qid"] for r in records}
    questions, by_qid = [], {}
    for c in cases:
        for q in c["questions"]:
            if q["qid"] in scored:
                by_qid[q["qid"]] = {"qid": q["qid"], "case": c["case_id"], "type": q["type"], "q": q["question"],
                                    "gold": q["gold_answer"], "asked": q["asked_at"], "ev": q["evidence"],
                                    "r": [None] * len(order)}
                questions.append(by_qid[q["qid"]])
    cited: dict = defaultdict(set)
    for r in sorted(records, key=lambda r: r["repeat"]):
        label = labels[(r["backend"], r[BUDGET_FIELD])]
        q = rows[(label, r["qid"], r[BUDGET_FIELD], r["repeat"])]
        entry = answer_entry(r, q)
        slot = by_qid[r["qid"]]["r"]
        slot[index[label]] = (slot[index[label]] or []) + [entry]
        cited[r["case_id"]].update(r["evidence"], entry["ids"] or [], entry["cut"], (m[1] for m in entry["more"]),
                                   entry["miss"])
    turn_texts = {case: {t: [turns[(case, t)][0], turns[(case, t)][1], clip(turns[(case, t)][2])]
                         for t in sorted(ids) if (case, t) in turns} for case, ids in sorted(cited.items())}
    systems = [{"label": s["label"], "role": "baseline" if is_baseline(s, scores) else "control" if is_control(s)
                else "system"} for s in order]
    causes = [c for c in order[0]["failure_causes"] if any(s["failure_causes"][c] for s in order)]
    return {"systems": systems, "questions": questions, "turns": turn_texts, "causes": causes,
            "model_free": retrieval_only(scores)}


def script_json(obj: dict) -> str:
    """JSON that can sit inside <script type="application/json">: no '<', '>' or '&' as such,
    so no text in it can close the element or open a comment (JSON.parse reads the escapes)."""
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


HTML_CSS = """
:root { --ok: #1b7f3b; --bad: #b3261e; --muted: #666; --line: #d9d9d9; --ev: #fff1a8; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1d; margin: 0; background: #fafafa; }
main { max-width: 1500px; margin: 0 auto; padding: 16px 24px 64px; background: #fff; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid var(--line); }
code { background: #f1f1f1; padding: 0 3px; border-radius: 3px; font-size: 12.5px; }
pre { background: #f4f4f4; padding: 10px; overflow-x: auto; font-size: 12.5px; }
nav.toc a { margin-right: 12px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; }
table.summary td, table.summary th { border: 1px solid var(--line); padding: 3px 7px; white-space: nowrap; }
table.summary th { background: #f3f3f3; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.control td { background: #f6f6f6; color: #444; }
tr.baseline td { background: #eaf2fb; }
tr.fail td:first-child { color: var(--bad); font-weight: 600; } tr.warn td:first-child { color: #a15c00; font-weight: 600; }
figure { margin: 12px 0; } figure img { max-width: 100%; }
.filters { display: flex; flex-wrap: wrap; gap: 10px 16px; align-items: end; padding: 10px; background: #f3f6fa;
           border: 1px solid var(--line); position: sticky; top: 0; z-index: 2; }
.filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
.filters select, .filters input { font-size: 14px; padding: 3px 4px; }
.filters input { width: 260px; }
#count { margin-left: auto; font-weight: 600; }
#notice { color: var(--bad); }
table#qtable { width: 100%; margin-top: 8px; }
#qtable th { text-align: left; background: #f3f3f3; border-bottom: 2px solid var(--line); padding: 4px 6px; font-size: 12.5px; }
#qtable td { border-bottom: 1px solid var(--line); padding: 4px 6px; vertical-align: top; }
#qtable tr.q { cursor: pointer; scroll-margin-top: 90px; } #qtable tr.q:hover td { background: #f7f9fc; }
#qtable tr.q.open td { background: #eef3fa; }
#qtable tr.target td { background: #dbe8f8; border-top: 2px solid #1f5fa8; }
#qtable td.qtext { max-width: 420px; } #qtable td.gold { max-width: 200px; }
.v { white-space: nowrap; font-weight: 600; }
.v.correct { color: var(--ok); } .v.incorrect, .v.unparseable, .v.error { color: var(--bad); } .v.none { color: var(--muted); }
.cause { display: block; font-size: 11.5px; color: var(--muted); font-weight: 400; }
tr.detail > td { background: #fcfcfc; padding: 8px 12px 16px; }
.meta, .muted { color: var(--muted); }
.evidence { margin: 4px 0 10px; }
.answer { border-left: 3px solid var(--line); padding: 2px 0 2px 10px; margin: 10px 0; }
.answer.correct { border-color: var(--ok); } .answer.incorrect, .answer.unparseable, .answer.error { border-color: var(--bad); }
.answer h4 { margin: 0 0 2px; font-size: 14px; }
.answer p { margin: 2px 0; }
.ctx { margin: 4px 0; padding-left: 44px; font-size: 13px; }
.ctx li { padding: 1px 4px; }
.ctx li.ev { background: var(--ev); }
.ctx li.dropped { color: #777; }
ol.ctx li.cut, ol.ctx li.gap { list-style: none; margin-left: -40px; color: var(--bad); font-size: 12px; }
ol.ctx li.cut { border-top: 2px dashed var(--bad); margin-top: 3px; padding-top: 2px; }
ol.ctx li.gap { color: var(--muted); }
.tid { font-family: ui-monospace, monospace; font-size: 12px; color: #555; }
.ts { color: var(--muted); font-size: 12px; }
.tag { background: #8a6d00; color: #fff; border-radius: 3px; padding: 0 4px; font-size: 11px; margin-left: 4px; }
#pager { margin: 10px 0; display: flex; gap: 8px; align-items: center; }
"""

HTML_JS = r"""
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("report-data").textContent);
  const PAGE = 25;
  const VERDICTS = ["correct", "incorrect", "unparseable", "error", "not graded"];
  const S = { system: "", type: "", verdict: "", cause: "", text: "", page: 0 };
  const open = new Set();
  const byQid = new Map(D.questions.map((q, i) => [q.qid, i]));
  const $ = (id) => document.getElementById(id);

  // Every text goes in as a text node (append of a string), never as markup.
  function el(tag, cls, ...kids) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    for (const k of kids) if (k !== null && k !== undefined && k !== false) e.append(k);
    return e;
  }
  function verdictOf(a) { return a.v ? a.v : (a.err ? "error" : "not graded"); }
  function first(q, si) { const a = q.r[si]; return a ? a[0] : null; }
  function systemsShown() { return S.system === "" ? D.systems.map((_, i) => i) : [Number(S.system)]; }
  function hay(q, si) {
    if (q._h === undefined) q._h = (q.qid + "\n" + q.q + "\n" + q.gold).toLowerCase();
    const a = first(q, si);
    return a && a.a ? a.a.toLowerCase() : "";
  }
  function matches(q) {
    if (S.type && q.type !== S.type) return false;
    const sys = systemsShown();
    if (S.verdict || S.cause) {
      const hit = sys.some((si) => {
        const a = first(q, si);
        return a && (!S.verdict || verdictOf(a) === S.verdict) && (!S.cause || a.c === S.cause);
      });
      if (!hit) return false;
    }
    if (S.text) {
      const needle = S.text.toLowerCase();
      hay(q, 0);
      if (!q._h.includes(needle) && !sys.some((si) => hay(q, si).includes(needle))) return false;
    }
    return true;
  }
  function filtered() {
    const out = [];
    D.questions.forEach((q, i) => { if (matches(q)) out.push(i); });
    return out;
  }

  function options(select, pairs) {
    for (const [value, text] of pairs) { const o = el("option", null, text); o.value = value; select.append(o); }
  }
  function setup() {
    options($("f-system"), [["", "all systems"]].concat(D.systems.map((s, i) => [String(i), s.label + (s.role !== "system" ? " (" + s.role + ")" : "")])));
    const types = [...new Set(D.questions.map((q) => q.type))];
    options($("f-type"), [["", "all types"]].concat(types.map((t) => [t, t])));
    const seen = new Set();
    D.questions.forEach((q) => q.r.forEach((a) => { if (a) seen.add(verdictOf(a[0])); }));
    options($("f-verdict"), [["", "any verdict"]].concat(VERDICTS.filter((v) => seen.has(v)).map((v) => [v, v])));
    options($("f-cause"), [["", "any cause"]].concat(D.causes.map((c) => [c, c])));
    for (const [id, key] of [["f-system", "system"], ["f-type", "type"], ["f-verdict", "verdict"], ["f-cause", "cause"]]) {
      $(id).addEventListener("change", (e) => { S[key] = e.target.value; S.page = 0; render(); });
    }
    let timer = null;
    $("f-search").addEventListener("input", (e) => {
      clearTimeout(timer);
      timer = setTimeout(() => { S.text = e.target.value.trim(); S.page = 0; render(); }, 150);
    });
  }

  function verdictCell(a, withCause) {
    if (!a) return el("span", "v none", "–");
    const v = verdictOf(a);
    const mark = { correct: "✓ correct", incorrect: "✗ incorrect", unparseable: "? unparseable", error: "! error", "not graded": "· not graded" }[v];
    const span = el("span", "v " + (v === "not graded" ? "none" : v), mark);
    if (a.c && withCause) span.append(el("span", "cause", a.c));
    return span;
  }

  function turnLine(q, id, rank, inContext) {
    const t = (D.turns[q.case] || {})[id];
    const isEv = q.ev.includes(id);
    const li = el("li", (isEv ? "ev" : "") + (inContext ? "" : " dropped"));
    if (rank) li.value = rank;
    li.append(el("span", "tid", id), " ");
    if (t) li.append(el("span", "ts", "(" + t[0] + ")"), " ", t[1] + ": " + t[2]);
    else li.append(el("span", "muted", "(this id is not a turn of the case)"));
    if (isEv) li.append(el("span", "tag", "evidence"));
    return li;
  }

  function contextBlock(q, a) {
    if (a.ids === null) {
      if (a.err) return el("p", "muted", "Nothing retrieved: the question failed.");
      return el("p", "muted", "No provenance: this system's " + a.returned + " hits carry no source ids, so the turns it " +
        "retrieved cannot be shown (" + a.kept + " hits kept in " + a.tok + " tokens).");
    }
    const box = el("div", "context");
    if (a.n_ret === 0) {
      box.append(el("p", "muted", "Nothing retrieved: the context was empty."));
    } else {
      const ol = el("ol", "ctx");
      a.ids.forEach((id, i) => ol.append(turnLine(q, id, i + 1, true)));
      if (a.n_ctx > a.ids.length) ol.append(el("li", "gap", "… " + (a.n_ctx - a.ids.length) + " more context lines not shown"));
      if (a.n_ret > a.n_ctx) {
        ol.append(el("li", "cut", "✂ budget cut: " + a.kept + " hits kept in " + a.tok + " tokens (budget " + a.budget +
          "); below, retrieved but not given to the model"));
        a.cut.forEach((id, i) => ol.append(turnLine(q, id, a.n_ctx + i + 1, false)));
        const rest = a.n_ret - a.n_ctx - a.cut.length;
        if (rest > 0) ol.append(el("li", "gap", "… " + rest + " more retrieved lines not shown"));
      } else {
        ol.append(el("li", "gap", "all " + a.n_ret + " retrieved lines fit the budget (" + a.tok + " of " + a.budget + " tokens)"));
      }
      box.append(ol);
    }
    if (a.multi) box.append(el("p", "muted", "Hits carry several source ids each: numbers are positions in the id list, not ranks."));
    for (const [pos, id, inCtx] of a.more) {
      box.append(el("p", "muted", "Evidence " + id + " at position " + pos + (inCtx ? " (in the context, not shown above)" : " (cut by the budget)")));
    }
    if (a.miss.length) {
      const p = el("div", "miss", el("b", null, "Evidence not retrieved:"));
      const ul = el("ul", "ctx");
      a.miss.forEach((id) => ul.append(turnLine(q, id, 0, false)));
      p.append(ul);
      box.append(p);
    }
    return box;
  }

  function answerBlock(q, si, a) {
    const s = D.systems[si];
    const v = verdictOf(a);
    const div = el("div", "answer " + (v === "not graded" ? "" : v));
    div.append(el("h4", null, s.label + (s.role !== "system" ? " (" + s.role + ")" : "") + (a.rep ? " · repeat " + a.rep : "")));
    if (a.a !== null) div.append(el("p", "ans", el("b", null, "Answer: "), a.a));
    else div.append(el("p", "muted", a.err ? "No answer: " + a.err : "No answer: a retrieval-only run."));
    if (a.v) {
      const p = el("p", null, verdictCell(a, false), " decided by ", el("code", null, a.by));
      if (a.c) p.append(" · cause ", el("code", null, a.c));
      if (a.ro) p.append(" · the rules alone: " + a.ro);
      div.append(p);
    }
    if (a.jerr) div.append(el("p", "muted", "Judge error: " + a.jerr));
    div.append(contextBlock(q, a));
    return div;
  }

  function detail(qi) {
    const q = D.questions[qi];
    const box = el("div", null);
    box.append(el("p", "meta", "case " + q.case + " · asked " + q.asked + " · " + q.type + " · gold: " + q.gold));
    const ev = el("div", "evidence", el("b", null, q.ev.length ? "Evidence:" : "Evidence: none (the asked fact is not in the history)"));
    if (q.ev.length) { const ul = el("ul", "ctx"); q.ev.forEach((id) => ul.append(turnLine(q, id, 0, true))); ev.append(ul); }
    box.append(ev);
    for (const si of systemsShown()) for (const a of q.r[si] || []) box.append(answerBlock(q, si, a));
    return box;
  }

  function render() {
    const list = filtered();
    const pages = Math.max(1, Math.ceil(list.length / PAGE));
    if (S.page >= pages) S.page = pages - 1;
    $("count").textContent = list.length + " of " + D.questions.length + " questions";
    const sys = systemsShown();
    const head = el("tr", null, el("th", null, "question id"), el("th", null, "type"), el("th", null, "question"), el("th", null, "gold"));
    for (const si of sys) head.append(el("th", null, D.systems[si].label));
    $("qtable").tHead.replaceChildren(head);
    const body = document.createDocumentFragment();
    for (const qi of list.slice(S.page * PAGE, (S.page + 1) * PAGE)) {
      const q = D.questions[qi];
      const link = el("a", null, q.qid);
      link.href = "#" + encodeURIComponent(q.qid);
      link.addEventListener("click", (e) => { e.stopPropagation(); if (location.hash === link.hash) show(q.qid); });
      const tr = el("tr", "q" + (open.has(qi) ? " open" : ""), el("td", null, link), el("td", null, q.type),
        el("td", "qtext", q.q), el("td", "gold", q.gold));
      tr.dataset.qi = String(qi);
      for (const si of sys) tr.append(el("td", null, verdictCell(first(q, si), true)));
      tr.addEventListener("click", () => toggle(qi));
      body.append(tr);
      if (open.has(qi)) {
        const td = el("td", null, detail(qi));
        td.colSpan = 4 + sys.length;
        body.append(el("tr", "detail", td));
      }
    }
    $("qtable").tBodies[0].replaceChildren(body);
    const pager = $("pager");
    const prev = el("button", null, "‹ previous"), next = el("button", null, "next ›");
    prev.disabled = S.page === 0; next.disabled = S.page >= pages - 1;
    prev.addEventListener("click", () => { S.page -= 1; render(); });
    next.addEventListener("click", () => { S.page += 1; render(); });
    pager.replaceChildren(prev, el("span", null, "page " + (S.page + 1) + " of " + pages), next);
  }

  function toggle(qi) {
    if (open.has(qi)) open.delete(qi);
    else { open.add(qi); history.replaceState(null, "", "#" + encodeURIComponent(D.questions[qi].qid)); }
    render();
  }

  // A permalink (report.html#QID) opens its question: filters that hide it are cleared.
  function show(qid) {
    const qi = byQid.get(qid);
    if (qi === undefined) return false;
    let list = filtered();
    if (!list.includes(qi)) {
      Object.assign(S, { system: "", type: "", verdict: "", cause: "", text: "" });
      for (const id of ["f-system", "f-type", "f-verdict", "f-cause", "f-search"]) $(id).value = "";
      list = filtered();
    }
    S.page = Math.floor(list.indexOf(qi) / PAGE);
    open.add(qi);
    render();
    const row = document.querySelector('tr.q[data-qi="' + qi + '"]');
    row.classList.add("target");
    row.scrollIntoView({ block: "start" });
    return true;
  }
  function fromHash() {
    let qid;
    try { qid = decodeURIComponent(location.hash.slice(1)); } catch (e) { return; }
    if (qid && byQid.has(qid)) show(qid);
  }

  setup();
  render();
  window.addEventListener("hashchange", fromHash);
  fromHash();
})();
"""


def render_html(blocks: list, images: dict, data: dict, title: str) -> str:
    """report.html: one file, no network (the Content-Security-Policy forbids any request),
    the summary as static HTML and the question explorer built by the inline script."""
    toc = " ".join(f'<a href="#{html.escape(b.anchor)}">{html.escape(b.text)}</a>'
                   for b in blocks if isinstance(b, Heading) and b.level == 2)
    return "".join([
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
        "<link rel=\"icon\" href=\"data:,\">\n",
        f"<title>{html.escape(title)}</title>\n<style>{HTML_CSS}</style>\n</head>\n<body>\n<main>\n",
        render_html_blocks(blocks[:1], images), "\n",
        f'<nav class="toc">{toc} <a href="#questions">Every question</a></nav>\n',
        render_html_blocks(blocks[1:], images), "\n",
        '<h2 id="questions">Every question</h2>\n',
        "<p>Click a row for each system's answer and the context it retrieved: evidence turns highlighted, the "
        "token-budget cut marked. Filters read each system's first repeat; the search box matches question ids, "
        "questions, gold answers and answers. A question's link is its permalink.</p>\n",
        '<div class="filters"><label>System<select id="f-system"></select></label>'
        '<label>Type<select id="f-type"></select></label><label>Verdict<select id="f-verdict"></select></label>'
        '<label>Failure cause<select id="f-cause"></select></label>'
        '<label>Search<input id="f-search" type="search" placeholder="words in a question or answer"></label>'
        '<span id="count"></span></div>\n',
        '<noscript>The question explorer needs JavaScript; the tables above do not.</noscript>\n',
        '<table id="qtable"><thead></thead><tbody></tbody></table>\n<nav id="pager"></nav>\n</main>\n',
        f'<script type="application/json" id="report-data">{script_json(data)}</script>\n',
        f"<script>{HTML_JS}</script>\n</body>\n</html>\n",
    ])


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    """Read the run's files, write report.md, report.html and the plots beside them."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scores", required=True, help="results/scores.json from score.py --json")
    ap.add_argument("--manifest", required=True, help="results/manifest-RUN.json from manifest.py")
    ap.add_argument("--runs", nargs="+", required=True, help="the run files score.py scored")
    ap.add_argument("--verdicts", help="results/verdicts.jsonl (not needed for retrieval-only runs)")
    ap.add_argument("--checks", help="results/checks.json from check.py (optional)")
    ap.add_argument("--calibration", help="results/calibration.json from judge.py --calibrate (optional)")
    ap.add_argument("--audit", help="results/audit.json from audit.py join (optional)")
    ap.add_argument("--dataset", help="the dataset, when it is no longer where the manifest says (checked by sha256)")
    ap.add_argument("--out", default=os.path.join("results", "report.md"),
                    help="report.md to write; report.html and the plots go beside it (default results/report.md)")
    a = ap.parse_args(argv)
    if not a.out.endswith(".md"):
        raise InputError(f"--out {a.out}: expected a .md path (report.html and the plots are written beside it)")
    stem = a.out[:-3]
    paths = {"scores": a.scores, "manifest": a.manifest, "runs": a.runs, "verdicts": a.verdicts, "checks": a.checks,
             "calibration": a.calibration, "audit": a.audit, "out": a.out, "html": stem + ".html"}

    # 1. The comparison: scores.json, and the very run files and verdicts it was made from, held
    #    against the dataset the manifest names (the turn texts the explorer shows).
    scores = read_scores(a.scores)
    check_inputs(scores, paths)
    manifest = read_json(a.manifest, "manifest of manifest.py", MANIFEST_FIELDS)
    dataset = dataset_from(None, a.manifest, a.dataset)
    records = load_comparison(a.runs, dataset, allow_partial=scores["coverage"]["partial"]).records
    verdicts = verdicts_by_key(a.verdicts) if a.verdicts else None
    # 2. The optional inputs; a given file must be readable, an absent one is said in the report.
    checks = optional_json(a.checks, "results of check.py", ())
    if checks is not None:
        check_format(checks, CHECKS_FORMAT, a.checks, "rerun check.py")
    calibration = optional_json(a.calibration, "calibration of judge.py --calibrate",
                                ("grader", "grading", "calibration_set", "overall", "by_kind", "kappa"))
    audit = optional_json(a.audit, "audit of audit.py join",
                          ("sampled", "labelled", "complete", "overall", "by_system", "flagged"))
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
                          paths)
    write_atomic(a.out, render_markdown(blocks))
    data = explorer_data(scores, order, records, load_dataset(dataset.path))
    write_atomic(paths["html"], render_html(blocks, images, data, f"memory-bench report: {manifest['run_id']}"))
    print(f"wrote {a.out}, {paths['html']}" + (f" and {len(plots)} plot(s)" if drawn is not None else
          "; plots not drawn: pip install -r requirements-plots.txt"), file=sys.stderr)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
