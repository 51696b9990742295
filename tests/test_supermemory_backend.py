"""Supermemory (backends/supermemory.py) against a local stand-in of its API: the calls the
official SDK makes (namespace delete, document batch, document status, search), answered on
127.0.0.1 by a word-overlap store that processes a document only after it has been polled, so
flush must wait. Hits name their turns, namespaces stay apart, reset empties one, the key is
sent and never written into an error."""
from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from backends import load_backend
from cli import InputError
from conftest import backend_config
from contract import MemoryItem

KEY = "sm-test-SECRET-4d1e"


class StandIn:
    """Supermemory's API as the SDK calls it, in memory: namespace -> document id -> document.
    A document is `queued` until its status has been asked `polls_to_done` times; search sees
    only documents that are done. `fail` names document ids that end `failed`."""

    def __init__(self, polls_to_done: int = 1) -> None:
        self.docs: dict[str, dict[str, dict]] = {}
        self.polls: dict[tuple, int] = {}
        self.polls_to_done, self.fail = polls_to_done, set()
        self.auth: list[str] = []
        self.batches: list[dict] = []
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _reply(self, status: int, body) -> None:
                out = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def _body(self) -> dict:
                return json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")

            def do_DELETE(self) -> None:
                standin.auth.append(self.headers.get("Authorization"))
                ns = re.fullmatch(r"/ns/([^/]+)", self.path).group(1)
                gone = standin.docs.pop(ns, None)
                if gone is None:
                    return self._reply(404, {"error": "namespace not found"})
                self._reply(200, {"status": "deleted", "namespace": ns, "deletedDocumentsCount": len(gone),
                                  "deletedMemoriesCount": 0})

            def do_POST(self) -> None:
                standin.auth.append(self.headers.get("Authorization"))
                if self.headers.get("Authorization") != f"Bearer {KEY}":
                    return self._reply(401, {"error": f"bad key {self.headers.get('Authorization')}"})
                ns, action = re.fullmatch(r"/ns/([^/]+)/(document/batch|search)", self.path).groups()
                body = self._body()
                if action == "document/batch":
                    standin.batches.append(body)
                    store = standin.docs.setdefault(ns, {})
                    for d in body["documents"]:
                        store[d["id"]] = {**d, "status": "queued"}
                    return self._reply(200, {"results": [{"id": d["id"], "status": "queued"} for d in body["documents"]],
                                             "count": len(body["documents"]), "failed": 0})
                words = set(re.findall(r"\w+", body["query"].lower()))
                scored = []
                for d in standin.docs.get(ns, {}).values():
                    if d["status"] == "done":
                        overlap = len(words & set(re.findall(r"\w+", d["content"].lower())))
                        if overlap:
                            scored.append((overlap / len(words), d))
                scored.sort(key=lambda p: -p[0])
                self._reply(200, {"searchTime": 1.0, "results": [
                    {"id": f"chunk-{d['id']}", "chunk": d["content"], "metadata": d["metadata"], "similarity": s,
                     "isLatest": True, "isInference": False, "system": {"updatedAt": d["date"]},
                     "included": {"document": {"id": d["id"], "metadata": d["metadata"],
                                               "system": {"createdAt": d["date"]}}}}
                    for s, d in scored[:body["limit"]]]})

            def do_GET(self) -> None:
                ns, doc_id = re.fullmatch(r"/ns/([^/]+)/document/([^/]+)", self.path).groups()
                d = standin.docs[ns][doc_id]
                key = (ns, doc_id)
                standin.polls[key] = standin.polls.get(key, 0) + 1
                if standin.polls[key] >= standin.polls_to_done:
                    d["status"] = "failed" if doc_id in standin.fail else "done"
                self._reply(200, {"id": doc_id, "content": d["content"], "metadata": d["metadata"],
                                  "system": {"status": d["status"], "dreamingStatus": "done"}})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def turn(item_id: str, text: str, stamp: str = "2026-03-02T10:00:00Z") -> MemoryItem:
    return MemoryItem(item_id=item_id, text=f"user: {text}",
                      metadata={"session_id": "s1", "timestamp": stamp, "role": "user"})


@pytest.fixture
def standin():
    s = StandIn(polls_to_done=2)
    yield s
    s.stop()


def backend(tmp_path, monkeypatch, standin, **section):
    monkeypatch.setenv("SUPERMEMORY_API_KEY", KEY)
    return load_backend("supermemory", backend_config(tmp_path, {"supermemory": {
        "base_url": standin.url, "poll_interval_s": 0, **section}}))


def test_supermemory_hits_name_their_turns_namespaces_stay_apart_and_reset_empties(tmp_path, monkeypatch, standin):
    b = backend(tmp_path, monkeypatch, standin, batch=2)
    assert b.internal_model == "Supermemory's hosted memory extraction" and "taskType memory" in b.version
    for ns in ("ns", "other"):
        b.reset(ns)
    b.add("ns", [turn("t1", "We moved billing to Postgres 16 last week."),
                 turn("t2", "The cache lives in Redis 7.", "2026-03-03T10:00:00Z"),
                 turn("t3", "My sister adopted a grey cat named Pixel.")])
    b.add("other", [turn("o1", "The cache lives in Memcached on the old cluster.")])
    assert [len(x["documents"]) for x in standin.batches] == [2, 1, 1]
    assert b.search("ns", "Where does the cache live?", 3) == []  # nothing processed before flush
    b.flush("ns", 10)
    b.flush("other", 10)
    hits = b.search("ns", "Where does the cache live?", 3)
    assert hits[0].source_ids == ("t2",) and hits[0].text == "user: The cache lives in Redis 7."
    assert hits[0].timestamp == "2026-03-03T10:00:00Z" and 0 < hits[0].score <= 1
    assert all(h.source_ids in {("t1",), ("t2",), ("t3",)} for h in hits)
    assert [h.source_ids for h in b.search("other", "Where does the cache live?", 5)] == [("o1",)]
    assert b.search("ns", "cache", 0) == []
    b.reset("ns")
    assert b.search("ns", "cache", 5) == []
    assert [h.source_ids for h in b.search("other", "cache", 5)] == [("o1",)]
    assert set(standin.auth) == {f"Bearer {KEY}"}
    body = standin.batches[0]
    assert body["taskType"] == "memory" and body["documents"][0]["metadata"]["item_id"] == "t1"


def test_supermemory_a_result_from_a_turn_it_did_not_add_has_no_provenance(tmp_path, monkeypatch, standin):
    b = backend(tmp_path, monkeypatch, standin)
    b.reset("ns")
    b.add("ns", [turn("t1", "The cache lives in Redis 7.")])
    b.flush("ns", 10)
    standin.docs[next(iter(standin.docs))]["x9"] = {"id": "x9", "content": "the cache is elsewhere", "status": "done",
                                                    "date": "", "metadata": {"item_id": "x9"}}
    hits = b.search("ns", "the cache", 5)
    assert sorted(h.source_ids for h in hits) == [(), ("t1",)]


def test_supermemory_flush_fails_on_a_failed_document_and_times_out(tmp_path, monkeypatch, standin):
    b = backend(tmp_path, monkeypatch, standin)
    b.reset("ns")
    standin.fail.add("t1")
    b.add("ns", [turn("t1", "The cache lives in Redis 7.")])
    with pytest.raises(RuntimeError, match="document t1 failed processing"):
        b.flush("ns", 10)
    slow = StandIn(polls_to_done=10**6)
    try:
        b = backend(tmp_path, monkeypatch, slow)
        b.reset("ns")
        b.add("ns", [turn("t1", "The cache lives in Redis 7.")])
        with pytest.raises(TimeoutError, match="1 documents of namespace ns not processed"):
            b.flush("ns", 0.05)
    finally:
        slow.stop()


def test_supermemory_a_refused_key_is_an_error_without_the_key(tmp_path, monkeypatch, standin):
    b = backend(tmp_path, monkeypatch, standin)
    b._headers["Authorization"] = "Bearer wrong"  # the service echoes the key it was given
    b._token = "wrong"
    with pytest.raises(RuntimeError, match="HTTP 401") as e:
        b.add("ns", [turn("t1", "x")])
    assert "wrong" not in str(e.value)


def test_supermemory_without_a_key_exits_before_any_call(tmp_path, monkeypatch):
    monkeypatch.delenv("SUPERMEMORY_API_KEY", raising=False)
    with pytest.raises(InputError, match="set SUPERMEMORY_API_KEY"):
        load_backend("supermemory", backend_config(tmp_path, {"supermemory": {}}))
    with pytest.raises(InputError, match="'backends.supermemory.batch' must be 1 to 600"):
        load_backend("supermemory", backend_config(tmp_path, {"supermemory": {"batch": 601}}))
