"""report.html: the page shell (report_page.html, with report.css and report.js inlined) and the
question explorer's data, one JSON blob holding every question with each system's answer,
verdict, failure cause, the prompt the model read and its context lines in the order sent.
The explorer shows each row's own verdict and decides nothing.
"""
from __future__ import annotations

import html
import json
import os
import re
import string
from collections import defaultdict

import yaml

from answer_prompts import resolve
from context import render_line
from contract import Hit, session_items
from fileio import sha256_text
from formats import BUDGET_FIELD, record_key
from metrics import question_outcome
from report_sections import is_baseline, is_control, retrieval_only
from report_document import Heading, Lines, render_html_blocks

ROOT = os.path.dirname(os.path.abspath(__file__))
# The question explorer of report.html shows each answer's context whole, as sent (the budget
# bounds it), and the turns of this many hits after the budget cut.
AFTER_CUT_LINES = 5


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
        template = resolve(yaml.safe_load(fh)["answer_prompt"])  # a benchmark's prompt by name, or the text
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
    """The text of one of the page's files beside report.py (its shell, its style and its
    script), which make one file."""
    with open(os.path.join(ROOT, name), encoding="utf-8") as f:
        return f.read()


# The page's shell: string.Template placeholders ($title, $css, $summary, $toc, $details,
# $explorer_help, $data, $js), each filled once by render_html; the values are never read as
# a template themselves, so a `$` in a question or in the script stays as written.
PAGE = string.Template(asset("report_page.html"))
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
    return PAGE.substitute(title=html.escape(title), css=HTML_CSS, js=HTML_JS,
                           summary=render_html_blocks(blocks[:first], images), toc=toc,
                           details=render_html_blocks(blocks[first:], images),
                           explorer_help=EXPLORER_HELP_MODEL_FREE if data["model_free"] else EXPLORER_HELP,
                           data=script_json(data))
