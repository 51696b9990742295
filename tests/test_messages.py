"""The messages of typical mistakes: each names what happened and the fix. A server that is not
an LLM API, a URL without its scheme, Ctrl-C in a run, a misspelt backend or key, a dataset path
that is not there."""
from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time

import pytest

import run
from cli import run_cli
from conftest import ROOT, write_config
from dispositions import default_signals


def run_keyword(cfg: str, out, *extra: str) -> int:
    return run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", str(out), *extra])


@pytest.mark.parametrize("status", [405, 501])
def test_a_server_that_is_not_an_llm_api_is_asked_once_and_told_apart_from_a_busy_one(tmp_path, fake_llm, capsys,
                                                                                     status):
    cfg = write_config(tmp_path, max_retries=5)
    fake_llm.fail_all = status
    assert run_keyword(cfg, tmp_path / "keyword.jsonl") == 2
    err = capsys.readouterr().err
    assert fake_llm.requests == 1  # not retried
    assert f"answered HTTP {status}" in err and "is not an OpenAI-compatible API" in err and "LLM_BASE_URL" in err
    assert "rerun the same command when it answers" not in err
    # a busy server (503) is retried, and the stage says to come back later
    fake_llm.fail_all = 503
    assert run_keyword(cfg, tmp_path / "keyword.jsonl") == 3
    err = capsys.readouterr().err
    assert fake_llm.requests == 1 + 6 and "rerun the same command when it answers" in err


def test_a_404_is_not_retried_either(tmp_path, fake_llm, capsys):
    cfg = write_config(tmp_path, max_retries=5)
    fake_llm.fail_all = 404
    assert run_keyword(cfg, tmp_path / "keyword.jsonl") == 2
    assert fake_llm.requests == 1 and "LLM_BASE_URL is the API's base" in capsys.readouterr().err


def test_a_base_url_without_its_scheme_is_echoed_as_typed_with_the_fix(tmp_path, fake_llm, monkeypatch, capsys):
    monkeypatch.setenv("LLM_BASE_URL", "localhost:8000/v1")
    assert run_keyword(write_config(tmp_path), tmp_path / "keyword.jsonl") == 2
    err = capsys.readouterr().err
    assert "LLM_BASE_URL 'localhost:8000/v1' is not an http(s) URL" in err
    assert "did you mean 'http://localhost:8000/v1'?" in err and "localhost://" not in err


def test_ctrl_c_in_a_run_says_how_many_records_were_kept_and_the_command_that_resumes(tmp_path, fake_llm):
    cfg = write_config(tmp_path, workers=1, request_timeout_s=60)
    out = tmp_path / "keyword.jsonl"
    fake_llm.script = [{}, {}, {}] + [{"delay_s": 30}] * 3  # three answers, then a slow endpoint
    argv = ["run.py", "--config", cfg, "--backend", "keyword", "--out", str(out), "--fresh"]
    p = subprocess.Popen([sys.executable, *argv], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=default_signals)
    try:
        deadline = time.monotonic() + 60
        while fake_llm.requests < 5 and time.monotonic() < deadline:  # the preflight, three answers, a slow one
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        assert p.wait(timeout=20) == 130
    finally:
        p.kill()
        p.wait()
    last = p.stderr.read().strip().splitlines()[-1]
    resume = shlex.join(["python", "run.py", "--config", cfg, "--backend", "keyword", "--out", str(out)])
    assert last == f"interrupted: 3 of 6 records kept in {out}; the same command resumes from there: {resume}"
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3
    # the command as printed (without --fresh, which would discard the three) finishes the run
    fake_llm.script = []
    done = subprocess.run([sys.executable, *shlex.split(resume)[1:]], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and "3 records already done" in done.stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) == 6


def test_a_misspelt_backend_gets_the_closest_name_and_the_list_holds_the_configs_presets(tmp_path, capsys):
    cfg = write_config(tmp_path, backends={"bm25_recency": {"adapter": "bm25", "recency_half_life_days": 30}})
    assert run_cli(run.main, ["--config", cfg, "--backend", "bm52", "--out", str(tmp_path / "x.jsonl"),
                              "--retrieval-only"]) == 2
    err = capsys.readouterr().err
    assert "unknown backend 'bm52'; did you mean 'bm25'?" in err
    assert "choose one of: none, oracle, full_context, " in err and err.rstrip().endswith(", bm25_recency")
    assert run_cli(run.main, ["--config", cfg, "--backend", "bm25_recenty", "--out", str(tmp_path / "x.jsonl"),
                              "--retrieval-only"]) == 2
    assert "did you mean 'bm25_recency'?" in capsys.readouterr().err
    cfg = write_config(tmp_path, backends={"fast": {"adapter": "bm52"}})
    assert run_cli(run.main, ["--config", cfg, "--backend", "fast", "--out", str(tmp_path / "x.jsonl"),
                              "--retrieval-only"]) == 2
    assert "unknown backend module 'bm52' in backends.fast.adapter; did you mean 'bm25'?" in capsys.readouterr().err


def test_a_misspelt_config_key_gets_the_closest_key(tmp_path, capsys):
    from backends.__main__ import main as check_config
    cfg = write_config(tmp_path, top_kk=5)
    assert run_cli(check_config, ["check-config", cfg]) == 2
    assert "unknown key 'top_kk'; did you mean 'top_k'?" in capsys.readouterr().err
    cfg = write_config(tmp_path, backends={"bm25": {"recency_half_life_day": 3}})
    assert run_cli(check_config, ["check-config", cfg]) == 2
    assert "unknown key 'backends.bm25.recency_half_life_day'; did you mean 'recency_half_life_days'?" in \
        capsys.readouterr().err


def test_a_dataset_that_is_not_there_names_the_config_key_it_came_from(tmp_path, capsys):
    cfg = write_config(tmp_path, dataset="data/no-such-dataset.jsonl")
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", str(tmp_path / "x.jsonl"),
                              "--retrieval-only"]) == 2
    err = capsys.readouterr().err
    assert f"{cfg}: key 'dataset' names 'data/no-such-dataset.jsonl', which is not a file" in err
    assert os.path.join(str(tmp_path), "data", "no-such-dataset.jsonl") in err
    assert "relative path is read from the config's folder" in err


def test_ctrl_c_in_judge_says_how_many_verdicts_were_kept_and_the_command_that_resumes(tmp_path, fake_llm):
    cfg = write_config(tmp_path, workers=1, request_timeout_s=60, judge_model="fake-judge")
    runs, out = tmp_path / "keyword.jsonl", tmp_path / "verdicts.jsonl"
    assert run_keyword(cfg, runs) == 0
    before = fake_llm.requests
    fake_llm.script = [{}] + [{"delay_s": 30}] * 6  # one judge answer, then a slow endpoint
    argv = ["judge.py", "--config", cfg, "--runs", str(runs), "--out", str(out)]
    p = subprocess.Popen([sys.executable, *argv], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=default_signals)
    try:
        deadline = time.monotonic() + 60
        while fake_llm.requests < before + 3 and time.monotonic() < deadline:  # preflight, one answer, a slow one
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        assert p.wait(timeout=20) == 130
    finally:
        p.kill()
        p.wait()
    last = p.stderr.read().strip().splitlines()[-1]
    kept = len(out.read_text(encoding="utf-8").splitlines())
    assert 0 < kept < 6
    assert last == (f"interrupted: {kept} of 6 verdicts kept in {out}; the same command resumes from there: "
                    f"{shlex.join(['python', *argv])}")
    fake_llm.script = []
    done = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and len(out.read_text(encoding="utf-8").splitlines()) == 6
