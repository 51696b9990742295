"""mcp: any memory server that speaks the Model Context Protocol, configured, not coded.

The adapter is an MCP client (the official `mcp` SDK): it calls the server's own tools to store
turns, to search and to forget, and reads each search result into hits. Everything
server-specific is configuration (config.yaml, a section with `adapter: mcp`); the preset
`mcp_server_memory` (the protocol's reference knowledge-graph server, over stdio) is the proof
that it drives a real server. The settings, by concern:

  identity   name; version (what the server is); the server's own name and version from its
             initialize reply are appended
  transport  stdio: `command` (a list: the program and its arguments, run from the repository
             root), `env` (added to the SDK's default environment, HOME, PATH, USER and a few more:
             a server inherits nothing else of the harness's, LLM_API_KEY included; values may
             hold `{workdir}`, a temporary folder the adapter makes per server and removes when
             it stops it) and `secret_env` (names of variables passed on to the server whose
             values are scrubbed from every message: a server that echoes its environment must
             not write a key into a record)
             | streamable_http: `url`, or `url_env` (a variable that holds it); `token_env`
             names a variable holding a bearer token (never the token itself)
  servers    fresh_server_per_namespace: false (one server for every namespace: the server
             keeps them apart, through `{namespace}` in the arguments, and reset calls
             `reset_tool`) | true (stdio only: a server per namespace, started at its first add,
             stopped and its workdir removed at reset; for servers with no delete tool)
  bounds     call_timeout_s bounds each tool call, start_timeout_s the start and initialize;
             UNREACHED_TO_STOP calls in a row that time out or find the server gone raise
             cli.ServiceDown (the run stops, resumable), as backends/http.py does
  add        add_tool; add_batch items per call; add_arguments, a JSON template per call in
             which the string "{items}" becomes the list of add_item renderings (one per item)
             and, with add_batch 1, the item's own placeholders are also available
  search     search_tool, search_arguments ({query}, {k}, {namespace})
  reset      reset_tool (null: nothing to delete, only with fresh_server_per_namespace),
             reset_arguments ({namespace}, {ids}: the item ids this adapter stored there)
  results    results_from: structured (the result's structuredContent) | json_text (its text
             content parsed as JSON) | text (each text block is one hit); results_path, a
             dotted path to the list of result items ('' the value itself); hit_text_path (a
             list of strings is joined by newlines), hit_score_path (null: 1/rank, the server's
             order), hit_ids_path (a string or a list of strings), hit_timestamp_path

Placeholders: `{id}`, `{text}`, `{session_id}`, `{timestamp}`, `{role}` (an item), `{items}`,
`{namespace}`, `{query}`, `{k}`, `{ids}`. A string that is exactly one placeholder becomes its
value with its type (a list, a number); inside a longer string it is written as text.

Provenance, in this order: the ids at hit_ids_path, when the server returns them (kept only if
the adapter stored them in this namespace; an id it did not store is kept too, so that check.py's
leakage check sees it); else the stored turns of the namespace whose text the hit repeats:
equal after NFKC, case folding and collapsed whitespace, or contained whole in the hit's text
(at most MAX_TEXT_SOURCES turns, else none: a hit that quotes many turns names none of them);
else, by the same rule, a turn this object stored in another namespace (a server that mixes
namespaces, or keeps one after reset, is then caught by check.py's leakage check);
else no source ids, and the question's recall is null. Which rule gave each hit's ids is counted
in `provenance_counts`, and the rule in force is in the backend's version, which run.py writes
into every record.
"""
from __future__ import annotations

import asyncio
import atexit
import os
import re
import shlex
import shutil
import tempfile
import threading
import unicodedata
import weakref
from concurrent.futures import TimeoutError as FutureTimeout

from backends import ROOT, check_settings, dig, require
from cli import InputError, ServiceDown
from contract import Hit, MemoryItem

NONE = type(None)
# The presets' npm servers: a changed lock file is a changed system (backends.code_sha256).
CODE_FILES = ("backends/npm/package-lock.json",)
# The JSON-RPC error code of a connection that closed (mcp_types.CONNECTION_CLOSED, the MCP
# spec's implementation-defined -32000).
CONNECTION_CLOSED = -32000
# Calls in a row that timed out or found the server gone before a run stops: a server that hangs
# would otherwise cost every case and question its timeout.
UNREACHED_TO_STOP = 3
# A hit that repeats more stored turns than this names none: it is a digest, not a quotation.
MAX_TEXT_SOURCES = 3
# How long stopping one server may take: the SDK closes its stdin, waits 2 s, then TERMs its
# process group and KILLs it 2 s later.
CLOSE_GRACE_S = 15
# Lines of a stdio server's stderr quoted in an error about it.
STDERR_LINES = 8
SETTINGS = {
    "name": ((str,), "mcp"),
    "version": ((str,), "unknown"),
    "transport": ((str,), "stdio"),
    "command": ((list, NONE), None),
    "env": ((dict,), {}),
    "secret_env": ((list,), []),
    "url": ((str, NONE), None),
    "url_env": ((str, NONE), None),
    "token_env": ((str, NONE), None),
    "fresh_server_per_namespace": ((bool,), False),
    "call_timeout_s": ((int, float), 30),
    "start_timeout_s": ((int, float), 60),
    "add_tool": ((str,), "add"),
    "add_batch": ((int,), 1),
    "add_arguments": ((dict,), {"namespace": "{namespace}", "id": "{id}", "text": "{text}"}),
    "add_item": ((dict, str), {"id": "{id}", "text": "{text}"}),
    "search_tool": ((str,), "search"),
    "search_arguments": ((dict,), {"namespace": "{namespace}", "query": "{query}", "k": "{k}"}),
    "reset_tool": ((str, NONE), "reset"),
    "reset_arguments": ((dict,), {"namespace": "{namespace}"}),
    "results_from": ((str,), "structured"),
    "results_path": ((str,), "results"),
    "hit_text_path": ((str,), "text"),
    "hit_score_path": ((str, NONE), "score"),
    "hit_ids_path": ((str, NONE), None),
    "hit_timestamp_path": ((str, NONE), None),
}
CHOICES = {"transport": ("stdio", "streamable_http"), "results_from": ("structured", "json_text", "text")}
PLACEHOLDER = re.compile(r"\{(\w+)\}")
ITEM_KEYS = ("id", "text", "session_id", "timestamp", "role")
KNOWN = {"add_arguments": {"namespace", "items", *ITEM_KEYS}, "add_item": {"namespace", *ITEM_KEYS},
         "search_arguments": {"namespace", "query", "k"}, "reset_arguments": {"namespace", "ids"},
         "env": {"workdir"}}


def render(template, values: dict):
    """A copy of a JSON template with its placeholders filled: a string that is exactly
    `{name}` becomes the value itself (a list stays a list, k a number), one inside a longer
    string is written as text."""
    if isinstance(template, str):
        whole = PLACEHOLDER.fullmatch(template)
        if whole:
            return values[whole.group(1)]
        return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)
    if isinstance(template, dict):
        return {k: render(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [render(v, values) for v in template]
    return template  # numbers, booleans, null: immutable


def placeholders(template) -> set[str]:
    """Every placeholder name a JSON template uses."""
    if isinstance(template, str):
        return set(PLACEHOLDER.findall(template))
    if isinstance(template, dict):
        return set().union(*(placeholders(v) for v in template.values())) if template else set()
    if isinstance(template, list):
        return set().union(*(placeholders(v) for v in template)) if template else set()
    return set()


def normalised(text: str) -> str:
    """The form texts are compared in for provenance: NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def scrub(text: str, secrets: list[str], keep: int = 400) -> str:
    """`text` with every secret value hidden, then cut to `keep` characters."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text[:keep]


class Server:
    """One MCP connection (and, over stdio, the server process behind it), held open by a task
    on the adapter's event loop until stop()."""

    def __init__(self, backend: MCPBackend, label: str) -> None:
        self.b = backend
        self.label = label  # what errors name: the command, or the URL
        self.session = None
        self.info = ""
        self.workdir = None
        self.errlog = None
        self._last_stderr = ""
        self._stop = None
        self._task = None

    async def open(self) -> None:
        """Start the connection's task and wait (start_timeout_s) until initialize answered."""
        ready = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._hold(ready))
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.b.s["start_timeout_s"])
        except asyncio.TimeoutError:
            ready.cancel()
            await self.close()
            raise TimeoutError(f"MCP server {self.label} did not answer initialize within start_timeout_s "
                               f"({self.b.s['start_timeout_s']:g} s){self.stderr_tail()}") from None
        except BaseException:
            await self.close()
            raise

    async def _hold(self, ready: asyncio.Future) -> None:
        """The connection's life: the transport and session contexts entered, initialize, then
        wait for stop; leaving the contexts stops the server (the SDK closes its stdin, then
        TERMs and KILLs its process group)."""
        mcp = self.b.mcp
        try:
            async with self._transport() as streams:
                async with mcp.ClientSession(streams[0], streams[1]) as session:
                    result = await session.initialize()
                    server = result.server_info
                    self.info = f"{server.name} {server.version}"
                    self.session = session
                    ready.set_result(None)
                    await self._stop.wait()
        except BaseException as e:  # the start failed, or the connection broke while waiting
            if not ready.done():  # cancelled when open() gave up waiting
                ready.set_exception(e if isinstance(e, Exception) else RuntimeError(repr(e)))
            if isinstance(e, asyncio.CancelledError):
                raise
        finally:
            self.session = None

    def _transport(self):
        """The SDK's transport context: a stdio process or a streamable HTTP connection."""
        s = self.b.s
        if s["transport"] == "stdio":
            self.workdir = tempfile.mkdtemp(prefix="mcp-server-")
            env = {k: str(render(v, {"workdir": self.workdir})) for k, v in s["env"].items()}
            env.update({k: os.environ[k] for k in s["secret_env"] if k in os.environ})
            self.errlog = open(os.path.join(self.workdir, "stderr.log"), "w+", encoding="utf-8", errors="replace")
            params = self.b.mcp.StdioServerParameters(command=s["command"][0], args=list(s["command"][1:]),
                                                      env=env, cwd=ROOT)
            return self.b.mcp.stdio_client(params, errlog=self.errlog)
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client
        headers = {"Authorization": f"Bearer {self.b.token}"} if self.b.token else None
        return streamable_http_client(self.b.url, http_client=create_mcp_http_client(headers=headers))

    def stderr_tail(self) -> str:
        """The last lines the stdio server wrote to stderr, scrubbed, for an error message."""
        if self.errlog is None or self.errlog.closed:
            return self._last_stderr
        self.errlog.flush()
        self.errlog.seek(0)
        lines = [line.rstrip() for line in self.errlog.read().splitlines() if line.strip()][-STDERR_LINES:]
        return f"; its stderr ends: {scrub(' | '.join(lines), self.b.secrets)}" if lines else ""

    async def call(self, tool: str, arguments: dict):
        """One tool call, bounded by call_timeout_s; a tool error, a timeout or a dead server is
        an exception naming the server."""
        if self.session is None:
            raise ConnectionError(f"MCP server {self.label} is gone{self.stderr_tail()}")
        try:
            result = await asyncio.wait_for(self.session.call_tool(tool, arguments), self.b.s["call_timeout_s"])
        except asyncio.TimeoutError:
            raise TimeoutError(f"MCP server {self.label}: {tool} had no answer within call_timeout_s "
                               f"({self.b.s['call_timeout_s']:g} s){self.stderr_tail()}") from None
        except self.b.mcp.MCPError as e:
            if e.code == CONNECTION_CLOSED or self.session is None:  # the server went away under the call
                self.session = None
                await asyncio.sleep(0.2)  # let a dying server's last stderr lines land
                raise ConnectionError(f"MCP server {self.label} closed the connection during {tool} "
                                      f"({e.error.message}){self.stderr_tail()}") from None
            raise RuntimeError(f"MCP server {self.label}: {tool} failed: {e}") from None
        if result.is_error:
            text = " ".join(getattr(c, "text", "") for c in result.content)
            raise RuntimeError(f"MCP server {self.label}: {tool} returned an error: {text}")
        return result

    async def close(self) -> None:
        """Leave the connection (stopping a stdio server and its process group) and remove the
        workdir. A connection still starting, or broken, is cancelled: its contexts then stop
        the server as they would on leaving."""
        if self._stop is not None:
            self._stop.set()
        if self._task is not None:
            if self.session is None:
                self._task.cancel()
            try:
                await asyncio.wait_for(self._task, CLOSE_GRACE_S)
            except BaseException:  # its own failure was reported where it happened
                pass
        if self.errlog is not None and not self.errlog.closed:
            self._last_stderr = self.stderr_tail()  # what errors about it still quote
            self.errlog.close()
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)


class MCPBackend:
    """A memory server behind MCP tool calls, configured entirely by SETTINGS."""

    def __init__(self, s: dict, mcp) -> None:
        self.s = s
        self.mcp = mcp
        self.name = s["name"]
        self.internal_model = None
        self.flush_note = None
        self.secrets = [os.environ[k] for k in s["secret_env"] if os.environ.get(k)]
        self.token = None
        self.url = None
        if s["transport"] == "streamable_http":
            self.url = s["url"] or os.environ.get(s["url_env"] or "")
            if not self.url:
                raise InputError(f"backend {self.name}: environment variable {s['url_env']} (named by url_env) "
                                 f"is not set")
            if s["token_env"]:
                self.token = os.environ.get(s["token_env"])
                if not self.token:
                    raise InputError(f"backend {self.name}: environment variable {s['token_env']} (named by "
                                     f"token_env) is not set")
                self.secrets.append(self.token)
            self.label = f"at {self.url}"
        else:
            self.label = f"`{shlex.join(s['command'])}`"
        self._lock = threading.Lock()
        from llm import Unreached  # the same count of calls in a row that found no server as http's
        self.unreached = Unreached()
        self._servers: dict[str, Server] = {}  # namespace (or "" for the shared one) -> its server
        # namespace -> item id -> (normalised text, timestamp): what provenance by text and a
        # named hit's timestamp are read from, and the ids reset_arguments' {ids} lists
        self._stored: dict[str, dict[str, tuple[str, str]]] = {}
        # every turn this object ever stored, in any namespace: a hit that repeats no turn of its
        # own namespace but one of another is named by that turn, so that check.py's leakage
        # check sees a server that mixes namespaces or keeps them after reset
        self._seen: dict[str, tuple[str, str]] = {}
        self.provenance_counts = {"ids": 0, "text": 0, "none": 0}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp-client", daemon=True)
        self._thread.start()
        self._closed = False
        atexit.register(_close_at_exit, weakref.ref(self))
        rule = ("ids the server returns" if s["hit_ids_path"] else "") + (
            ", else " if s["hit_ids_path"] else "") + "the stored turn a hit's text repeats, else none"
        # Start a server now, so that one that cannot start fails before any case (exit 2), and
        # its initialize reply names what runs; with a server per namespace this one is a probe.
        info = self._server("").info
        if s["fresh_server_per_namespace"]:
            with self._lock:
                probe = self._servers.pop("")
            self._run(probe.close(), 0)
        self.version = (f"{s['version']} over MCP {s['transport']}"
                        + (f" (server reports {info.strip()})" if info.strip() else "")
                        + (", a server per namespace" if s["fresh_server_per_namespace"] else "")
                        + f"; provenance: {rule}; mcp {mcp_version()}")

    # -- the event loop and the servers ----------------------------------------------------------

    def _run(self, coro, timeout: float):
        """Run a coroutine on the adapter's loop and wait for it, at most `timeout` seconds more
        than the deadlines inside it."""
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout + CLOSE_GRACE_S + 5)
        except FutureTimeout:  # since Python 3.11 the builtin TimeoutError too: the coroutine's own
            if future.done():
                raise
            future.cancel()
            raise TimeoutError(f"MCP server {self.label}: no answer within {timeout:g} s") from None

    def _server(self, key: str) -> Server:
        """The server of a namespace key, started if it is not running."""
        with self._lock:
            server = self._servers.get(key)
            if server is not None and server.session is not None:
                return server
            if server is not None:  # it died: its store is gone with it, say so rather than restart
                raise self._unreachable(ConnectionError(f"MCP server {self.label} is gone{server.stderr_tail()}"))
            server = Server(self, self.label)
            try:
                self._run(server.open(), self.s["start_timeout_s"])
            except OSError as e:
                raise self._unreachable(e) from None
            except Exception as e:
                raise RuntimeError(f"MCP server {self.label} could not start: {type(e).__name__}: "
                                   f"{scrub(str(e), self.secrets)}{server.stderr_tail()}") from None
            self._servers[key] = server
            return server

    def _key(self, namespace: str) -> str:
        return namespace if self.s["fresh_server_per_namespace"] else ""

    def _unreachable(self, e: Exception) -> Exception:
        """A call that timed out or found the server gone: a RuntimeError naming it, or ServiceDown
        once UNREACHED_TO_STOP have failed in a row."""
        count = self.unreached.failed()
        text = scrub(str(e), self.secrets)
        if count >= UNREACHED_TO_STOP:
            return ServiceDown(f"backend {self.name}: {count} calls in a row to the MCP server {self.label} timed "
                               f"out or found it gone (last: {text}); stopped. Every record written so far is "
                               f"kept: rerun the same command when the server works")
        return RuntimeError(text)

    def _call(self, namespace: str, tool: str, arguments: dict):
        """One tool call on the namespace's server; failures scrubbed, unreachable ones counted."""
        server = self._server(self._key(namespace))
        try:
            result = self._run(server.call(tool, arguments), self.s["call_timeout_s"])
        except OSError as e:  # TimeoutError, ConnectionError
            raise self._unreachable(e) from None
        except RuntimeError as e:
            raise RuntimeError(scrub(str(e), self.secrets)) from None
        self.unreached.reached()
        return result

    # -- the contract --------------------------------------------------------------------------

    def reset(self, namespace: str) -> None:
        """Empty the namespace: stop its server (a server per namespace), or call reset_tool."""
        stored = self._stored.pop(namespace, {})
        if self.s["fresh_server_per_namespace"]:
            with self._lock:
                server = self._servers.pop(namespace, None)
            if server is not None:
                self._run(server.close(), 0)
            return
        if self.s["reset_tool"] is not None:
            self._call(namespace, self.s["reset_tool"],
                       render(self.s["reset_arguments"], {"namespace": namespace, "ids": list(stored)}))

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        """Store the items, add_batch per call of add_tool."""
        batch = self.s["add_batch"]
        for start in range(0, len(items), batch):
            chunk = items[start:start + batch]
            values = {"namespace": namespace, "items": [render(self.s["add_item"], {"namespace": namespace,
                                                                                    **item_values(it)})
                                                        for it in chunk]}
            if batch == 1:
                values.update(item_values(chunk[0]))
            self._call(namespace, self.s["add_tool"], render(self.s["add_arguments"], values))
            stored = self._stored.setdefault(namespace, {})
            stored.update({it.item_id: (normalised(it.text), it.metadata.get("timestamp", "")) for it in chunk})
            self._seen.update({it.item_id: stored[it.item_id] for it in chunk})

    def flush(self, namespace: str, timeout_s: float) -> None:
        """Nothing to wait for: a tool call returns when the server has answered it, stored."""

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        """search_tool's result items as hits, best first, at most k."""
        if k < 1 or (self.s["fresh_server_per_namespace"] and namespace not in self._stored):
            return []  # nothing was ever added: no server to ask
        result = self._call(namespace, self.s["search_tool"],
                            render(self.s["search_arguments"], {"namespace": namespace, "query": query, "k": k}))
        rows = self._rows(result)
        stored = self._stored.get(namespace, {})
        hits = []
        for rank, row in enumerate(rows[:k], 1):
            text = self._text(row)
            score = dig(row, self.s["hit_score_path"]) if self.s["hit_score_path"] and isinstance(row, dict) else None
            ids = self._ids(row, text, stored)
            timestamp = ""
            if self.s["hit_timestamp_path"] and isinstance(row, dict):
                timestamp = str(dig(row, self.s["hit_timestamp_path"]) or "")
            elif len(ids) == 1 and ids[0] in stored:
                timestamp = stored[ids[0]][1]
            hits.append(Hit(text=text, score=float(score) if isinstance(score, (int, float)) else 1.0 / rank,
                            source_ids=ids, timestamp=timestamp))
        return hits

    # -- reading results -----------------------------------------------------------------------

    def _rows(self, result) -> list:
        """The list of result items, as results_from and results_path say; anything else raises."""
        how = self.s["results_from"]
        texts = [c.text for c in result.content if getattr(c, "type", "") == "text"]
        if how == "text":
            return texts
        if how == "structured":
            value = result.structured_content
        else:
            import json
            try:
                value = json.loads(texts[0]) if texts else None
            except ValueError as e:
                raise RuntimeError(f"MCP server {self.label}: {self.s['search_tool']} returned text that is not "
                                   f"JSON ({e}): {scrub(texts[0], self.secrets, 200)!r}") from None
        rows = dig(value, self.s["results_path"])
        if rows is None and value is not None and self.s["results_path"]:
            rows = []  # the server left the list out: nothing found
        if not isinstance(rows, list):
            raise RuntimeError(f"MCP server {self.label}: {self.s['search_tool']}'s result has no list at "
                               f"results_path {self.s['results_path']!r} (results_from {how}): "
                               f"{scrub(repr(value), self.secrets, 200)}")
        return rows

    def _text(self, row) -> str:
        """A result item's text: the string at hit_text_path, a list of strings joined by lines."""
        value = row if isinstance(row, str) else dig(row, self.s["hit_text_path"])
        if isinstance(value, list):
            return "\n".join(str(v) for v in value)
        return "" if value is None else str(value)

    def _ids(self, row, text: str, stored: dict) -> tuple:
        """A hit's provenance: the server's ids, else the stored turns its text repeats, else ()."""
        if self.s["hit_ids_path"] and isinstance(row, dict):
            value = dig(row, self.s["hit_ids_path"])
            ids = [value] if isinstance(value, str) else value if isinstance(value, list) else []
            ids = [str(i) for i in ids if isinstance(i, (str, int))]
            if ids:
                self.provenance_counts["ids"] += 1
                return tuple(dict.fromkeys(ids))
        hit = normalised(text)
        found = text_sources(hit, stored) or text_sources(hit, self._seen)
        self.provenance_counts["text" if found else "none"] += 1
        return found

    def close(self) -> None:
        """Stop every server this adapter started, and its event loop."""
        if self._closed:
            return
        self._closed = True
        with self._lock:
            servers, self._servers = list(self._servers.values()), {}
        for server in servers:
            try:
                self._run(server.close(), 0)
            except Exception:  # one server's failing stop must not leave the others running
                pass
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def text_sources(hit: str, stored: dict) -> tuple:
    """The stored turns a hit's (normalised) text repeats: the turns equal to it, else those
    contained whole in it, when there are at most MAX_TEXT_SOURCES; else ()."""
    if not hit:
        return ()
    equal = tuple(i for i, (t, _) in stored.items() if t == hit)
    if equal:
        return equal if len(equal) <= MAX_TEXT_SOURCES else ()
    inside = tuple(i for i, (t, _) in stored.items() if t and t in hit)
    return inside if len(inside) <= MAX_TEXT_SOURCES else ()


def item_values(item: MemoryItem) -> dict:
    """An item's placeholders."""
    meta = item.metadata
    return {"id": item.item_id, "text": item.text, "session_id": meta.get("session_id", ""),
            "timestamp": meta.get("timestamp", ""), "role": meta.get("role", "")}


def mcp_version() -> str:
    from importlib.metadata import version
    return version("mcp")


def _close_at_exit(ref) -> None:
    backend = ref()
    if backend is not None:
        backend.close()


def settings(section: dict) -> dict:
    """The section checked (keys, types, choices, the placeholders each template may use),
    defaults filled, nothing started."""
    s = check_settings(section, SETTINGS, "mcp")
    for key, choices in CHOICES.items():
        if s[key] not in choices:
            raise InputError(f"config: backends.mcp.{key} is {s[key]!r}; choose one of: {', '.join(choices)}")
    if s["transport"] == "stdio":
        if not s["command"] or not all(isinstance(a, str) and a for a in s["command"]):
            raise InputError("config: backends.mcp.command must be a list of strings (the server's program and "
                             "its arguments) with transport: stdio")
    else:
        if bool(s["url"]) == bool(s["url_env"]):
            raise InputError("config: backends.mcp needs one of url and url_env with transport: streamable_http")
        if s["fresh_server_per_namespace"]:
            raise InputError("config: backends.mcp.fresh_server_per_namespace needs transport: stdio (the adapter "
                             "starts only the servers it runs as a command)")
    if s["reset_tool"] is None and not s["fresh_server_per_namespace"]:
        raise InputError("config: backends.mcp.reset_tool is null, so nothing would empty a namespace; name the "
                         "server's delete tool, or set fresh_server_per_namespace: true")
    if s["add_batch"] < 1:
        raise InputError("config: backends.mcp.add_batch must be at least 1")
    for key in ("call_timeout_s", "start_timeout_s"):
        if s[key] <= 0:
            raise InputError(f"config: backends.mcp.{key} must be a positive number of seconds")
    known = dict(KNOWN)
    if s["add_batch"] > 1:
        known["add_arguments"] = {"namespace", "items"}
    for key, names in known.items():
        unknown = placeholders(s[key]) - names
        if unknown:
            raise InputError(f"config: backends.mcp.{key} uses the placeholder(s) "
                             f"{', '.join('{' + u + '}' for u in sorted(unknown))}; it may use: "
                             f"{', '.join('{' + n + '}' for n in sorted(names))}")
    for name in s["secret_env"]:
        if not isinstance(name, str):
            raise InputError("config: backends.mcp.secret_env must list environment variable names")
    return s


def create(section: dict, config: dict) -> MCPBackend:
    """The adapter, from its config section (config: backends.HARNESS_KEYS, unused: the server
    calls no model of ours)."""
    s = settings(section)
    return MCPBackend(s, require("mcp", "mcp"))
