"""Publishable or not: a run is publishable only from a clean checkout, on the whole of a
dataset that is not a development split, with its served models pinned, its grader calibrated
and every instrument check PASSed; otherwise scores.json, score.py's tables and the report's
first screen say it is a development run, and why."""
from __future__ import annotations

import copy
import json

import pytest

import check
import report
import score
from cli import run_cli
from report_pipeline import pipeline

CLEAN = {"git_commit": "0123456789abcdef", "git_dirty": False, "judge_model": None, "served_model_info": None}
WHOLE = {"dataset_questions": 6, "planned_questions": 6, "scored_questions": 6, "limit": [], "shards": [],
         "sample": [], "partial": False}


def scores(retrieval_only: bool = True, served: tuple = (), **over) -> dict:
    s = {"inputs": {"dataset": "data/cases-v6.jsonl"}, "coverage": dict(WHOLE),
         "contract": {"retrieval_only": retrieval_only},
         "served_models": {"60": {"bm25": {m: 3 for m in served}}},
         "calibration": {"agreement": 1.0}, "checks": {"status": "PASS"}}
    s.update(over)
    return s


def test_a_clean_whole_checked_run_is_publishable():
    assert score.publication(scores(), CLEAN) == {"publishable": True, "reasons": []}
    assert score.publication(scores(False, ("gpt-4o-2024-08-06", "claude-3-5-sonnet-20241022")), CLEAN)["publishable"]
    embedded = {**CLEAN, "served_model_info": {"served_model": "SmolLM2-135M-Instruct.Q4_1-f16",
                                               "served_sha256": "a269e3181fcbb250"}}
    assert score.publication(scores(False, ("SmolLM2-135M-Instruct.Q4_1-f16",)), embedded)["publishable"]


@pytest.mark.parametrize("change, manifest, reason", [
    ({}, {**CLEAN, "git_dirty": True}, "the working tree had uncommitted changes when the manifest was written "
                                       "(on commit 0123456789ab)"),
    ({}, {**CLEAN, "git_dirty": None}, "the code was not a git checkout"),
    ({}, None, "no manifest (score.py --manifest)"),
    ({"inputs": {"dataset": "data/dev-v6.jsonl"}}, CLEAN, "the dataset dev-v6.jsonl is a development split"),
    ({"coverage": {**WHOLE, "scored_questions": 2, "limit": [1]}}, CLEAN,
     "only 2 of the dataset's 6 questions were scored: --limit 1"),
    ({"coverage": {**WHOLE, "scored_questions": 4, "sample": [4]}}, CLEAN, "were scored: --sample 4"),
    ({"checks": None}, CLEAN, "no instrument checks (score.py --checks"),
    ({"checks": {"status": "FAIL"}}, CLEAN, "the instrument checks did not all PASS (FAIL)"),
], ids=["dirty", "no git", "no manifest", "dev split", "limit", "sample", "no checks", "a check failed"])
def test_each_reason_a_run_is_not_publishable_is_named(change, manifest, reason):
    verdict = score.publication(scores(**change), manifest)
    assert not verdict["publishable"] and any(reason in r for r in verdict["reasons"]), verdict


def test_an_answered_run_needs_pinned_models_and_a_calibrated_grader():
    loose = score.publication(scores(False, ("gpt-4o",)), {**CLEAN, "judge_model": "gpt-4o-mini"})
    assert loose["reasons"] == [
        "served model gpt-4o is not pinned to a dated id (or a file by its checksum): the provider may serve another "
        "model under it later",
        "judge_model gpt-4o-mini is not pinned to a dated id"]
    uncalibrated = score.publication(scores(False, ("gpt-4o-2024-08-06",), calibration=None), CLEAN)
    assert uncalibrated["reasons"] == ["the grader was not calibrated (score.py --calibration: judge.py --calibrate's "
                                       "figures)"]
    # a model-free run has no reader and no grader to pin or calibrate
    assert score.publication(scores(True, ("gpt-4o",), calibration=None), CLEAN)["publishable"]


def rescore(paths: dict, manifest: dict, *runs_args: str) -> tuple[dict, str, str]:
    """score.py (with check.py's checks) and report.py again, on a copy of the manifest."""
    path = paths["results"] / "manifest-copy.json"
    path.write_text(json.dumps(manifest), encoding="utf-8")
    checks = str(paths["results"] / "checks.json")
    check_code = run_cli(check.main, ["--runs", *paths["runs"], "--config", paths["config"], "--out", checks])
    assert check_code in (0, 4)
    assert run_cli(score.main, ["--runs", *paths["runs"], "--baseline", "keyword", "--json", paths["scores"],
                                "--manifest", str(path), "--checks", checks, "--resamples", "50"]) == 0
    assert run_cli(report.main, ["--scores", paths["scores"], "--manifest", str(path), "--runs", *paths["runs"],
                                 "--checks", checks, "--out", paths["md"]]) == 0
    with open(paths["scores"], encoding="utf-8") as fh:
        written = json.load(fh)
    with open(paths["md"], encoding="utf-8") as fh:
        md = fh.read()
    return written, md, check_code


def test_the_report_of_a_dirty_or_limited_run_says_it_is_not_for_publication_and_a_clean_whole_one_does_not(
        tmp_path, capsys):
    paths = pipeline(tmp_path / "whole", systems=("none", "oracle", "keyword", "bm25"),
                     run_args=("--retrieval-only",))
    with open(paths["manifest"], encoding="utf-8") as fh:
        manifest = json.load(fh)
    written, md, check_code = rescore(paths, {**manifest, "git_dirty": False})
    assert check_code == 0  # every check PASSes on these runs
    assert written["publication"] == {"publishable": True, "reasons": []}
    assert "Development run" not in md
    dirty = copy.deepcopy(manifest)
    dirty["git_dirty"] = True
    written, md, _ = rescore(paths, dirty)
    assert not written["publication"]["publishable"]
    assert "**Development run, not for publication**: the working tree had uncommitted changes" in md
    assert "DEVELOPMENT RUN, not for publication: the working tree had uncommitted changes" in capsys.readouterr().out
    limited = pipeline(tmp_path / "limited", systems=("none", "oracle", "keyword", "bm25"),
                       run_args=("--retrieval-only", "--limit", "1"))
    written, md, _ = rescore(limited, {**manifest, "git_dirty": False})
    assert "**Development run, not for publication**:" in md and "questions were scored: --limit 1" in md
