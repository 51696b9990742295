"""The one model client: any OpenAI-compatible chat endpoint, with bounded retries and a disk
cache. The endpoint comes from the environment only (LLM_BASE_URL, LLM_API_KEY). The key is
never written to a file, a log or an error message; the endpoint's address is named in error
messages (so that a dead or mistyped endpoint can be found), without any user:password or query
part, and in no file.

The client speaks the chat-completions wire format over urllib3, one pool of kept-alive
connections shared by the worker threads: the openai SDK cost 2.2 s to import and two thirds of
the harness's CPU per call in its request transform, and `requests` looks up ~/.netrc, proxies
and certificate bundles in the environment on every call (its `trust_env`). The proxy and the
certificate bundle are read from the environment once, when the client is made.
bench/throughput.py prints a call's cost beside raw HTTP's.

Before a stage's first question, preflight() sends one small request with the stage's model and
sampling parameters, so that a refused connection, an unknown model, a refused key or a
parameter the endpoint refuses stops the stage within seconds with the setting to change (exit
2), instead of failing every question. During a stage, CONNECTION_FAILURES_TO_STOP calls in a
row that could not connect or had no whole reply within request_timeout_s (the first after its
retries, the next with one try each) stop it (EndpointDown, exit 3): every record written stays,
and the same command resumes. request_timeout_s bounds a call whole, connect to last byte, so a
server that drips its reply is cut off as one that sends nothing; a reply past MAX_REPLY_BYTES is
not read further.

Usage (a smoke test of the endpoint):
  python llm.py --config config.yaml "Say hello"
"""
from __future__ import annotations

import argparse
import contextlib
import email.utils
import hashlib
import json
import os
import random
import re
import socket
import sys
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Iterator

import urllib3

from cli import InputError, ServiceDown, run_cli
from config import load_config
from fileio import loads, write_atomic

# The longest reply read from the endpoint: a chat completion is a few kilobytes.
MAX_REPLY_BYTES = 16 * 2**20
# Wait ceilings: a server asking for more than this is treated as asking for this much, so a run
# cannot stall for hours on one header; the retry count still bounds the total.
MAX_RETRY_AFTER_S = 120.0
MAX_BACKOFF_S = 60.0
# Used when only LLM_API_KEY is set, as the openai SDK does.
DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Statuses worth retrying: the server is busy or failed, not the request (the openai SDK's set).
RETRY_STATUSES = frozenset({408, 409, 429})
# Statuses of a server that is not an OpenAI-compatible API at all (a web server or another
# service on the port): the method or the path is not served there. Not retried: waiting does
# not turn it into a model server, where a 5xx of a busy one may pass.
NOT_AN_API_STATUSES = frozenset({405, 501})
# Keys at least this long are hidden wherever they occur in an error message; shorter ones only
# where they stand as a word of their own (Wire.scrub).
SHORT_KEY = 8
# The preflight's question: small, and recognisable in a server's log (tests/fake_llm.py knows it).
PREFLIGHT_PROMPT = "memory-bench preflight: reply with the word OK."
# Calls in a row that could not connect (or time out, UNREACHED) before a stage stops: the first after all its retries
# (about 15 s of backoff with the default settings), the next with one try each (_ask). Fewer
# could be one blip that several workers saw at once; more would send every question of a dead
# endpoint through its retries (381 s on the dev split).
CONNECTION_FAILURES_TO_STOP = 3
# The failures that count toward that stop: nothing connected, or nothing came back whole in
# time. A server that hangs or drips its replies is as unusable as one that is down, and should
# end a stage in about the same time, not after every question's retries (19 hours for 378
# questions with the default timeout and retries).
UNREACHED = frozenset({"connection", "timeout"})


class Unreached:
    """Calls in a row, across the threads that make them, that could not reach a service
    (UNREACHED: no connection, or no whole reply in time); any call it answered resets it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0

    def reached(self) -> None:
        with self._lock:
            self.count = 0

    def failed(self) -> int:
        """Count one more; the count so far."""
        with self._lock:
            self.count += 1
            return self.count


class AuthenticationError(InputError):
    """The endpoint refused the key (401/403): every later call would fail the same way, so the
    stage stops at once with exit 2 instead of sending every question."""


class EndpointError(InputError):
    """The preflight failed in a way retrying cannot fix (nothing listens, an unknown model, a
    refused parameter): exit 2, naming the endpoint and the setting to change."""


class EndpointDown(ServiceDown):
    """The endpoint stopped answering: calls in a row could not connect, or the preflight met only
    busy or failing answers. The stage stops with exit 3 (run_cli); the same command resumes."""


@dataclass(frozen=True)
class Completion:
    """One answer: text and served model on success, a short stable reason in error otherwise.
    finish_reason is the server's ('stop', 'length' = truncated by max_tokens), None when the
    server or an older cache entry did not say; attempts is 0 for a cached answer."""
    text: str | None
    served_model: str | None
    usage: dict | None
    cached: bool
    error: str | None
    attempts: int
    finish_reason: str | None = None
    tool_calls: list | None = None  # the reply's tool calls, to a request that offered tools


def endpoint_from_env(env: str = "LLM") -> tuple[str, str, str]:
    """The endpoint, key and endpoint identity from the environment variables ENV_BASE_URL,
    ENV_API_KEY and ENV_ENDPOINT_ID (LLM_ by default; judge.py --judge-endpoint names another
    prefix); the key is only ever held in memory. LLM_ENDPOINT_ID, when set, names what serves
    the model independently of its address: serve.py sets it, since the embedded server gets a
    new port every time and the cache must still hit."""
    base_url = os.environ.get(f"{env}_BASE_URL") or None
    api_key = os.environ.get(f"{env}_API_KEY") or ""
    if not base_url and (env != "LLM" or not api_key):  # only LLM_ falls back to the default endpoint
        raise InputError(f"no model endpoint: set {env}_BASE_URL (and {env}_API_KEY if the endpoint needs "
                         "one), or run `make bench`, which serves the embedded model locally")
    # The default endpoint's identity is None, not its URL: the keys of answers already cached
    # hold None for it, so they still hit.
    return base_url or DEFAULT_BASE_URL, api_key, os.environ.get(f"{env}_ENDPOINT_ID") or base_url


def endpoint_label(url: str) -> str:
    """The endpoint's address for an error message: scheme, host, port and path, without any
    user:password, query or fragment, which may hold a secret."""
    u = urllib.parse.urlsplit(url)
    host = u.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{u.port}" if u.port else ""
    except ValueError:
        port = ""
    return f"{u.scheme}://{host}{port}{u.path}"


def without_credentials(url: str) -> str:
    """A URL as typed, for a message about its form, with any user:password, query and
    fragment left out: `user:pass@host:8000/v1` (no scheme) has no netloc to parse, and its
    password would otherwise be echoed."""
    rest = url.split("#", 1)[0].split("?", 1)[0]
    scheme, sep, rest = rest.partition("://") if "://" in rest else ("", "", rest)
    authority, slash, path = rest.partition("/")
    return f"{scheme}{sep}{authority.rsplit('@', 1)[-1]}{slash}{path}"


def server_info() -> dict | None:
    """What serve.py says it serves (engine, version, n_ctx), from the JSON file LLM_SERVER_INFO
    names; None for any other endpoint."""
    path = os.environ.get("LLM_SERVER_INFO")
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: LLM_SERVER_INFO is not a readable JSON file ({e})") from None


# What a cache entry holds (_ask writes these fields).
CACHE_FIELDS = frozenset(("text", "served_model", "usage", "finish_reason"))


def cache_key(endpoint: str | None, request: dict) -> str:
    """sha256 of everything that changes the output: endpoint, model, messages, sampling."""
    blob = json.dumps({"base_url": endpoint, **request}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def sampling_params(sampling: dict, max_tokens: int, seed: int) -> dict:
    """The sampling fields of a request, as the config's answer_sampling or judge_sampling asks:
    the token limit under the name the model takes (reasoning models take max_completion_tokens),
    the temperature unless null and the seed unless send_seed is false (reasoning models refuse
    both). The defaults give the fields and order this client always sent, so the response
    cache's keys stay what they were."""
    params: dict = {}
    if sampling["temperature"] is not None:
        params["temperature"] = sampling["temperature"]
    if sampling["send_seed"]:
        params["seed"] = seed
    params[sampling["max_tokens_param"]] = max_tokens
    return params


def _retry_after_s(headers: Any) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date), if there is one."""
    value = headers.get("retry-after") if headers is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


class ResponseCache:
    """The response cache: one JSON file per request key under a folder (None: no cache). A torn
    entry, or one without every field a client writes, is a miss, and is rewritten whole on the
    next success."""

    def __init__(self, folder: str | None) -> None:
        self.folder = folder

    def path(self, key: str) -> str:
        """The entry's file."""
        return os.path.join(self.folder, key[:2], key + ".json")

    def get(self, key: str) -> dict | None:
        """The entry for this key, or None."""
        if not self.folder:
            return None
        try:
            with open(self.path(key), encoding="utf-8") as fh:
                entry = json.load(fh)
        except FileNotFoundError:
            return None
        except (OSError, json.JSONDecodeError):
            return None  # a torn cache file is a miss, and is rewritten on success
        # An entry without every field this client writes (torn, or written by another version)
        # is a miss too: the call is made again and the entry rewritten whole.
        if not isinstance(entry, dict) or not CACHE_FIELDS <= entry.keys():
            return None
        return entry

    def put(self, key: str, entry: dict) -> None:
        """Store a good answer, atomically (write_atomic)."""
        if self.folder:
            write_atomic(self.path(key), json.dumps(entry, ensure_ascii=False))


class UsageCounter:
    """Completions counted as they come back, from any thread: calls, how many came from the
    cache, and their token usage."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._usage = {"calls": 0, "cached": 0, "prompt_tokens": 0, "completion_tokens": 0, "cached_prompt_tokens": 0,
                       "prompt_tokens_missing": 0, "completion_tokens_missing": 0}

    def count(self, usage: dict | None, cached: bool) -> None:
        """Count one completion and its token usage; a count the server did not send is missing."""
        with self._lock:
            self._usage["calls"] += 1
            self._usage["cached"] += cached
            for k in ("prompt_tokens", "completion_tokens"):
                n = (usage or {}).get(k)  # usage is optional in the wire format: a missing count is not 0
                self._usage[k] += n or 0
                self._usage[f"{k}_missing"] += n is None
            self._usage["cached_prompt_tokens"] += (usage or {}).get("cached_prompt_tokens") or 0

    def snapshot(self) -> dict:
        """The counts so far."""
        with self._lock:
            return dict(self._usage)


# ---------------------------------------------------------------------------------------------
# The wire: one pool of kept-alive connections shared by the worker threads, the environment
# read once
# ---------------------------------------------------------------------------------------------

class KeptConnectionClosed(ConnectionResetError):
    """The server closed a connection that had already served a request as the next one went
    out: its idle keep-alive timeout racing the request, not a failure of the endpoint."""


class ReplyTooLarge(Exception):
    """A reply longer than the reader's cap: not an answer to the request, and reading it whole
    could take the machine's memory."""


class _Watch:
    """One thread's call under a deadline (bounded): the connection it is using, whether its
    time ran out, whether it ended."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.conn: Any = None
        self.expired = self.ended = False

    def attach(self, conn: Any) -> None:
        with self.lock:
            self.conn = conn
            if self.expired:
                _cut(conn)

    def expire(self) -> None:
        with self.lock:
            if not self.ended:
                self.expired = True
                _cut(self.conn)


def _cut(conn: Any) -> None:
    """End a connection's socket under the thread that is blocked reading it: its read returns
    at once, whatever the server is sending."""
    sock = getattr(conn, "sock", None)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already closed


# Thread id -> the watch of the call that thread is making (bounded); the connection classes
# below attach themselves to it when they connect or send a request.
_WATCHES: dict[int, _Watch] = {}


@contextlib.contextmanager
def bounded(seconds: float) -> Iterator[_Watch]:
    """A deadline for the block's HTTP exchange on this thread, whole: connect, first byte and
    every byte after. A socket timeout bounds one read, so a server that drips a byte every few
    seconds never trips it; here a timer cuts the connection when the time is up, and the
    blocked read ends. The watch says whether it expired."""
    watch = _Watch()
    me = threading.get_ident()
    _WATCHES[me] = watch
    timer = threading.Timer(seconds, watch.expire)
    timer.daemon = True
    timer.start()
    try:
        yield watch
    finally:
        timer.cancel()
        with watch.lock:
            watch.ended = True
        _WATCHES.pop(me, None)


def _marked(base: type) -> type:
    """A urllib3 connection class that knows whether it has served a request since it connected,
    so that a reset on it can be told from a fresh connection's (the endpoint's failure), and
    that puts itself under its thread's deadline (bounded)."""

    class Connection(base):
        served = False

        def connect(self) -> None:
            self.served = False
            super().connect()
            self._watched()

        def request(self, *args: Any, **kwargs: Any) -> Any:
            self._watched()
            return super().request(*args, **kwargs)

        def _watched(self) -> None:
            watch = _WATCHES.get(threading.get_ident())
            if watch is not None:
                watch.attach(self)

        def getresponse(self, *args: Any, **kwargs: Any) -> Any:
            try:
                response = super().getresponse(*args, **kwargs)
            except (ConnectionResetError, BrokenPipeError, ConnectionAbortedError) as e:
                # RemoteDisconnected (no status line came back) is a ConnectionResetError.
                if self.served:
                    raise KeptConnectionClosed(str(e) or type(e).__name__) from e
                raise
            self.served = True
            return response

    return Connection


class _Pool(urllib3.HTTPConnectionPool):
    ConnectionCls = _marked(urllib3.connection.HTTPConnection)


class _TLSPool(urllib3.HTTPSConnectionPool):
    ConnectionCls = _marked(urllib3.connection.HTTPSConnection)


def pool_manager(base_url: str, connections: int, setting: str = "LLM_BASE_URL") -> urllib3.PoolManager:
    """The urllib3 pool manager for an endpoint: through the proxy the environment names for it
    (http_proxy, https_proxy, no_proxy, read here once, where `requests` reads them on every call;
    its credentials go to the proxy only, in the CONNECT of an https endpoint and never through
    the tunnel), TLS verified against REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE when set, else the
    certifi bundle `requests` uses; `connections` kept alive. Raises InputError for a base URL
    that is not http(s) or a proxy that is not http://, naming `setting` (where the URL came from)."""
    u = urllib.parse.urlsplit(base_url)
    try:
        port = u.port
    except ValueError:
        port = -1
    if u.scheme not in ("http", "https") or not u.hostname or port == -1:
        # Echoed as typed (localhost:8000/v1 parses as scheme "localhost"), unless it holds
        # a user:password, which the label leaves out.
        typed = without_credentials(base_url)
        hint = f"; did you mean 'http://{typed}'?" if "://" not in base_url else ""
        raise InputError(f"{setting} {typed!r} is not an http(s) URL"
                         f"{' of an OpenAI-compatible API' if setting.endswith('_BASE_URL') else ''}"
                         f"{hint} (for example http://127.0.0.1:8080/v1)")
    # block=False: a thread finding every kept connection busy opens one more, kept only while
    # fewer than `connections` are idle, rather than waiting for one.
    kw: dict = {"maxsize": max(1, connections), "block": False, "retries": False}
    if u.scheme == "https":
        bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
        if not bundle:
            import certifi  # installed with requests; imported only for https
            bundle = certifi.where()
        kw["cert_reqs"] = "CERT_REQUIRED"
        kw["ca_cert_dir" if os.path.isdir(bundle) else "ca_certs"] = bundle
    proxy = urllib.request.getproxies().get(u.scheme)
    if not proxy or urllib.request.proxy_bypass(u.hostname):
        manager = urllib3.PoolManager(num_pools=1, **kw)
    else:
        p = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        if p.scheme != "http" or not p.hostname:
            raise InputError(f"{u.scheme}_proxy {endpoint_label(proxy)!r}: only an http:// proxy is supported "
                             f"for the model endpoint")
        auth = {}
        if p.username is not None:
            creds = f"{urllib.parse.unquote(p.username)}:{urllib.parse.unquote(p.password or '')}"
            auth = urllib3.make_headers(proxy_basic_auth=creds)
        manager = urllib3.proxy_from_url(f"http://{p.netloc.rsplit('@', 1)[-1]}", proxy_headers=auth,
                                         num_pools=1, **kw)
    manager.pool_classes_by_scheme = {"http": _Pool, "https": _TLSPool}
    return manager


def exchange(manager: urllib3.PoolManager, method: str, url: str, body: bytes | None, headers: dict,
             timeout_s: float, max_bytes: int) -> tuple[int, Any, bytes]:
    """One HTTP request and its whole reply: (status, headers, body). Bounded in time, whole
    (bounded: a server that drips its reply is cut off as one that sends nothing) and in size
    (ReplyTooLarge past max_bytes, read no further); no redirect followed. A kept connection the
    server closed as the request went out is replaced, once. Raises TimeoutError past the
    deadline, ConnectionError for anything else that fails."""
    try:
        return _exchange_once(manager, method, url, body, headers, timeout_s, max_bytes)
    except ConnectionError as e:
        if not isinstance(e.__cause__, KeptConnectionClosed):
            raise
        return _exchange_once(manager, method, url, body, headers, timeout_s, max_bytes)


def _exchange_once(manager: urllib3.PoolManager, method: str, url: str, body: bytes | None, headers: dict,
                   timeout_s: float, max_bytes: int) -> tuple[int, Any, bytes]:
    """exchange() without its second try; urllib3's failures as the builtin exceptions."""
    with bounded(timeout_s) as watch:
        try:
            r = manager.urlopen(method, url, body=body, headers=headers, retries=False, redirect=False,
                                timeout=urllib3.Timeout(connect=timeout_s, read=timeout_s), preload_content=False)
            whole = False
            try:
                data = r.read(max_bytes + 1)
                whole = len(data) <= max_bytes
            finally:
                if not whole:
                    r.close()  # the rest is never read: the connection cannot be used again
                r.release_conn()
        except (urllib3.exceptions.HTTPError, OSError) as e:
            if watch.expired:
                raise TimeoutError(f"no whole reply within {timeout_s:g} s") from e
            if isinstance(e, OSError):
                raise ConnectionError(str(e) or type(e).__name__) from e
            # A refused connection is a NewConnectionError, which urllib3 derives from its timeout.
            if (isinstance(e, urllib3.exceptions.TimeoutError)
                    and not isinstance(e, urllib3.exceptions.NewConnectionError)):
                raise TimeoutError(str(e)) from e
            # ProtocolError, ProxyError and SSLError carry the socket's error among their arguments.
            cause = next((a for a in e.args if isinstance(a, BaseException)), e)
            raise ConnectionError(str(cause) or type(cause).__name__) from cause
    if not whole:
        raise ReplyTooLarge(f"a reply longer than {max_bytes // 2**20} MiB (HTTP {r.status}); not read further")
    return r.status, r.headers, data


def scrub(text: str, secret: str | None, keep: int = 300) -> str:
    """`text` with `secret` hidden, then cut to `keep` characters: cut first, a secret at the
    cut would show in part. A secret shorter than SHORT_KEY characters is hidden where it
    stands as a token of its own: hidden inside words, a key "x" made "'max_tokens' is not
    supported" unreadable, and the refused setting could no longer be named."""
    if secret and len(secret) >= SHORT_KEY:
        text = text.replace(secret, "***")
    elif secret:
        text = re.sub(rf"(?<![\w-]){re.escape(secret)}(?![\w-])", "***", text)
    return text[:keep]


class Wire:
    """The HTTP side of one endpoint: the request headers (the key among them), one urllib3 pool
    of kept-alive connections that the worker threads share (urllib3's pools are thread-safe),
    and the key scrubbed from anything the server sends back. urllib3 neither retries nor
    follows a redirect: LLMClient owns the retries and Retry-After."""

    def __init__(self, base_url: str, api_key: str, timeout_s: float, connections: int,
                 setting: str = "LLM_BASE_URL") -> None:
        self._api_key = api_key
        self._manager = pool_manager(base_url, connections, setting)
        u = urllib.parse.urlsplit(base_url)
        # The URL requested: the endpoint's, without any user:password (never sent anywhere).
        self._url = urllib.parse.urlunsplit((u.scheme, u.netloc.rsplit("@", 1)[-1],
                                             u.path.rstrip("/") + "/chat/completions", u.query, ""))
        self._timeout_s = timeout_s
        self._headers = {"Content-Type": "application/json", "Accept": "application/json",
                         "User-Agent": "memory-bench"}
        if self._api_key:
            self._headers["Authorization"] = f"Bearer {self._api_key}"

    def post(self, body: bytes) -> tuple[int, Any, bytes]:
        """POST one chat request on a kept connection (exchange): (status, headers, body)."""
        return exchange(self._manager, "POST", self._url, body, self._headers, self._timeout_s, MAX_REPLY_BYTES)

    def scrub(self, text: str, keep: int = 300) -> str:
        """Never let the key reach a record, even if a server echoes it in an error."""
        return scrub(text, self._api_key, keep)


class LLMClient:
    """Thread-safe client for one endpoint; config gives seed, sampling (of `role`: 'answer' or
    'judge'), timeouts, retries and cache; `workers` threads call it, each kept a connection.
    Its parts: the response cache (ResponseCache), the HTTP wire (Wire), the usage count
    (UsageCounter); here, the calls, their retries and the preflight."""

    def __init__(self, config: dict, use_cache: bool = True, role: str = "answer", workers: int = 1,
                 env: str = "LLM") -> None:  # env: the prefix of the endpoint's variables
        self.base_url, api_key, self.endpoint_id = endpoint_from_env(env)
        self.env = env
        self.label = endpoint_label(self.base_url)
        self.role = role
        self.sampling = config[f"{role}_sampling"]
        self.seed = config["seed"]
        self.timeout_s = config["request_timeout_s"]
        self.max_retries = config["max_retries"]
        self.backoff_s = config["retry_backoff_s"]
        self.cache = ResponseCache(config["cache_dir"] if use_cache else None)
        # One kept connection per thread that calls it: the stages pass their worker count.
        self.wire = Wire(self.base_url, api_key, self.timeout_s, workers, f"{env}_BASE_URL")
        self.usage = UsageCounter()
        self._lock = threading.Lock()
        self.network_calls = 0  # requests actually sent; a warm rerun keeps this at zero
        self._inflight: dict[str, threading.Event] = {}  # cache key -> set when its call ends
        self.unreached = Unreached()  # calls in a row that could not reach it, after their retries

    # -- cache --------------------------------------------------------------------------------

    # -- calls --------------------------------------------------------------------------------
    def request(self, model: str, messages: list[dict], max_tokens: int,
                response_format: dict | None = None, tools: dict | None = None) -> dict:
        """The body of a chat request with this client's sampling parameters; `tools` holds the
        tool fields of a system's own calls relayed here (tools, tool_choice, parallel_tool_calls)."""
        request = {"model": model, "messages": messages, **sampling_params(self.sampling, max_tokens, self.seed)}
        if response_format is not None:
            request["response_format"] = response_format
        request.update(tools or {})
        return request

    def complete(self, model: str, messages: list[dict], max_tokens: int,
                 response_format: dict | None = None, repeat: int = 0, tools: dict | None = None) -> Completion:
        """One chat completion with the configured sampling (temperature 0 and the config seed
        by default). API errors come back as Completion.error; a refused key raises
        AuthenticationError, an endpoint that stopped answering EndpointDown. A repeat above 0
        has cache entries of its own, so a repeated run asks the endpoint again."""
        request = self.request(model, messages, max_tokens, response_format, tools)
        # Repeat 0 keeps the key it had before repeats existed, so existing caches still hit.
        key = cache_key(self.endpoint_id, {**request, "repeat": repeat} if repeat else request)
        hit = self._cached(key)
        if hit is not None:
            return hit
        if not self.cache.folder:
            return self._ask(key, request)  # no cache: every call is its own (--no-cache repeats)
        # The same request already in flight (a budget sweep asks the none and oracle controls
        # the same prompt at every budget): wait for its answer instead of sending it again.
        with self._lock:
            waiting = self._inflight.get(key)
            if waiting is None:
                self._inflight[key] = threading.Event()
        if waiting is not None:
            waiting.wait()
            hit = self._cached(key)
            if hit is not None:
                return hit
            return self.complete(model, messages, max_tokens, response_format, repeat, tools)  # it failed: ask
        try:
            return self._ask(key, request)
        finally:
            with self._lock:
                self._inflight.pop(key).set()

    def preflight(self, model: str, max_tokens: int) -> None:
        """One small request with the stage's model and sampling parameters before its first
        question. Raises EndpointError (exit 2) naming the endpoint and the setting to change
        when nothing listens, the model is unknown or a parameter is refused; AuthenticationError
        for a refused key; EndpointDown when the endpoint only answers busy or failing. Busy
        answers and timeouts are retried as any call's; a refused connection is not. Its answer
        is cached like any other, so a warm rerun sends nothing at all: the same endpoint
        accepted these parameters before."""
        request = self.request(model, [{"role": "user", "content": PREFLIGHT_PROMPT}], max_tokens)
        key = cache_key(self.endpoint_id, request)
        if self.cache.get(key) is not None:
            return
        body = json.dumps(request, ensure_ascii=False).encode("utf-8")
        entry, error, detail, attempt = self._send(body, retry_unreached=lambda error: error == "timeout")
        if entry is None:
            raise preflight_error(self, error, detail, model, attempt)
        if entry["text"]:
            self.cache.put(key, entry)

    def _cached(self, key: str) -> Completion | None:
        """The cached answer for this key, counted, or None."""
        hit = self.cache.get(key)
        if hit is None:
            return None
        self.usage.count(hit["usage"], cached=True)
        return Completion(hit["text"], hit["served_model"], hit["usage"], True, None, 0, hit["finish_reason"],
                          hit.get("tool_calls"))

    def _send(self, body: bytes, retry_unreached: Callable[[str], bool]) -> tuple[dict | None, str | None, str, int]:
        """One request with the retries it may take: (cache entry, None, '', attempts) on
        success, else (None, error, what happened for people, attempts). A call that could
        not connect or had no whole reply in time is retried only while retry_unreached(error)
        says so, asked after each such failure."""
        for attempt in range(1, self.max_retries + 2):
            with self._lock:
                self.network_calls += 1
            entry, wait, error, detail = self._attempt(body, attempt)
            if entry is not None:
                return entry, None, "", attempt
            if wait is None or attempt > self.max_retries or error in UNREACHED and not retry_unreached(error):
                break
            time.sleep(wait)
        return None, error, detail, attempt

    def _ask(self, key: str, request: dict) -> Completion:
        """Send the request, retrying what can be retried; cache a good answer."""
        body = json.dumps(request, ensure_ascii=False).encode("utf-8")
        # Once a call has spent its retries on an endpoint it could not reach (no connection, or
        # no whole reply in time), and none has reached it since, a call tries once: a dead or
        # hung endpoint stops a stage after one call's retries, not CONNECTION_FAILURES_TO_STOP
        # calls'.
        entry, error, _, attempt = self._send(body, retry_unreached=lambda error: not self.unreached.count)
        if entry is not None:
            self.usage.count(entry["usage"], cached=False)
            if not entry["text"] and not entry.get("tool_calls"):
                # An empty answer is a failure of the call, not an answer: never cached, so a
                # rerun asks again; the record says empty_answer.
                return Completion("", entry["served_model"], entry["usage"], False, "empty_answer",
                                  attempt, entry["finish_reason"])
            self.cache.put(key, entry)
            return Completion(entry["text"], entry["served_model"], entry["usage"], False, None, attempt,
                              entry["finish_reason"], entry.get("tool_calls"))
        if error in UNREACHED:
            failures = self.unreached.failed()
            if failures >= CONNECTION_FAILURES_TO_STOP:
                raise EndpointDown(f"{failures} calls in a row could not connect to the model endpoint {self.label} "
                                   f"or had no whole reply within request_timeout_s ({self.timeout_s:g} s), the first "
                                   f"after {self.max_retries} retries; stopped. Every record written so far is kept: "
                                   f"rerun the same command when the endpoint is up")
        return Completion(None, None, None, False, error, attempt)

    def usage_snapshot(self) -> dict:
        """Completions so far: calls, how many came from the cache, and their token usage."""
        return self.usage.snapshot()

    def _attempt(self, body: bytes, attempt: int) -> tuple[dict | None, float | None, str | None, str]:
        """One request: (cache entry, None, None, '') on success, else (None, seconds to wait
        before a retry or None when retrying cannot help, error, what happened for people)."""
        try:
            status, headers, data = self.wire.post(body)
        except TimeoutError as e:
            return None, self._backoff(None, attempt), "timeout", str(e) or "timed out"
        except ReplyTooLarge as e:
            return None, None, "reply_too_large", str(e)
        except OSError as e:
            return None, self._backoff(None, attempt), "connection", self.wire.scrub(str(e) or type(e).__name__)
        self.unreached.reached()  # the endpoint answered: it is up
        if status in (401, 403):
            message = self.wire.scrub(_message(status, data))
            raise AuthenticationError(f"authentication failed: the model endpoint {self.label} answered HTTP {status} "
                                      f"({message}); check {self.env}_API_KEY and {self.env}_BASE_URL")
        if status in NOT_AN_API_STATUSES:
            message = self.wire.scrub(_message(status, data))
            return None, None, f"not_an_api: HTTP {status}", f"HTTP {status}: {message}"
        if status in RETRY_STATUSES or status >= 500:
            reason = "rate_limit" if status == 429 else f"server_error: {status}"
            return None, self._backoff(headers, attempt), reason, f"HTTP {status}"
        if status in (400, 422):
            message = self.wire.scrub(_message(status, data))
            return None, None, f"bad_request: {message}", message
        if status != 200:
            message = self.wire.scrub(_message(status, data))
            return None, None, f"http_{status}: {message}", f"HTTP {status}: {message}"
        entry = completion_entry(data)
        if entry is None:
            # A 200 that is not a chat completion: a proxy's error page, a torn body, fields of
            # the wrong kind. Scrubbed whole, then cut: cut first, the key could show in part.
            return None, self._backoff(None, attempt), "bad_response", self.wire.scrub(repr(data), keep=80)
        return entry, None, None, ""

    def _backoff(self, headers: Any, attempt: int) -> float:
        """Exponential backoff with full jitter, or the server's Retry-After when it sends one."""
        told = _retry_after_s(headers)
        if told is not None:
            return min(told, MAX_RETRY_AFTER_S)
        # Jitter spreads retries of concurrent workers so they do not hit the server in step.
        return min(MAX_BACKOFF_S, self.backoff_s * 2 ** min(attempt - 1, 10)) * random.uniform(0.5, 1.0)


def _tokens(value: Any) -> bool:
    """A token count as the wire format has it: a whole number, not below 0, or absent."""
    return value is None or type(value) is int and value >= 0


def completion_entry(data: bytes) -> dict | None:
    """The cache entry of a 200 reply (text, served model, usage, finish reason), or None when
    it is not a chat completion: not strict JSON (NaN in it could never be written), no choice,
    a content that is neither text nor a list of text parts (some servers send parts), a model,
    finish reason or token count of the wrong kind."""
    try:
        payload = loads(data)
        choice = payload["choices"][0]
        content = choice["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    if isinstance(content, list):
        if not all(isinstance(p, dict) and isinstance(p.get("text", ""), str) for p in content):
            return None
        content = "".join(p.get("text", "") for p in content if p.get("type", "text") == "text")
    if not isinstance(content, (str, type(None))):
        return None
    model, finish = payload.get("model"), choice.get("finish_reason")
    if not isinstance(model, (str, type(None))) or not isinstance(finish, (str, type(None))):
        return None
    usage = payload.get("usage")  # optional in the wire format
    if usage is not None:
        if not isinstance(usage, dict):
            return None
        details = usage.get("prompt_tokens_details")  # cached_tokens: served from the provider's prompt cache
        cached = details.get("cached_tokens") if isinstance(details, dict) else None
        usage = {"prompt_tokens": usage.get("prompt_tokens"), "completion_tokens": usage.get("completion_tokens"),
                 "cached_prompt_tokens": cached}
        if not all(map(_tokens, usage.values())) or (cached or 0) > (usage["prompt_tokens"] or 0):
            return None
    entry = {"text": (content or "").strip(), "served_model": model, "usage": usage, "finish_reason": finish}
    calls = choice["message"].get("tool_calls")
    if calls:  # kept only when there are some, so entries of plain answers are as they were
        if not isinstance(calls, list) or not all(
                isinstance(c, dict) and isinstance(c.get("function"), dict)
                and isinstance(c["function"].get("name"), str) and isinstance(c["function"].get("arguments"), str)
                for c in calls):
            return None
        entry["tool_calls"] = [{"id": c.get("id") if isinstance(c.get("id"), str) else f"call_{i}", "type": "function",
                                "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}}
                               for i, c in enumerate(calls)]
    return entry


def preflight_error(client: LLMClient, error: str, detail: str, model: str, attempts: int) -> Exception:
    """The exception for a failed preflight of this client, naming the endpoint and what to change."""
    where = f"the model endpoint {client.label}"
    model_key, sampling_key = f"{client.role}_model", f"{client.role}_sampling"
    if error == "connection":
        return EndpointError(f"cannot connect to {where} ({detail}): start the server there, or set "
                             f"{client.env}_BASE_URL to an endpoint that is up")
    if error == "timeout":
        return EndpointError(f"{where} did not answer within request_timeout_s ({client.timeout_s:g} s), {attempts} "
                             f"tries: check that {client.env}_BASE_URL is the right endpoint and that it is up, or "
                             f"raise request_timeout_s in the config")
    if error == "bad_response":
        return EndpointError(f"{where} did not answer with a chat completion ({detail}): {client.env}_BASE_URL must "
                             f"be an OpenAI-compatible API, usually ending in /v1")
    if error.startswith("bad_request"):
        return EndpointError(f"{where} refused the request with {model_key} {model!r} and {sampling_key} "
                             f"{json.dumps(client.sampling)} ({detail}): {parameter_fix(client, detail, model)}")
    if error.startswith("not_an_api"):
        return EndpointError(f"{where} answered {detail} to a chat request: what listens there is not an "
                             f"OpenAI-compatible API (a busy model server answers 429 or 503, which are retried; "
                             f"this is not): set {client.env}_BASE_URL to the model server's API base, usually ending "
                             f"in /v1")
    if error.startswith("http_404"):
        return EndpointError(f"{where} answered 404 for model {model!r} ({detail}): set {model_key} in the "
                             f"config to a model it serves, and check that {client.env}_BASE_URL is the API's base, "
                             f"usually ending in /v1")
    if error.startswith("http_"):
        return EndpointError(f"{where} answered {detail} to a chat request: check {client.env}_BASE_URL and "
                             f"{model_key} in the config")
    return EndpointDown(f"{where} answered only {error} to a first small request, {attempts} tries; "
                        f"rerun the same command when it answers")


def parameter_fix(client: LLMClient, message: str, model: str) -> str:
    """The config setting that changes what a 400 names: the first parameter of the request
    that the endpoint's message mentions."""
    key = f"{client.role}_sampling"
    sent = client.sampling["max_tokens_param"]
    other = "max_tokens" if sent == "max_completion_tokens" else "max_completion_tokens"
    fixes = [(sent, f"set max_tokens_param: {other} in {key} (the config)"),
             ("temperature", f"set temperature: null in {key} (the config), so no temperature is sent"),
             ("seed", f"set send_seed: false in {key} (the config), so no seed is sent"),
             ("model", f"set {client.role}_model in the config to a model the endpoint serves")]
    text = message.lower()
    for name, fix in fixes:
        if name in text:
            return fix
    return f"check {client.role}_model ({model!r}) and {key} in the config"


def _message(status: int, data: bytes) -> str:
    """The error message of a failed response: the OpenAI-style body's, else the raw text."""
    text = data.decode("utf-8", errors="replace")
    try:
        body = json.loads(text)
    except ValueError:
        return text.strip() or f"HTTP {status}"
    if isinstance(body, dict):
        inner = body.get("error", body)  # optional fields of a foreign error body
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(inner, str):
            return inner
    return json.dumps(body, ensure_ascii=False)


def _main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", required=True)
    ap.add_argument("prompt")
    a = ap.parse_args(argv)
    cfg = load_config(a.config)
    c = LLMClient(cfg).complete(cfg["answer_model"], [{"role": "user", "content": a.prompt}],
                                cfg["answer_max_tokens"])
    print(json.dumps(c.__dict__, ensure_ascii=False, indent=2))
    return 0 if c.error is None else 1


if __name__ == "__main__":
    sys.exit(run_cli(_main))
