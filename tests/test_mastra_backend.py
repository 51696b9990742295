"""Mastra Memory (backends/mastra.py) for real: its Memory and LibSQL stores in Node, driven by
backends/mastra_js/memory.mjs, with wordllama vectors from the loopback endpoint. Hits name their
turns, namespaces stay apart, reset empties one, and a dead Node process is an error that says
so rather than an empty memory."""
from __future__ import annotations

import os
import shutil

import pytest

from backends import load_backend
from conftest import CI, ROOT, backend_config
from contract import MemoryItem

INSTALLED = os.path.isdir(os.path.join(ROOT, "backends", "mastra_js", "node_modules", "@mastra", "memory"))


def turn(item_id: str, text: str, stamp: str = "2026-03-02T10:00:00Z", role: str = "user") -> MemoryItem:
    return MemoryItem(item_id=item_id, text=f"{role}: {text}",
                      metadata={"session_id": "s1", "timestamp": stamp, "role": role})


@pytest.fixture
def mastra(tmp_path):
    pytest.importorskip("wordllama")
    if not (INSTALLED and shutil.which("node")):
        reason = "Mastra's npm packages or node missing (npm ci --prefix backends/mastra_js)"
        if CI:
            pytest.fail(f"CI=true: {reason}, and CI must not skip its tests", pytrace=False)
        pytest.skip(reason)
    b = load_backend("mastra", backend_config(tmp_path, {"mastra": {"model": "wordllama", "embedding_cache": False}}))
    yield b
    b.close()


def test_mastra_hits_name_their_turns_namespaces_stay_apart_and_reset_empties(mastra):
    assert "@mastra/memory" in mastra.version and "wordllama" in mastra.version
    assert not hasattr(mastra, "internal_model")
    for ns in ("ns", "other"):
        mastra.reset(ns)
    mastra.add("ns", [turn("t1", "We moved billing to Postgres 16 last week."),
                      turn("t2", "The cache lives in Redis 7.", "2026-03-03T10:00:00Z", "assistant")])
    mastra.add("ns", [turn("t3", "My sister adopted a grey cat named Pixel.", "2026-03-04T10:00:00Z")])
    mastra.add("other", [turn("o1", "The cache lives in Memcached on the old cluster.")])
    mastra.flush("ns", 10)
    every = mastra.search("ns", "Where does the cache live?", 10)
    assert sorted(h.source_ids for h in every) == [("t1",), ("t2",), ("t3",)]
    by_turn = {h.source_ids[0]: h for h in every}
    assert by_turn["t2"].text == "assistant: The cache lives in Redis 7."
    assert by_turn["t2"].timestamp == "2026-03-03T10:00:00Z"
    # topK 1: the nearest message alone, which is the cache turn.
    assert [h.source_ids for h in mastra.search("ns", "Where does the cache live?", 1)] == [("t2",)]
    assert [h.source_ids for h in mastra.search("other", "Where does the cache live?", 5)] == [("o1",)]
    assert mastra.search("ns", "cache", 0) == [] and mastra.search("never-written", "cache", 5) == []
    mastra.reset("ns")
    assert mastra.search("ns", "cache", 5) == []
    assert [h.source_ids for h in mastra.search("other", "cache", 5)] == [("o1",)]


def test_mastra_a_dead_node_process_fails_the_call(mastra):
    mastra.reset("ns")
    mastra._proc.kill()
    mastra._proc.wait()
    with pytest.raises(RuntimeError, match="mastra: the Node process has exited"):
        mastra.add("ns", [turn("t1", "The cache lives in Redis 7.")])


def test_mastra_keeps_every_turn_of_a_session_that_shares_one_timestamp(mastra):
    """A session's turns share its time; Mastra would keep one message of those with one createdAt,
    so each is stored a millisecond after the one before it, and each is found by its own words."""
    texts = ["I went camping last weekend", "The cache lives in Redis", "My cat is named Pixel",
             "We ran a charity race", "Billing uses Postgres"]
    mastra.reset("ns")
    mastra.add("ns", [turn(f"D1:{i}", t, "2023-05-08T13:56:00", "assistant" if i % 2 else "user")
                      for i, t in enumerate(texts)])
    assert sorted(h.source_ids for h in mastra.search("ns", "anything", 10)) == [(f"D1:{i}",) for i in range(5)]
    assert {h.timestamp for h in mastra.search("ns", "anything", 10)} == {"2023-05-08T13:56:00"}
    assert [h.source_ids for h in mastra.search("ns", "the cache in Redis", 1)] == [("D1:1",)]
    assert [h.source_ids for h in mastra.search("ns", "a charity race", 1)] == [("D1:3",)]
