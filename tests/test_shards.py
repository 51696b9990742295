"""Spreading one run over machines: shards of run.py and judge.py, merged, equal one run."""
from __future__ import annotations

import json
import os

import judge
import merge
import run
from cli import run_cli
from conftest import ROOT, write_config
from dataset import shard_of

DEV = os.path.join(ROOT, "data", "dev.jsonl")  # 12 cases, so that every shard of three gets some

# Fields that differ between two runs of the same thing by design: when, how fast, from where.
TIMING = ("ingest_s", "flush_s", "search_ms", "search_calls_in_flight", "cached", "retries")


def records(path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def run_shards(tmp_path, config: str, backend: str, n: int) -> list[str]:
    """run.py --shard I/n for every I; the shard files."""
    shards = []
    for i in range(n):
        shards.append(str(tmp_path / f"{backend}.{i}.jsonl"))
        assert run_cli(run.main, ["--config", config, "--backend", backend, "--out", shards[-1],
                                  "--shard", f"{i}/{n}"]) == 0
    return shards


def strip(recs: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in TIMING} for r in recs]


def test_three_shards_merged_equal_one_run_and_their_verdicts_equal_one_grading(tmp_path, fake_llm):
    config = write_config(tmp_path, dataset=DEV)
    shards = []
    for i in range(3):
        shards.append(str(tmp_path / f"keyword.{i}.jsonl"))
        assert run_cli(run.main, ["--config", config, "--backend", "keyword", "--out", shards[-1], "--shard",
                                  f"{i}/3", "--budgets", "40,1200"]) == 0
    merged = tmp_path / "merged" / "keyword.jsonl"
    assert run_cli(merge.main, ["--config", config, "--out", str(merged), *shards]) == 0
    single = tmp_path / "single" / "keyword.jsonl"
    assert run_cli(run.main, ["--config", config, "--backend", "keyword", "--out", str(single),
                              "--budgets", "40,1200"]) == 0
    assert strip(records(merged)) == strip(records(single))
    # The merged file is a single-machine run: resuming it finds nothing to do.
    before = fake_llm.requests
    assert run_cli(run.main, ["--config", config, "--backend", "keyword", "--out", str(merged),
                              "--budgets", "40,1200"]) == 0
    assert fake_llm.requests == before
    vshards = []
    for i in range(3):
        vshards.append(str(tmp_path / f"verdicts.{i}.jsonl"))
        assert run_cli(judge.main, ["--config", config, "--runs", str(merged), "--out", vshards[-1],
                                    "--shard", f"{i}/3"]) == 0
    vmerged = tmp_path / "verdicts.jsonl"
    assert run_cli(merge.main, ["--config", config, "--verdicts", "--runs", str(merged), "--out", str(vmerged), *vshards]) == 0
    vsingle = tmp_path / "verdicts-single.jsonl"
    assert run_cli(judge.main, ["--config", config, "--runs", str(single), "--out", str(vsingle)]) == 0
    key = lambda v: (v["qid"], v["context_token_budget"])
    assert sorted(strip(records(vmerged)), key=key) == sorted(strip(records(vsingle)), key=key)


def test_merge_refuses_a_missing_shard_a_duplicate_and_another_run(tmp_path, fake_llm, capsys):
    config = write_config(tmp_path, dataset=DEV)
    shards = run_shards(tmp_path, config, "none", 3)
    out = str(tmp_path / "merged.jsonl")
    nonempty = [s for s in shards if records(s)]
    assert all(records(s) for s in shards)  # every share of the 12 cases holds some
    assert run_cli(merge.main, ["--config", config, "--out", out, *shards[:2]]) == 2
    assert "missing" in capsys.readouterr().err
    assert run_cli(merge.main, ["--config", config, "--out", out, *shards, nonempty[0]]) == 2
    assert "exactly one shard" in capsys.readouterr().err
    (tmp_path / "other").mkdir()
    other = write_config(tmp_path / "other", dataset=DEV, seed=8)
    odd = str(tmp_path / "none.odd.jsonl")
    assert run_cli(run.main, ["--config", other, "--backend", "none", "--out", odd, "--shard", "0/3"]) == 0
    assert run_cli(merge.main, ["--config", config, "--out", out, odd, *shards[1:]]) == 2
    assert "not of one run" in capsys.readouterr().err


def test_merge_refuses_verdict_shards_that_do_not_grade_the_runs_exactly_once(tmp_path, fake_llm, capsys):
    config = write_config(tmp_path, dataset=DEV)
    run_file = str(tmp_path / "none.jsonl")
    assert run_cli(run.main, ["--config", config, "--backend", "none", "--out", run_file]) == 0
    vshards = []
    for i in range(3):
        vshards.append(str(tmp_path / f"verdicts.{i}.jsonl"))
        assert run_cli(judge.main, ["--config", config, "--runs", run_file, "--out", vshards[-1],
                                    "--shard", f"{i}/3"]) == 0
    out = str(tmp_path / "merged.jsonl")
    assert run_cli(merge.main, ["--config", config, "--verdicts", "--out", out, *vshards]) == 2
    assert "--runs is required" in capsys.readouterr().err
    # Two of three shards: the answers of the third have no verdict.
    assert run_cli(merge.main, ["--config", config, "--verdicts", "--runs", run_file, "--out", out, *vshards[:2]]) == 2
    assert "the verdicts: no verdict for" in capsys.readouterr().err
    # A shard graded under another rule set (as if by another judge.py).
    lines = [json.loads(x) for x in open(vshards[2], encoding="utf-8")]
    lines[0]["rules_sha256"] = "0" * 64
    odd = tmp_path / "verdicts.odd.jsonl"
    odd.write_text("".join(json.dumps(v) + "\n" for v in lines), encoding="utf-8")
    assert run_cli(merge.main, ["--config", config, "--verdicts", "--runs", run_file, "--out", out, *vshards[:2], str(odd)]) == 2
    assert "another rule set" in capsys.readouterr().err
    # Verdicts of answers the run files do not hold.
    other = str(tmp_path / "oracle.jsonl")
    assert run_cli(run.main, ["--config", config, "--backend", "oracle", "--out", other]) == 0
    foreign = str(tmp_path / "verdicts.oracle.jsonl")
    assert run_cli(judge.main, ["--config", config, "--runs", other, "--out", foreign]) == 0
    assert run_cli(merge.main, ["--config", config, "--verdicts", "--runs", run_file, "--out", out, *vshards, foreign]) == 2
    assert "do not hold" in capsys.readouterr().err
    assert not os.path.exists(out)
    assert run_cli(merge.main, ["--config", config, "--verdicts", "--runs", run_file, "--out", out, *vshards]) == 0


def test_merge_refuses_run_shards_of_another_dataset_than_the_config(tmp_path, fake_llm, capsys):
    config = write_config(tmp_path, dataset=DEV)
    shards = run_shards(tmp_path, config, "none", 2)
    edited = tmp_path / "dev-edited.jsonl"
    edited.write_text(open(DEV, encoding="utf-8").read() + "\n", encoding="utf-8")  # same questions, other bytes
    (tmp_path / "other").mkdir()
    other = write_config(tmp_path / "other", dataset=str(edited))
    assert run_cli(merge.main, ["--config", other, "--out", str(tmp_path / "m.jsonl"), *shards]) == 2
    assert "ran on another dataset" in capsys.readouterr().err


def test_merge_names_the_cases_of_a_shard_that_never_ran(tmp_path, fake_llm, capsys):
    config = write_config(tmp_path, dataset=DEV)
    shards = run_shards(tmp_path, config, "none", 4)
    absent = 1
    assert run_cli(merge.main, ["--config", config, "--out", str(tmp_path / "m.jsonl"),
                                *[s for i, s in enumerate(shards) if i != absent]]) == 2
    err = capsys.readouterr().err
    cases = [json.loads(line) for line in open(DEV, encoding="utf-8") if line.strip()]
    theirs = [c for c in cases if shard_of(c, 4) == absent]
    others = [c for c in cases if shard_of(c, 4) != absent]
    assert theirs and others
    assert f"of {len(theirs)} case(s): " + ", ".join(f"{c['case_id']!r} (shard {absent}/4)" for c in theirs) in err
    assert not [c for c in others if repr(c["case_id"]) in err]
    assert f"{sum(len(c['questions']) for c in theirs)} record(s) are missing" in err
