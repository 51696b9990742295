"""supermemory: Supermemory's hosted memory API over REST, as its official SDKs call it.

Supermemory runs as a service only: there is no server to run on this machine, so this backend
needs its API (https://api.supermemory.ai, or a self-hosted instance's URL) and a key, and it is
not run in this repository's figures. The calls are those of the official Python SDK
(`supermemory` 5.0.1 on PyPI, generated from the API definition), every path under a namespace:

  reset   DELETE /ns/{namespace}                       the namespace's documents and memories
                                                        (404: nothing was there)
  add     POST   /ns/{namespace}/document/batch        {documents: [{id, content, metadata, date}],
                                                        taskType}, at most 600 per call
  flush   GET    /ns/{namespace}/document/{id}         until each document's system.status is
                                                        `done` (and, when memories are built,
                                                        dreamingStatus too); `failed` fails it
  search  POST   /ns/{namespace}/search                {query, searchMode, limit, threshold 0,
                                                        include.documents, rewriteQuery false}

Each turn is one document whose id is the turn's id, its metadata `{item_id, session_id,
timestamp, role}` and its date the turn's timestamp. A result is a learned memory (`memory`) or a
source passage (`chunk`); either names its turn through the source document the search includes
(`included.document.id`), else through the metadata Supermemory copies to derived data
(`metadata.item_id`); a result naming neither, or a turn this object did not add, has no
provenance (the question's recall is null). The score is Supermemory's `similarity`.
With `task_type: memory` (its default pipeline) Supermemory's own hosted model extracts memories
from the documents: the backend discloses it as its internal model, whose calls this harness
cannot count. `superrag` builds no memories (retrieval over the documents only).
Query rewriting and reranking, which call its model at search time, are left off.

The namespace is sent as "mb-" and 32 hex digits of its sha256, a name any service accepts.
The key comes from the environment variable `token_env` names (SUPERMEMORY_API_KEY by default),
never from config, and is scrubbed from every error. Each call is bounded whole by `timeout_s`.

Settings:
  base_url: the API's address (default https://api.supermemory.ai); base_url_env: a variable
    that holds it instead (read when the backend starts)
  token_env: the variable that holds the API key (default SUPERMEMORY_API_KEY)
  task_type: memory | superrag (default memory); search_mode: hybrid | memories | chunks
    (default hybrid: memories and chunks)
  batch: documents per add call, 1 to 600 (default 100)
  timeout_s: each call, whole (default 60); poll_interval_s: between flush polls (default 1)
"""
from __future__ import annotations

import json
import os
import threading
import time
from urllib.parse import quote

from backends import check_settings, store_name
from cli import InputError
from contract import Hit, MemoryItem
from fileio import loads

NONE = type(None)
SETTINGS = {
    "base_url": ((str,), "https://api.supermemory.ai"),
    "base_url_env": ((str, NONE), None),
    "token_env": ((str,), "SUPERMEMORY_API_KEY"),
    "task_type": ((str,), "memory"),
    "search_mode": ((str,), "hybrid"),
    "batch": ((int,), 100),
    "timeout_s": ((int, float), 60),
    "poll_interval_s": ((int, float), 1.0),
}
CHOICES = {"task_type": ("memory", "superrag"), "search_mode": ("hybrid", "memories", "chunks")}
MAX_BATCH = 600  # the API's limit on documents per batch call
MAX_REPLY_BYTES = 64 * 2**20


class SupermemoryBackend:
    """Supermemory's API: one Supermemory namespace per harness namespace, one document per turn."""
    name = "supermemory"

    def __init__(self, s: dict, token: str) -> None:
        import llm  # the bounded exchange, pools and scrubbing of the model client
        self._llm, self.s, self._token = llm, s, token
        self.base_url = s["base_url"].rstrip("/")
        self._manager = llm.pool_manager(self.base_url, 8, setting="backends.supermemory.base_url")
        self._headers = {"Content-Type": "application/json", "Accept": "application/json",
                         "User-Agent": "memory-bench", "Authorization": f"Bearer {token}"}
        self._lock = threading.Lock()  # guards the two maps; calls run concurrently
        self._added: dict[str, dict[str, str]] = {}  # namespace -> item id -> timestamp
        self._pending: dict[str, list[str]] = {}  # namespace -> documents not yet seen done
        if s["task_type"] == "memory":
            self.internal_model = "Supermemory's hosted memory extraction"
        self.version = (f"Supermemory API as the supermemory 5.0.1 SDK calls it (taskType {s['task_type']}, "
                        f"searchMode {s['search_mode']}, no query rewriting, no rerank; a document per turn)")

    def _call(self, method: str, path: str, body: dict | None = None, missing_ok: bool = False):
        """One call: the reply's JSON (None for an empty body, or a 404 when missing_ok). A failure
        is a RuntimeError naming the call, the key scrubbed from it."""
        data = None if body is None else json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
        try:
            status, _, reply = self._llm.exchange(self._manager, method, self.base_url + path, data, self._headers,
                                                  self.s["timeout_s"], MAX_REPLY_BYTES)
        except self._llm.ReplyTooLarge as e:
            raise RuntimeError(f"{method} {path}: {e}") from None
        except OSError as e:  # TimeoutError and ConnectionError
            raise RuntimeError(f"{method} {path}: {self._scrub(str(e))}") from None
        if status == 404 and missing_ok:
            return None
        if status >= 300:
            raise RuntimeError(f"{method} {path} -> HTTP {status}: "
                               f"{self._scrub(reply.decode('utf-8', errors='replace'))}")
        try:
            return loads(reply) if reply.strip() else None
        except ValueError as e:
            raise RuntimeError(f"{method} {path} -> HTTP {status}, not JSON ({e})") from None

    def _scrub(self, text: str) -> str:
        return self._llm.scrub(text, self._token, 200)

    def _path(self, namespace: str, rest: str = "") -> str:
        return f"/ns/{quote(store_name('mb-', namespace), safe='')}{rest}"

    def reset(self, namespace: str) -> None:
        self._call("DELETE", self._path(namespace), missing_ok=True)
        with self._lock:
            self._added[namespace], self._pending[namespace] = {}, []

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        for start in range(0, len(items), self.s["batch"]):
            chunk = items[start:start + self.s["batch"]]
            docs = [{"id": it.item_id, "content": it.text, "date": it.metadata["timestamp"],
                     "metadata": {"item_id": it.item_id, "session_id": it.metadata["session_id"],
                                  "timestamp": it.metadata["timestamp"], "role": it.metadata["role"]}}
                    for it in chunk]
            reply = self._call("POST", self._path(namespace, "/document/batch"),
                               {"documents": docs, "taskType": self.s["task_type"]})
            results = reply.get("results") if isinstance(reply, dict) else None
            if not isinstance(results, list):
                raise RuntimeError("POST /document/batch: the reply has no list at 'results'")
            failed = [r for r in results if not isinstance(r, dict) or r.get("status") in ("error", "failed")]
            if failed or len(results) != len(docs):
                first = failed[0] if failed else {}
                raise RuntimeError(f"POST /document/batch: {len(failed) or len(docs) - len(results)} of {len(docs)} "
                                   f"documents not accepted (first: {self._scrub(json.dumps(first))})")
            with self._lock:
                added = self._added.setdefault(namespace, {})
                added.update((it.item_id, it.metadata["timestamp"]) for it in chunk)
                self._pending.setdefault(namespace, []).extend(it.item_id for it in chunk)

    def _done(self, namespace: str, doc_id: str) -> bool:
        """Whether a document is processed; a failed one raises."""
        doc = self._call("GET", self._path(namespace, f"/document/{quote(doc_id, safe='')}"))
        system = doc.get("system") if isinstance(doc, dict) else None
        if not isinstance(system, dict) or "status" not in system:
            raise RuntimeError(f"GET /document/{doc_id}: the reply has no 'system.status'")
        if system["status"] == "failed":
            raise RuntimeError(f"supermemory: document {doc_id} failed processing")
        dreaming_done = self.s["task_type"] != "memory" or system.get("dreamingStatus", "done") == "done"
        return system["status"] == "done" and dreaming_done

    def flush(self, namespace: str, timeout_s: float) -> None:
        """Wait until every document added is processed (verified per document), or raise
        TimeoutError. A document seen done is not asked again."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            pending = list(self._pending.get(namespace, []))
        while pending:
            while pending and self._done(namespace, pending[0]):
                pending.pop(0)
            with self._lock:
                self._pending[namespace] = list(pending)
            if not pending:
                return
            if time.monotonic() >= deadline:
                raise TimeoutError(f"supermemory: {len(pending)} documents of namespace {namespace} not processed "
                                   f"after {timeout_s} s")
            time.sleep(self.s["poll_interval_s"])

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        if k < 1:
            return []
        reply = self._call("POST", self._path(namespace, "/search"),
                           {"query": query, "searchMode": self.s["search_mode"], "limit": k, "threshold": 0,
                            "include": {"documents": True}, "rewriteQuery": False})
        results = reply.get("results") if isinstance(reply, dict) else None
        if not isinstance(results, list):
            raise RuntimeError("POST /search: the reply has no list at 'results'")
        with self._lock:
            added = dict(self._added.get(namespace, {}))
        hits = []
        for r in results[:k]:
            text = r.get("memory") or r.get("chunk")  # a result is one or the other
            if not isinstance(text, str):
                raise RuntimeError("POST /search: a result has neither 'memory' nor 'chunk' text")
            turn = _turn_of(r, added)
            score = r.get("similarity")
            hits.append(Hit(text=text, score=float(score) if isinstance(score, (int, float)) else 0.0,
                            source_ids=(turn,) if turn else (), timestamp=added.get(turn, "")))
        return hits


def _turn_of(result: dict, added: dict) -> str | None:
    """The turn a result came from: its source document's id, else the item id its metadata
    carries, when that is a turn this object added; else None."""
    document = (result.get("included") or {}).get("document") or {}  # included only when asked and available
    metadata = result.get("metadata") or {}
    for candidate in (document.get("id"), metadata.get("item_id")):
        if isinstance(candidate, str) and candidate in added:
            return candidate
    return None


def settings(section: dict) -> dict:
    """The section checked, defaults filled."""
    s = check_settings(section, SETTINGS, "supermemory")
    for key, choices in CHOICES.items():
        if s[key] not in choices:
            raise InputError(f"config: key 'backends.supermemory.{key}' is {s[key]!r}; expected one of "
                             f"{', '.join(choices)}")
    if not 1 <= s["batch"] <= MAX_BATCH:
        raise InputError(f"config: key 'backends.supermemory.batch' must be 1 to {MAX_BATCH}, not {s['batch']}")
    if s["timeout_s"] <= 0 or s["poll_interval_s"] < 0:
        raise InputError("config: backends.supermemory.timeout_s must be positive and poll_interval_s not negative")
    return s


def create(section: dict, config: dict) -> SupermemoryBackend:
    """Supermemory's API at base_url (or base_url_env's value), with the key token_env names."""
    s = settings(section)
    if s["base_url_env"]:
        if not os.environ.get(s["base_url_env"]):
            raise InputError(f"backend supermemory: environment variable {s['base_url_env']} (named by "
                             f"backends.supermemory.base_url_env) is not set")
        s["base_url"] = os.environ[s["base_url_env"]]
    token = os.environ.get(s["token_env"])
    if not token:
        raise InputError(f"backend supermemory needs an API key: set {s['token_env']} (named by "
                         f"backends.supermemory.token_env); Supermemory runs as a hosted service only")
    return SupermemoryBackend(s, token)
