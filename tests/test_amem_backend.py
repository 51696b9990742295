"""A-Mem (backends/amem.py) on its real AgenticMemorySystem, its model calls answered by the test
endpoint with canned analysis and evolution replies: every hit names its turn, namespaces stay
apart, reset empties one, search calls no model, and a failed model call fails the add instead
of leaving a note A-Mem stored without its analysis."""
from __future__ import annotations

import json

import pytest

from backends import load_backend
from conftest import backend_config
from contract import MemoryItem

# Canned analysis per turn: A-Mem's keywords, context and tags for the note.
ANALYSIS = {
    "Redis 7": {"keywords": ["cache", "Redis"], "context": "Where the cache lives", "tags": ["infrastructure"]},
    "Postgres 16": {"keywords": ["billing", "Postgres"], "context": "The billing database", "tags": ["database"]},
    "Pixel": {"keywords": ["cat", "sister"], "context": "Family news", "tags": ["personal"]},
    "Memcached": {"keywords": ["cache", "Memcached"], "context": "The old cache", "tags": ["infrastructure"]},
}


def turn(item_id: str, text: str, stamp: str = "2026-03-02T10:00:00Z") -> MemoryItem:
    return MemoryItem(item_id=item_id, text=f"user: {text}", metadata={"session_id": "s1", "timestamp": stamp,
                                                                       "role": "user"})


def amem_reply(body: dict) -> str | None:
    """A-Mem's two prompts: the analysis of a note gets its canned fields; the evolution decision
    links nothing and rewrites nothing (should_evolve false)."""
    prompt = body["messages"][-1]["content"]
    if "Generate a structured analysis" in prompt:
        said = prompt.rsplit("Content for analysis:", 1)[1]
        return json.dumps(next(v for cue, v in ANALYSIS.items() if cue in said))
    if "memory evolution agent" in prompt:
        return json.dumps({"should_evolve": False, "actions": [], "suggested_connections": [],
                           "tags_to_update": [], "new_context_neighborhood": [], "new_tags_neighborhood": []})
    return None


@pytest.fixture
def amem(tmp_path, fake_llm):
    pytest.importorskip("agentic_memory")
    pytest.importorskip("all_minilm_l6_v2")
    fake_llm.responder = amem_reply
    b = load_backend("amem", backend_config(tmp_path, {"amem": {}}))
    yield b
    b.close()


def test_amem_hits_name_their_turns_namespaces_stay_apart_and_reset_empties(amem, fake_llm):
    assert amem.name == "amem (internal extractor: stub-model)" and amem.internal_model == "stub-model"
    assert "a-mem" in amem.version and "all-MiniLM-L6-v2" in amem.version
    for ns in ("ns", "other"):
        amem.reset(ns)
    amem.add("ns", [turn("t1", "We moved billing to Postgres 16 last week."),
                    turn("t2", "The cache lives in Redis 7.", "2026-03-03T10:00:00Z")])
    amem.add("ns", [turn("t3", "My sister adopted a grey cat named Pixel.")])
    amem.add("other", [turn("o1", "The cache lives in Memcached on the old cluster.")])
    amem.flush("ns", 10)
    calls = len(fake_llm.bodies)
    hits = amem.search("ns", "Where does the cache live?", 2)
    assert hits[0].source_ids == ("t2",) and hits[0].timestamp == "2026-03-03T10:00:00Z"
    assert "The cache lives in Redis 7." in hits[0].text and "Where the cache lives" in hits[0].text
    every = amem.search("ns", "cache billing cat", 10)
    assert sorted(h.source_ids for h in every) == [("t1",), ("t2",), ("t3",)]
    assert [h.source_ids for h in amem.search("other", "Where does the cache live?", 5)] == [("o1",)]
    assert len(fake_llm.bodies) == calls  # search makes no model call
    # Each note: one analysis; each note after the first in its namespace: one evolution decision.
    prompts = [b["messages"][-1]["content"] for b in fake_llm.bodies]
    assert sum("Generate a structured analysis" in p for p in prompts) == 4
    assert sum("memory evolution agent" in p for p in prompts) == 2
    assert {b["model"] for b in fake_llm.bodies} == {"stub-model"}
    amem.reset("ns")
    assert amem.search("ns", "cache", 5) == []
    assert [h.source_ids for h in amem.search("other", "cache", 5)] == [("o1",)]


def test_amem_a_failed_model_call_fails_the_add(amem, fake_llm):
    """A-Mem swallows a failed call, or a reply it cannot parse, and stores the note bare; the
    adapter refuses both."""
    amem.reset("ns")
    fake_llm.script = [{"status": 400}]
    with pytest.raises(RuntimeError, match="turn t1: A-Mem's model call failed"):
        amem.add("ns", [turn("t1", "The cache lives in Redis 7.")])
    fake_llm.script = [{"content": "Sure! The keywords are cache and Redis."}]
    with pytest.raises(RuntimeError, match="turn t2: A-Mem's model call failed .bad_reply: not JSON"):
        amem.add("ns", [turn("t2", "The cache lives in Redis 7.")])


def test_amem_without_an_endpoint_exits_before_loading_anything(tmp_path, monkeypatch):
    from cli import InputError
    monkeypatch.delenv("LLM_BASE_URL", raising=False)
    with pytest.raises(InputError, match="LLM_BASE_URL"):
        load_backend("amem", backend_config(tmp_path, {"amem": {}}))
