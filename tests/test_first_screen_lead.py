"""Which evidence leads the first screen is decided by the run's own reader: the stages as `make
bench` runs them (the model-free pass on every question, then the answered pass on a stratified
sample, check.py, score.py, report.py with --model-free) against the test endpoint, once with a
reader that answers from its context and once with one that cannot read. The first passes its
adequacy control and accuracy leads; the second does not, and retrieval leads, with one line
saying why from the oracle's figure."""
from __future__ import annotations

import json
import os
import re

import pytest

import check
import judge
import manifest
import report
import run
import score
from cli import run_cli
from conftest import ROOT, write_config
from fake_llm import FakeLLM

DEV = os.path.join(ROOT, "data", "dev-v6.jsonl")  # 8 cases, 8 questions of each of 9 kinds
SYSTEMS = ("none", "oracle", "keyword", "bm25")
QUESTION = re.compile(r"Question: (.*)\s*$", re.S)


def golds() -> dict:
    """Each question's gold answer, by the question's text."""
    with open(DEV, encoding="utf-8") as fh:
        return {q["question"]: q["gold_answer"] for line in fh for q in json.loads(line)["questions"]}


def reads_its_context(answers: dict):
    """A reader that reads: the gold when its context states it, else "I don't know"."""
    def respond(body: dict) -> str | None:
        prompt = body["messages"][-1]["content"]
        if "Memories" not in prompt:
            return None  # not an answer prompt
        memories, question = prompt.split("Memories", 1)[1].split("Question:", 1)
        gold = answers[question.strip()]
        return gold if gold.lower() in memories.lower() else "I don't know"
    return respond


def stages(folder, monkeypatch, responder) -> tuple[str, str]:
    """make bench's stages into `folder`: the model-free pass, then the answered one on a sample of
    two questions of each kind against the test endpoint answering with `responder` (None: the
    endpoint's default, which repeats the first memory line). (report.md, what report.py printed)."""
    cfg = write_config(folder, dataset=DEV, workers=2)
    free_dir, results = folder / "results" / "model-free", folder / "results"
    free = [str(folder / "runs" / "model-free" / f"{s}.jsonl") for s in SYSTEMS]
    assert run_cli(manifest.main, [cfg, "--backends", *SYSTEMS, "--out-dir", str(free_dir)]) == 0
    free_manifest = str(next(free_dir.glob("manifest-*.json")))
    for s, out in zip(SYSTEMS, free):
        assert run_cli(run.main, ["--config", cfg, "--backend", s, "--out", out, "--retrieval-only"]) == 0
    assert run_cli(check.main, ["--runs", *free, "--manifest", free_manifest, "--config", cfg,
                                "--out", str(free_dir / "checks.json")]) == 0
    assert run_cli(score.main, ["--runs", *free, "--baseline", "keyword", "--manifest", free_manifest, "--checks",
                                str(free_dir / "checks.json"), "--json", str(free_dir / "scores.json"),
                                "--resamples", "200"]) == 0
    server = FakeLLM().start()
    server.responder = responder
    monkeypatch.setenv("LLM_BASE_URL", server.url)
    monkeypatch.setenv("LLM_API_KEY", "sk-test-not-a-secret")
    answered = [str(folder / "runs" / f"{s}.jsonl") for s in SYSTEMS]
    try:
        assert run_cli(manifest.main, [cfg, "--backends", *SYSTEMS, "--sample", "2", "--out-dir", str(results)]) == 0
        for s, out in zip(SYSTEMS, answered):
            assert run_cli(run.main, ["--config", cfg, "--backend", s, "--out", out, "--sample", "2"]) == 0
        verdicts = str(results / "verdicts.jsonl")
        assert run_cli(judge.main, ["--config", cfg, "--runs", *answered, "--out", verdicts]) == 0
    finally:
        server.stop()
    m = str(next(results.glob("manifest-*.json")))
    checks = str(results / "checks.json")
    assert run_cli(check.main, ["--runs", *answered, "--verdicts", verdicts, "--manifest", m, "--config", cfg,
                                "--rerun", *free, "--out", checks]) == 0
    assert run_cli(score.main, ["--runs", *answered, "--verdicts", verdicts, "--baseline", "keyword", "--manifest", m,
                                "--checks", checks, "--json", str(results / "scores.json"), "--resamples", "200"]) == 0
    md = results / "report.md"
    return md, checks


def first_screen(md) -> str:
    """report.md's first screen: from its first section to the next."""
    text = open(md, encoding="utf-8").read()
    return text.split("\n## ", 2)[1]


@pytest.mark.parametrize("reads", [True, False])
def test_the_reader_decides_whether_accuracy_or_retrieval_leads(tmp_path, monkeypatch, capsys, reads):
    md, checks = stages(tmp_path, monkeypatch, reads_its_context(golds()) if reads else None)
    reader = json.load(open(checks, encoding="utf-8"))["reader"]
    assert reader["verdict"] == ("adequate" if reads else "inadequate")
    assert json.load(open(checks, encoding="utf-8"))["status"] != "FAIL"  # the reader never fails the instrument
    results = tmp_path / "results"
    capsys.readouterr()
    assert run_cli(report.main, ["--scores", str(results / "scores.json"), "--manifest",
                                 str(next(results.glob("manifest-*.json"))),
                                 "--runs", *[str(tmp_path / "runs" / f"{s}.jsonl") for s in SYSTEMS],
                                 "--verdicts", str(results / "verdicts.jsonl"), "--checks", checks,
                                 "--model-free", str(results / "model-free" / "scores.json"), "--out", str(md)]) == 0
    printed = capsys.readouterr().out
    screen = first_screen(md)
    # The table that comes first: the accuracy table's header, or the model-free one's.
    first_table = next(line for line in screen.splitlines() if line.startswith("| system"))
    reader_line = next(line for line in screen.splitlines() if "**Reader**" in line)
    if reads:
        assert "accuracy [95% CI]" in first_table and "Retrieval leads" not in screen
        assert f"reader adequate for accuracy: oracle {reader['oracle_accuracy']:.3f} >= 0.50" in reader_line
        assert printed.splitlines()[0].startswith("system") and "accuracy [95% CI]" in printed.splitlines()[0]
    else:
        assert "Δ recall in ctx vs baseline" in first_table and "**Retrieval leads:**" in screen
        assert "72 questions" in screen.split("| system", 1)[0]  # the model-free pass: every question
        assert "reader inadequate for accuracy: oracle" in reader_line and "LLM_BASE_URL" in reader_line
        assert "Accuracy of the answered runs" in screen
        # The terminal leads the same way, and shows the sample's accuracy after the lines.
        lines = printed.splitlines()
        assert "recall in ctx" in lines[0] and "Accuracy of the answered runs:" in printed
        # bm25 against keyword on every question: the difference that separates leads.
        bm25 = next(line for line in lines if line.startswith("bm25"))
        assert "separated" in bm25 and "not separated" not in bm25
