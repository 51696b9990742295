"""The manifest held to the runs, and the report's "How to reproduce" run as written: score.py
and report.py refuse a manifest of other systems or other code, naming the difference; the
recipe, pasted into bash from the folder report.py ran in with the inputs gone, makes the same
scores again."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import check
import judge
import manifest
import report
import run
import score
from cli import run_cli
from conftest import ROOT, write_config
from report_pipeline import make_report, pipeline, score_again


def recipe(md: str) -> str:
    """The shell block under "How to reproduce" in report.md."""
    section = md.split("## How to reproduce", 1)[1]
    return section.split("```", 2)[1].split("\n", 1)[1]


def test_the_recipe_of_a_test_report_runs_as_written_and_scores_the_same(tmp_path, fake_llm, monkeypatch):
    monkeypatch.setattr(manifest, "git", lambda *args: None)  # made outside a git checkout
    paths = pipeline(tmp_path / "made", monkeypatch=monkeypatch)
    monkeypatch.setenv("LLM_BASE_URL", fake_llm.url)  # the pipeline's own endpoint has stopped
    results = paths["results"]
    calibration, checks = str(results / "calibration.json"), str(results / "checks.json")
    assert run_cli(judge.main, ["--config", paths["config"], "--calibrate", os.path.join(ROOT, "data", "calibration.jsonl"),
                                "--heldout", os.path.join(ROOT, "data", "heldout.jsonl"), "--out", calibration]) == 0
    assert run_cli(check.main, ["--runs", *paths["runs"], "--verdicts", paths["verdicts"], "--manifest",
                                paths["manifest"], "--config", paths["config"], "--out", checks]) in (0, 4)
    score_again(paths, "--checks", checks, "--calibration", calibration, resamples="200")
    assert make_report(paths, "--checks", checks) == 0
    md = open(paths["md"], encoding="utf-8").read()
    block = recipe(md)
    assert "None" not in block and "not from a git checkout" in md
    assert not [line for line in block.splitlines() if line.startswith("git ")]
    assert "judge.py --config" in block and "--calibrate" in block and "python check.py --runs" in block
    assert "LLM_BASE_URL" in block and "serve.py --" in block
    before = json.load(open(paths["scores"], encoding="utf-8"))
    for path in [*paths["runs"], paths["verdicts"], paths["scores"], paths["manifest"], calibration, checks,
                 paths["md"], paths["html"]]:
        os.unlink(path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)  # `python` as the recipe writes it
    done = subprocess.run(["bash", "-e", "-c", block], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    assert done.returncode == 0, done.stderr[-3000:]
    after = json.load(open(paths["scores"], encoding="utf-8"))
    assert [(s["label"], s["accuracy"], s["recall_all_in_context"]) for s in after["systems"]] == \
        [(s["label"], s["accuracy"], s["recall_all_in_context"]) for s in before["systems"]]
    assert after["differences"] == before["differences"]
    assert os.path.exists(paths["html"]) and os.path.exists(checks) and os.path.exists(calibration)


def test_score_and_report_refuse_a_manifest_of_other_systems_or_other_code_naming_the_difference(tmp_path, capsys):
    cfg = write_config(tmp_path)
    runs = [str(tmp_path / "runs" / f"{b}.jsonl") for b in ("keyword", "bm25")]
    for b, out in zip(("keyword", "bm25"), runs):
        assert run_cli(run.main, ["--config", cfg, "--backend", b, "--out", out, "--retrieval-only"]) == 0
    assert run_cli(manifest.main, [cfg, "--backends", "keyword", "--out-dir", str(tmp_path / "only")]) == 0
    assert run_cli(manifest.main, [cfg, "--backends", "keyword", "bm25", "--out-dir", str(tmp_path / "both")]) == 0
    only, both = (str(next((tmp_path / d).glob("manifest-*.json"))) for d in ("only", "both"))
    scores = str(tmp_path / "scores.json")
    capsys.readouterr()
    argv = ["--runs", *runs, "--baseline", "keyword", "--json", scores, "--resamples", "50", "--manifest"]
    assert run_cli(score.main, [*argv, only]) == 2
    err = capsys.readouterr().err
    assert f"{only}: does not describe these runs: the runs hold 'bm25' (--backend bm25), which it does not list" in err
    assert "python manifest.py CONFIG --backends keyword bm25" in err
    # the code of keyword edited since the manifest was written: its hash differs from the runs'
    m = json.load(open(both, encoding="utf-8"))
    m["backends"][0]["code_sha256"] = "0" * 64
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps(m), encoding="utf-8")
    assert run_cli(score.main, [*argv, str(stale)]) == 2
    err = capsys.readouterr().err
    assert "'keyword' ran code" in err and "the manifest recorded 000000000000 (its code changed" in err
    assert run_cli(score.main, [*argv, both]) == 0
    capsys.readouterr()
    assert run_cli(report.main, ["--scores", scores, "--manifest", str(stale), "--runs", *runs,
                                 "--out", str(tmp_path / "report.md")]) == 2
    err = capsys.readouterr().err
    assert "'keyword' ran code" in err and "the manifest recorded 000000000000 (its code changed" in err
