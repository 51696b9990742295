"""basic-memory's real MCP server (PyPI) behind the MCP adapter, as config.yaml's mcp_basic_memory
preset starts it: from its own virtual environment (backends/basic_memory_mcp/.venv, made by
`make extras`), over stdio, a server and a notes folder per namespace, offline."""
from __future__ import annotations

import os

import pytest

from backends import load_backend
from conftest import ROOT, backend_config
from test_mcp_backend import no_process_left, preset, run_and_check, turn  # noqa: F401 (a fixture)

SERVER = os.path.join(ROOT, "backends", "basic_memory_mcp", ".venv", "bin", "basic-memory")


def basic_memory() -> dict:
    """The mcp_basic_memory preset; a missing server venv is a skip, and a failure under CI."""
    pytest.importorskip("mcp")
    if not os.access(SERVER, os.X_OK):
        message = "basic-memory's server is not installed: make extras (backends/basic_memory_mcp/.venv)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: {message}", pytrace=False)
        pytest.skip(message)
    return preset("mcp_basic_memory")


def test_basic_memory_stores_a_note_per_turn_and_names_every_hit_by_its_title(tmp_path, no_process_left):
    """Each turn is a note titled by its id, so every hit names its turn by the server's own field;
    its keyword search wants all the words, else any of them for three words or more and no
    number; each namespace has its own server and folder, and reset empties one."""
    b = load_backend("mcp_basic_memory", backend_config(tmp_path, {"mcp_basic_memory": basic_memory()}))
    try:
        assert "basic-memory 0.24.1" in b.version and "stdio" in b.version and "mcp 2.3.0" in b.version
        assert "server reports Basic Memory" in b.version  # its initialize reply, from a probe at create
        for ns in ("a", "b"):
            b.reset(ns)
        b.add("a", [turn("t1", "Billing runs on Postgres 16."),
                    turn("t2", "The cache lives in Redis 7.", "2026-03-03T10:00:00Z"),
                    turn("t3", "My sister adopted a cat named Pixel.")])
        b.add("b", [turn("o1", "The cache lives in Memcached.")])
        b.flush("a", 10)
        hits = b.search("a", "redis", 5)
        assert [(h.text, h.source_ids, h.timestamp) for h in hits] == [
            ("user: The cache lives in Redis 7.", ("t2",), "2026-03-03T10:00:00Z")]
        # no note holds every word, so it asks for any of them, as prefixes ("use" finds "user:")
        assert [h.source_ids for h in b.search("a", "Which database does billing use?", 5)][0] == ("t1",)
        assert b.search("a", "Which database runs on port 5432?", 5) == []  # a number: no second try
        assert b.search("a", "billing redis", 5) == []  # every word, and no note holds both
        assert len(b.search("a", "user", 2)) == 2  # at most k
        assert [h.source_ids for h in b.search("b", "cache", 5)] == [("o1",)]  # namespaces apart
        assert b.search("a", "memcached", 5) == []
        assert b.search("a", "cache", 0) == [] and b.search("never-written", "cache", 5) == []
        b.reset("a")
        assert b.search("a", "redis", 5) == [] and [h.source_ids for h in b.search("b", "cache", 5)] == [("o1",)]
        assert b.provenance_counts["ids"] >= 5 and b.provenance_counts["text"] == 0
        assert b.provenance_counts["none"] == 0
    finally:
        b.close()


def test_a_run_of_basic_memory_keeps_its_cases_apart(tmp_path, no_process_left):
    """run.py --retrieval-only on the tiny dataset (a server per case, in a process of its own),
    then check.py: the leakage check reads every hit's ids and finds no turn of another case."""
    c = run_and_check(tmp_path, {"keyword": {}, "mcp_basic_memory": basic_memory()})
    assert c["code"] in (0, 3), c  # no check FAILs (3: a WARN, on two cases)
    assert c["leakage/mcp_basic_memory"]["status"] == "PASS"
    assert c["leakage/mcp_basic_memory"]["numbers"]["hits_checked"] > 0
