"""One comparison you can trust: the fairness contract held across every file of a comparison,
verdicts that belong to exactly what they graded, and input that is wrong refused before any
model call. Each test here failed on the code before the contract was enforced across files."""
from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time

import pytest

import judge
import manifest
import run
import score
from cli import InputError, run_cli
from config import load_config
from conftest import API_KEY, ROOT, TINY, write_config
from dataset import load_dataset
from dispositions import default_signals, sigint_ignored
from fileio import indented_json, write_json_atomic
from records import read_records, run_record, verdict_for, write_comparison, write_jsonl


records = read_records


def run_system(cfg: str, backend: str, out, *extra: str) -> int:
    return run_cli(run.main, ["--config", cfg, "--backend", backend, "--out", str(out), *extra])


# ---------------------------------------------------------------------------------------------
# The set of files is one comparison, or it is refused
# ---------------------------------------------------------------------------------------------

def test_files_from_different_configs_are_refused_naming_each_file_and_field(tmp_path, fake_llm, capsys):
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a_dir.mkdir()
    b_dir.mkdir()
    a = write_config(a_dir)
    b = write_config(b_dir, context_token_budget=8000, run_id="other-run",
                     answer_prompt="Memories:\n{context}\nDate: {asked_at}\nQ: {question}\nAnswer briefly.")
    kw, fc = tmp_path / "keyword.jsonl", tmp_path / "full_context.jsonl"
    assert run_system(a, "keyword", kw) == 0 and run_system(b, "full_context", fc) == 0
    capsys.readouterr()
    verdicts = str(tmp_path / "verdicts.jsonl")
    assert run_cli(judge.main, ["--config", a, "--runs", str(kw), str(fc), "--out", verdicts]) == 2
    err = capsys.readouterr().err
    for text in ("prompt_sha256", "context_token_budget", str(kw), str(fc)):
        assert text in err
    assert not os.path.exists(verdicts)  # refused before anything was graded
    assert run_cli(score.main, ["--config", a, "--runs", str(kw), str(fc), "--verdicts", verdicts,
                                "--baseline", "keyword"]) == 2
    assert "not one comparison" in capsys.readouterr().err


def test_a_partial_file_is_refused_unless_allow_partial_which_scores_the_common_questions(tmp_path, capsys):
    kw = [run_record("keyword", f"q{i}", f"c{i // 2}", "yes" if i % 2 else "no", [], []) for i in range(6)]
    fc = [run_record("full_context", f"q{i}", f"c{i // 2}", "yes", [], []) for i in range(3)]
    runs, verdicts, cfg = write_comparison(tmp_path, {"keyword": kw, "full_context": fc})
    assert run_cli(score.main, ["--runs", *runs, "--verdicts", verdicts, "--baseline", "keyword", "--config", cfg]) == 2
    err = capsys.readouterr().err
    assert "full_context.jsonl" in err and "holds 3 of the dataset's 6 questions" in err and "--allow-partial" in err
    out = tmp_path / "s.json"
    assert run_cli(score.main, ["--runs", *runs, "--verdicts", verdicts, "--baseline", "keyword", "--allow-partial",
                                "--json", str(out), "--resamples", "50", "--config", cfg]) == 0
    s = json.loads(out.read_text())
    assert {x["label"]: x["n"] for x in s["systems"]} == {"keyword": 3, "full_context": 3}
    assert s["left_out"][0]["missing"] == 3 and s["left_out"][0]["backend"] == "full_context"
    assert any("left out for every system" in w for w in s["warnings"])  # report.py shows the warnings
    assert "left out for every system" in capsys.readouterr().out


def test_judge_refuses_a_partial_file_too(tmp_path, fake_llm, config, capsys):
    kw, none = tmp_path / "keyword.jsonl", tmp_path / "none.jsonl"
    assert run_system(config, "keyword", kw) == 0 and run_system(config, "none", none) == 0
    lines = none.read_text().splitlines(keepends=True)
    none.write_text("".join(lines[:3]))
    assert run_cli(judge.main, ["--config", config, "--runs", str(kw), str(none),
                                "--out", str(tmp_path / "v.jsonl")]) == 2
    assert "--allow-partial" in capsys.readouterr().err


def test_more_than_one_served_model_is_a_warning_naming_the_models(tmp_path, capsys):
    recs = [run_record("keyword", f"q{i}", f"c{i}", "yes", [], [], served_model="m-v1" if i < 4 else "m-v2")
            for i in range(6)]
    runs, verdicts, cfg = write_comparison(tmp_path, {"keyword": recs})
    js = tmp_path / "s.json"
    assert run_cli(score.main, ["--runs", *runs, "--verdicts", verdicts, "--baseline", "keyword", "--config", cfg,
                                "--json", str(js), "--resamples", "20"]) == 0
    out = capsys.readouterr().out
    assert "m-v1 (4 answers)" in out and "m-v2 (2 answers)" in out
    assert any("more than one served model" in w for w in json.loads(js.read_text())["warnings"])


def test_run_refuses_to_resume_a_file_of_another_dataset(tmp_path, fake_llm):
    data = tmp_path / "cases.jsonl"
    data.write_text(open(TINY, encoding="utf-8").read(), encoding="utf-8")
    cfg = write_config(tmp_path, dataset=str(data))
    out = tmp_path / "keyword.jsonl"
    assert run_system(cfg, "keyword", out) == 0
    data.write_text(data.read_text().replace('"gold_answer": "Postgres 16"', '"gold_answer": "Postgres 16.2"'))
    with pytest.raises(InputError, match="dataset_sha256"):
        run.main(["--config", cfg, "--backend", "keyword", "--out", str(out)])


# ---------------------------------------------------------------------------------------------
# A verdict belongs to exactly what it graded
# ---------------------------------------------------------------------------------------------

def test_a_corrected_gold_is_graded_again_and_score_refuses_the_stale_verdict(tmp_path, fake_llm, capsys):
    data = tmp_path / "cases.jsonl"
    data.write_text(open(TINY, encoding="utf-8").read(), encoding="utf-8")
    cfg = write_config(tmp_path, dataset=str(data))
    out, verdicts = tmp_path / "oracle.jsonl", tmp_path / "verdicts.jsonl"
    assert run_system(cfg, "oracle", out) == 0
    assert run_cli(judge.main, ["--config", cfg, "--runs", str(out), "--out", str(verdicts)]) == 0
    before = {v["qid"]: v for v in records(verdicts)}
    # The gold of one question is corrected; the run is redone from its cache.
    qid = next(q["qid"] for c in load_dataset(str(data)) for q in c["questions"] if q["gold_answer"] == "Postgres 16")
    data.write_text(data.read_text().replace('"gold_answer": "Postgres 16"', '"gold_answer": "Postgres 15"'))
    assert run_system(cfg, "oracle", out, "--fresh") == 0
    capsys.readouterr()
    argv = ["--runs", str(out), "--verdicts", str(verdicts), "--baseline", "oracle", "--config", cfg]
    assert run_cli(score.main, argv) == 2
    assert (f"{verdicts}:2: the verdict of 'oracle' question '{qid}' graded another gold_answer than its run record "
            f"holds now (the dataset or the run changed since the verdicts); rerun judge.py") in capsys.readouterr().err
    assert run_cli(judge.main, ["--config", cfg, "--runs", str(out), "--out", str(verdicts)]) == 0
    after = {v["qid"]: v for v in records(verdicts)}
    assert len(records(verdicts)) == len(after) == 6  # one line per graded answer
    assert after[qid]["gold_answer"] == "Postgres 15" and before[qid]["gold_answer"] == "Postgres 16"
    assert after[qid]["inputs_sha256"] != before[qid]["inputs_sha256"]
    assert all(after[q] == before[q] for q in after if q != qid)  # the rest are reused as they were
    assert run_cli(score.main, argv) == 0


@pytest.mark.parametrize("change", [
    {"answer": "no"}, {"gold_answer": "h"}, {"type": "temporal"}, {"question": "another question"},
    {"meta": {"outdated_answers": ["yes"]}},
])
def test_score_refuses_a_verdict_that_graded_something_else(tmp_path, change, capsys):
    recs = [run_record("keyword", "q1", "c1", "yes", [], []), run_record("keyword", "q2", "c2", "yes", [], [])]
    runs, verdicts, cfg = write_comparison(tmp_path, {"keyword": recs})
    recs = records(runs[0])
    write_jsonl(tmp_path / "keyword.jsonl", [{**recs[0], **change}, recs[1]])
    assert run_cli(score.main, ["--runs", *runs, "--verdicts", verdicts, "--baseline", "keyword", "--config", cfg]) == 2
    assert "verdicts.jsonl:1" in capsys.readouterr().err


def test_score_refuses_verdicts_of_another_rule_set(tmp_path, capsys):
    runs, verdicts, cfg = write_comparison(tmp_path, {"keyword": [run_record("keyword", "q1", "c1", "yes", [], [])]})
    stale = verdict_for(records(runs[0])[0], "correct", grader={"rules_sha256": "0" * 64, "judge_model": None,
                                                                "judge_prompt_sha256": None})
    write_jsonl(tmp_path / "verdicts.jsonl", [stale])
    assert run_cli(score.main, ["--runs", *runs, "--verdicts", verdicts, "--baseline", "keyword", "--config", cfg]) == 2
    assert "another rule set" in capsys.readouterr().err


def test_a_retried_judge_error_replaces_its_line(tmp_path, fake_llm):
    cfg = write_config(tmp_path, judge_model="fake-judge", max_retries=0, max_error_rate=1.0, workers=1)
    out, verdicts = tmp_path / "keyword.jsonl", tmp_path / "verdicts.jsonl"
    assert run_system(cfg, "keyword", out) == 0
    fake_llm.script = [{"status": 500}] * 50
    assert run_cli(judge.main, ["--config", cfg, "--runs", str(out), "--out", str(verdicts)]) in (0, 3)
    assert any(v["judge_error"] for v in records(verdicts))
    fake_llm.script = []
    assert run_cli(judge.main, ["--config", cfg, "--runs", str(out), "--out", str(verdicts)]) == 0
    vs = records(verdicts)
    assert len(vs) == len({v["qid"] for v in vs}) == 6 and not any(v["judge_error"] for v in vs)


def test_a_failed_question_answered_on_rerun_keeps_one_verdict_line(tmp_path, fake_llm):
    cfg = write_config(tmp_path, max_retries=0, max_error_rate=1.0, workers=1)
    out, verdicts = tmp_path / "none.jsonl", tmp_path / "verdicts.jsonl"
    fake_llm.script = [{"status": 500}]
    assert run_system(cfg, "none", out) == 0  # max_error_rate 1.0: a failure does not fail the run
    assert [r["error"] for r in records(out)].count("server_error: 500") == 1
    assert run_cli(judge.main, ["--config", cfg, "--runs", str(out), "--out", str(verdicts)]) == 0
    assert [v["by"] for v in records(verdicts)].count("run_error") == 1
    assert run_system(cfg, "none", out) == 0
    assert run_cli(judge.main, ["--config", cfg, "--runs", str(out), "--out", str(verdicts)]) == 0
    vs = records(verdicts)
    assert len(vs) == 6 and "run_error" not in [v["by"] for v in vs]


def test_a_400_from_one_requests_content_does_not_change_the_format_of_later_requests(tmp_path, fake_llm):
    cfg = write_config(tmp_path, judge_model="fake-judge", workers=1)
    out, verdicts = tmp_path / "keyword.jsonl", tmp_path / "verdicts.jsonl"
    assert run_system(cfg, "keyword", out) == 0
    before = len(fake_llm.formats_seen)
    fake_llm.script = [{"status": 400}]  # the first judge request's content is refused once
    assert run_cli(judge.main, ["--config", cfg, "--runs", str(out), "--out", str(verdicts)]) == 0
    seen = fake_llm.formats_seen[before:]
    assert seen[:2] == ["json_schema", "json_object"] and set(seen[2:]) == {"json_schema"}
    formats = [v["response_format"] for v in records(verdicts) if v["by"] == "llm"]
    assert formats.count("json_object") == 1 and formats.count("json_schema") == len(formats) - 1


# ---------------------------------------------------------------------------------------------
# Input that is wrong is an error, not a crash
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("key, value", [
    ("retry_backoff_s", -1), ("request_timeout_s", 0), ("flush_timeout_s", -5), ("top_k", 0),
    ("context_token_budget", 0), ("workers", 0), ("max_error_rate", 1.5), ("max_error_rate", -0.1),
    ("max_retries", -1), ("answer_max_tokens", 0),
])
def test_config_values_out_of_range_name_the_key(tmp_path, key, value):
    with pytest.raises(InputError, match=f"key '{key}'"):
        load_config(write_config(tmp_path, **{key: value}))


def test_a_dataset_with_bytes_that_are_not_utf8_names_the_line(tmp_path, fake_llm, capsys):
    lines = open(TINY, "rb").read().splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(lines[0] + lines[1].replace(b"text", b"t\xe9xt", 1))
    cfg = write_config(tmp_path, dataset=str(bad))
    assert run_system(cfg, "keyword", tmp_path / "k.jsonl") == 2
    assert f"{bad}:2: bytes that are not UTF-8" in capsys.readouterr().err
    assert fake_llm.requests == 0


def test_a_backend_that_fails_in_create_exits_2_with_its_message(tmp_path, fake_llm, config, monkeypatch, capsys):
    import backends.keyword

    def boom(settings, cfg):
        raise ConnectionRefusedError("memory service at 127.0.0.1:9 refused the connection")
    monkeypatch.setattr(backends.keyword, "create", boom)
    assert run_system(config, "keyword", tmp_path / "k.jsonl") == 2
    err = capsys.readouterr().err
    assert "refused the connection" in err and "keyword" in err and "Traceback" not in err
    assert fake_llm.requests == 0


def test_a_refused_key_stops_the_run_at_its_preflight(tmp_path, fake_llm, capsys):
    cfg = write_config(tmp_path, workers=1)
    fake_llm.api_key = "another key"
    assert run_system(cfg, "keyword", tmp_path / "k.jsonl") == 2
    err = capsys.readouterr().err
    assert "authentication failed" in err and fake_llm.url in err and "LLM_API_KEY" in err
    assert API_KEY not in err
    assert fake_llm.requests == 1 and not (tmp_path / "k.jsonl").exists()  # nothing was run


@pytest.mark.parametrize("status", [401, 403])
def test_a_key_refused_during_the_run_stops_it_at_once(tmp_path, fake_llm, status, capsys):
    cfg = write_config(tmp_path, workers=1)
    fake_llm.script = [{"status": status}] * 10
    assert run_system(cfg, "keyword", tmp_path / "k.jsonl") == 2
    assert "authentication failed" in capsys.readouterr().err
    assert fake_llm.requests == 2  # the preflight, then the first question


def start_stage(argv: list[str], preexec_fn) -> subprocess.Popen:
    """A stage script in its own process, started with the signal dispositions preexec_fn sets."""
    return subprocess.Popen([sys.executable, *argv], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=preexec_fn)


def wait_for_requests(fake_llm, n: int) -> None:
    deadline = time.monotonic() + 30
    while fake_llm.requests < n and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fake_llm.requests >= n


def test_ctrl_c_exits_130_at_once_with_slow_calls_in_flight_and_resume_redoes_them(tmp_path, fake_llm):
    cfg = write_config(tmp_path, workers=3, request_timeout_s=60)
    out = tmp_path / "keyword.jsonl"
    fake_llm.delay_all_s = 30.0
    # Started as from a terminal: SIGINT at its default, whatever pytest inherited.
    p = start_stage(["run.py", "--config", cfg, "--backend", "keyword", "--out", str(out)], default_signals)
    try:
        wait_for_requests(fake_llm, 4)  # the preflight, then three calls in flight, each answering after 30 s
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        code = p.wait(timeout=10)
        assert code == 130 and time.monotonic() - t0 < 3.0
    finally:
        p.kill()
        p.wait()
    fake_llm.delay_all_s = 0.0
    assert run_system(cfg, "keyword", out) == 0
    recs = records(out)
    assert len(recs) == len({r["qid"] for r in recs}) == 6


@pytest.mark.parametrize("stage", ["run.py", "judge.py"])
def test_a_stage_started_with_sigint_ignored_keeps_ignoring_it_and_term_stops_it_cleanly(tmp_path, fake_llm, stage):
    """A shell without job control starts a background job with SIGINT ignored, so that Ctrl-C
    at the terminal spares it: the stage honours that, and SIGTERM still stops it at once with
    nothing lost."""
    cfg = write_config(tmp_path, workers=3, request_timeout_s=60, judge_model="fake-judge")
    runs, verdicts = tmp_path / "keyword.jsonl", tmp_path / "verdicts.jsonl"
    if stage == "run.py":
        argv, out = ["run.py", "--config", cfg, "--backend", "keyword", "--out", str(runs)], runs
    else:
        assert run_system(cfg, "keyword", runs) == 0
        argv, out = ["judge.py", "--config", cfg, "--runs", str(runs), "--out", str(verdicts)], verdicts
    fake_llm.delay_all_s = 30.0
    before = fake_llm.requests
    p = start_stage(argv, sigint_ignored)
    try:
        wait_for_requests(fake_llm, before + 2)  # at least one slow call in flight
        p.send_signal(signal.SIGINT)
        with pytest.raises(subprocess.TimeoutExpired):
            p.wait(timeout=1.0)  # still running: the ignored SIGINT was honoured
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=10) == 143
        assert "terminated" in p.stderr.read()
    finally:
        p.kill()
        p.wait()
    fake_llm.delay_all_s = 0.0
    again = run_system(cfg, "keyword", runs) if stage == "run.py" else \
        run_cli(judge.main, ["--config", cfg, "--runs", str(runs), "--out", str(verdicts)])
    assert again == 0
    recs = records(out)
    assert len(recs) == len({r["qid"] for r in recs}) == 6


def test_a_stage_piped_into_head_ends_quietly_with_the_exit_code_sigpipe_gives(tmp_path):
    # score.py's stdout for 100 systems is about 165 KB, more than a pipe holds: `head -1` exits
    # after the first line, and the writes after it meet a closed pipe. The stage ends without a
    # traceback, with 141 (128 + SIGPIPE) as a program the signal ended, its files written.
    systems = {f"s{i:03d}": [run_record(f"s{i:03d}", f"q{j}", f"c{j}", "yes" if (i + j) % 2 else "no", ["t1"], ["t1"])
                             for j in range(4)] for i in range(100)}
    runs, verdicts, cfg = write_comparison(tmp_path, systems)
    out = tmp_path / "scores.json"
    cmd = [sys.executable, "score.py", "--runs", *runs, "--verdicts", verdicts, "--config", cfg, "--baseline", "s000",
           "--resamples", "20", "--json", str(out)]
    pipeline = " ".join(shlex.quote(c) for c in cmd) + ' | head -1; echo "exit ${PIPESTATUS[0]}" >&2'
    p = subprocess.run(["bash", "-c", pipeline], cwd=ROOT, capture_output=True, text=True, timeout=120)
    # the first line: these runs have no manifest or checks, so it says they are a development run
    assert p.stdout.startswith("DEVELOPMENT RUN, not for publication: ") and p.stdout.count("\n") == 1
    assert p.stderr == "exit 141\n"
    assert json.loads(out.read_text(encoding="utf-8"))["baseline"] == "s000"


def test_start_modes_start_a_command_as_a_terminal_a_background_job_and_setsid_do(tmp_path):
    """tests/start_modes.py runs the suite as `make test` gets started; its modes must be what
    they say, or its passes mean nothing."""
    probe = ("import os, signal; print('ignored' if signal.getsignal(signal.SIGINT) == signal.SIG_IGN else 'default',"
             " os.isatty(0), os.getsid(0) == os.getpid())")
    r = subprocess.run([sys.executable, "tests/start_modes.py", "--times", "1", "--", sys.executable, "-c", probe],
                       cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    seen = {line.split()[0]: line.split("s  ", 1)[1] for line in r.stdout.splitlines() if " run 1: " in line}
    assert seen == {"terminal": "default True True", "trap": "ignored False False", "setsid": "default False True"}


# ---------------------------------------------------------------------------------------------
# Smaller contract holes
# ---------------------------------------------------------------------------------------------

def test_a_finished_run_file_is_in_dataset_order(tmp_path, fake_llm):
    cfg = write_config(tmp_path, workers=3)
    fake_llm.script = [{"delay_s": 1.0}]  # the first question answers last
    out = tmp_path / "keyword.jsonl"
    assert run_system(cfg, "keyword", out) == 0
    order = [q["qid"] for c in load_dataset(TINY) for q in c["questions"]]
    assert [r["qid"] for r in records(out)] == order


def test_the_manifest_hashes_backends_serve_and_grading(tmp_path, config):
    assert manifest.main([config, "--out-dir", str(tmp_path)]) == 0
    m = json.loads(next(tmp_path.glob("manifest-*.json")).read_text())
    for f in ("serve.py", "grading.py", "rules.py", "normalization.py", "run.py", os.path.join("backends", "keyword.py"),
              os.path.join("backends", "http.py")):
        assert f in m["code_sha256"]
    # the sampling settings sent with every request, whatever the config leaves at its default
    assert m["answer_sampling"] == m["judge_sampling"] == {"max_tokens_param": "max_tokens", "temperature": 0.0,
                                                           "send_seed": True}


def test_an_empty_answer_is_an_error_and_not_cached(tmp_path, fake_llm):
    cfg = write_config(tmp_path, workers=1, max_error_rate=1.0)
    out = tmp_path / "none.jsonl"
    fake_llm.script = [{"content": ""}]
    assert run_system(cfg, "none", out) == 0
    bad = [r for r in records(out) if r["error"]]
    assert len(bad) == 1 and bad[0]["error"] == "empty_answer" and bad[0]["answer"] == ""
    requests_before = fake_llm.requests
    assert run_system(cfg, "none", out) == 0
    assert fake_llm.requests == requests_before + 1  # asked again, not served from the cache
    assert not any(r["error"] for r in records(out))


def test_a_truncated_answer_is_recorded_as_such(tmp_path, fake_llm):
    cfg = write_config(tmp_path, workers=1)
    out = tmp_path / "none.jsonl"
    fake_llm.script = [{"finish_reason": "length"}]
    assert run_system(cfg, "none", out) == 0
    reasons = [r["finish_reason"] for r in records(out)]
    assert reasons.count("length") == 1 and reasons.count("stop") == 5


def test_the_bootstrap_resamples_clusters_not_cases(tmp_path):
    # Two cases cut from one conversation form one cluster: one cluster gives no interval.
    recs = {name: [run_record(name, f"q{i}", f"c{i}", "yes" if name == "A" and i == 0 else "no", [], [],
                              cluster="conversation-1") for i in range(2)] for name in ("A", "B")}
    runs, verdicts, cfg = write_comparison(tmp_path, recs)
    out = tmp_path / "s.json"
    assert run_cli(score.main, ["--runs", *runs, "--verdicts", verdicts, "--baseline", "B", "--json", str(out),
                                "--resamples", "50", "--config", cfg]) == 0
    d = json.loads(out.read_text())["differences"][0]
    assert d["cases"] == 2 and d["clusters"] == 1 and d["ci_low"] is None


def test_a_record_carries_the_hash_of_exactly_what_was_added_and_the_extra_wait(tmp_path, fake_llm, config):
    from contract import items_sha256, session_items
    out = tmp_path / "keyword.jsonl"
    assert run_system(config, "keyword", out, "--extra-wait-s", "0.01") == 0
    cases = {c["case_id"]: c for c in load_dataset(TINY)}
    for r in records(out):
        items = [it for s in cases[r["case_id"]]["sessions"] for it in session_items(s)]
        assert r["added_sha256"] == items_sha256(items) and r["added_items"] == len(items)
        assert r["extra_wait_s"] == 0.01
    none = tmp_path / "none.jsonl"
    assert run_system(config, "none", none) == 0
    assert all(r["added_items"] == 0 and r["added_sha256"] is None for r in records(none))


def test_score_checks_the_runs_against_the_manifest_dataset_and_its_question_count(tmp_path, fake_llm, config,
                                                                                   capsys):
    out, verdicts = tmp_path / "keyword.jsonl", tmp_path / "verdicts.jsonl"
    assert run_system(config, "keyword", out) == 0
    assert manifest.main([config, "--out-dir", str(tmp_path)]) == 0
    m = next(tmp_path.glob("manifest-*.json"))
    # Every run file holds the same 3 of the dataset's 6 questions: each is held against the dataset.
    out.write_text("".join(out.read_text().splitlines(keepends=True)[:3]))
    assert run_cli(judge.main, ["--config", config, "--runs", str(out), "--out", str(verdicts), "--allow-partial"]) == 0
    capsys.readouterr()
    argv = ["--runs", str(out), "--verdicts", str(verdicts), "--baseline", "keyword", "--manifest", str(m)]
    assert run_cli(score.main, argv) == 2
    budget = load_config(config)["context_token_budget"]
    assert f"{out}: backend 'keyword' (repeat 0, budget {budget}) holds 3 of the dataset's 6 questions" in \
        capsys.readouterr().err
    assert run_cli(score.main, argv + ["--allow-partial", "--resamples", "20"]) == 0
    other = json.loads(m.read_text())
    m.write_text(json.dumps({**other, "dataset_sha256": "0" * 64}))
    assert run_cli(score.main, argv + ["--allow-partial"]) == 2
    assert f"but {m} recorded 000000000000: the dataset changed since the manifest was written" in \
        capsys.readouterr().err


def test_files_written_atomically_get_the_usual_permissions(tmp_path):
    import stat
    from fileio import write_atomic
    umask = os.umask(0)
    os.umask(umask)
    for name, data in (("report.md", "x"), ("report-accuracy.png", b"\x89PNG")):  # text, and a plot's bytes
        write_atomic(str(tmp_path / name), data)
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o666 & ~umask


@pytest.mark.parametrize("obj", [
    {}, [], "x", 1.5, None, [[]], [{}], {"a": {}}, {"a": []}, [1, [2, [3, {}]]], {"k": (1, 2)},
    {"a": [1, {"b": []}], "c": "x\ny\u00e9\"", 1: 2}, {"x": 1.5e300, "y": -0.0, "z": True, "w": None},
    {True: 1, "a": [1]}, {None: {"x": 1}}, {"é": {"ü": [None]}},
    [{"a": 1}], [{"a": 1}, {}], [{"a": 1, "b": [1]}, {"c": 2}], {"q": [{"a": 1}, {"b": "},\n      {"}]},
    {"rows": [{"s": "}, {", "n": 2, "f": 0.1}, {"s": "", "n": -3, "f": None}], "more": [[{"a": 1}]]}])
def test_every_summary_file_is_written_as_json_dumps_writes_it(obj, tmp_path):
    # One writer (fileio.write_json_atomic) for every summary file, with an encoder faster than
    # json's indented one, which must still write its bytes.
    expected = json.dumps(obj, ensure_ascii=False, allow_nan=False, indent=2)
    assert indented_json(obj) == expected
    write_json_atomic(str(tmp_path / "s.json"), obj)
    assert (tmp_path / "s.json").read_text(encoding="utf-8") == expected + "\n"


@pytest.mark.parametrize("obj", [{"a": float("nan")}, [{"a": float("inf")}], {"a": {"b": {1}}}])
def test_indented_json_refuses_what_json_dumps_refuses(obj):
    with pytest.raises((ValueError, TypeError)):
        json.dumps(obj, ensure_ascii=False, allow_nan=False, indent=2)
    with pytest.raises((ValueError, TypeError)):
        indented_json(obj)
