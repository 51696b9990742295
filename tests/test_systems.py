"""The memory systems wrapped from their own packages (LlamaIndex memory, cognee, Hindsight,
Graphiti), each run for real on a small fixture: what their adapters add beyond the contract
that tests/test_backends.py checks for every backend (provenance where the system rewrites or
merges, the versions, the no-LLM and LLM modes)."""
from __future__ import annotations

import pytest

from backends import load_backend
from conftest import backend_config
from contract import Hit, MemoryItem


def turn(item_id: str, text: str, stamp: str = "2026-03-02T10:00:00Z", role: str = "user") -> MemoryItem:
    return MemoryItem(item_id=item_id, text=f"{role}: {text}",
                      metadata={"session_id": "s1", "timestamp": stamp, "role": role})


def test_llamaindex_identical_turns_are_told_apart_by_order(tmp_path):
    pytest.importorskip("llama_index.vector_stores.qdrant")
    pytest.importorskip("wordllama")
    b = load_backend("llamaindex", backend_config(tmp_path, {"llamaindex": {"model": "wordllama"}}))
    b.reset("ns")
    b.add("ns", [turn("t1", "ok, thanks"), turn("t2", "The cache lives in Redis 7."),
                 turn("t3", "ok, thanks", "2026-03-03T10:00:00Z")])
    hits = b.search("ns", "ok, thanks", 3)
    assert sorted(h.source_ids for h in hits) == [("t1",), ("t2",), ("t3",)]
    assert [h.source_ids for h in hits[:2]] in ([("t1",), ("t3",)], [("t3",), ("t1",)])
    stamps = {h.source_ids[0]: h.timestamp for h in hits}
    assert stamps == {"t1": "2026-03-02T10:00:00Z", "t2": "2026-03-02T10:00:00Z", "t3": "2026-03-03T10:00:00Z"}
    assert "VectorMemoryBlock" in b.version and "llama-index-core" in b.version


def test_cognee_names_every_turn_of_a_chunk_it_stored_once(tmp_path):
    """cognee keeps one document per distinct content: two turns with the same text are one
    chunk, whose hit names both; every hit names its turn through the document's metadata."""
    pytest.importorskip("wordllama")
    b = load_backend("cognee", backend_config(tmp_path, {"cognee": {"model": "wordllama"}}))
    b.reset("ns")
    b.add("ns", [turn("t1", "ok, thanks"), turn("t2", "The cache lives in Redis 7.")])
    b.add("ns", [turn("t3", "ok, thanks", "2026-03-03T10:00:00Z")])
    hits = b.search("ns", "Where does the cache live?", 5)
    assert [h.source_ids for h in hits][0] == ("t2",)
    assert sorted(h.source_ids for h in hits) == [("t1", "t3"), ("t2",)]
    assert "cognee" in b.version and "no LLM" in b.version and "wordllama" in b.version
    assert not hasattr(b, "internal_model")


def test_a_hit_without_provenance_makes_the_questions_retrieval_null_not_zero():
    """A system that cannot name a hit's turns (a merged or rewritten memory) leaves the
    question's retrieved ids null, so recall is not measured there (score.py then says why,
    tests/test_score.py), rather than counting the hit as a miss."""
    import run
    named, merged = Hit("user: billing is on Postgres 16", 0.9, ("t4",)), Hit("a summary", 0.5, ())
    assert run.provenance([named]) == ["t4"]
    assert run.provenance([named, merged]) is None
    assert run.provenance([]) == []


def test_hindsight_server_keeps_namespaces_apart_and_names_each_hits_turn(tmp_path):
    """Hindsight's real server (no LLM) on its embedded PostgreSQL, started by the adapter: each
    hit names its turn through the metadata retain stored; banks are isolated, reset empties one,
    concurrent searches agree; closing stops the server."""
    pytest.importorskip("hindsight_api")
    pytest.importorskip("pg0")
    pytest.importorskip("llama_index.core")
    pytest.importorskip("wordllama")
    import threading
    import requests
    b = load_backend("hindsight", backend_config(tmp_path, {"hindsight": {"model": "wordllama"}}))
    try:
        assert "hindsight-api-slim" in b.version and "LLM none" in b.version and "wordllama" in b.version
        assert not hasattr(b, "internal_model")
        for ns in ("ns", "other"):
            b.reset(ns)
        b.add("ns", [turn("t1", "We moved billing to Postgres 16 last week."),
                     turn("t2", "The cache lives in Redis 7.", "2026-03-03T10:00:00Z")])
        b.add("ns", [turn("t3", "My sister adopted a grey cat named Pixel.", "2026-03-04T10:00:00Z")])
        b.add("other", [turn("o1", "The cache lives in Memcached on the old cluster.")])
        b.flush("ns", 10)
        hits = b.search("ns", "Where does the cache live?", 2)
        assert 1 <= len(hits) <= 2 and hits[0].source_ids == ("t2",)
        assert hits[0].text == "user: The cache lives in Redis 7." and hits[0].timestamp == "2026-03-03T10:00:00Z"
        every = b.search("ns", "cache billing cat Postgres Redis Pixel", 10)
        assert {h.source_ids for h in every} <= {("t1",), ("t2",), ("t3",)} and len(every) >= 2
        assert [h.source_ids for h in b.search("other", "Where does the cache live?", 5)] == [("o1",)]
        assert b.search("ns", "cache", 0) == [] and b.search("never-written", "cache", 5) == []
        results, errors = [], []

        def ask() -> None:
            try:
                results.append([h.source_ids for h in b.search("ns", "Where does the cache live?", 2)])
            except Exception as e:  # collected: an assertion in a thread would be lost
                errors.append(e)
        threads = [threading.Thread(target=ask) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and len(results) == 4 and all(r == results[0] for r in results)
        b.reset("ns")
        assert b.search("ns", "Where does the cache live?", 5) == []
        assert [h.source_ids for h in b.search("other", "cache", 5)] == [("o1",)]
        url = b._url
    finally:
        b.close()
    with pytest.raises(requests.ConnectionError):
        requests.get(url + "/health", timeout=2)


def test_hindsight_settings_refuse_an_unknown_budget_naming_the_key_before_anything_starts():
    from backends import hindsight
    from cli import InputError
    assert hindsight.settings({})["budget"] == "mid" and hindsight.settings({})["user"] == "nobody"
    with pytest.raises(InputError, match=r"backends\.hindsight\.budget must be one of low, mid, high"):
        hindsight.settings({"budget": "huge"})
    with pytest.raises(InputError, match=r"backends\.hindsight\.startup_timeout_s must be positive"):
        hindsight.settings({"startup_timeout_s": 0})


def test_hindsight_names_a_graph_result_without_metadata_by_its_document_and_no_turn_when_neither():
    """Hindsight returns results reached through its graph retrieval without their metadata;
    their document id is the turn's item id (one document per turn). A result naming no turn
    that was added has no provenance, which leaves the question's recall null."""
    from backends.hindsight import hit_of
    stamps = {"t1": "2026-03-02T10:00:00Z", "t2": "2026-03-03T10:00:00Z"}
    scores = {"final": 0.5, "semantic": 0.8}
    by_meta = hit_of({"text": "user: a", "document_id": "t1", "metadata": {"item_id": "t1"}, "scores": scores}, stamps)
    by_document = hit_of({"text": "user: b", "document_id": "t2", "scores": scores}, stamps)
    unknown = hit_of({"text": "an observation", "document_id": None, "scores": scores}, stamps)
    assert (by_meta.source_ids, by_meta.timestamp) == (("t1",), "2026-03-02T10:00:00Z")
    assert (by_document.source_ids, by_document.timestamp, by_document.score) == (("t2",), "2026-03-03T10:00:00Z", 0.5)
    assert unknown.source_ids == () and unknown.timestamp == ""
