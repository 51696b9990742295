"""http: a generic adapter for a memory service over REST (seed guide, section 4.2).

Everything service-specific is configuration (config.yaml, `backends: {http: {...}}`): the base
URL, the paths (with `{namespace}` filled in), the JSON field names, timeouts, and how flush
knows the service is ready:
  status    poll `status_path` until `ready_field` equals `ready_value`         (verified)
  sentinel  add a unique sentinel item, search until it comes back              (verified)
  delay     sleep `flush_delay_s`                   (an assumption, written into every record)
The auth token is read from the environment variable that `token_env` names, never from config.
Each item is sent with `source_ids: [item_id]` in its metadata, so a service that returns
metadata gives provenance; hits without it get empty source ids (recall becomes null).
"""
from __future__ import annotations

import os
import time
import uuid

from backends import check_settings, require
from interface import Hit, InputError, MemoryItem

SETTINGS = {
    "base_url": ((str,), None),
    "name": ((str,), "http"),
    "version": ((str,), "unknown"),
    "token_env": ((str, type(None)), None),
    "timeout_s": ((int, float), 30),
    "reset_method": ((str,), "DELETE"),
    "reset_path": ((str,), "/namespaces/{namespace}"),
    "add_path": ((str,), "/namespaces/{namespace}/items"),
    "search_path": ((str,), "/namespaces/{namespace}/search"),
    "status_path": ((str,), "/namespaces/{namespace}/status"),
    "items_field": ((str,), "items"),
    "id_field": ((str,), "id"),
    "text_field": ((str,), "text"),
    "metadata_field": ((str,), "metadata"),
    "query_field": ((str,), "query"),
    "k_field": ((str,), "k"),
    "results_field": ((str,), "results"),
    "hit_text_field": ((str,), "text"),
    "hit_score_field": ((str,), "score"),
    "hit_source_ids_field": ((str,), "metadata.source_ids"),
    "hit_timestamp_field": ((str,), "metadata.timestamp"),
    "flush": ((str,), "status"),
    "ready_field": ((str,), "state"),
    "ready_value": ((str, int, bool), "ready"),
    "poll_interval_s": ((int, float), 0.2),
    "flush_delay_s": ((int, float), 0),
}
FLUSH_MODES = ("status", "sentinel", "delay")


def dig(obj, dotted: str):
    """obj['a']['b'] for 'a.b'; None when any step is missing (optional response fields)."""
    for part in dotted.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


class HttpBackend:
    """A memory service behind REST calls, configured entirely by SETTINGS."""

    def __init__(self, s: dict) -> None:
        self.requests = require("requests", "http")
        self.s = s
        self.name = s["name"]
        self.version = s["version"]
        self.internal_model = None
        self.flush_note = (f"flush waits a fixed {s['flush_delay_s']} s: readiness is assumed, not verified"
                           if s["flush"] == "delay" else None)
        self.session = self.requests.Session()
        if s["token_env"]:
            token = os.environ.get(s["token_env"])
            if not token:
                raise InputError(f"backend http: environment variable {s['token_env']} (named by "
                                 f"backends.http.token_env) is not set")
            self.session.headers["Authorization"] = f"Bearer {token}"
        self._sentinels: dict[str, str] = {}

    def _url(self, key: str, namespace: str) -> str:
        return self.s["base_url"].rstrip("/") + self.s[key].format(namespace=namespace)

    def _call(self, method: str, key: str, namespace: str, body: dict | None = None):
        r = self.session.request(method, self._url(key, namespace), json=body, timeout=self.s["timeout_s"])
        if r.status_code >= 400 and not (key == "reset_path" and r.status_code == 404):
            # The response text, not the request: the request headers hold the token.
            raise RuntimeError(f"{method} {self.s[key]} -> HTTP {r.status_code}: {r.text[:200]}")
        return r

    def reset(self, namespace: str) -> None:
        self._call(self.s["reset_method"], "reset_path", namespace)
        self._sentinels.pop(namespace, None)

    def _send(self, namespace: str, items: list[MemoryItem]) -> None:
        s = self.s
        payload = [{s["id_field"]: it.item_id, s["text_field"]: it.text,
                    s["metadata_field"]: {**it.metadata, "source_ids": [it.item_id]}} for it in items]
        self._call("POST", "add_path", namespace, {s["items_field"]: payload})

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        self._send(namespace, items)

    def flush(self, namespace: str, timeout_s: float) -> None:
        """Wait until what was added is searchable, or raise TimeoutError."""
        mode = self.s["flush"]
        if mode == "delay":
            time.sleep(self.s["flush_delay_s"])
            return
        if mode == "sentinel":
            marker = f"memory-bench-sentinel-{uuid.uuid4().hex}"
            self._sentinels[namespace] = marker
            self._send(namespace, [MemoryItem(item_id=marker, text=marker, metadata={})])
        deadline = time.monotonic() + timeout_s
        while True:
            if mode == "status":
                ready = dig(self._call("GET", "status_path", namespace).json(), self.s["ready_field"])
                if ready == self.s["ready_value"]:
                    return
            elif any(self._sentinels[namespace] in h[0] for h in self._raw_search(namespace, self._sentinels[namespace], 1)):
                return
            if time.monotonic() >= deadline:
                raise TimeoutError(f"{self.name}: namespace {namespace} not ready after {timeout_s} s ({mode})")
            time.sleep(self.s["poll_interval_s"])

    def _raw_search(self, namespace: str, query: str, k: int) -> list[tuple]:
        s = self.s
        body = self._call("POST", "search_path", namespace, {s["query_field"]: query, s["k_field"]: k}).json()
        results = dig(body, s["results_field"])
        if not isinstance(results, list):
            raise RuntimeError(f"search response has no list at '{s['results_field']}'")
        out = []
        for h in results:
            text = dig(h, s["hit_text_field"])
            if not isinstance(text, str):
                raise RuntimeError(f"search hit has no text at '{s['hit_text_field']}'")
            score = dig(h, s["hit_score_field"])
            ids = dig(h, s["hit_source_ids_field"])
            stamp = dig(h, s["hit_timestamp_field"])
            out.append((text, float(score) if isinstance(score, (int, float)) else 0.0,
                        tuple(ids) if isinstance(ids, list) and all(isinstance(i, str) for i in ids) else (),
                        stamp if isinstance(stamp, str) else ""))
        return out

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        marker = self._sentinels.get(namespace)
        # Ask for one more when a sentinel may take a slot, then drop it: it is not memory.
        raw = self._raw_search(namespace, query, k + 1 if marker else k)
        hits = [Hit(text=t, score=sc, source_ids=ids, timestamp=ts) for t, sc, ids, ts in raw
                if not (marker and marker in t)]
        return hits[:k]


def create(settings: dict, config: dict) -> HttpBackend:
    """An HTTP backend from its config section; base_url is required."""
    s = check_settings(settings, SETTINGS, "http")
    if not s["base_url"]:
        raise InputError("config: backends.http needs 'base_url'")
    if s["flush"] not in FLUSH_MODES:
        raise InputError(f"config: key 'backends.http.flush' is {s['flush']!r}; expected one of {', '.join(FLUSH_MODES)}")
    return HttpBackend(s)
