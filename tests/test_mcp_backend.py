"""The MCP adapter (backends/mcp.py) against real MCP servers: the reference npm memory server
over stdio (config.yaml's mcp_server_memory preset, installed by `make extras`), a test stand-in
on the SDK's MCPServer over streamable HTTP and stdio (tests/mcp_standin_server.py), a server that
never answers, and servers that die; no server process outlives the backend."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
import yaml

from backends import load_backend
from cli import InputError, ServiceDown
from conftest import ROOT, backend_config, write_config
from contract import MemoryItem

STANDIN = os.path.join(ROOT, "tests", "mcp_standin_server.py")
SERVER_MEMORY = os.path.join(ROOT, "backends", "npm", "node_modules", "@modelcontextprotocol", "server-memory")


def preset(name: str) -> dict:
    """A preset's section of the repository's config.yaml."""
    with open(os.path.join(ROOT, "config.yaml"), encoding="utf-8") as fh:
        return yaml.safe_load(fh)["backends"][name]


def server_memory() -> dict:
    """The mcp_server_memory preset; a missing npm install is a skip, and a failure under CI."""
    pytest.importorskip("mcp")
    if not os.path.isdir(SERVER_MEMORY):
        message = "the npm server is not installed: make extras (npm ci --prefix backends/npm)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: {message}", pytrace=False)
        pytest.skip(message)
    return preset("mcp_server_memory")


# The stand-in over stdio, its namespaces kept by the server, emptied by its forget tool; it
# returns texts without ids, so provenance comes from the texts.
STANDIN_SECTION = {
    "adapter": "mcp", "name": "standin", "version": "test stand-in", "command": [sys.executable, STANDIN],
    "add_tool": "remember", "add_arguments": {"namespace": "{namespace}", "text": "{text}"},
    "search_tool": "recall", "search_arguments": {"namespace": "{namespace}", "query": "{query}", "k": "{k}"},
    "reset_tool": "forget", "reset_arguments": {"namespace": "{namespace}"},
    "results_from": "json_text", "results_path": "results", "hit_text_path": "memory", "hit_score_path": "score",
    "call_timeout_s": 10, "start_timeout_s": 20,
}


def turn(item_id: str, text: str, timestamp: str = "2026-03-02T10:00:00Z") -> MemoryItem:
    return MemoryItem(item_id, f"user: {text}", {"session_id": "s1", "timestamp": timestamp, "role": "user"})


def descendants() -> set[int]:
    """The live processes descending from this one (from /proc), zombies excluded."""
    parent = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parent[int(entry)] = int(fields[1])
    found, todo = set(), [os.getpid()]
    while todo:
        pid = todo.pop()
        for child, ppid in parent.items():
            if ppid == pid and child not in found:
                found.add(child)
                todo.append(child)
    return found


@pytest.fixture
def no_process_left():
    """Fails the test if a process it started outlives it."""
    before = descendants()
    yield
    deadline = time.monotonic() + 10
    while (left := descendants() - before) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"processes left behind: {left}"


def test_the_npm_memory_server_stores_searches_and_resets_namespaces_apart(tmp_path, no_process_left):
    """The reference server over stdio: each turn is an entity named by its id, so every hit names
    its turn; each namespace has its own server and memory file; reset empties one."""
    b = load_backend("mcp_server_memory", backend_config(tmp_path, {"mcp_server_memory": server_memory()}))
    try:
        assert "server-memory 2026.8.31" in b.version and "stdio" in b.version and "mcp 2.3.0" in b.version
        assert "server reports memory-server" in b.version  # its initialize reply, from a probe at create
        for ns in ("a", "b"):
            b.reset(ns)
        b.add("a", [turn("t1", "Billing runs on Postgres 16."),
                    turn("t2", "The cache lives in Redis 7.", "2026-03-03T10:00:00Z")])
        b.add("a", [turn("t3", "My sister adopted a cat named Pixel.")])
        b.add("b", [turn("o1", "The cache lives in Memcached.")])
        b.flush("a", 10)
        hits = b.search("a", "redis", 5)
        assert [(h.text, h.source_ids, h.timestamp) for h in hits] == [
            ("user: The cache lives in Redis 7.", ("t2",), "2026-03-03T10:00:00Z")]
        assert [h.source_ids for h in b.search("a", "user", 2)] == [("t1",), ("t2",)]  # at most k
        assert [h.source_ids for h in b.search("b", "cache", 5)] == [("o1",)]
        assert b.search("a", "Which database does billing use?", 5) == []  # its search: the whole query as a substring
        assert b.search("a", "cache", 0) == [] and b.search("never-written", "cache", 5) == []
        b.reset("a")
        assert b.search("a", "redis", 5) == [] and [h.source_ids for h in b.search("b", "cache", 5)] == [("o1",)]
        assert b.provenance_counts["ids"] >= 4 and b.provenance_counts["none"] == 0
    finally:
        b.close()


@pytest.fixture
def standin_http():
    """The stand-in served over streamable HTTP on a free loopback port; its URL."""
    pytest.importorskip("mcp")
    from processes import free_port, stop
    port = free_port()
    proc = subprocess.Popen([sys.executable, STANDIN, "--http", str(port)], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    import socket
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    yield url, proc
    stop(proc)


def test_the_stand_in_over_streamable_http_names_hits_by_their_text(tmp_path, standin_http, no_process_left):
    """Over streamable HTTP, with namespaces kept by the server and a reset tool: the stand-in
    returns texts without ids, and each hit is named by the stored turn it repeats."""
    section = {**STANDIN_SECTION, "transport": "streamable_http", "url": standin_http[0], "command": None}
    b = load_backend("standin", backend_config(tmp_path, {"standin": section}))
    try:
        assert "over MCP streamable_http" in b.version and "standin-memory" in b.version
        for ns in ("a", "b"):
            b.reset(ns)
        b.add("a", [turn("t1", "Billing runs on Postgres 16."), turn("t2", "The cache lives in Redis 7.")])
        b.add("b", [turn("o1", "The cache lives in Memcached.")])
        hits = b.search("a", "Where does the cache live?", 5)
        assert [h.source_ids for h in hits] == [("t2",)] and hits[0].score == 2.0  # "the", "cache"
        assert hits[0].timestamp == "2026-03-02T10:00:00Z"
        assert [h.source_ids for h in b.search("b", "Where does the cache live?", 5)] == [("o1",)]
        b.reset("a")
        assert b.search("a", "cache", 5) == [] and len(b.search("b", "cache", 5)) == 1
        assert b.provenance_counts == {"ids": 0, "text": 3, "none": 0}
    finally:
        b.close()


def test_an_http_server_that_goes_away_is_an_error_naming_its_url(tmp_path, standin_http):
    from processes import stop
    url, proc = standin_http
    section = {**STANDIN_SECTION, "transport": "streamable_http", "url": url, "command": None, "call_timeout_s": 3}
    b = load_backend("standin", backend_config(tmp_path, {"standin": section}))
    try:
        b.add("a", [turn("t1", "hello world")])
        stop(proc)
        with pytest.raises(RuntimeError, match=f"MCP server at {url}"):
            b.search("a", "hello", 3)
        with pytest.raises(RuntimeError, match="is gone"):
            b.search("a", "hello", 3)
        with pytest.raises(ServiceDown, match=f"3 calls in a row to the MCP server at {url}"):
            b.search("a", "hello", 3)
    finally:
        b.close()


def test_a_server_that_never_answers_fails_within_its_deadline_naming_the_command(tmp_path, no_process_left):
    """A server that reads nothing and answers nothing: create fails after start_timeout_s, with
    the command in the message, and the process is stopped."""
    pytest.importorskip("mcp")
    hang = [sys.executable, "-c", "import time; time.sleep(600)"]
    section = {**STANDIN_SECTION, "command": hang, "start_timeout_s": 2}
    started = time.monotonic()
    with pytest.raises(InputError, match=r"did not answer initialize within start_timeout_s \(2 s\)") as e:
        load_backend("standin", backend_config(tmp_path, {"standin": section}))
    assert "time.sleep(600)" in str(e.value)
    assert time.monotonic() - started < 60  # bounded: not the process's 600 s


def test_a_tool_call_that_hangs_ends_at_its_deadline_and_three_in_a_row_stop_the_run(tmp_path, no_process_left):
    """A server that answered initialize but never answers a call: each call fails after
    call_timeout_s naming the tool and the command; the third in a row raises ServiceDown;
    close() still stops the stalled process."""
    pytest.importorskip("mcp")
    b = load_backend("standin", backend_config(tmp_path, {"standin": {**STANDIN_SECTION, "call_timeout_s": 1}}))
    try:
        b.reset("a")
        started = time.monotonic()
        with pytest.raises(RuntimeError, match=r"remember had no answer within call_timeout_s \(1 s\)") as e:
            b.add("a", [turn("t1", "STALL-NOW")])
        assert STANDIN in str(e.value) and time.monotonic() - started < 30
        with pytest.raises(RuntimeError, match="had no answer"):
            b.add("a", [turn("t2", "STALL-NOW")])
        with pytest.raises(ServiceDown, match="3 calls in a row"):
            b.add("a", [turn("t3", "STALL-NOW")])
    finally:
        b.close()


def test_a_server_that_exits_at_start_is_an_error_naming_the_command_and_its_stderr(tmp_path, no_process_left):
    pytest.importorskip("mcp")
    crash = [sys.executable, "-c", "import sys; sys.stderr.write('boom: no database here\\n'); sys.exit(3)"]
    section = {**STANDIN_SECTION, "command": crash}
    with pytest.raises(InputError, match="could not start") as e:
        load_backend("standin", backend_config(tmp_path, {"standin": section}))
    assert "sys.exit(3)" in str(e.value) and "boom: no database here" in str(e.value)


def test_a_server_that_dies_mid_run_fails_clearly_then_stops_the_run_with_secrets_scrubbed(
        tmp_path, monkeypatch, no_process_left):
    """The stand-in exits during an add: that add fails naming the command and quoting its
    stderr with the secret hidden; later calls find it gone, and the third in a row raises
    ServiceDown."""
    pytest.importorskip("mcp")
    monkeypatch.setenv("STANDIN_SECRET", "sk-mcp-secret-value-42")
    section = {**STANDIN_SECTION, "secret_env": ["STANDIN_SECRET"]}
    b = load_backend("standin", backend_config(tmp_path, {"standin": section}))
    try:
        b.reset("a")
        with pytest.raises(RuntimeError) as first:
            b.add("a", [turn("t1", "DIE-NOW please")])
        text = str(first.value)
        assert STANDIN in text and "told to die" in text
        assert "sk-mcp-secret-value-42" not in text and "secret=***" in text
        with pytest.raises(RuntimeError, match="is gone"):
            b.search("a", "anything", 5)
        with pytest.raises(ServiceDown, match="3 calls in a row") as down:
            b.search("a", "anything", 5)
        assert "sk-mcp-secret-value-42" not in str(down.value)
    finally:
        b.close()


def test_settings_refuse_what_would_not_run():
    from backends.mcp import settings
    with pytest.raises(InputError, match="command must be a list"):
        settings({})
    with pytest.raises(InputError, match=r"placeholder\(s\) \{query\}"):
        settings({**{k: v for k, v in STANDIN_SECTION.items() if k != "adapter"}, "add_arguments": {"q": "{query}"}})
    with pytest.raises(InputError, match="reset_tool is null"):
        settings({"command": ["x"], "reset_tool": None})
    with pytest.raises(InputError, match="fresh_server_per_namespace needs transport: stdio"):
        settings({"transport": "streamable_http", "url": "http://127.0.0.1:1/mcp", "fresh_server_per_namespace": True})


def run_and_check(tmp_path, backends: dict) -> dict:
    """run.py --retrieval-only on the tiny dataset for each backend, as a user runs it (a process
    of its own, whose exit must stop every server it started), then check.py; its checks."""
    from conftest import script
    cfg = write_config(tmp_path, workers=2, backends=backends)
    runs = []
    for name in backends:
        out = str(tmp_path / "runs" / f"{name}.jsonl")
        done = script("run.py", "--config", cfg, "--backend", name, "--out", out, "--retrieval-only")
        assert done.returncode == 0, done.stderr[-2000:]
        runs.append(out)
    out = tmp_path / "checks.json"
    done = script("check.py", "--runs", *runs, "--config", cfg, "--out", str(out))
    checks = {c["id"]: c for c in json.loads(out.read_text())["checks"]}
    return {"code": done.returncode, **checks}


def test_the_leakage_check_passes_the_mcp_systems_and_catches_a_leaky_server(tmp_path, no_process_left):
    """A short model-free run: the npm server (a server per case) and the stand-in (one server,
    namespaces kept by it, reset by its tool) keep their cases apart, as check.py reads every
    hit's provenance; the stand-in run with --leaky (recall across namespaces, forget that
    forgets nothing) is caught."""
    leaky = {**STANDIN_SECTION, "name": "standin_leaky", "command": [sys.executable, STANDIN, "--leaky"]}
    c = run_and_check(tmp_path, {"keyword": {}, "mcp_server_memory": server_memory(), "standin": STANDIN_SECTION,
                                 "standin_leaky": leaky})
    assert c["code"] == 4  # the leaky one FAILs
    assert c["leakage/standin"]["status"] == "PASS" and c["leakage/standin"]["numbers"]["hits_checked"] > 0
    assert c["leakage/mcp_server_memory"]["status"] in ("PASS", "SKIP")
    assert c["leakage/mcp_server_memory"]["status"] != "FAIL"
    assert c["leakage/standin_leaky"]["status"] == "FAIL"
    with open(tmp_path / "runs" / "standin.jsonl", encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh]
    assert all("test stand-in over MCP stdio" in r["backend_version"] for r in records)
