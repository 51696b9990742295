"""run.py --sample: a stratified sample of the questions (N of each kind), drawn from the seed and
the ids alone, the same for every system; recorded in the run records and the manifest, and
refused when mixed with runs on every question."""
from __future__ import annotations

import json
import os
from collections import Counter

import check
import judge
import manifest
import score
from cli import run_cli
from conftest import ROOT, write_config
from contract import kind_of
from dataset import load_dataset, sample_questions, select_cases
from test_run_options import records, run_system

DEV = os.path.join(ROOT, "data", "dev-v6.jsonl")  # 8 cases, 8 questions of each of 9 kinds


def test_the_sample_is_n_of_each_kind_nested_and_drawn_by_the_seed_alone():
    cases = load_dataset(DEV)
    kinds = {q["qid"]: kind_of(q) for c in cases for q in c["questions"]}
    two = sample_questions(cases, 2, 7)
    assert Counter(kinds[q] for q in two) == {k: 2 for k in set(kinds.values())}
    # A question in the sample of N is in the sample of N + 1, and a kind with fewer gives all it has.
    assert two < sample_questions(cases, 3, 7) and sample_questions(cases, 50, 7) == set(kinds)
    # The draw depends on the seed and the ids, not on the order the cases come in.
    assert sample_questions(list(reversed(cases)), 2, 7) == two
    assert sample_questions(cases, 2, 8) != two
    # Only the cases that hold a sampled question are kept, each with only its sampled questions.
    kept = select_cases(cases, None, None, 2, 7)
    assert {q["qid"] for c in kept for q in c["questions"]} == two and all(c["questions"] for c in kept)


def test_every_system_answers_the_same_sample_and_the_comparison_says_so(tmp_path, fake_llm, capsys):
    cfg = write_config(tmp_path, dataset=DEV)
    runs = [str(tmp_path / "runs" / f"{b}.jsonl") for b in ("none", "keyword")]
    for b, out in zip(("none", "keyword"), runs):
        assert run_system(cfg, b, out, "--sample", "2") == 0
    assert "--sample 2: 2 question(s) of each kind" in capsys.readouterr().err
    chosen = sample_questions(load_dataset(DEV), 2, 7)  # config.yaml's seed
    for out in runs:
        recs = records(out)
        assert {r["qid"] for r in recs} == chosen and len(recs) == 18 and {r["sample"] for r in recs} == {2}
    assert run_cli(manifest.main, [cfg, "--backends", "none", "keyword", "--sample", "2",
                                   "--out-dir", str(tmp_path / "results")]) == 0
    m = str(next((tmp_path / "results").glob("manifest-*.json")))
    assert json.load(open(m))["sample"] == 2
    verdicts = str(tmp_path / "results" / "verdicts.jsonl")
    assert run_cli(judge.main, ["--config", cfg, "--runs", *runs, "--out", verdicts]) == 0
    js = tmp_path / "results" / "scores.json"
    assert run_cli(score.main, ["--runs", *runs, "--verdicts", verdicts, "--baseline", "keyword", "--manifest", m,
                                "--json", str(js), "--resamples", "10"]) == 0
    scores = json.loads(js.read_text())
    assert scores["coverage"]["sample"] == [2] and scores["coverage"]["scored_questions"] == 18
    assert any("--sample 2 (a stratified sample" in w for w in scores["warnings"])
    assert run_cli(check.main, ["--runs", *runs, "--verdicts", verdicts, "--manifest", m,
                                "--out", str(tmp_path / "results" / "checks.json")]) in (0, 4)


def test_a_sample_is_refused_beside_a_run_on_every_question_or_a_manifest_of_another(tmp_path, fake_llm, capsys):
    cfg = write_config(tmp_path, dataset=DEV)
    sampled, whole = str(tmp_path / "none.jsonl"), str(tmp_path / "keyword.jsonl")
    assert run_system(cfg, "none", sampled, "--sample", "1") == 0
    assert run_system(cfg, "keyword", whole) == 0
    verdicts = str(tmp_path / "v.jsonl")
    capsys.readouterr()
    assert run_cli(judge.main, ["--config", cfg, "--runs", sampled, whole, "--out", verdicts]) == 2
    assert "field 'sample' differs" in capsys.readouterr().err and not os.path.exists(verdicts)
    assert run_cli(judge.main, ["--config", cfg, "--runs", sampled, "--out", verdicts]) == 0
    capsys.readouterr()
    assert run_cli(score.main, ["--config", cfg, "--runs", sampled, whole, "--verdicts", verdicts,
                                "--baseline", "keyword", "--json", str(tmp_path / "s.json")]) == 2
    assert "field 'sample' differs" in capsys.readouterr().err
    # A manifest written for every question does not describe the sampled run, and says the fix.
    assert run_cli(manifest.main, [cfg, "--backends", "none", "--out-dir", str(tmp_path / "r")]) == 0
    m = str(next((tmp_path / "r").glob("manifest-*.json")))
    assert run_cli(score.main, ["--runs", sampled, "--verdicts", verdicts, "--baseline", "none", "--manifest", m,
                                "--json", str(tmp_path / "s.json")]) == 2
    err = capsys.readouterr().err
    assert "ran on a sample of 1 question(s) of each kind, the manifest recorded every question" in err
    assert "--backends none --sample 1" in err


def test_a_sample_below_one_is_refused_before_any_call(tmp_path, fake_llm, capsys):
    cfg = write_config(tmp_path, dataset=DEV)
    assert run_system(cfg, "none", tmp_path / "x.jsonl", "--sample", "0") == 2
    assert "--sample must be at least 1" in capsys.readouterr().err
    assert fake_llm.requests == 0 and not (tmp_path / "x.jsonl").exists()
