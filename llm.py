"""The one model client: any OpenAI-compatible chat endpoint, with bounded retries and a disk
cache. The endpoint comes from the environment only (LLM_BASE_URL, LLM_API_KEY); neither value
is ever written to a file, a log or an error message.

The client speaks the chat-completions wire format over `requests` directly: the openai SDK
cost 2.2 s to import and two thirds of the harness's CPU per call in its request transform
(measured for the issue "At scale and under faults"; bench/throughput.py prints the ratio),
and the harness needs one POST and its status code, nothing else of the SDK.

Usage (a smoke test of the endpoint):
  python llm.py --config config.yaml "Say hello"
"""
from __future__ import annotations

import argparse
import email.utils
import hashlib
import json
import os
import queue
import random
import sys
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Iterator

import requests

from interface import InputError, load_config, run_cli, write_atomic

# Wait ceilings: a server asking for more than this is treated as asking for this much, so a run
# cannot stall for hours on one header; the retry count still bounds the total.
MAX_RETRY_AFTER_S = 120.0
MAX_BACKOFF_S = 60.0
# Used when only LLM_API_KEY is set, as the openai SDK does.
DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Statuses worth retrying: the server is busy or failed, not the request (the openai SDK's set).
RETRY_STATUSES = frozenset({408, 409, 429})


class AuthenticationError(InputError):
    """The endpoint refused the key (401/403): every later call would fail the same way, so the
    stage stops at once with exit 2 instead of sending every question."""


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


def endpoint_from_env() -> tuple[str, str, str]:
    """The endpoint, key and endpoint identity from the environment; the key is only ever held
    in memory. LLM_ENDPOINT_ID, when set, names what serves the model independently of its
    address: serve.py sets it, since the embedded server gets a new port every time and the
    cache must still hit."""
    base_url = os.environ.get("LLM_BASE_URL") or None
    api_key = os.environ.get("LLM_API_KEY") or ""
    if not api_key and not base_url:
        raise InputError("no model endpoint: set LLM_BASE_URL (and LLM_API_KEY if the endpoint needs "
                         "one), or run `make bench`, which serves the embedded model locally")
    # The identity keeps what it was before this client dropped the openai SDK (None stood for
    # the SDK's default endpoint), so existing caches still hit.
    return base_url or DEFAULT_BASE_URL, api_key, os.environ.get("LLM_ENDPOINT_ID") or base_url


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


class LLMClient:
    """Thread-safe client for one endpoint; config gives seed, sampling (of `role`: 'answer' or
    'judge'), timeouts, retries and cache. Each thread keeps its own HTTP session, so
    connections are reused without a shared lock."""

    def __init__(self, config: dict, use_cache: bool = True, role: str = "answer") -> None:
        self.base_url, self._api_key, self.endpoint_id = endpoint_from_env()
        self.role = role
        self.sampling = config[f"{role}_sampling"]
        self._url = self.base_url.rstrip("/") + "/chat/completions"
        self._headers = {"Content-Type": "application/json"}
        if self._api_key:
            self._headers["Authorization"] = f"Bearer {self._api_key}"
        self.seed = config["seed"]
        self.timeout_s = config["request_timeout_s"]
        self.max_retries = config["max_retries"]
        self.backoff_s = config["retry_backoff_s"]
        self.cache_dir = config["cache_dir"] if use_cache else None
        self._local = threading.local()
        self._lock = threading.Lock()
        self.network_calls = 0  # requests actually sent; a warm rerun keeps this at zero
        self._usage = {"calls": 0, "cached": 0, "prompt_tokens": 0, "completion_tokens": 0,
                       "prompt_tokens_missing": 0, "completion_tokens_missing": 0}
        self._inflight: dict[str, threading.Event] = {}  # cache key -> set when its call ends

    # -- cache --------------------------------------------------------------------------------
    def _cache_path(self, key: str) -> str:
        return os.path.join(self.cache_dir, key[:2], key + ".json")

    def _cache_get(self, key: str) -> dict | None:
        if not self.cache_dir:
            return None
        try:
            with open(self._cache_path(key), encoding="utf-8") as fh:
                return json.load(fh)
        except FileNotFoundError:
            return None
        except (OSError, json.JSONDecodeError):
            return None  # a torn cache file is a miss, and is rewritten on success

    def _cache_put(self, key: str, entry: dict) -> None:
        if self.cache_dir:
            write_atomic(self._cache_path(key), json.dumps(entry, ensure_ascii=False))

    # -- calls --------------------------------------------------------------------------------
    def request(self, model: str, messages: list[dict], max_tokens: int,
                response_format: dict | None = None) -> dict:
        """The body of a chat request with this client's sampling parameters."""
        request = {"model": model, "messages": messages, **sampling_params(self.sampling, max_tokens, self.seed)}
        if response_format is not None:
            request["response_format"] = response_format
        return request

    def complete(self, model: str, messages: list[dict], max_tokens: int,
                 response_format: dict | None = None, repeat: int = 0) -> Completion:
        """One chat completion with the configured sampling (temperature 0 and the config seed
        by default). API errors come back as Completion.error; only a refused key raises
        (AuthenticationError). A repeat above 0 has cache entries of its own, so a repeated run
        asks the endpoint again."""
        request = self.request(model, messages, max_tokens, response_format)
        # Repeat 0 keeps the key it had before repeats existed, so existing caches still hit.
        key = cache_key(self.endpoint_id, {**request, "repeat": repeat} if repeat else request)
        hit = self._cached(key)
        if hit is not None:
            return hit
        if not self.cache_dir:
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
            return self.complete(model, messages, max_tokens, response_format, repeat)  # it failed: ask
        try:
            return self._ask(key, request)
        finally:
            with self._lock:
                self._inflight.pop(key).set()

    def _cached(self, key: str) -> Completion | None:
        """The cached answer for this key, counted, or None."""
        hit = self._cache_get(key)
        if hit is None:
            return None
        self._count(hit["usage"], cached=True)
        # finish_reason is absent from entries written before it was recorded: not known.
        return Completion(hit["text"], hit["served_model"], hit["usage"], True, None, 0, hit.get("finish_reason"))

    def _ask(self, key: str, request: dict) -> Completion:
        """Send the request, retrying what can be retried; cache a good answer."""
        body = json.dumps(request, ensure_ascii=False).encode("utf-8")
        error = None
        for attempt in range(1, self.max_retries + 2):
            with self._lock:
                self.network_calls += 1
            entry, wait, error = self._attempt(body, attempt)
            if entry is not None:
                self._count(entry["usage"], cached=False)
                if not entry["text"]:
                    # An empty answer is a failure of the call, not an answer: never cached, so
                    # a rerun asks again; the record says empty_answer.
                    return Completion("", entry["served_model"], entry["usage"], False, "empty_answer",
                                      attempt, entry["finish_reason"])
                self._cache_put(key, entry)
                return Completion(entry["text"], entry["served_model"], entry["usage"], False, None, attempt,
                                  entry["finish_reason"])
            if wait is None or attempt > self.max_retries:
                break
            time.sleep(wait)
        return Completion(None, None, None, False, error, attempt)

    def _count(self, usage: dict | None, cached: bool) -> None:
        with self._lock:
            self._usage["calls"] += 1
            self._usage["cached"] += cached
            for k in ("prompt_tokens", "completion_tokens"):
                n = (usage or {}).get(k)  # usage is optional in the wire format: a missing count is not 0
                self._usage[k] += n or 0
                self._usage[f"{k}_missing"] += n is None

    def usage_snapshot(self) -> dict:
        """Completions so far: calls, how many came from the cache, and their token usage."""
        with self._lock:
            return dict(self._usage)

    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
        return session

    def _attempt(self, body: bytes, attempt: int) -> tuple[dict | None, float | None, str | None]:
        """One request: (cache entry, None, None) on success, else (None, seconds to wait
        before a retry or None when retrying cannot help, error)."""
        try:
            r = self._session().post(self._url, data=body, headers=self._headers, timeout=self.timeout_s)
        except requests.Timeout:
            return None, self._backoff(None, attempt), "timeout"
        except requests.ConnectionError:
            return None, self._backoff(None, attempt), "connection"
        status = r.status_code
        if status in (401, 403):
            raise AuthenticationError(f"authentication failed: the endpoint answered HTTP {status} "
                                      f"({self._scrub(_message(r))}); check LLM_API_KEY and LLM_BASE_URL")
        if status in RETRY_STATUSES or status >= 500:
            reason = "rate_limit" if status == 429 else f"server_error: {status}"
            return None, self._backoff(r.headers, attempt), reason
        if status in (400, 422):
            return None, None, f"bad_request: {self._scrub(_message(r))}"
        if status != 200:
            return None, None, f"http_{status}: {self._scrub(_message(r))}"
        try:
            data = r.json()
            choice = data["choices"][0]
            text = choice["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError):
            # A 200 that is not a chat completion: a proxy's error page, a torn body.
            return None, self._backoff(None, attempt), "bad_response"
        usage = data.get("usage")  # optional in the wire format
        if isinstance(usage, dict):
            usage = {"prompt_tokens": usage.get("prompt_tokens"), "completion_tokens": usage.get("completion_tokens")}
        else:
            usage = None
        return {"text": text.strip(), "served_model": data.get("model"), "usage": usage,
                "finish_reason": choice.get("finish_reason")}, None, None

    def _backoff(self, headers: Any, attempt: int) -> float:
        """Exponential backoff with full jitter, or the server's Retry-After when it sends one."""
        told = _retry_after_s(headers)
        if told is not None:
            return min(told, MAX_RETRY_AFTER_S)
        # Jitter spreads retries of concurrent workers so they do not hit the server in step.
        return min(MAX_BACKOFF_S, self.backoff_s * 2 ** min(attempt - 1, 10)) * random.uniform(0.5, 1.0)

    def _scrub(self, text: str) -> str:
        """Never let the key reach a record, even if a server echoes it in an error."""
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return text[:300]


def _message(r: requests.Response) -> str:
    """The error message of a failed response: the OpenAI-style body's, else the raw text."""
    try:
        body = r.json()
    except ValueError:
        return r.text.strip() or f"HTTP {r.status_code}"
    if isinstance(body, dict):
        inner = body.get("error", body)  # optional fields of a foreign error body
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(inner, str):
            return inner
    return json.dumps(body, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# Concurrency: the stages submit model calls to worker threads and write from the main thread.
# ---------------------------------------------------------------------------------------------

class Workers:
    """Daemon worker threads for model calls; results come back to the main thread in
    completion order. Daemon threads, unlike concurrent.futures', are not joined at exit: a
    Ctrl-C ends the stage at once (exit 130) instead of waiting out every call in flight, whose
    questions then have no record and are redone on resume."""

    def __init__(self, n: int) -> None:
        self._todo: queue.SimpleQueue = queue.SimpleQueue()
        self._done: queue.SimpleQueue = queue.SimpleQueue()
        self._stopped = threading.Event()
        self.pending = 0
        for _ in range(n):
            threading.Thread(target=self._work, daemon=True).start()

    def _work(self) -> None:
        while True:
            tag, fn, args = self._todo.get()
            if self._stopped.is_set():
                continue  # a call raised (a refused key): send nothing more, the stage is stopping
            try:
                self._done.put((tag, fn(*args), None))
            except BaseException as e:  # handed to the main thread, which re-raises it
                self._stopped.set()
                self._done.put((tag, None, e))

    def submit(self, tag: Any, fn: Callable, *args: Any) -> None:
        """Queue fn(*args); its result comes back from results() with tag."""
        self.pending += 1
        self._todo.put((tag, fn, args))

    def results(self, block: bool) -> Iterator[tuple[Any, Any]]:
        """(tag, result) of finished calls: with block=False those ready now, with block=True
        every pending one. An exception raised by a call is raised here, in the main thread."""
        while self.pending:
            try:
                # A timeout keeps the main thread responsive to Ctrl-C while it waits.
                tag, result, error = self._done.get(timeout=0.2) if block else self._done.get_nowait()
            except queue.Empty:
                if block:
                    continue
                return
            self.pending -= 1
            if error is not None:
                raise error
            yield tag, result


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
