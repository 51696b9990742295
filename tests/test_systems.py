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
