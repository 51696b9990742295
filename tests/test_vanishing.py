"""A comparison is the dataset's questions: no system, and no question, leaves it without a word.
Each way of vanishing (an empty run file, runs that lack questions of the dataset, a dataset
changed since the runs or since the verdicts) exits 2 in judge.py, score.py and check.py alike,
naming the file and what is missing; runs that recorded --limit, or --allow-partial, are
scored and said to be partial."""
from __future__ import annotations

import json

import pytest

import check
import judge
import run
import score
from cli import run_cli
from config import load_config
from conftest import TINY, write_config

SYSTEMS = ("none", "keyword")


@pytest.fixture
def comparison(tmp_path, fake_llm):
    """none and keyword run on a copy of the tiny dataset and judged: (config, dataset, runs, verdicts)."""
    data = tmp_path / "cases.jsonl"
    data.write_text(open(TINY, encoding="utf-8").read(), encoding="utf-8")
    cfg = write_config(tmp_path, dataset=str(data))
    runs = [str(tmp_path / f"{b}.jsonl") for b in SYSTEMS]
    for b, out in zip(SYSTEMS, runs):
        assert run_cli(run.main, ["--config", cfg, "--backend", b, "--out", out]) == 0
    verdicts = str(tmp_path / "verdicts.jsonl")
    assert run_cli(judge.main, ["--config", cfg, "--runs", *runs, "--out", verdicts]) == 0
    return cfg, data, runs, verdicts


def stage(name: str, cfg: str, runs: list[str], verdicts: str, tmp_path, *extra: str) -> int:
    """Run judge.py, score.py or check.py on the comparison; its exit code."""
    if name == "judge":
        return run_cli(judge.main, ["--config", cfg, "--runs", *runs, "--out", str(tmp_path / "v2.jsonl"), *extra])
    if name == "score":
        return run_cli(score.main, ["--config", cfg, "--runs", *runs, "--verdicts", verdicts, "--baseline", "keyword",
                                    "--resamples", "50", "--json", str(tmp_path / "scores.json"), *extra])
    return run_cli(check.main, ["--config", cfg, "--runs", *runs, "--verdicts", verdicts,
                                "--out", str(tmp_path / "checks.json"), *extra])


def cut(path: str, keep: int) -> None:
    """Keep the first `keep` lines of a run file."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.readlines()
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(lines[:keep])


def edit_gold(data) -> None:
    """A gold corrected in the dataset."""
    data.write_text(data.read_text().replace('"gold_answer": "Postgres 16"', '"gold_answer": "Postgres 16.2"'))


@pytest.mark.parametrize("name", ["judge", "score", "check"])
def test_an_empty_run_file_is_refused_naming_it(tmp_path, comparison, capsys, name):
    cfg, _, runs, verdicts = comparison
    cut(runs[1], 0)
    capsys.readouterr()
    assert stage(name, cfg, runs, verdicts, tmp_path) == 2
    assert f"{runs[1]}: holds no records, so its system would be missing from the comparison" in \
        capsys.readouterr().err


@pytest.mark.parametrize("name", ["judge", "score", "check"])
def test_runs_that_all_lack_the_same_questions_are_refused_naming_the_file_and_the_count(tmp_path, comparison,
                                                                                          capsys, name):
    cfg, _, runs, verdicts = comparison
    for path in runs:
        cut(path, 3)  # every file holds the same 3 of the 6 questions: agreeing with each other is not enough
    capsys.readouterr()
    assert stage(name, cfg, runs, verdicts, tmp_path) == 2
    err = capsys.readouterr().err
    budget = load_config(cfg)["context_token_budget"]
    assert f"{runs[0]}: backend 'none' (repeat 0, budget {budget}) holds 3 of the dataset's 6 questions; 3 missing" in err
    assert "--allow-partial" in err


@pytest.mark.parametrize("name", ["judge", "score", "check"])
def test_a_dataset_changed_since_the_runs_is_refused(tmp_path, comparison, capsys, name):
    cfg, data, runs, verdicts = comparison
    edit_gold(data)
    capsys.readouterr()
    assert stage(name, cfg, runs, verdicts, tmp_path) == 2
    assert f"{runs[0]}:1: made from the dataset with sha256" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["score", "check"])
def test_a_dataset_changed_since_the_verdicts_is_refused(tmp_path, comparison, capsys, name):
    cfg, data, runs, verdicts = comparison
    edit_gold(data)
    for b, out in zip(SYSTEMS, runs):
        assert run_cli(run.main, ["--config", cfg, "--backend", b, "--out", out, "--fresh"]) == 0
    capsys.readouterr()
    assert stage(name, cfg, runs, verdicts, tmp_path) == 2
    assert "graded another gold_answer than its run record holds now (the dataset or the run changed since the " \
           "verdicts); rerun judge.py" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["judge", "score", "check"])
def test_allow_partial_scores_the_common_questions_and_says_so(tmp_path, comparison, capsys, name):
    cfg, _, runs, verdicts = comparison
    cut(runs[1], 4)
    assert stage(name, cfg, runs, verdicts, tmp_path, "--allow-partial") in (0, 1)  # check.py: the oracle may fail
    if name == "score":
        scores = json.loads((tmp_path / "scores.json").read_text())
        assert scores["coverage"]["scored_questions"] == 4 and scores["coverage"]["partial"] is True
        assert "PARTIAL: 4 of the dataset's 6 questions scored" in capsys.readouterr().out
    if name == "check":
        c = {x["id"]: x for x in json.loads((tmp_path / "checks.json").read_text())["checks"]}
        assert c["contract/comparison"]["status"] == "WARN" and "--allow-partial" in c["contract/comparison"]["summary"]


def test_runs_that_recorded_limit_are_held_against_the_cases_it_chose(tmp_path, fake_llm, capsys):
    cfg = write_config(tmp_path)
    runs = [str(tmp_path / f"{b}.jsonl") for b in SYSTEMS]
    for b, out in zip(SYSTEMS, runs):
        assert run_cli(run.main, ["--config", cfg, "--backend", b, "--out", out, "--limit", "1"]) == 0
    verdicts = str(tmp_path / "verdicts.jsonl")
    assert run_cli(judge.main, ["--config", cfg, "--runs", *runs, "--out", verdicts]) == 0
    assert stage("score", cfg, runs, verdicts, tmp_path) == 0
    assert json.loads((tmp_path / "scores.json").read_text())["coverage"]["planned_questions"] == 3
    assert "PARTIAL: 3 of the dataset's 6 questions scored" in capsys.readouterr().out
    cut(runs[1], 2)  # one of the 3 questions --limit 1 chose is missing: refused like any other
    assert stage("check", cfg, runs, verdicts, tmp_path) == 2
    assert "holds 2 of this run's planned (--limit, --shard, --sample) 3 questions" in capsys.readouterr().err
