"""A small real HTTP memory service for the http adapter's tests, on 127.0.0.1.

Like many hosted memory services it indexes asynchronously: added items become searchable only
`index_delay_s` after they arrive, and GET .../status says "indexing" until then. So a flush that
does not really wait finds nothing, and a test catches it. Search is token overlap, and item
metadata is echoed back in hits. Requests must carry `Authorization: Bearer <token>` when a
token is set.

With `leaky=True` it is a broken store, for check.py's leakage check to catch: search looks in
every namespace and a reset empties nothing, so a case's search finds other cases' turns.

With `claim_all=TEXT_OF`, a store that claims what it did not return, for check.py's provenance
check to catch: search returns one hit, TEXT_OF(the namespace's stored texts), naming every item
of the namespace in its source_ids, whatever the query. `lambda texts: "Noted."` scores recall
1.00 with a hit that holds none of them; `" ".join` is one chunk that holds them all.
"""
from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

ROUTE = re.compile(r"^/namespaces/([^/]+)(/items|/search|/status)?$")


class MemoryService:
    """Start with .start(); .url is the base URL."""

    def __init__(self, index_delay_s: float = 0.5, token: str | None = None, leaky: bool = False,
                 claim_all: Callable[[list[str]], str] | None = None) -> None:
        self.index_delay_s = index_delay_s
        self.token = token
        self.leaky = leaky
        self.claim_all = claim_all
        self.pending: dict[str, list[tuple[float, dict]]] = {}
        self.indexed: dict[str, list[dict]] = {}
        self.lock = threading.Lock()
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _send(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _route(self):
                if service.token and self.headers.get("Authorization") != f"Bearer {service.token}":
                    self._send(401, {"error": "unauthorized"})
                    return None
                m = ROUTE.match(self.path)
                if not m:
                    self._send(404, {"error": "no such route"})
                    return None
                return unquote(m.group(1)), m.group(2)

            def _body(self) -> dict:
                n = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(n)) if n else {}

            def do_DELETE(self) -> None:
                route = self._route()
                if route and not service.leaky:
                    with service.lock:
                        service.pending.pop(route[0], None)
                        service.indexed.pop(route[0], None)
                if route:
                    self._send(200, {"deleted": route[0]})

            def do_GET(self) -> None:
                route = self._route()
                if route and route[1] == "/status":
                    service._promote(route[0])
                    with service.lock:
                        busy = bool(service.pending.get(route[0]))
                    self._send(200, {"state": "indexing" if busy else "ready"})
                elif route:
                    self._send(404, {"error": "no such route"})

            def do_POST(self) -> None:
                route = self._route()
                if not route:
                    return
                ns, action = route
                body = self._body()
                if action == "/items":
                    due = time.monotonic() + service.index_delay_s
                    with service.lock:
                        service.pending.setdefault(ns, []).extend((due, it) for it in body["items"])
                    self._send(202, {"accepted": len(body["items"])})
                elif action == "/search":
                    service._promote(ns)
                    self._send(200, {"results": service._search(ns, body["query"], int(body["k"]))})
                else:
                    self._send(404, {"error": "no such route"})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def _promote(self, ns: str) -> None:
        """Move items whose indexing delay has passed into the searchable index."""
        now = time.monotonic()
        with self.lock:
            waiting = self.pending.get(ns, [])
            ready = [it for due, it in waiting if due <= now]
            self.pending[ns] = [(due, it) for due, it in waiting if due > now]
            self.indexed.setdefault(ns, []).extend(ready)

    def _search(self, ns: str, query: str, k: int) -> list[dict]:
        q = set(re.findall(r"\w+", query.lower()))
        with self.lock:
            spaces = list(self.pending) if self.leaky else [ns]
        for space in spaces:
            self._promote(space)
        with self.lock:
            items = [it for space in spaces for it in self.indexed.get(space, [])]
        stored = [it for it in items if it["metadata"].get("source_ids")]  # not a flush sentinel
        if self.claim_all is not None and stored and k > 0:
            return [{"text": self.claim_all([it["text"] for it in stored]), "score": 1.0,
                     "metadata": {"source_ids": [t for it in stored for t in it["metadata"]["source_ids"]],
                                  "timestamp": stored[-1]["metadata"].get("timestamp", "")}}]
        scored = []
        for i, it in enumerate(items):
            overlap = len(q & set(re.findall(r"\w+", it["text"].lower())))
            if overlap:
                scored.append((-overlap, i, it))
        scored.sort(key=lambda x: x[:2])
        return [{"text": it["text"], "score": -neg, "metadata": it["metadata"]} for neg, _, it in scored[:k]]

    def start(self) -> "MemoryService":
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
