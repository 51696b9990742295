"""The index of the runs on disk: results/index.json and results/index.html, rewritten by every
report (report.py, compare.py). Each report and compare page is one row: its run id(s), date,
dataset, reader, systems with their headline number and the fingerprint of its contract; rows
whose contract fingerprints are equal are comparable (compare.py accepts their run files
together) and are grouped. A row whose page is gone from disk is dropped at the next rewrite.

The index lives in the `results` folder that holds the page (the nearest parent folder of that
name); a page written elsewhere is indexed nowhere.
"""
from __future__ import annotations

import html
import json
import os
from datetime import datetime, timezone

from cli import InputError
from fileio import read_json, sha256_text, write_atomic, write_json_atomic
from formats import check_format
from wording import estimate_text, rate

INDEX_FORMAT = "index/1"
INDEX_JSON, INDEX_HTML = "index.json", "index.html"
ROOT = os.path.dirname(os.path.abspath(__file__))


def contract_fingerprint(contract: dict, budgets: list) -> str:
    """What two comparable runs share, as 12 hex digits: the fairness contract (dataset, reader,
    prompt, sampling, top_k, tokenizer, ...) and the budgets. Equal fingerprints: compare.py
    pairs the runs; different: it refuses them, naming the field."""
    return sha256_text(json.dumps({"contract": contract, "budgets": sorted(budgets)}, sort_keys=True))[:12]


def index_root(page: str) -> str | None:
    """The `results` folder holding a page (its nearest parent of that name), or None."""
    folder = os.path.dirname(os.path.abspath(page))
    while True:
        if os.path.basename(folder) == "results":
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def headline(s: dict) -> dict:
    """A system row's headline: accuracy with its interval when answered, else recall in context."""
    if s["retrieval_only"]:
        return {"label": s["label"], "metric": "recall_all_in_context", "value": s["recall_all_in_context"],
                "ci": None}
    return {"label": s["label"], "metric": "accuracy", "value": s["accuracy"], "ci": s["accuracy_ci"]}


def report_entry(scores: dict, manifest: dict, page: str) -> dict:
    """The row of one report.py page (scores.json and its manifest)."""
    contract = scores["contract"]
    return {"kind": "report", "page": os.path.abspath(page), "run_ids": [manifest["run_id"]],
            "created_utc": manifest["created_utc"], "dataset": os.path.basename(scores["inputs"]["dataset"]),
            "dataset_sha256": contract["dataset_sha256"], "reader": contract["answer_model"],
            "retrieval_only": contract["retrieval_only"], "budgets": scores["budgets"],
            "fingerprint": contract_fingerprint(contract, scores["budgets"]), "baseline": scores["baseline"],
            "systems": [headline(s) for s in scores["systems"]]}


def compare_entry(compared: dict, page: str) -> dict:
    """The row of one compare.py page (compare.json)."""
    contract = compared["contract"]
    return {"kind": "compare", "page": os.path.abspath(page),
            "run_ids": list(dict.fromkeys(r["run_id"] for r in compared["runs"])),
            "created_utc": compared["created_utc"], "dataset": os.path.basename(compared["inputs"]["dataset"]),
            "dataset_sha256": contract["dataset_sha256"], "reader": contract["answer_model"],
            "retrieval_only": contract["retrieval_only"], "budgets": compared["budgets"],
            "fingerprint": compared["fingerprint"], "baseline": compared["baseline"],
            "systems": [headline(s) for s in compared["systems"]]}


def read_index(path: str) -> list[dict]:
    """The rows of an index.json (none when it does not exist yet)."""
    if not os.path.exists(path):
        return []
    index = read_json(path, "index of the runs (report.py, compare.py)", ("format", "rows"))
    check_format(index, INDEX_FORMAT, path, "delete it: the next report writes it again")
    return index["rows"]


def update(page: str, entry: dict) -> str | None:
    """Add or replace the row of `page` in the index of its results folder, drop rows whose page
    is gone, and write index.json and index.html; the path of index.html, or None when the page
    is not under a `results` folder. Pages are stored relative to the index."""
    root = index_root(page)
    if root is None:
        return None
    rel = os.path.relpath(entry["page"], root)
    try:
        rows = read_index(os.path.join(root, INDEX_JSON))
    except InputError as e:
        raise InputError(f"{e} (the index of the runs is rewritten by every report)") from None
    rows = [r for r in rows if r["page"] != rel and os.path.exists(os.path.join(root, r["page"]))]
    rows.append({**entry, "page": rel})
    rows.sort(key=lambda r: (r["fingerprint"], r["created_utc"], r["page"]))
    write_json_atomic(os.path.join(root, INDEX_JSON),
                      {"format": INDEX_FORMAT, "updated_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                       "rows": rows})
    out = os.path.join(root, INDEX_HTML)
    write_atomic(out, render_html(rows))
    return out


def _asset(name: str) -> str:
    with open(os.path.join(ROOT, name), encoding="utf-8") as f:
        return f.read()


def _number(h: dict) -> str:
    name = "recall in ctx" if h["metric"] == "recall_all_in_context" else "accuracy"
    value = rate(h["value"]) if h["ci"] is None else estimate_text(h["value"], h["ci"])
    return f"{html.escape(h['label'])}: {name} {value}"


def render_html(rows: list[dict]) -> str:
    """index.html: one table per group of comparable rows (equal contract fingerprints)."""
    groups: dict = {}
    for r in rows:
        groups.setdefault(r["fingerprint"], []).append(r)
    parts = ["<h1>memory-bench: the runs on disk</h1>\n",
             f"<p>{len(rows)} page(s) in {len(groups)} group(s). Rows of one group share the fairness contract "
             "(dataset, reader, prompt, sampling, top_k, tokenizer, budgets: its fingerprint), so their run files can "
             "be compared question by question: <code>python compare.py --runs runs/A/SYSTEM.jsonl "
             "runs/B/SYSTEM.jsonl --verdicts results/A/verdicts.jsonl results/B/verdicts.jsonl</code> (docs/report.md, "
             "\"Across runs\"). Headline: accuracy on answerable questions with its 95% interval; recall in context "
             "for a model-free run.</p>\n"]
    for fp, group in groups.items():
        g = group[0]
        kind = "model-free (no answers)" if g["retrieval_only"] else f"reader {g['reader']}"
        parts.append(f'<h2 id="c-{fp}">Contract {fp}: {html.escape(g["dataset"])} ({g["dataset_sha256"][:12]}), '
                     f"{html.escape(kind)}, budget {', '.join(map(str, g['budgets']))}</h2>\n")
        parts.append('<div class="scroll"><table class="summary index"><thead><tr><th>run id</th><th>date (UTC)</th>'
                     "<th>page</th><th>systems: headline</th></tr></thead><tbody>\n")
        for r in group:
            link = html.escape(r["page"].replace(os.sep, "/"))
            what = "comparison across runs" if r["kind"] == "compare" else "report"
            systems = "<br>".join(_number(h) for h in r["systems"])
            parts.append(f'<tr class="{r["kind"]}"><td>{html.escape(", ".join(r["run_ids"]))}</td>'
                         f"<td>{html.escape(r['created_utc'])}</td><td><a href=\"{link}\">{what}</a></td>"
                         f"<td>{systems}</td></tr>\n")
        parts.append("</tbody></table></div>\n")
    return "".join([
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">\n",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<link rel=\"icon\" href=\"data:,\">\n",
        f"<title>memory-bench: the runs on disk</title>\n<style>\n{_asset('report.css')}</style>\n</head>\n<body>\n<main>\n",
        *parts, "</main>\n</body>\n</html>\n"])
