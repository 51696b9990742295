"""Write the report people read: report.md, a self-contained
report.html to open from disk, and plots beside them (by default beside --scores, in
results/RUN_ID/), with the instrument's checks, the judge's calibration and the human audit
when they exist. Every number comes from scores.json (score.py, through metrics.py) and is
written by wording.py's formatters; the run records and the dataset give the answers, the
context each model read and the turns the question explorer shows, and nothing is computed
here again.

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
      --calibration results/RUN/calibration.json --audit results/RUN/audit.json --out results/RUN/report.md
"""
from __future__ import annotations

import argparse
import base64
import html
import io
import json
import os
import re
import string
import sys
import urllib.parse
from collections import Counter, defaultdict
from typing import NamedTuple

import yaml

import runindex
from blind import read_artifacts
from blind import summary as artifacts_summary
from blind import table as artifacts_table
from context import render_line
from interface import (BUDGET_FIELD, CHECKS_FORMAT, CONTROL_NAMES, EXIT_OK, QUESTION_TYPES, SCORES_FORMAT, Hit,
                       InputError, check_format, check_manifest_describes, dataset_from, iter_cases, load_comparison,
                       read_audit_json, read_audit_key, read_calibration_json, read_json, read_jsonl, read_manifest,
                       read_verdicts, record_key, refuse_stale_checks_verdicts, run_cli, session_items, sha256_file,
                       sha256_text, write_atomic)
from metrics import FAILURE_CAUSES, question_outcome
from stats import RESAMPLES, SEED
from wording import (calibration_text, control_lines, coverage_reasons, disclosures, error_rate_text, estimate_text,
                     interval_text, mdd_text, noise_floor_legend, rate, reading, separated_text, type_difference_text,
                     whole)

ROOT = os.path.dirname(os.path.abspath(__file__))
# The question explorer of report.html shows each answer's context whole, as sent (the budget
# bounds it), and the turns of this many hits after the budget cut.
AFTER_CUT_LINES = 5
PLOT_NAMES = ("accuracy", "budget", "failures")
# The calibration the report asks for when it has none: both labelled sets, the held-out one never
# tuned on.
CALIBRATE_COMMAND = ("python judge.py --config {config} --calibrate data/calibration.jsonl --heldout "
                     "data/heldout.jsonl --out {out}")
# Deviations listed one line each on the first screen; the rest are a link away.
DEVIATION_LINES = 4
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
    """A table with a header row. Its kind says how report.html lays it out: `compact` fits the
    page as it is (the first screen), `full` scrolls in a box of its own with its first column
    fixed, `text` wraps long cells, `summary` keeps cells on one line and scrolls in its box."""
    header: list   # of str
    rows: list     # of lists of cells; a cell is a str or a segment list
    classes: list  # one CSS class per row ("" for none): control, baseline
    numeric: list  # per column: right-aligned
    kind: str = "summary"


class Lines(NamedTuple):
    """Short statements, one each: report.html cuts those marked `cut` at the page's edge (their
    link, before the text, leads to the whole); the others wrap."""
    items: list  # of segment lists
    cut: list    # per item: cut at the page's edge


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


def md_segments(parts, in_table: bool = False, href=lambda h: h) -> str:
    """A segment list (or a plain cell string) as markdown; href maps a link's target."""
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
            out.append(f"[{md_plain(p.text, in_table)}]({href(p.href)})")
        else:
            out.append(md_plain(p, in_table))
    return "".join(out)


def md_slug(text: str) -> str:
    """The anchor GitHub gives a markdown heading: lower case, punctuation dropped, spaces as -."""
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def render_markdown(blocks: list, html_name: str) -> str:
    """The blocks as GitHub-flavoured markdown. A link to a section goes to its heading; a link to
    the question list goes to report.html, which holds it."""
    anchors = {b.anchor: md_slug(b.text) for b in blocks if isinstance(b, Heading)}

    def href(target: str) -> str:
        if target.startswith("#questions"):
            return html_name + target
        return "#" + anchors[target[1:]] if target.startswith("#") and target[1:] in anchors else target
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out += ["#" * b.level + " " + md_plain(b.text, False), ""]
        elif isinstance(b, Para):
            out += [md_segments(b.segments, href=href), ""]
        elif isinstance(b, (Bullets, Lines)):
            out += [f"- {md_segments(item, href=href)}" for item in b.items] + [""]
        elif isinstance(b, Table):
            out.append("| " + " | ".join(md_plain(h, True) for h in b.header) + " |")
            out.append("|" + "|".join("---:" if num else "---" for num in b.numeric) + "|")
            out += ["| " + " | ".join(md_segments(c, True, href) for c in row) + " |" for row in b.rows]
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
        elif isinstance(b, Lines):
            out.append('<ul class="lines">' + "".join(f'<li{" class=cut" if c else ""}>{html_segments(i)}</li>'
                                                      for i, c in zip(b.items, b.cut)) + "</ul>")
        elif isinstance(b, Table):
            head = "".join(f'<th{" class=num" if num else ""}>{html.escape(h)}</th>'
                           for h, num in zip(b.header, b.numeric))
            rows = []
            for row, cls in zip(b.rows, b.classes):
                cells = "".join(f'<td{" class=num" if num else ""}>{html_segments(c)}</td>'
                                for c, num in zip(row, b.numeric))
                rows.append(f'<tr class="{html.escape(cls)}">{cells}</tr>' if cls else f"<tr>{cells}</tr>")
            table = (f'<table class="summary {b.kind}"><thead><tr>{head}</tr></thead>'
                     f'<tbody>{"".join(rows)}</tbody></table>')
            out.append(table if b.kind == "compact" else f'<div class="scroll">{table}</div>')
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

def coverage_line(scores: dict) -> list | None:
    """How much of the dataset was scored, when it is not all of it (score.py's words are among
    the deviations too; this is the first screen's)."""
    c = scores["coverage"]
    if c["scored_questions"] == c["dataset_questions"]:
        return None
    why = ", ".join(coverage_reasons(c, "--allow-partial left out the questions some system lacks"))
    return segs(Strong(f"Partial comparison: {c['scored_questions']} of the dataset's {c['dataset_questions']} "
                       f"questions"), " (", Link("details", "#contract"), f"): {why}. These numbers are not comparable "
                                                                           f"to a run on the whole dataset.")


def deviations(scores: dict, checks: dict | None, checks_current: bool) -> list:
    """Every deviation from the contract that is present, in score.py's words: its warnings (a
    served-model change, a --limit or partial run), each system's disclosures, then the checks
    that failed or warned."""
    found = [ticked(x) for x in scores["warnings"] + disclosures(scores["systems"])]
    if checks is not None and checks_current:
        found += [segs(f"Check {c['status']}: ", Code(c["id"]), f": {c['summary']}") for c in checks["checks"]
                  if c["status"] in ("FAIL", "WARN")]
    return found


def questions_href(**view) -> str:
    """A link to the question list of report.html filtered as `view` says (its state in the URL:
    systems a and b by label, v the relation between them, type, cause, by, sort)."""
    return "#questions?" + urllib.parse.urlencode({k: v for k, v in view.items() if v not in (None, "")})


def difference_cells(s: dict, scores: dict, d: dict | None) -> tuple:
    """A first-screen row's difference to the baseline, linked to the questions where the two
    differ, and whether its interval separates them; a word where there is no difference."""
    if is_baseline(s, scores) or is_control(s) or d is None:
        return ("baseline" if is_baseline(s, scores) else "control" if is_control(s) else "n/a"), "–"
    diff = segs(Link(interval_text(d), questions_href(a=s["label"], b=d["baseline"], v="differ")))
    return diff, separated_text(d) + ("; within the noise floor" if d.get("within_noise_floor") else "")


def glance_table(scores: dict, order: list[dict]) -> Table:
    """The answer, in one table that fits the page: per system its accuracy with its interval,
    its paired difference to the baseline with the interval and whether it separates them, the
    gap closed, the evidence in context and the tokens a question cost. The model-free report:
    retrieval, and the paired difference in it."""
    if retrieval_only(scores):
        return glance_table_model_free(scores, order)
    diffs = {d["system"]: d for d in scores["differences"]}
    rows = []
    for s in order:
        diff, separated = difference_cells(s, scores, diffs.get(s["label"]))
        tokens = ("n/a" if s["mean_prompt_tokens"] is None and s["mean_completion_tokens"] is None else
                  f"{whole(s['mean_prompt_tokens'])} + {whole(s['mean_completion_tokens'])}")
        rows.append([display(s, scores), estimate_text(s["accuracy"], s["accuracy_ci"]), diff, separated,
                     estimate_text(s["gap_closed"], s["gap_closed_ci"]), rate(s["recall_all_in_context"]), tokens])
    return Table(["system", "accuracy [95% CI]", "Δ vs baseline [95% CI]", "interval", "gap closed [95% CI]",
                  "recall in ctx", "tokens / question"],
                 rows, [row_class(s, scores) for s in order], [False, True, True, False, True, True, True], "compact")


def glance_table_model_free(scores: dict, order: list[dict]) -> Table:
    """The model-free report's answer: all evidence in context, its paired difference to the
    baseline, the rank metrics at k, context size and search latency."""
    diffs = {d["system"]: d for d in scores["retrieval_differences"] if d["metric"] == "recall_all_in_context"}
    rows = []
    for s in order:
        diff, separated = difference_cells(s, scores, diffs.get(s["label"]))
        rows.append([display(s, scores), rate(s["recall_all_in_context"]), diff, separated, rate(s["recall_all_at_k"]),
                     rate(s["ndcg_at_k"]), rate(s["evidence_recall_at_k"]), whole(s["mean_context_tokens"]),
                     rate(s["search_ms_p95"])])
    k = order[0]["rank_k"]
    return Table(["system", "recall in ctx", "Δ recall in ctx vs baseline [95% CI]", "interval", f"recall_all@{k}",
                  f"NDCG@{k}", f"R@{k}", "ctx tokens", "search p95 ms"],
                 rows, [row_class(s, scores) for s in order], [False, True, True, False, True, True, True, True, True],
                 "compact")


def controls_line(scores: dict, checks: dict | None, current: bool) -> list:
    """What the controls say, in one line: check.py's verdicts on them, or their numbers."""
    more = Link("details", "#controls")
    lines = [c for c in checks["checks"] if c["check"] == "controls"] if checks is not None and current else []
    if lines:
        counts = Counter(c["status"] for c in lines)
        worst = next(st for st in ("FAIL", "WARN", "PASS", "SKIP") if counts[st])  # SKIP: none could run
        bad = [c["id"] for c in lines if c["status"] in ("FAIL", "WARN")]
        said = ", ".join(f"{n} {st}" for st, n in counts.items()) + (f"; {', '.join(bad)}" if bad else "")
        return segs(Strong(f"Controls: {worst}"), " (", more, f"): check.py, {said}.")
    key, what = (("recall_all_in_context", "has every evidence turn in context on")
                 if retrieval_only(scores) else ("accuracy", "answers"))
    shown = [f"{s['label']} {what} {rate(s[key])}" for s in scores["systems"] if s["backend"] in ("none", "oracle")]
    if not shown:
        return segs(Strong("Controls"), " (", more, "): none in this comparison; nothing checks the instrument's "
                                                    "floor and ceiling.")
    return segs(Strong("Controls"), " (", more, f"): {'; '.join(shown)}; no verdict without check.py's --checks.")


def reader_line(scores: dict, manifest: dict) -> list | None:
    """What this run's reader lets accuracy show, written from this run's own figures: how often
    it answers given exactly the evidence (oracle) and given none, and which systems accuracy and
    recall in context each separate from the baseline. It claims nothing the figures do not: the
    gap closed is accuracy rescaled by the controls' span, so it separates what accuracy does."""
    if retrieval_only(scores):
        return None
    info = manifest["served_model_info"]
    title = [Strong("Embedded reader" if info is not None else "Reader"), " ",
             Code(info["served_model"] if info is not None else scores["contract"]["answer_model"])]
    control = {name: [s for s in scores["systems"] if s["backend"] == name and s["accuracy"] is not None]
               for name in ("none", "oracle")}
    if not control["oracle"]:
        said = ": no oracle control here says how often it answers given exactly the evidence, so nothing bounds " \
               "what its accuracy can show."
    else:
        said = f": {', '.join(rate(s['accuracy']) for s in control['oracle'])} right given exactly the evidence (the " \
               "oracle control)"
        if len(control["oracle"]) == len(control["none"]) == 1:
            span = control["oracle"][0]["accuracy"] - control["none"][0]["accuracy"]
            said += f" and {rate(control['none'][0]['accuracy'])} with none, a span of {rate(span)} for memory " \
                    "systems to differ in."
            detectable = [m["value"] for m in scores["minimum_detectable_difference"].values() if m["value"] is not None]
            if len(detectable) == 1 and span < detectable[0]:
                said += " The span is smaller than the smallest difference this comparison detects with 80% power " \
                        f"(MDD {rate(detectable[0])}): accuracy cannot be expected to separate memory systems here."
        else:
            said += "."
    return segs(*title, said + separation_text(scores))


def separation_text(scores: dict) -> str:
    """Which systems accuracy and recall in context separate from the baseline (their paired
    95% intervals exclude 0), in one or two sentences; empty with no system beside the baseline."""
    accuracy = [d for d in scores["differences"] if d["difference"] is not None]
    recall = [d for d in scores["retrieval_differences"] if d["metric"] == "recall_all_in_context"
              and d["difference"] is not None]
    if not accuracy:
        return ""
    baseline = accuracy[0]["baseline"]
    in_accuracy = [d["system"] for d in accuracy if d["separated"]]
    in_recall = [d["system"] for d in recall if d["separated"]]

    def names(found: list[str]) -> str:
        return ", ".join(found) if found else "no system"
    text = f" Accuracy separates {names(in_accuracy)} from {baseline}"
    if recall:
        text += f"; recall in context separates {names(in_recall)}"
    hidden = [x for x in in_recall if x not in in_accuracy]
    if hidden:
        text += f", a difference in retrieval that accuracy does not show for {', '.join(hidden)}"
    return text + "."


def recall_line(scores: dict) -> list | None:
    """Each system's paired difference in recall in context to the baseline, in one line: with a
    small reader, where memory systems part."""
    found = [d for d in scores["retrieval_differences"] if d["metric"] == "recall_all_in_context"]
    if not found or retrieval_only(scores):
        return None  # the model-free table holds them
    said = "; ".join(f"{d['system']} {interval_text(d)} {separated_text(d)}" for d in found)
    return segs(Strong("Recall in context vs baseline"), " (", Link("details", "#paired-retrieval"), f"): {said}.")


def grader_line(scores: dict, calibration: dict | None, grader: dict | None) -> list | None:
    """The grader's error rates in one line, its held-out set beside the set its rules were tuned
    on, as score.py prints them (wording.calibration_text); None without a calibration or answers."""
    if calibration is None or retrieval_only(scores):
        return None
    more = Link("details", "#judge")
    if calibration["grader"] != grader:
        return segs(Strong("Grader"), " (", more, "): the calibration given rates another grader, so its rates do not "
                                                  "apply to these verdicts.")
    return segs(Strong("Grader"), " (", more, f"): {calibration['grading']}, 95% Wilson intervals: "
                                              f"{calibration_text(calibration)}.")


def glance_section(scores: dict, order: list[dict], manifest: dict, checks: dict | None, current: bool,
                   grader: list | None) -> list:
    """The first screen: the answer table, then one line each for what the reader lets accuracy
    show, the grader's calibration (`grader`, grader_line's), the controls and every deviation
    (at most DEVIATION_LINES, the rest a link away)."""
    found = deviations(scores, checks, current)
    lines = [x for x in (coverage_line(scores), reader_line(scores, manifest), recall_line(scores), grader)
             if x is not None]
    lines.append(controls_line(scores, checks, current))
    whole_lines = len(lines)
    lines += [segs(Strong("Deviation"), " (", Link("details", "#contract"), "): ", *d) for d in found[:DEVIATION_LINES]]
    if len(found) > DEVIATION_LINES:
        lines.append(segs(f"… and {len(found) - DEVIATION_LINES} more deviations: ",
                          Link("all of them", "#contract")))
    if not found:
        lines.append(segs("No deviation from the contract was recorded. ", Link("The contract", "#contract")))
    return [Heading(2, "Results", "results"), glance_table(scores, order), Para(segs(glance_legend(scores))),
            Lines(lines, [whole_lines <= i < whole_lines + DEVIATION_LINES for i in range(len(lines))])]


def glance_legend(scores: dict) -> str:
    """What the first table's columns are, in one sentence."""
    if retrieval_only(scores):
        return ("recall in ctx: every evidence turn in the context; Δ: the system minus the baseline, question by "
                "question, with its 95% cluster-bootstrap interval; recall_all@k and NDCG@k as LongMemEval defines "
                "them, R@k as LoCoMo does (the share of a question's evidence), at the k the runs searched with.")
    return ("Accuracy on answerable questions; Δ: the system minus the baseline, question by question, with its 95% "
            "cluster-bootstrap interval (separated: it excludes 0); gap closed: (system − none) / (oracle − none); "
            "recall in ctx: every evidence turn in the context; tokens per question: prompt + completion, as the "
            "endpoint counted them.")


# What the harness's own token count is, where a budget or a context size stands in its units:
# the answer model's tokenizer counts the same text differently (its counts are the prompt tokens
# the endpoint reports, under Cost and latency).
TOKENIZER_NOTE = {"approx": (" (", Code("approx"), ": the harness's count, a token per 4 characters, the same for "
                             "every system; the answer model's own tokenizer counts the same text differently, "
                             "usually more: its counts are the prompt tokens under Cost and latency)")}


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
             " counted by ", Code(first["tokenizer"]), ", never over", *TOKENIZER_NOTE.get(first["tokenizer"], ()),
             "."),
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
    found = deviations(scores, checks, checks_current)
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
                  ("recall_all@k", "recall_all_at_k", "recall", rate), ("NDCG@k", "ndcg_at_k", "recall", rate),
                  ("R@k", "evidence_recall_at_k", "recall", rate),
                  ("kw recall@k", "keyword_recall_at_k", "keyword recall", rate),
                  ("kw recall in ctx", "keyword_recall_in_context", "keyword recall", rate),
                  ("staleness", "staleness", "staleness", rate), ("contradiction", "contradiction", "contradiction", rate),
                  ("write precision", "write_precision", "write precision", rate),
                  ("ctx tokens", "mean_context_tokens", "context tokens", whole),
                  ("search p95 ms", "search_ms_p95", "search latency", rate))
MODEL_FREE_KEYS = ("recall_any_at_k", "recall_all_in_context", "recall_all_at_k", "ndcg_at_k", "evidence_recall_at_k",
                   "keyword_recall_at_k", "keyword_recall_in_context", "staleness", "mean_context_tokens",
                   "search_ms_p95")
# score.py's note beside a metric: why it is null, or that it was measured on part of the questions.
NOTE_OF = {"accuracy": "accuracy_note", "gap_closed": "gap_closed_note", "recall_any_at_k": "recall_note",
           "recall_all_in_context": "recall_note", "recall_all_at_k": "recall_note", "ndcg_at_k": "recall_note",
           "evidence_recall_at_k": "recall_note", "keyword_recall_at_k": "keyword_recall_note",
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
    return Table(header, rows, classes, [False] + [True] * (len(header) - 1), "full")


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
    blocks: list = [Heading(2, "All metrics", "metrics")]
    if retrieval_only(scores):
        blocks.append(Para(segs(Strong("Accuracy: not measured."), " This is a retrieval-only run (run.py "
                                "--retrieval-only): no answer model was asked and nothing was graded. The columns "
                                "below need no model: whether the evidence was retrieved and reached the context, "
                                "keyword recall, staleness, context size and search latency.")))
    blocks.append(main_table(scores, order, notes))
    if "accuracy" in plots:
        blocks.append(Image(plots["accuracy"], "Accuracy per system" if not retrieval_only(scores)
                            else "Evidence in context per system"))
    k = order[0]["rank_k"]
    legend = ("Rows: controls first (they validate the harness and are not compared), then the systems. "
              "recall@k: any evidence turn retrieved; recall in ctx: every evidence turn inside the token budget; "
              f"recall_all@k, NDCG@k (LongMemEval's definitions) and R@k (LoCoMo's: the share of a question's "
              f"evidence) read the first k = {k} turns the hits name, in rank order; "
              "kw recall: a retrieved hit holds the question's keywords (needs no provenance); staleness: share of "
              "context items superseded by a newer stored item; ctx tokens: mean context size, in the harness's "
              f"{scores['contract']['tokenizer']} units (the Contract says what they are); search p95 ms: "
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
        blocks.append(Para(segs(f"Noise floor: {noise_floor_legend(order)}. It needs run.py --repeat 2 or more. "
                                "Minimum detectable difference: a property of this sample of questions, not of the "
                                "runs.")))
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


RETRIEVAL_METRIC_NAMES = {"recall_any_at_k": "recall@k", "recall_all_in_context": "recall in ctx",
                          "recall_all_at_k": "recall_all@k", "ndcg_at_k": "NDCG@k"}


def retrieval_paired_section(scores: dict) -> list:
    """Each system's paired difference to the baseline in retrieval (needs no answer, so the
    model-free report has it too), with its interval and minimum detectable difference."""
    found = scores["retrieval_differences"]
    level = 2 if retrieval_only(scores) else 3
    blocks: list = [Heading(level, "Paired comparison in retrieval", "paired-retrieval"),
                    Para(segs("Each system minus the baseline ", Code(scores["baseline"]), ", question by question, on "
                              "the questions with gold evidence that both trace to stored turns (provenance), with a "
                              f"95% cluster-bootstrap interval ({scores['resamples']:,} resamples). recall@k: some "
                              "evidence turn among the k retrieved; recall in ctx: every evidence turn in the context "
                              "the model read; recall_all@k and NDCG@k at the k the runs searched with. The controls "
                              "are not compared."))]
    if not found:
        return blocks + [Para(segs("No system besides the baseline and the controls: nothing to compare."))]
    notes = Footnotes()
    rows = [[segs(d["system"]), RETRIEVAL_METRIC_NAMES[d["metric"]],
             notes.cell(interval_text(d), d["system"], "retrieval difference", d["note"]), separated_text(d),
             segs(Link(f"{d['questions']:,}", questions_href(a=d["system"], b=d["baseline"], v="differ"))),
             f"{d['clusters']:,}", rate(d["minimum_detectable_difference"])] for d in found]
    blocks.append(Table(["system", "metric", "Δ vs baseline [95% CI]", "interval", "questions", "clusters",
                         "minimum detectable"], rows, [""] * len(rows), [False, False, True, False, True, True, True]))
    return blocks + notes.blocks("Notes:")


def kind_recall_section(scores: dict, order: list[dict]) -> list:
    """Recall per kind (meta.kind when the dataset names one, else the type), with answer-bearing
    recall beside it: whether a turn that states the answer, not only a bridge turn that leads to
    it, was retrieved and reached the context."""
    notes = Footnotes()
    rows, classes = [], []
    for s in order:
        for kind, m in s["by_kind"].items():
            rows.append([display(s, scores), segs(kind), str(m["n"])] +
                        [notes.cell(rate(m[key]), s["label"], name, m[note]) for key, name, note in (
                            ("recall_any_at_k", "recall", "recall_note"),
                            ("recall_all_in_context", "recall", "recall_note"),
                            ("answer_recall_at_k", "answer-bearing recall", "answer_recall_note"),
                            ("answer_recall_in_context", "answer-bearing recall", "answer_recall_note"))])
            classes.append(row_class(s, scores))
    header = ["system", "kind", "n", "recall@k", "recall in ctx", "answer recall@k", "answer recall in ctx"]
    return [Heading(2, "Recall per kind, and answer-bearing recall", "kinds"),
            Para(segs("Per kind of question (", Code("meta.kind"), " when the dataset names one, else the type). "
                      "recall@k counts a question as found when any evidence turn was retrieved, a bridge turn that "
                      "only leads to the answer included; answer recall counts it only when a turn that states the "
                      "answer (", Code("meta.answer_evidence"), ") was retrieved (@k) or reached the context.")),
            Table(header, rows, classes, [False, False] + [True] * (len(header) - 2))] + notes.blocks()


def artifacts_section(scores: dict, artifacts: dict | None, manifest: dict, path: str | None) -> list:
    """The artifact audit of artifacts.py (model-free report only): what systems that never read
    the question find, per kind, against the baseline, and the verdict; or how to run it."""
    if not retrieval_only(scores):
        return []
    blocks: list = [Heading(2, "Artifact audit: what a system that never reads the question finds", "artifacts")]
    if artifacts is None:
        return blocks + [Para(segs("Not run. ", Code(f"python artifacts.py --dataset {manifest['dataset']} --out "
                                                     f"results/{manifest['run_id']}/model-free/artifacts.json"),
                                   " runs it, and report.py shows it with --artifacts."))]
    if artifacts["dataset_sha256"] != manifest["dataset_sha256"]:
        blocks.append(Para(segs(Strong("Another dataset: "), Code(path), f" audited {artifacts['dataset']} "
                                f"(sha256 {artifacts['dataset_sha256'][:12]}), not this comparison's; rerun "
                                "artifacts.py on it.")))
    header, rows = artifacts_table(artifacts)
    classes = ["baseline" if row[0] == "all" else "" for row in rows]
    names = [x for i, s in enumerate(artifacts["blind_systems"]) for x in ([", "] if i else []) + [Code(s)]]
    others = [x for s in artifacts["systems"][1:] for x in (", ", Code(s))]
    return blocks + [Para(segs(f"recall_any@{artifacts['k']} per kind of the query-blind systems (", *names,
                               ") beside the baseline ", Code(artifacts["baseline"]), *others, ", each with its "
                               f"difference to the baseline and 95% paired cluster-bootstrap interval "
                               f"({artifacts['resamples']:,} resamples). ", Code("cues"), " learns what marks an "
                               "evidence turn on half the cases and ranks the other half's turns without the "
                               "question.")),
                     Table(header, rows, classes, [False, True] + [True] * (len(header) - 2)),
                     Para(segs(Strong(artifacts["verdict"]), ": ", artifacts_summary(artifacts)))]


def controls_section(scores: dict, order: list[dict], checks: dict | None, current: bool) -> list:
    """What the controls say about the instrument (none low, oracle high). Whether `none` is
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
                ("recall_all@k", "recall_all_at_k", "recall", "recall_note"),
                ("NDCG@k", "ndcg_at_k", "recall", "recall_note"),
                ("R@k", "evidence_recall_at_k", "recall", "recall_note"),
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
    # Every difference holds one entry per graded type of the comparison (metrics.Scoring.differences;
    # every budget holds the same questions), so each compared system has every type shown.
    types, apart = type_order(scores)
    types = [t for t in types if t in diffs[compared[0]["label"]]["by_type"]]
    base = {s["label"]: s for s in order if is_baseline(s, scores)}
    rows = [[segs(s["label"])] + [type_difference_text(diffs[s["label"]]["by_type"][t], [
        x["by_type"][t]["accuracy"] for x in (s, base[diffs[s["label"]]["baseline"]]) if t in x["by_type"]])
        for t in types] for s in compared]
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

    def count(n: int, s: dict, cause: str | None) -> list | str:
        """A count that links to its questions in report.html."""
        return segs(Link(f"{n:,}", questions_href(a=s["label"], v="a_wrong", cause=cause))) if n else "0"
    rows = [[display(s, scores), count(sum(s["failure_causes"].values()), s, None)]
            + [count(s["failure_causes"][c], s, c) for c in causes] for s in order]
    blocks: list = [Heading(2, "Where the wrong answers came from", "failures"),
                    Para(segs("One cause per wrong answer, the first that applies, in this order: "
                              + "; ".join(f"{c}: {FAILURE_CAUSES[c]}" for c in causes) + ".")),
                    Table(["system", "wrong"] + causes, rows, [row_class(s, scores) for s in order],
                          [False] + [True] * (len(causes) + 1))]
    if "failures" in plots:
        blocks.append(Image(plots["failures"], "Failure causes per system"))
    repeats = max(s["repeats"] for s in order)
    blocks.append(Para(segs("Each count links to its questions in ", Link(html_name, html_name), ", filtered by "
                            "system and failure cause" + (f"; with {repeats} repeats a count is of records (one per "
                                                          "repeat), and the list filters each question by its first "
                                                          "repeat" if repeats > 1 else "") + ".")))
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
                              "questions in each repeat (run.py --repeat N), and the noise floor: "
                              f"{noise_floor_legend(order)}. A difference between systems no larger than either "
                              "one's noise floor (the larger end of that interval) is marked as within it.")),
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
                  paths: dict, config: str) -> list:
    """The judge's calibration rates and the human agreement, or how to get them."""
    blocks: list = [Heading(2, "The judge: calibration and human audit", "judge")]
    if retrieval_only(scores):
        return blocks + [Para(segs("Nothing was graded (a retrieval-only run)."))]
    grader = grader_of(verdicts)
    calibrate = CALIBRATE_COMMAND.format(config=config,
                                         out=os.path.join(os.path.dirname(paths["scores"]), "calibration.json"))
    if calibration is None:
        blocks.append(Para(segs("No judge calibration yet: run ", Code(calibrate), " and pass --calibration to "
                                "report.py. A judge model is trusted only after its calibration.")))
    elif calibration["grader"] != grader:
        theirs = calibration["grader"]
        blocks.append(Para(segs(f"{paths['calibration']} rates another grader (judge model ",
                                Code(str(theirs["judge_model"])), ", rules ",
                                Code(str(theirs["rules_sha256"])[:12]), ") than the one that graded these "
                                "verdicts (judge model ", Code(str(grader["judge_model"])), ", rules ",
                                Code(grader["rules_sha256"][:12]), "): its rates do not apply. Rerun ",
                                Code(calibrate), ".")))
    else:
        blocks += calibration_blocks(calibration, calibrate)
    if audit is None:
        results = os.path.dirname(paths["scores"])
        sheet, key = os.path.join(results, "audit-sheet.csv"), os.path.join(results, "audit-key.jsonl")
        blocks.append(Para(segs("No human audit yet: run ", Code(
            f"python audit.py sample --verdicts {paths['verdicts']} --n 100 --seed 11 --out-sheet {sheet} "
            f"--out-key {key}"), ", label the sheet blind, then ",
            Code(f"python audit.py join {sheet} {key} --out {os.path.join(results, 'audit.json')}"),
            " and pass --audit to report.py.")))
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


def calibration_blocks(calibration: dict, calibrate: str) -> list:
    """The grader's error rates on the tuning set (the rules were tuned on it) beside the held-out
    set (never tuned on): overall with Wilson intervals and kappa, then per kind of answer."""
    sets = [("tuning", calibration)] + ([("held out", calibration["heldout"])] if calibration["heldout"] else [])
    rows = [[segs(name, " (", Code(c["calibration_set"]), ")"), "yes" if name == "tuning" else "no",
             str(c["overall"]["n"]),
             error_rate_text(c["overall"]["false_accepts"], c["overall"]["known_wrong"],
                             c["overall"]["false_accept_rate"], c["overall"]["false_accept_ci95"]),
             error_rate_text(c["overall"]["false_rejects"], c["overall"]["known_right"],
                             c["overall"]["false_reject_rate"], c["overall"]["false_reject_ci95"]), rate(c["kappa"])]
            for name, c in sets]
    held = ("The held-out set was never tuned on: its rates are the ones to quote." if calibration["heldout"] else
            "No held-out set was graded: its rates, out of sample, are the ones to quote; run "
            + calibrate + ".")
    blocks: list = [Para(segs(f"Calibration of this grader ({calibration['grading']}) on labelled answers, with 95% "
                              f"Wilson intervals. The rules were tuned on the tuning set. {held} A false accept "
                              f"inflates every accuracy; a false reject deflates it.")),
                    Table(["set", "tuned on", "answers", "false accepts (of known-wrong)",
                           "false rejects (of known-right)", "Cohen's kappa"], rows, [""] * len(rows),
                          [False, False, True, True, True, True], "text")]
    kinds = [[segs(kind), name, str(r["n"]),
              error_rate_text(r["false_accepts"], r["known_wrong"], r["false_accept_rate"], r["false_accept_ci95"]),
              error_rate_text(r["false_rejects"], r["known_right"], r["false_reject_rate"], r["false_reject_ci95"])]
             for name, c in sets for kind, r in c["by_kind"].items()]
    blocks.append(Table(["kind of answer", "set", "n", "false accepts", "false rejects"], kinds, [""] * len(kinds),
                        [False, False, True, True, True], "text"))
    return blocks


def audit_mismatch(audit: dict, verdicts: dict | None) -> str | None:
    """Why an audit does not belong to these verdicts, or None when it does: every answer its
    key sampled must still be graded the same, from the same inputs, by the same grader."""
    key_path = audit["key"]
    if not os.path.exists(key_path):
        return f"names its key {key_path}, which is not here, so nothing shows that it audited these verdicts"
    sampled, other = 0, 0
    for lineno, k in read_audit_key(key_path):
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
    results = os.path.dirname(paths["scores"])
    run_it = Code(f"python check.py --runs {' '.join(paths['runs'])}"
                  + (f" --verdicts {paths['verdicts']}" if paths["verdicts"] else "")
                  + f" --manifest {paths['manifest']} --out {os.path.join(results, 'checks.json')}")
    if checks is None:
        return blocks + [Para(segs("No instrument checks yet: run ", run_it, " and pass "
                                   "--checks to report.py."))]
    if not current:
        return blocks + [Para(segs(f"{paths['checks']} checked other run files than these (their sha256 differ): its "
                                   "results do not apply. Rerun ", run_it, "."))]
    rows = [[c["status"], segs(Code(c["id"])), segs(c["summary"])] for c in checks["checks"]]
    counts = ", ".join(f"{n} {s}" for s, n in checks["counts"].items() if n)
    return blocks + [Para(segs(f"Overall: {checks['status']} ({counts}). FAIL and WARN are listed among the "
                               f"deviations above.")),
                     Table(["status", "check", "result"], rows, [c["status"].lower() for c in checks["checks"]],
                           [False, False, False], "text")]


def checks_current(checks: dict | None, scores: dict) -> bool:
    """Whether checks.json was made from exactly the run files scores.json was (by content);
    main() has held those to the --runs files (check_inputs)."""
    return checks is not None and sorted(checks["inputs"]["runs"].values()) == sorted(scores["inputs"]["runs"].values())


def facts_section(scores: dict, manifest: dict, order: list[dict]) -> list:
    """Counts, model ids, top_k and budget, the systems and their versions."""
    counts = manifest["dataset_counts"]
    types = ", ".join(f"{t} {n}" for t, n in counts["questions_by_type"].items())
    served = served_models(scores)
    repeats = max(s["repeats"] for s in order)
    first = scores["contract"]
    items = [
        segs("Run ", Code(manifest["run_id"]), f", manifest written {manifest['created_utc']}, ",
             *(("not from a git checkout",) if manifest["git_commit"] is None else
               ("git ", Code(manifest["git_commit"][:12]), " (uncommitted changes)" if manifest["git_dirty"] else ""))),
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
    """The commands that made these files, in the order the stages run, built from what ran:
    the systems of the run files (not the manifest's list), and judge.py --calibrate and
    check.py with the inputs their files record, when the report shows them."""
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
    if manifest["git_commit"] is None:
        lines = [f"# not made from a git checkout: no commit to check out; the manifest holds each code file's sha256 "
                 f"(config {config} sha256 {manifest['config_sha256'][:16]})"]
    else:
        dirty = ", with uncommitted changes: the commit alone does not reproduce it" if manifest["git_dirty"] else ""
        lines = [f"git checkout {manifest['git_commit']}   # config {config} sha256 "
                 f"{manifest['config_sha256'][:16]}{dirty}"]
    if not first["retrieval_only"]:
        lines.append("# run.py asks the model: export LLM_BASE_URL (and LLM_API_KEY) first, or run each run.py line "
                     "inside python serve.py -- COMMAND (the embedded model)")
    lines.append(f"python manifest.py {config} --backends {' '.join(files)} --out-dir "
                 f"{os.path.dirname(paths['manifest']) or '.'}")
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
    if paths["calibration"]:
        cal = read_json(paths["calibration"], "calibration of judge.py --calibrate", ("calibration_set", "heldout"))
        heldout = f" --heldout {cal['heldout']['calibration_set']}" if cal["heldout"] else ""
        lines.append(f"python judge.py --config {config} --calibrate {cal['calibration_set']}{heldout} "
                     f"--out {paths['calibration']}")
    if paths["checks"]:
        c = read_json(paths["checks"], "results of check.py", ("inputs",))["inputs"]
        given = [f"--{k} {' '.join(c[k])}" for k in ("rerun", "lag") if c[k]]
        given += [f"--{k} {c[k]}" for k in ("manifest", "config") if c[k]]
        lines.append(f"python check.py --runs {' '.join(c['runs'])}" + "".join(f" --verdicts {v}" for v in c["verdicts"])
                     + "".join(f" {g}" for g in given) + f" --out {paths['checks']} || [ $? -eq 4 ]   # 4: a check "
                     f"FAILed, which the report shows")
    lines.append(f"python score.py --runs {run_files}{verdicts} --baseline {scores['baseline']}{score_flags} "
                 f"--json {paths['scores']} --manifest {paths['manifest']}")
    optional = "".join(f" --{k} {paths[k]}" for k in ("checks", "calibration", "audit") if paths[k])
    lines.append(f"python report.py --scores {paths['scores']} --manifest {paths['manifest']} --runs {run_files}"
                 f"{verdicts}{optional} --out {paths['out']}")
    return [Heading(2, "How to reproduce", "reproduce"),
            Para(segs("With the same dataset, config and code (the manifest holds their sha256), in this order, from "
                      "the folder report.py ran in; each step resumes, and answers come from the response cache when "
                      "nothing changed:")),
            Pre("\n".join(lines))]


def plots_note(plots: dict | None) -> list:
    """How to get the plots when the optional extra is missing."""
    if plots is not None:
        return []
    return [Para(segs("Plots are not drawn: the optional plotting extra is not installed. ",
                      Code("pip install -r requirements-plots.txt"), " (matplotlib), then rerun report.py."))]


def build_blocks(scores: dict, manifest: dict, verdicts: dict | None, checks: dict | None, calibration: dict | None,
                 audit: dict | None, plots: dict | None, paths: dict, artifacts: dict | None = None) -> list:
    """The whole report: first the answer (the compact table, the controls and the deviations in a
    line each), then the rest: every metric, the contract, the paired comparisons,
    the controls, the breakdowns, the judge, the checks, the facts and the commands."""
    order = scores["systems"]
    current = checks_current(checks, scores)
    got = plots or {}
    kind = "model-free report (retrieval only)" if retrieval_only(scores) else "report"
    html_name = os.path.basename(paths["html"])
    blocks: list = [Heading(1, f"memory-bench {kind}: {manifest['run_id']}", "top"),
                    Para(segs(f"{len(order)} system rows on {manifest['dataset_counts']['questions']} questions of ",
                              Code(manifest["dataset"]), ", baseline ", Code(scores["baseline"]),
                              ". Every question, with " + ("what each system retrieved and the context it built"
                                                           if retrieval_only(scores) else
                                                           "each system's answer and the prompt it read") + ": ",
                              Link(html_name, "#questions"), "."))]
    blocks += glance_section(scores, order, manifest, checks, current,
                             grader_line(scores, calibration, grader_of(verdicts)))
    blocks += results_section(scores, order, got)
    blocks += plots_note(plots)
    blocks += contract_section(scores, manifest, checks, current)
    blocks += paired_section(scores, order)
    blocks += retrieval_paired_section(scores)
    blocks += type_differences_section(scores, order)
    blocks += controls_section(scores, order, checks, current)
    blocks += by_type_section(scores, order)
    blocks += kind_recall_section(scores, order)
    blocks += artifacts_section(scores, artifacts, manifest, paths["artifacts"])
    blocks += budget_section(scores, order, got)
    blocks += failures_section(scores, order, got, html_name)
    blocks += cost_section(scores, order)
    blocks += repeats_section(scores, order)
    blocks += judge_section(scores, verdicts, calibration, audit, paths, manifest["config"])
    blocks += checks_section(checks, current, paths)
    blocks += facts_section(scores, manifest, order)
    blocks += reproduce_section(scores, manifest, paths)
    return blocks


def plain(parts) -> str:
    """A segment list (or a plain cell string) as plain text."""
    return "".join(p if isinstance(p, str) else p.text for p in ([parts] if isinstance(parts, str) else parts))


def render_terminal(blocks: list, html_path: str) -> str:
    """The first screen for a terminal: the compact table with its columns aligned (numbers to
    the right), then its lines, then where the whole report is."""
    table = next(b for b in blocks if isinstance(b, Table) and b.kind == "compact")
    lines = next(b for b in blocks if isinstance(b, Lines))
    cells = [table.header] + [[plain(c) for c in row] for row in table.rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(table.header))]
    out = ["  ".join(c.rjust(w) if num and r else c.ljust(w) for c, w, num in zip(row, widths, table.numeric)).rstrip()
           for r, row in enumerate(cells)]
    out.insert(1, "  ".join("-" * w for w in widths))
    # The lines' links lead to sections of the report, which a terminal does not have.
    said = [plain([p for p in item if not (isinstance(p, Link) and p.href.startswith("#"))]).replace(" ()", "")
            for item in lines.items]
    out += [""] + [line.rstrip(" :") for line in said] + ["", f"report: {html_path} (open it from disk)"]
    return "\n".join(out)


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
    # Bars of 0.01-0.08 on a 0-1 axis are flat: below 0.5 the axis ends a quarter above the highest
    # bar or interval, and says so in its label.
    highest = max([v for v in values] + [s[key] + diffs[s["label"]]["ci_high"] - diffs[s["label"]]["difference"]
                                          for s in order if s["label"] in diffs and s[key] is not None
                                          and diffs[s["label"]]["ci_high"] is not None and not model_free])
    top = 1.08 if highest > 0.5 else max(0.05, highest * 1.25)
    ax.set_ylim(0, top)
    ax.set_ylabel(("all evidence in context" if model_free else "accuracy (answerable)")
                  + ("" if top == 1.08 else f", axis to {rate(top)}"))
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

RANK = re.compile(r"^\[(\d+)\] ")


class TurnBodies:
    """A case's turns as the one context builder writes them after the rank, `(timestamp) role:
    text` (context.render_line): what a system that returns the turn itself puts before the
    model, and how the report shows a turn. Each is written when first asked for: a case of
    LongMemEval holds hundreds of turns, of which a report cites a few."""

    def __init__(self, case: dict) -> None:
        self.turns = {t["turn_id"]: (s, t) for s in case["sessions"] for t in s["turns"]}
        self.written: dict = {}

    def __contains__(self, tid: str) -> bool:
        return tid in self.turns

    def __getitem__(self, tid: str) -> str:
        if tid not in self.written:
            session, turn = self.turns[tid]
            it = session_items({**session, "turns": [turn]})[0]  # the item run.py stores for this turn
            line = render_line(1, Hit(text=it.text, score=1.0, timestamp=it.metadata["timestamp"]))
            self.written[tid] = RANK.sub("", line, count=1)
        return self.written[tid]


def several_ids(r: dict) -> bool:
    """Hits that carry several source ids each: positions in retrieved_ids are not ranks."""
    return r["hits_returned"] is not None and len(r["retrieved_ids"]) != r["hits_returned"]


class Texts:
    """Every text the explorer shows once: context lines (after their rank) and turns, which are
    the same text when a system returns the turn itself, are numbers into one table."""

    def __init__(self) -> None:
        self.index: dict = {}
        self.texts: list[str] = []

    def __call__(self, text: str) -> int:
        """The number of a text, given it when first seen."""
        if text not in self.index:
            self.index[text] = len(self.texts)
            self.texts.append(text)
        return self.index[text]

    def table(self) -> list[str]:
        """Every text, by its number."""
        return self.texts


def context_lines(r: dict, texts: Texts) -> list | None:
    """The context a record's answer model read (context_text), line by line in the order sent:
    [turn id or None, rank or None, text number]. The rank comes off the front of a line (its
    text, `(timestamp) text`, is then the same entry as its turn's); the turn id is the hit's
    at that rank, when hits carry one source id each. Joined again, the lines are the context
    byte for byte."""
    if r["context_text"] is None:
        return None
    ids = r["retrieved_ids"]
    multi = ids is not None and several_ids(r)
    out = []
    for line in r["context_text"].split("\n"):
        m = RANK.match(line)
        rank = int(m.group(1)) if m else None
        tid = ids[rank - 1] if ids is not None and not multi and rank is not None and 0 < rank <= len(ids) else None
        out.append([tid, rank, texts(line[m.end():] if m else line)])
    table = texts.table()
    rebuilt = "\n".join((f"[{rank}] " if rank is not None else "") + table[n] for _, rank, n in out)
    if rebuilt != r["context_text"]:
        raise RuntimeError(f"{r['backend']} {r['qid']}: the context does not rebuild from its lines")  # a bug here
    return out


def answer_entry(r: dict, q: dict, verdict: dict | None, texts: Texts) -> dict:
    """One system's record of one question, as the explorer shows it: the answer, what it counts
    as in the tables (metrics.question_outcome: the explorer decides nothing), the layer that
    decided it and the judge's reason, the cause (score.py's question row), how
    much of the evidence was retrieved and kept, the context as sent, and the turns of the hits
    just past the budget cut."""
    word, ok = question_outcome(r, q)
    entry = {"rep": r["repeat"], "a": r["answer"], "v": word, "ok": ok, "by": q["by"], "c": q["cause"],
             "err": r["error"], "jerr": q["judge_error"], "ro": q["rules_only_verdict"],
             "why": verdict["judge_reason"] if verdict is not None else None,
             "ev": [q["evidence_n"], q["evidence_retrieved"], q["evidence_in_context"]],
             "budget": r[BUDGET_FIELD], "tok": r["context_tokens"], "kept": r["hits_kept"],
             "returned": r["hits_returned"], "lines": context_lines(r, texts),
             "traced": r["retrieved_ids"] is not None,
             "cut": [], "n_ctx": None, "n_ret": None, "multi": False, "more": [], "miss": []}
    if r["retrieved_ids"] is None or r["context_ids"] is None:
        return entry  # no provenance, or the question failed: the context as sent, and the counts
    ret, n_ctx = r["retrieved_ids"], len(r["context_ids"])
    multi = several_ids(r)
    after = ret[n_ctx:n_ctx + AFTER_CUT_LINES]
    # Evidence the lines above do not show: past the cut lines shown, or (hits of several
    # turns) inside a line that cannot name it.
    shown = (set() if multi else set(range(n_ctx))) | set(range(n_ctx, n_ctx + len(after)))
    evidence = set(r["evidence"])
    entry.update(cut=after, n_ctx=n_ctx, n_ret=len(ret), multi=multi,
                 more=[[i + 1, t, i < n_ctx] for i, t in enumerate(ret) if t in evidence and i not in shown],
                 miss=[t for t in r["evidence"] if t not in set(ret)])
    return entry


def prompt_parts(manifest: dict, contract: dict) -> tuple[list | None, str | None]:
    """The answer prompt of these runs as parts report.html fills (literal text, or the name of
    a field: asked_at, context, question), so each answer shows the prompt as sent; or None and
    why: the prompt is taken from the config the manifest names, and only when it hashes to the
    prompt_sha256 every record carries."""
    path = manifest["config"] if os.path.isabs(manifest["config"]) else os.path.join(ROOT, manifest["config"])
    if not os.path.exists(path):
        return None, f"the config {manifest['config']} that the manifest names is not here"
    with open(path, encoding="utf-8") as fh:
        template = yaml.safe_load(fh)["answer_prompt"]
    if sha256_text(template) != contract["prompt_sha256"]:
        return None, (f"the answer_prompt of {manifest['config']} has changed since these runs (sha256 "
                      f"{sha256_text(template)[:12]}, the runs used {contract['prompt_sha256'][:12]})")
    parts = []
    for literal, field, spec, conversion in string.Formatter().parse(template):
        if spec or conversion:
            return None, f"the answer_prompt formats its field {{{field}}} in a way this report does not rebuild"
        if literal:
            parts.append(literal)
        if field is not None:
            parts.append({"field": field})
    return parts, None


def fill_parts(parts: list, fields: dict) -> str:
    """The prompt from its parts, as report.html's script fills them."""
    return "".join(p if isinstance(p, str) else fields[p["field"]] for p in parts)


def explorer_data(scores: dict, order: list[dict], records: list[dict], cases: list[dict], verdicts: dict | None,
                  manifest: dict) -> dict:
    """The JSON blob report.html renders from: systems in report order, questions in dataset
    order with one list of answers (one per repeat) per system, the turns they cite as the
    context builder writes them, and the answer prompt's parts."""
    labels = {(s["backend"], s["budget"]): s["label"] for s in order}
    index = {s["label"]: i for i, s in enumerate(order)}
    rows = {(q["system"], q["qid"], q["budget"], q["repeat"]): q for q in scores["questions"]}
    scored = {r["qid"] for r in records}
    bodies = {c["case_id"]: TurnBodies(c) for c in cases if any(q["qid"] in scored for q in c["questions"])}
    texts = Texts()
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
        entry = answer_entry(r, rows[(label, r["qid"], r[BUDGET_FIELD], r["repeat"])],
                             verdicts[record_key(r)] if verdicts is not None and not r["retrieval_only"] else None,
                             texts)
        slot = by_qid[r["qid"]]["r"]
        slot[index[label]] = (slot[index[label]] or []) + [entry]
        cited[r["case_id"]].update(r["evidence"], entry["cut"], (m[1] for m in entry["more"]), entry["miss"])
    turn_texts = {case: {t: texts(bodies[case][t]) for t in sorted(ids) if t in bodies[case]}
                  for case, ids in sorted(cited.items())}
    systems = [{"label": s["label"], "role": "baseline" if is_baseline(s, scores) else "control" if is_control(s)
                else "system"} for s in order]
    causes = [c for c in order[0]["failure_causes"] if any(s["failure_causes"][c] for s in order)]
    layers = sorted({x for s in order for x in s["decided_by"]})
    parts, note = prompt_parts(manifest, scores["contract"])
    return {"systems": systems, "questions": questions, "turns": turn_texts, "texts": texts.table(), "causes": causes,
            "layers": layers, "model_free": retrieval_only(scores), "prompt": parts, "prompt_note": note}


def script_json(obj: dict) -> str:
    """JSON that can sit inside <script type="application/json">: no '<', '>' or '&' as such,
    so no text in it can close the element or open a comment (JSON.parse reads the escapes)."""
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def asset(name: str) -> str:
    """The text of one of the page's files beside report.py (its style and its script), which
    the page inlines so that it stays one file."""
    with open(os.path.join(ROOT, name), encoding="utf-8") as f:
        return "\n" + f.read()


HTML_CSS = asset("report.css")
HTML_JS = asset("report.js")


# What the question explorer shows, said for the page it is on: a model-free report has no
# answers, judges or prompts, only what each system retrieved and kept.
EXPLORER_HELP = (
    "Click a row for each system's answer, the layer that decided it (with the judge's reason), the prompt the model "
    "read, and its context in the order sent: evidence turns highlighted, the token-budget cut marked. Pick systems A "
    "and B to compare them: where A is right and B wrong, or the reverse; the failure cause and layer filters read A "
    "(any system when no A is picked); filters read each system's first repeat, and the search box matches question "
    "ids, questions, gold answers and answers. The address holds the view, to send to a colleague; a question's id "
    "is its permalink.")
EXPLORER_HELP_MODEL_FREE = (
    "Click a row for what each system retrieved: the context it would have been given, in the order built, evidence "
    "turns highlighted, the token-budget cut marked, and the evidence it did not retrieve. No model was asked, so "
    "there are no answers or verdicts. Pick systems A and B to compare them: where A has every evidence turn in its "
    "context and B not, or the reverse; the search box matches question ids, questions and gold answers. The "
    "address holds the view, to send to a colleague; a question's id is its permalink.")


def render_html(blocks: list, images: dict, data: dict, title: str) -> str:
    """report.html: one file, no network (the Content-Security-Policy forbids any request),
    the summary as static HTML and the question explorer built by the inline script. The table
    of contents follows the first screen (the answer, then its lines)."""
    toc = " ".join(f'<a href="#{html.escape(b.anchor)}">{html.escape(b.text)}</a>'
                   for b in blocks if isinstance(b, Heading) and b.level == 2)
    first = next(i for i, b in enumerate(blocks) if isinstance(b, Lines)) + 1
    return "".join([
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
        "<link rel=\"icon\" href=\"data:,\">\n",
        f"<title>{html.escape(title)}</title>\n<style>{HTML_CSS}</style>\n</head>\n<body>\n<main>\n",
        render_html_blocks(blocks[:first], images), "\n",
        f'<nav class="toc">{toc} <a href="#questions">Every question</a></nav>\n',
        render_html_blocks(blocks[first:], images), "\n",
        '<h2 id="questions">Every question</h2>\n',
        f"<p>{EXPLORER_HELP_MODEL_FREE if data['model_free'] else EXPLORER_HELP}</p>\n",
        '<div class="filters"><label>System A<select id="f-a"></select></label>'
        '<label>System B<select id="f-b"></select></label><label>Show<select id="f-v"></select></label>'
        '<label>Type<select id="f-type"></select></label><label>Failure cause<select id="f-cause"></select></label>'
        '<label>Layer<select id="f-by"></select></label><label>Sort<select id="f-sort"></select></label>'
        '<label>Search<input id="f-search" type="search" placeholder="words in a question or answer"></label>'
        '<button id="f-swap" type="button">swap A and B</button><a id="f-link" href="#questions">link to this view</a>'
        '<span id="count"></span></div>\n',
        '<noscript>The question explorer needs JavaScript; the tables above do not.</noscript>\n',
        '<div class="qbox"><table id="qtable"><thead></thead><tbody></tbody></table></div>\n<nav id="pager"></nav>\n'
        '</main>\n',
        f'<script type="application/json" id="report-data">{script_json(data)}</script>\n',
        f"<script>{HTML_JS}</script>\n</body>\n</html>\n",
    ])


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
    ap.add_argument("--calibration", help="results/$RUN/calibration.json from judge.py --calibrate (optional)")
    ap.add_argument("--audit", help="results/$RUN/audit.json from audit.py join (optional)")
    ap.add_argument("--artifacts", help="results/$RUN/model-free/artifacts.json from artifacts.py (optional; the "
                                        "model-free report shows it)")
    ap.add_argument("--dataset", help="the dataset, when it is no longer where the manifest says (checked by sha256)")
    ap.add_argument("--out", help="report.md to write; report.html and the plots go beside it (default: report.md "
                                  "beside --scores)")
    a = ap.parse_args(argv)
    a.out = a.out or os.path.join(os.path.dirname(a.scores), "report.md")
    if not a.out.endswith(".md"):
        raise InputError(f"--out {a.out}: expected a .md path (report.html and the plots are written beside it)")
    stem = a.out[:-3]
    paths = {"scores": a.scores, "manifest": a.manifest, "runs": a.runs, "verdicts": a.verdicts, "checks": a.checks,
             "calibration": a.calibration, "audit": a.audit, "artifacts": a.artifacts, "out": a.out, "html": stem + ".html"}

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
    checks = optional_json(a.checks, "results of check.py", ())
    if checks is not None:
        check_format(checks, CHECKS_FORMAT, a.checks, "rerun check.py")
        if checks_current(checks, scores):  # of these runs (other runs' checks are named, not shown): these verdicts
            refuse_stale_checks_verdicts(checks, a.checks, list(scores["inputs"]["verdicts"].values()))
    calibration = read_calibration_json(a.calibration, ("grader", "grading", "calibration_set", "overall", "by_kind",
                                                        "kappa", "heldout")) if a.calibration else None
    audit = read_audit_json(a.audit, ("sampled", "labelled", "complete", "overall", "by_system",
                                      "flagged")) if a.audit else None
    artifacts = read_artifacts(a.artifacts) if a.artifacts else None
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
                          paths, artifacts)
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
