"""End to end: run -> judge -> score on the tiny dataset against the fake endpoint; resume,
cache, determinism, secrecy and file-type checks."""
from __future__ import annotations

import json
import os

import judge
import run
import score
from cli import run_cli
from conftest import API_KEY, write_config

SYSTEMS = ("none", "oracle", "full_context", "keyword")


def run_all(cfg: str, runs_dir) -> list[str]:
    paths = []
    for name in SYSTEMS:
        out = str(runs_dir / f"{name}.jsonl")
        assert run_cli(run.main, ["--config", cfg, "--backend", name, "--out", out]) == 0
        paths.append(out)
    return paths


def records(path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_end_to_end_run_judge_score(tmp_path, fake_llm, config, capsys):
    paths = run_all(config, tmp_path / "runs")
    verdicts = str(tmp_path / "results" / "verdicts.jsonl")
    assert run_cli(judge.main, ["--config", config, "--runs", *paths, "--out", verdicts]) == 0
    scores_json = str(tmp_path / "results" / "scores.json")
    assert run_cli(score.main, ["--config", config, "--runs", *paths, "--verdicts", verdicts, "--baseline", "keyword",
                                "--json", scores_json, "--resamples", "500"]) == 0
    scores = {s["label"]: s for s in json.load(open(scores_json))["systems"]}
    # The controls bracket the harness: none retrieves nothing, oracle retrieves exactly the evidence.
    assert scores["none"]["recall_any_at_k"] == 0.0 and scores["oracle"]["recall_all_in_context"] == 1.0
    assert scores["oracle"]["accuracy"] > scores["none"]["accuracy"]
    abstention = scores["none"]["by_type"]["abstention"]
    assert {k: abstention[k] for k in ("n", "accuracy", "exact_match", "token_f1")} == \
        {"n": 1, "accuracy": 1.0, "exact_match": 1.0, "token_f1": 1.0}
    assert scores["none"]["abstention_accuracy"] == 1.0 and scores["none"]["accuracy"] == 0.0
    assert all(s["n"] == 6 for s in scores.values())
    rec = records(paths[3])[0]
    for field in ("run_id", "backend", "backend_version", "case_id", "qid", "type", "question", "asked_at",
                  "gold_answer", "evidence", "retrieved_ids", "context_ids", "context_tokens", "hits_returned",
                  "hits_kept", "answer", "answer_model", "served_model", "prompt_sha256", "ingest_s",
                  "flush_s", "search_ms", "cached", "error"):
        assert field in rec
    assert rec["served_model"] == rec["answer_model"] + "-served"
    assert json.load(open(scores_json))["grading"].startswith("deterministic layers only")
    assert "paired difference vs keyword" in capsys.readouterr().out


def test_rerun_with_warm_cache_calls_the_endpoint_zero_times(tmp_path, fake_llm, config):
    first = run_all(config, tmp_path / "a")
    before = fake_llm.requests
    assert before > 0
    second = run_all(config, tmp_path / "b")
    assert fake_llm.requests == before
    assert all(r["cached"] for p in second for r in records(p))
    answers = lambda p: sorted((r["qid"], r["answer"]) for r in records(p))
    assert answers(first[3]) == answers(second[3])


def test_resume_after_file_cut_mid_line(tmp_path, fake_llm, config):
    out = tmp_path / "keyword.jsonl"
    assert run_cli(run.main, ["--config", config, "--backend", "keyword", "--out", str(out)]) == 0
    full = out.read_text(encoding="utf-8")
    lines = full.splitlines(keepends=True)
    # Keep three whole records and half of the fourth: what a kill -9 mid-write leaves.
    out.write_text("".join(lines[:3]) + lines[3][: len(lines[3]) // 2], encoding="utf-8")
    assert run_cli(run.main, ["--config", config, "--backend", "keyword", "--out", str(out)]) == 0
    recs = records(out)
    assert sorted(r["qid"] for r in recs) == sorted(json.loads(l)["qid"] for l in lines)
    assert len({r["qid"] for r in recs}) == len(recs) == 6
    assert out.read_text(encoding="utf-8").startswith("".join(lines[:3]))  # finished records kept as they were


def test_failed_records_are_redone_and_not_duplicated(tmp_path, fake_llm):
    cfg = write_config(tmp_path, max_retries=0, workers=1)
    out = tmp_path / "none.jsonl"
    fake_llm.script = [{"status": 500}]
    assert run_cli(run.main, ["--config", cfg, "--backend", "none", "--out", str(out)]) == 3
    assert sum(r["error"] is not None for r in records(out)) == 1
    assert run_cli(run.main, ["--config", cfg, "--backend", "none", "--out", str(out)]) == 0
    recs = records(out)
    assert len(recs) == 6 and all(r["error"] is None for r in recs)


def test_resume_refuses_a_different_run(tmp_path, fake_llm, config):
    out = tmp_path / "keyword.jsonl"
    assert run_cli(run.main, ["--config", config, "--backend", "keyword", "--out", str(out)]) == 0
    other = write_config(tmp_path, top_k=3)
    assert run_cli(run.main, ["--config", other, "--backend", "keyword", "--out", str(out)]) == 2
    assert len(records(out)) == 6  # nothing already written is lost
    assert run_cli(run.main, ["--config", other, "--backend", "keyword", "--out", str(out), "--fresh"]) == 0
    assert {r["top_k"] for r in records(out)} == {3}


def test_keyword_retrieval_is_identical_across_runs(tmp_path, fake_llm, config):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for out in (a, b):
        assert run_cli(run.main, ["--config", config, "--backend", "keyword", "--out", str(out), "--workers", "1"]) == 0
    key = lambda p: sorted((r["qid"], r["retrieved_ids"], r["context_ids"]) for r in records(p))
    assert key(a) == key(b)


def test_full_context_keeps_newest_turns_when_budget_cuts(tmp_path, fake_llm):
    cfg = write_config(tmp_path, context_token_budget=40)
    out = tmp_path / "fc.jsonl"
    assert run_cli(run.main, ["--config", cfg, "--backend", "full_context", "--out", str(out)]) == 0
    rec = next(r for r in records(out) if r["qid"] == "c001q1")
    assert rec["context_tokens"] <= 40 and rec["hits_cut"] > 0
    assert rec["context_ids"][0] == "c001-s3t1"  # newest turn first by rank
    assert rec["hits_returned"] == 6 and rec["hits_kept"] + rec["hits_cut"] == 6


def test_no_api_key_in_any_written_file(tmp_path, fake_llm, config):
    paths = run_all(config, tmp_path / "runs")
    verdicts = str(tmp_path / "results" / "verdicts.jsonl")
    assert run_cli(judge.main, ["--config", config, "--runs", *paths, "--out", verdicts]) == 0
    import manifest
    assert run_cli(manifest.main, [config, "--out-dir", str(tmp_path / "results")]) == 0
    assert fake_llm.auth_headers[0] == f"Bearer {API_KEY}"  # the key was really used
    for folder, _, files in os.walk(tmp_path):
        for f in files:
            data = open(os.path.join(folder, f), "rb").read()
            assert API_KEY.encode() not in data, os.path.join(folder, f)


def test_judge_rejects_a_verdicts_file_in_the_glob(tmp_path, fake_llm, config, capsys):
    paths = run_all(config, tmp_path / "runs")
    verdicts = str(tmp_path / "verdicts.jsonl")
    assert run_cli(judge.main, ["--config", config, "--runs", *paths, "--out", verdicts]) == 0
    assert run_cli(judge.main, ["--config", config, "--runs", *paths, verdicts, "--out", str(tmp_path / "v2.jsonl")]) == 2
    assert "not a run record" in capsys.readouterr().err


def test_llm_judge_is_blind_and_unparseable_is_counted(tmp_path, fake_llm):
    cfg = write_config(tmp_path, judge_model="fake-judge")
    paths = run_all(cfg, tmp_path / "runs")
    # One answer that no rule decides and that makes the fake judge reply in prose.
    recs = records(paths[3])
    recs[0]["answer"] = "garble garble"
    with open(paths[3], "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in recs)
    verdicts = str(tmp_path / "verdicts.jsonl")
    assert run_cli(judge.main, ["--config", cfg, "--runs", *paths, "--out", verdicts]) == 0
    vs = records(verdicts)
    assert any(v["by"] == "llm" for v in vs)
    assert [v["verdict"] for v in vs if v["answer"] == "garble garble"] == ["unparseable"]
    # A rerun grades nothing again.
    before = fake_llm.requests
    assert run_cli(judge.main, ["--config", cfg, "--runs", *paths, "--out", verdicts]) == 0
    assert fake_llm.requests == before and len(records(verdicts)) == len(vs)
    out = str(tmp_path / "scores.json")
    assert run_cli(score.main, ["--config", cfg, "--runs", *paths, "--verdicts", verdicts, "--baseline", "none", "--json", out,
                                "--resamples", "100"]) == 0
    kw = next(s for s in json.load(open(out))["systems"] if s["label"] == "keyword")
    assert kw["unparseable"] == 1


def test_judge_prompt_never_sees_the_system():
    prompt = judge.judge_prompt("default", "Which version?", "Postgres 16", "Postgres 16 it is")
    for hidden in ("keyword", "oracle", "context", "backend"):
        assert hidden not in prompt.lower()


def test_judge_steps_down_to_a_response_format_the_server_accepts(tmp_path, fake_llm):
    fake_llm.accepted_formats = ("json_object",)
    cfg = write_config(tmp_path, judge_model="fake-judge", workers=1)
    paths = run_all(cfg, tmp_path / "runs")
    verdicts = str(tmp_path / "verdicts.jsonl")
    assert run_cli(judge.main, ["--config", cfg, "--runs", *paths, "--out", verdicts]) == 0
    judged = [f for f in fake_llm.formats_seen if f is not None]
    # Refused on two different requests and never accepted: given up for every later request.
    assert judged[:4] == ["json_schema", "json_object", "json_schema", "json_object"]
    assert set(judged[4:]) == {"json_object"}
    llm_verdicts = [v for v in records(verdicts) if v["by"] == "llm"]
    assert llm_verdicts and all(v["response_format"] == "json_object" for v in llm_verdicts)
    assert all(v["judge_error"] is None for v in records(verdicts))


def test_each_record_is_written_when_it_completes_not_at_the_end(tmp_path, fake_llm):
    import threading
    import time
    cfg = write_config(tmp_path, workers=2)
    out = tmp_path / "none.jsonl"
    fake_llm.script = [{"delay_s": 3.0}]  # the first request hangs while the others finish
    result = {}
    t = threading.Thread(target=lambda: result.update(code=run_cli(run.main, ["--config", cfg, "--backend", "none",
                                                                              "--out", str(out)])))
    t.start()
    seen_while_running = 0
    while t.is_alive():
        if out.exists():
            seen_while_running = max(seen_while_running, len(out.read_text().splitlines()))
        time.sleep(0.05)
    assert result["code"] == 0 and len(records(out)) == 6
    assert seen_while_running >= 5  # all but the slow one were on disk before the run ended
