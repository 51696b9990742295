"""LangMem on LangGraph's store (backends/langmem.py), run for real on small fixtures: the no-LLM
store (one item per turn, provenance from the item's key) and the LLM mode's plumbing (LangMem's
memory store manager, its calls answered by the test endpoint with canned tool calls)."""
from __future__ import annotations

import json
import re

import pytest

from backends import load_backend
from cli import InputError
from conftest import backend_config, script, write_config
from contract import MemoryItem
from test_backends import BY_ID, ITEMS_A, ITEMS_B
from test_systems import endpoint  # noqa: F401 - the test endpoint fixture, shared


def turn(item_id: str, text: str, stamp: str = "2026-03-02T10:00:00Z", role: str = "user") -> MemoryItem:
    return MemoryItem(item_id=item_id, text=f"{role}: {text}",
                      metadata={"session_id": "s1", "timestamp": stamp, "role": role})


def store_backend(tmp_path):
    """The no-LLM mode with wordllama vectors, embedded afresh (no embedding cache)."""
    pytest.importorskip("langmem")
    pytest.importorskip("wordllama")
    return load_backend("langmem", backend_config(tmp_path, {"langmem": {"model": "wordllama",
                                                                         "embedding_cache": False}}))


def test_langmem_store_hits_name_their_turns_and_namespaces_stay_apart(tmp_path):
    """Each hit is one stored turn, named by the item's key, with its text and timestamp, best
    first; a namespace (a period in it, which LangGraph refuses in a label) sees only its turns."""
    b = store_backend(tmp_path)
    assert "langgraph" in b.version and "InMemoryStore" in b.version and "wordllama" in b.version
    for ns, items in (("case.a", ITEMS_A), ("case.b", ITEMS_B)):
        b.reset(ns)
        b.add(ns, items)
    hits = b.search("case.a", "Which Postgres version does billing run on?", 4)
    assert len(hits) == 4 and hits[0].source_ids in {("a1",), ("a4",)}
    for hit in hits:
        item = BY_ID[hit.source_ids[0]]
        assert (hit.text, hit.timestamp) == (item.text, item.metadata["timestamp"])
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    for query in ("pizza dough oven", "penguins sardines zoo", "billing Postgres"):
        assert {s for h in b.search("case.a", query, 20) for s in h.source_ids} <= {it.item_id for it in ITEMS_A}
        assert {s for h in b.search("case.b", query, 20) for s in h.source_ids} <= {it.item_id for it in ITEMS_B}
    assert b.search("never-used", "billing", 5) == [] and b.search("case.a", "billing", 0) == []


def test_langmem_reset_empties_only_its_namespace(tmp_path):
    b = store_backend(tmp_path)
    for ns, items in (("a", ITEMS_A), ("b", ITEMS_B)):
        b.reset(ns)
        b.add(ns, items)
    b.reset("a")
    assert b.search("a", "billing Postgres version", 10) == []
    assert b.search("b", "pizza dough oven", 10)
    b.add("a", ITEMS_A[:1])  # usable again after a reset
    assert [h.source_ids for h in b.search("a", "billing Postgres", 10)] == [("a1",)]


def test_langmem_store_is_deterministic_and_tells_identical_turns_apart_by_order(tmp_path):
    """Two backend objects given the same turns return the same hits and scores; two turns of
    the same text are both found, each under its own id, in the order they were added."""
    turns = [turn("t1", "ok, thanks"), turn("t2", "The cache lives in Redis 7."),
             turn("t3", "ok, thanks", "2026-03-03T10:00:00Z"), *ITEMS_A]
    runs = []
    for attempt in range(2):
        b = store_backend(tmp_path / str(attempt))
        b.reset("ns")
        b.add("ns", turns)
        runs.append([(h.source_ids, h.score, h.timestamp) for h in b.search("ns", "ok, thanks", 5)])
    assert runs[0] == runs[1]
    assert [r[0] for r in runs[0][:2]] == [("t1",), ("t3",)]
    assert runs[0][1][2] == "2026-03-03T10:00:00Z"


def test_langmem_settings_refuse_a_bad_value_naming_the_key_before_anything_starts():
    from backends.langmem import settings
    with pytest.raises(InputError, match=r"config: key 'backends\.langmem\.model' is 'bogus'"):
        settings({"model": "bogus"})
    with pytest.raises(InputError, match=r"config: key 'backends\.langmem\.query_limit' must be at least 1"):
        settings({"query_limit": 0})
    with pytest.raises(InputError, match=r"unknown key 'backends\.langmem\.facts'"):
        settings({"facts": True})


FACTS = {"Redis 7": "The cache lives in Redis 7", "Postgres 14": "Billing runs on Postgres 14",
         "Kafka": "The queue runs on Kafka"}


def langmem_reply(body: dict) -> str | None:
    """Canned tool calls for LangMem's extraction: a Memory per fact the turn states, none for
    small talk; a turn that moves billing to Postgres 16 patches the stored Postgres 14 memory
    (found by its id in the existing memories LangMem shows) instead of adding one."""
    fmt = body.get("response_format")
    if not fmt or fmt["json_schema"]["name"] != "tool_calls":
        return None
    prompt = "\n".join(m["content"] for m in body["messages"])
    said = re.search(r"<session_[^>]*>(.*)</session_", prompt, re.S).group(1)
    calls = []
    if "Postgres 16" in said:
        stored = re.search(r'<instance id=(\S+) schema_type="Memory">\s*\{[^\n]*Postgres 14', prompt)
        calls.append({"name": "PatchDoc", "arguments": {
            "json_doc_id": stored.group(1), "planned_edits": "replace the version",
            "patches": [{"op": "replace", "path": "/content", "value": "Billing runs on Postgres 16"}]}})
    calls += [{"name": "Memory", "arguments": {"content": fact}} for cue, fact in FACTS.items() if cue in said]
    return json.dumps({"tool_calls": calls})


def extract_backend(tmp_path):
    pytest.importorskip("langmem")
    pytest.importorskip("wordllama")
    return load_backend("langmem", backend_config(tmp_path, {"langmem": {"model": "wordllama", "extract": True,
                                                                         "embedding_cache": False}}))


def test_langmem_extract_memories_name_the_turns_whose_calls_wrote_them(tmp_path, endpoint):
    """LangMem's memory store manager, its calls answered by the test endpoint: one call per turn,
    to the pinned model through the project's client, tools asked for as JSON; a memory a turn
    inserts names that turn, one a later turn patches names both (timestamp the newest); small
    talk stores nothing; search calls no model; namespaces stay apart; reset empties."""
    endpoint.responder = langmem_reply
    b = extract_backend(tmp_path)
    assert b.name == "langmem (internal extractor: stub-model)" and b.internal_model == "stub-model"
    assert "memory store manager" in b.version and "one turn per call" in b.version
    b.reset("ns")
    b.add("ns", [turn("t1", "The cache lives in Redis 7."), turn("t2", "ok, thanks"),
                 turn("t3", "Billing runs on Postgres 14.", "2026-03-03T10:00:00Z")])
    b.add("ns", [turn("t4", "We moved billing to Postgres 16.", "2026-03-05T10:00:00Z")])
    b.reset("other")
    b.add("other", [turn("o1", "The queue runs on Kafka now.")])
    assert len(endpoint.bodies) == 5  # one call per turn
    assert {body["model"] for body in endpoint.bodies} == {"stub-model"}
    assert {body["response_format"]["json_schema"]["name"] for body in endpoint.bodies} == {"tool_calls"}
    calls = len(endpoint.bodies)
    hits = b.search("ns", "Where does billing run?", 5)
    assert sorted((h.text, h.source_ids, h.timestamp) for h in hits) == [
        ("Billing runs on Postgres 16", ("t3", "t4"), "2026-03-05T10:00:00Z"),
        ("The cache lives in Redis 7", ("t1",), "2026-03-02T10:00:00Z")]
    assert hits[0].text == "Billing runs on Postgres 16"
    assert [(h.text, h.source_ids) for h in b.search("other", "billing", 5)] == [("The queue runs on Kafka", ("o1",))]
    assert len(endpoint.bodies) == calls
    b.reset("ns")
    assert b.search("ns", "billing", 5) == []


def test_langmem_extract_sends_the_same_requests_again_so_a_rerun_is_answered_by_the_cache(tmp_path, endpoint):
    """LangMem names sessions and memories with random ids that reach its prompts; the adapter
    draws them by count, so a second object over the same turns (the same response cache) sends
    nothing and stores the same memories, named by the same turns."""
    endpoint.responder = langmem_reply
    turns = [turn("t1", "The cache lives in Redis 7."), turn("t3", "Billing runs on Postgres 14."),
             turn("t4", "We moved billing to Postgres 16.", "2026-03-05T10:00:00Z")]
    found = []
    for _ in range(2):
        b = extract_backend(tmp_path)  # the same tmp_path: the same response cache
        b.reset("ns")
        b.add("ns", turns)
        found.append([(h.text, h.source_ids) for h in b.search("ns", "billing", 5)])
    assert len(endpoint.bodies) == 3 and found[0] == found[1]
    assert ("Billing runs on Postgres 16", ("t3", "t4")) in found[0]


def test_langmem_extract_reply_without_tool_calls_fails_the_add(tmp_path, endpoint):
    """A reply that is not a tool-call object fails the add (trustcall would retry, then keep
    nothing), and so does a failed call."""
    endpoint.responder = langmem_reply
    b = extract_backend(tmp_path)
    b.reset("ns")
    endpoint.script = [{"content": "Sure! The user likes Redis."}]
    with pytest.raises(RuntimeError, match="langmem extractor reply is not a JSON object"):
        b.add("ns", [turn("t1", "The cache lives in Redis 7.")])
    b.add("ns", [turn("t1", "The cache lives in Redis 7.")])  # the next write is unaffected
    endpoint.script = [{"status": 400}]
    with pytest.raises(RuntimeError, match="langmem extractor call failed: bad_request"):
        b.add("ns", [turn("t3", "Billing runs on Postgres 14.")])
    assert [h.source_ids for h in b.search("ns", "cache", 5)] == [("t1",)]


def test_langmem_extract_refuses_to_start_without_an_endpoint_naming_llm_base_url(tmp_path, monkeypatch):
    """Without an endpoint run.py exits 2 naming LLM_BASE_URL, before any store starts or any
    turn is added."""
    pytest.importorskip("langmem")
    monkeypatch.delenv("LLM_BASE_URL", raising=False)
    monkeypatch.delenv("LLM_API_KEY", raising=False)
    out = tmp_path / "langmem_extract.jsonl"
    r = script("run.py", "--config", write_config(tmp_path), "--backend", "langmem_extract", "--retrieval-only",
               "--out", str(out))
    assert r.returncode == 2, r.stderr
    assert "backend 'langmem' with extract: true calls the answer model on every write" in r.stderr
    assert "LLM_BASE_URL" in r.stderr and "Traceback" not in r.stderr and not out.exists()
