"""score.py and report.py held to their exact outputs: a fixed comparison (hand-built records,
so no timing or timestamp varies) scored and reported, and scores.json, report.md, report.html
and the terminal's first table compared byte for byte with the files in tests/data/golden/.
Moving code between modules must leave every byte as it was; a change meant to alter the
report changes these files in the same commit, written by

  MEMORY_BENCH_WRITE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_golden_outputs.py

and read in its diff. Three things are replaced before comparing, since they change for
reasons of their own: the temporary folder, the rules' sha256 (any edit of a rule changes it),
and the text of report.css and report.js that the page inlines (the page around them is held)."""
from __future__ import annotations

import json
import os
import sys

import pytest

import score
from cli import run_cli
from rules import RULES_SHA256
from records import run_record
from report_pipeline import make_report
from test_report import DATA, build

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "golden")
# A fixed price table: the shipped one changes with its date and prices.
PRICES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "prices.yaml")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# (qid, case, type): three cases, so that the cluster bootstrap has intervals to draw.
QUESTIONS = (("q0", "c0", "single_hop"), ("q1", "c0", "temporal"), ("q2", "c1", "multi_hop"),
             ("q3", "c1", "single_hop"), ("q4", "c2", "knowledge_update"), ("q5", "c2", "abstention"))


def system(backend: str, answers: str, kept: str, **fields) -> list[dict]:
    """One record per question: answers[i] is y (right), n (wrong) or x (the run failed);
    kept[i] is e (the evidence turn retrieved), o (another turn only) or - (nothing)."""
    out = []
    for (qid, case, qtype), a, k in zip(QUESTIONS, answers, kept):
        evidence = [] if qtype == "abstention" else [f"t{qid}"]
        retrieved = {"e": [f"t{qid}", "tz"], "o": ["tz"], "-": []}[k]
        rec = run_record(backend, qid, case, {"y": "yes", "n": "no", "x": None}[a], evidence, retrieved, type=qtype,
                         **fields)
        if a == "x":
            rec["error"] = "timeout"
        out.append(rec)
    return out


def normalize(text: str, folder: str) -> str:
    """The output without what varies for reasons of its own (the module docstring)."""
    for asset in ("report.css", "report.js"):
        with open(os.path.join(ROOT, asset), encoding="utf-8") as f:
            text = text.replace(f.read(), f"<{asset}>")
    return text.replace(folder, "<tmp>").replace(RULES_SHA256, "<rules>").replace(RULES_SHA256[:12], "<rules12>")


def test_scores_and_report_are_byte_identical_to_the_golden_files(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # no plots: their bytes follow matplotlib's version
    systems = {"none": system("none", "nnnnny", "------"), "oracle": system("oracle", "yyynyy", "eeeeee"),
               "keyword": system("keyword", "ynynyy", "eoeoe-"),
               "hash": system("hash", "yyxnny", "eeeoo-", internal_model="e5-small")}
    code, _, paths = build(tmp_path, systems)
    assert code == 0
    calibration = json.load(open(os.path.join(DATA, "calibration.json"), encoding="utf-8"))
    calibration["grader"] = {"rules_sha256": RULES_SHA256, "judge_model": None, "judge_prompt_sha256": None}
    cal = tmp_path / "calibration.json"
    cal.write_text(json.dumps(calibration), encoding="utf-8")
    scores = paths["scores"]
    capsys.readouterr()
    assert run_cli(score.main, ["--runs", *paths["runs"], "--verdicts", paths["verdicts"], "--baseline", "keyword",
                                "--json", scores, "--manifest", paths["manifest"], "--resamples", "200",
                                "--calibration", str(cal), "--prices", PRICES]) == 0
    assert make_report(paths) == 0
    outputs = {"scores.json": open(scores, encoding="utf-8").read(),
               "report.md": open(paths["md"], encoding="utf-8").read(),
               "report.html": open(paths["md"][:-3] + ".html", encoding="utf-8").read(),
               "stdout.txt": capsys.readouterr().out}
    outputs = {name: normalize(text, str(tmp_path)) for name, text in outputs.items()}
    if os.environ.get("MEMORY_BENCH_WRITE_GOLDEN") == "1":
        os.makedirs(GOLDEN, exist_ok=True)
        for name, text in outputs.items():
            with open(os.path.join(GOLDEN, name), "w", encoding="utf-8") as f:
                f.write(text)
        pytest.skip(f"wrote the golden files into {GOLDEN}: read their diff before committing")
    for name, text in outputs.items():
        with open(os.path.join(GOLDEN, name), encoding="utf-8") as f:
            assert text == f.read(), f"{name} differs from tests/data/golden/{name}"
