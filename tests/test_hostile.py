"""Hostile input that reaches a path or the shell: a run id is a plain name, checked when the
config is read, so that no stage writes outside runs/ and results/ and the Makefile never pastes
it into a command."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys

import pytest

import manifest
from cli import run_cli
from conftest import TINY as TINY_DATASET
from conftest import write_config
from test_run_options import copy_of_the_code

HOSTILE_RUN_IDS = ["x$(touch pwned)", "with space", "/abs/evil", "../../tmp/evil", "..", "", "a/b", ".hidden",
                   "x\x1b[31mred", "x" * 101]


@pytest.mark.parametrize("run_id", HOSTILE_RUN_IDS)
def test_a_run_id_that_is_not_a_plain_name_is_refused_before_anything_is_written(tmp_path, capsys, run_id):
    cfg = write_config(tmp_path, run_id=run_id)
    before = set(os.listdir(tmp_path))
    assert run_cli(manifest.main, [cfg, "--backends", "none"]) == 2
    err = capsys.readouterr().err
    assert f"{cfg}: key 'run_id' must be a plain name" in err and f"got {run_id!r}" in err
    assert "\x1b" not in err  # an escape code in the value is shown escaped, never sent to the terminal
    assert set(os.listdir(tmp_path)) == before


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("run_id", ["x$(touch pwned)", "with space"])
def test_the_makefile_stops_on_a_run_id_that_is_not_a_plain_name_and_runs_nothing(tmp_path, run_id):
    repo = copy_of_the_code(tmp_path / "repo")
    shutil.copy(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Makefile"), repo)
    for folder in ("runs/keep", "results/keep"):
        os.makedirs(os.path.join(repo, folder))
    (tmp_path / "repo" / "space").write_text("not the run's to delete", encoding="utf-8")
    cfg = write_config(tmp_path, run_id=run_id)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL")}
    for target in ("clean-runs", "answers"):
        r = subprocess.run(["make", "--no-print-directory", target, f"CONFIG={cfg}", f"PY={sys.executable}"],
                           cwd=repo, env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode != 0 and "no valid run_id" in r.stderr, r.stdout + r.stderr
    assert not (tmp_path / "repo" / "pwned").exists() and not (tmp_path / "pwned").exists()
    assert (tmp_path / "repo" / "space").exists()
    assert os.listdir(os.path.join(repo, "runs")) == ["keep"] and os.listdir(os.path.join(repo, "results")) == ["keep"]


def special_paths(tmp_path) -> dict:
    """Outputs no stage may write: a folder, a FIFO (a device stands in the same class, not
    replaced here to keep the machine's /dev whole), and a file under /proc."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "folder").mkdir()
    return {"a folder": (str(tmp_path / "folder"), "is a directory"),
            "a FIFO": (str(fifo), "is not a regular file"),
            "a file under /proc": ("/proc/self/comm", "is under /proc")}


@pytest.mark.parametrize("kind", ["a folder", "a FIFO", "a file under /proc"])
def test_an_output_that_is_not_a_file_to_write_is_refused_naming_the_flag(tmp_path, fake_llm, capsys, kind):
    import check
    import run
    import score
    path, why = special_paths(tmp_path)[kind]
    cfg = write_config(tmp_path)
    run_file = str(tmp_path / "keyword.jsonl")
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", run_file, "--retrieval-only"]) == 0
    capsys.readouterr()
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", path]) == 2
    assert f"--out {path}: {why}" in capsys.readouterr().err and fake_llm.requests == 0
    assert run_cli(check.main, ["--runs", run_file, "--config", cfg, "--out", path]) == 2
    assert f"--out {path}: {why}" in capsys.readouterr().err
    assert run_cli(score.main, ["--config", cfg, "--runs", run_file, "--baseline", "keyword", "--json", path]) == 2
    assert f"--json {path}: {why}" in capsys.readouterr().err
    if kind == "a FIFO":
        assert stat.S_ISFIFO(os.stat(path).st_mode)  # still a FIFO: never replaced by a regular file


def test_a_second_writer_of_one_run_file_is_refused_at_once_naming_the_first(tmp_path, fake_llm, capsys):
    import run
    from fileio import output_lock
    cfg = write_config(tmp_path)
    out = str(tmp_path / "runs" / "keyword.jsonl")
    with output_lock(out):  # the first writer, this process
        assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", out]) == 2
        err = capsys.readouterr().err
        assert f"{out}: another process is writing it (pid {os.getpid()}:" in err and fake_llm.requests == 0
        # The same file by another name is the same file.
        alias = str(tmp_path / "runs" / ".." / "runs" / "keyword.jsonl")
        assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", alias]) == 2
    assert not os.path.exists(out)
    # Once the first is done, the file is free.
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", out]) == 0


# ---------------------------------------------------------------------------------------------
# Every wait bounded: a model endpoint or a memory service that hangs or drips its replies ends
# a run in about the time a dead one does, with the same message and a resumable state; a reply
# past its cap is not read further; replies of the wrong shape are a record's error.
# ---------------------------------------------------------------------------------------------

KEY = "sk-hostile-0123456789abcdefghij"


@pytest.fixture
def hostile(monkeypatch):
    """A HostileServer factory; every server made is stopped at the end."""
    from hostile_server import HostileServer
    made = []

    def make(behaviour: str, **kw):
        made.append(HostileServer(behaviour, **kw).start())
        return made[-1]
    yield make
    for server in made:
        server.stop()


def bounded_config(tmp_path, **overrides) -> str:
    return write_config(tmp_path, **{"request_timeout_s": 1, "max_retries": 1, "retry_backoff_s": 0.01, **overrides})


@pytest.mark.parametrize("behaviour", ["drip", "hang"])
def test_a_model_endpoint_that_drips_or_hangs_stops_the_run_as_a_dead_one_does(tmp_path, monkeypatch, capsys,
                                                                               hostile, behaviour):
    import time

    import run
    server = hostile(behaviour)
    monkeypatch.setenv("LLM_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("LLM_API_KEY", KEY)
    cfg = bounded_config(tmp_path)
    out = tmp_path / "keyword.jsonl"
    t0 = time.monotonic()
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", str(out)]) == 3
    took = time.monotonic() - t0
    err = capsys.readouterr().err
    # Three calls of 1 s, the first with one retry, run three at a time: a few seconds, where a
    # per-read timeout never ended the run while the server dripped.
    assert took < 20, took
    assert "calls in a row could not connect to the model endpoint" in err
    assert "no whole reply within request_timeout_s (1 s)" in err and "rerun the same command" in err
    assert KEY not in err and (not out.exists() or KEY not in out.read_text())


def test_a_reply_past_the_cap_is_a_record_error_and_is_not_read_whole(tmp_path, monkeypatch, hostile):
    import resource

    import llm
    from config import load_config
    server = hostile("huge")
    monkeypatch.setenv("LLM_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("LLM_API_KEY", KEY)
    client = llm.LLMClient(load_config(bounded_config(tmp_path, request_timeout_s=30)), use_cache=False)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    done = client.complete("m", [{"role": "user", "content": "q"}], 8)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert done.error == "reply_too_large" and done.attempts == 1  # retrying cannot make it shorter
    assert grown_mb < 256, grown_mb  # a gigabyte read whole took 2 GB


def completion(**fields) -> bytes:
    body = {"model": "m", "choices": [{"index": 0, "finish_reason": "stop",
                                       "message": {"role": "assistant", "content": "Postgres 16"}}]}
    message = body["choices"][0]["message"]
    for k, v in fields.items():
        (message if k == "content" else body)[k] = v
    return json.dumps(body).replace('"NAN"', "NaN").encode()


@pytest.mark.parametrize("reply, text, error", [
    (completion(usage={"prompt_tokens": "NAN", "completion_tokens": 3}), None, "bad_response"),
    (completion(usage={"prompt_tokens": "12", "completion_tokens": 3}), None, "bad_response"),
    (completion(usage="lots"), None, "bad_response"),
    (completion(model={"name": "m"}), None, "bad_response"),
    (completion(content=[{"type": "text", "text": "Postgres"}, {"type": "text", "text": " 16"}]), "Postgres 16", None),
    (completion(content={"text": "Postgres 16"}), None, "bad_response"),
    (b'{"choices": [{"message": {"content": "a"}}], "choices": []}', None, "bad_response"),
], ids=["NaN usage", "string usage", "usage not an object", "object model", "content in parts", "object content",
        "duplicate key"])
def test_a_reply_of_the_wrong_shape_is_a_record_error_not_a_crash(tmp_path, monkeypatch, hostile, reply, text, error):
    import llm
    from config import load_config
    server = hostile("raw", body=reply)
    monkeypatch.setenv("LLM_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("LLM_API_KEY", KEY)
    client = llm.LLMClient(load_config(bounded_config(tmp_path, max_retries=0)), use_cache=False)
    done = client.complete("m", [{"role": "user", "content": "q"}], 8)
    assert (done.text, done.error) == (text, error)


def test_a_run_against_replies_of_the_wrong_shape_writes_each_record_with_its_error(tmp_path, monkeypatch, capsys,
                                                                                    hostile):
    import run
    server = hostile("raw", body=completion(usage={"prompt_tokens": "NAN", "completion_tokens": 3}))
    monkeypatch.setenv("LLM_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("LLM_API_KEY", KEY)
    out = tmp_path / "keyword.jsonl"
    code = run_cli(run.main, ["--config", bounded_config(tmp_path, max_retries=0), "--backend", "keyword",
                              "--out", str(out)])
    assert code in (0, 3) and "Traceback" not in capsys.readouterr().err
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert records and all(r["error"] == "bad_response" for r in records)


def test_a_key_echoed_in_a_reply_that_is_not_a_completion_is_hidden_whole(tmp_path, monkeypatch, hostile):
    import llm
    from config import load_config
    # The key starts at the 60th byte of the reply: a message cut at 80 before it was scrubbed
    # showed its first characters.
    server = hostile("raw", body=b"<html>" + b"x" * 53 + KEY.encode() + b"</html>")
    server.answer_preflight = False
    monkeypatch.setenv("LLM_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("LLM_API_KEY", KEY)
    client = llm.LLMClient(load_config(bounded_config(tmp_path, max_retries=0)), use_cache=False)
    with pytest.raises(llm.EndpointError) as e:
        client.preflight("m", 8)
    assert "did not answer with a chat completion" in str(e.value)
    assert not any(KEY[i:i + 6] in str(e.value) for i in range(len(KEY) - 5))


def test_a_base_url_without_a_scheme_is_never_echoed_with_its_password(tmp_path, monkeypatch, capsys):
    import run
    monkeypatch.setenv("LLM_BASE_URL", "user:s3cretpass@127.0.0.1:9/v1?token=s3crettoken")
    monkeypatch.setenv("LLM_API_KEY", KEY)
    assert run_cli(run.main, ["--config", bounded_config(tmp_path), "--backend", "keyword",
                              "--out", str(tmp_path / "k.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'http://127.0.0.1:9/v1'?" in err
    assert "s3cret" not in err


def http_config(tmp_path, url: str, **settings) -> str:
    return bounded_config(tmp_path, backends={"http": {"base_url": url, "token_env": "MEMORY_API_KEY",
                                                       "timeout_s": 1, "poll_interval_s": 0.05, **settings}})


@pytest.mark.parametrize("behaviour", ["drip", "hang"])
def test_a_memory_service_that_drips_or_hangs_stops_the_run_as_a_dead_one_does(tmp_path, monkeypatch, capsys,
                                                                               fake_llm, hostile, behaviour):
    import time

    import run
    monkeypatch.setenv("MEMORY_API_KEY", KEY)
    server = hostile(behaviour)
    out = tmp_path / "http.jsonl"
    t0 = time.monotonic()
    assert run_cli(run.main, ["--config", http_config(tmp_path, server.url), "--backend", "http",
                              "--out", str(out)]) == 3
    assert time.monotonic() - t0 < 20
    err = capsys.readouterr().err
    assert "3 calls in a row to http://127.0.0.1" in err and "no whole reply within backends.http.timeout_s" in err
    assert KEY not in err


def test_a_token_the_memory_service_echoes_reaches_no_record(tmp_path, monkeypatch, fake_llm, hostile):
    import run
    monkeypatch.setenv("MEMORY_API_KEY", KEY)
    server = hostile("echo")
    out = tmp_path / "http.jsonl"
    run_cli(run.main, ["--config", http_config(tmp_path, server.url), "--backend", "http", "--out", str(out)])
    text = out.read_text(encoding="utf-8")
    assert "HTTP 500: bad request from Bearer ***" in text
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("follow", [False, True])
def test_a_redirect_to_another_service_is_refused_not_measured(tmp_path, monkeypatch, fake_llm, hostile, follow):
    from backends import load_backend
    from conftest import backend_config
    from memory_service import MemoryService
    monkeypatch.setenv("MEMORY_API_KEY", KEY)
    other = MemoryService(index_delay_s=0, token=KEY).start()
    try:
        server = hostile("redirect", location=other.url + "/namespaces/x")
        b = load_backend("http", backend_config(tmp_path, {"http": {"base_url": server.url, "token_env": "MEMORY_API_KEY",
                                                                    "follow_redirects": follow}}))
        with pytest.raises(RuntimeError, match="redirected to (another origin, )?http://127.0.0.1:[0-9]+/namespaces/x; refused"):
            b.reset("ns")
        assert not other.indexed  # the other service was never asked
    finally:
        other.stop()


def test_a_memory_service_reply_past_the_cap_is_the_record_s_error(tmp_path, monkeypatch, hostile):
    from backends import load_backend
    from conftest import backend_config
    monkeypatch.setenv("MEMORY_API_KEY", KEY)
    server = hostile("huge")
    b = load_backend("http", backend_config(tmp_path, {"http": {"base_url": server.url, "token_env": "MEMORY_API_KEY",
                                                                "max_reply_mb": 1}}))
    with pytest.raises(RuntimeError, match=r"a reply longer than 1 MiB \(HTTP 200\); not read further "
                                           r"\(backends.http.max_reply_mb\)"):
        b.search("ns", "what", 3)


# ---------------------------------------------------------------------------------------------
# Bad values as bad input: what Python's JSON reader takes and the standard does not (NaN,
# Infinity, a key twice), nesting it cannot read, a line that never ends: exit 2 naming
# path:line, before any model call.
# ---------------------------------------------------------------------------------------------

def dataset_with(tmp_path, line: str) -> str:
    with open(TINY_DATASET, encoding="utf-8") as fh:
        first = fh.readline()
    path = tmp_path / "cases.jsonl"
    path.write_text(first + line + "\n", encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("line, why", [
    ('{"case_id": "c9", "meta": {"weight": NaN}}', "NaN is not a JSON number"),
    ('{"case_id": "c9", "meta": {"weight": -Infinity}}', "-Infinity is not a JSON number"),
    ('{"case_id": "c9", "case_id": "c10"}', "key 'case_id' appears twice in one object"),
    ("[" * 100_000 + "]" * 100_000, "nested deeper than the JSON reader allows"),
], ids=["NaN", "-Infinity", "duplicate key", "deep nesting"])
def test_json_the_standard_does_not_allow_is_refused_naming_the_line(tmp_path, fake_llm, capsys, line, why):
    import run
    cfg = write_config(tmp_path, dataset=dataset_with(tmp_path, line))
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", str(tmp_path / "k.jsonl")]) == 2
    err = capsys.readouterr().err
    assert f"cases.jsonl:2: invalid JSON: {why}" in err and fake_llm.requests == 0


def test_a_run_file_whose_line_never_ends_is_refused_not_read_into_memory(tmp_path, capsys):
    import score
    cfg = write_config(tmp_path)
    assert run_cli(score.main, ["--config", cfg, "--runs", "/dev/zero", "--baseline", "keyword"]) == 2
    assert "/dev/zero:1: a line longer than 64 MiB; not a JSONL file" in capsys.readouterr().err


def test_a_config_key_written_twice_is_refused_naming_its_line(tmp_path, capsys):
    cfg = write_config(tmp_path)
    with open(cfg, "a", encoding="utf-8") as fh:
        fh.write("top_k: 99\n")
    assert run_cli(manifest.main, [cfg, "--backends", "none"]) == 2
    err = capsys.readouterr().err
    assert f"{cfg}:" in err and "invalid YAML: key 'top_k' appears twice in one mapping" in err


def test_a_judge_reply_that_gives_its_verdict_twice_is_no_verdict():
    from rubrics import parse_judge_reply
    assert parse_judge_reply('{"verdict": "incorrect", "verdict": "correct"}') == ("unparseable", None)
    assert parse_judge_reply('{"verdict": "correct", "reason": "same date"}') == ("correct", "same date")


def test_a_full_disk_stops_a_run_with_exit_2_and_the_rerun_goes_on_without_duplicates(tmp_path, fake_llm, capsys,
                                                                                      monkeypatch):
    import errno

    import run
    cfg = write_config(tmp_path)
    out = tmp_path / "keyword.jsonl"
    whole = run.Writer.write

    def fills_the_disk(self, record):
        if self.written == 2:  # the third record: half a line reaches the disk, then no room
            self.fh.write(json.dumps(record)[:40])
            self.fh.flush()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        whole(self, record)
    monkeypatch.setattr(run.Writer, "write", fills_the_disk)
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "error: cannot write: No space left on device; free space on the disk and rerun the same command" in err
    assert "Traceback" not in err
    monkeypatch.setattr(run.Writer, "write", whole)
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", str(out)]) == 0
    qids = [json.loads(line)["qid"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(qids) == len(set(qids)) > 2
