"""The one model client: any OpenAI-compatible chat endpoint, with bounded retries and a disk
cache. The endpoint comes from the environment only (LLM_BASE_URL, LLM_API_KEY); neither value
is ever written to a file, a log or an error message.

Usage (a smoke test of the endpoint):
  python llm.py --config config.yaml "Say hello"
"""
from __future__ import annotations

import argparse
import email.utils
import hashlib
import json
import os
import random
import sys
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone

from interface import InputError, load_config, run_cli, write_atomic

# Wait ceilings: a server asking for more than this is treated as asking for this much, so a run
# cannot stall for hours on one header; the retry count still bounds the total.
MAX_RETRY_AFTER_S = 120.0
MAX_BACKOFF_S = 60.0
# Placeholder for local servers that need no key; the OpenAI SDK refuses an empty one.
NO_KEY = "not-needed"


@dataclass(frozen=True)
class Completion:
    """One answer: text and served model on success, a short stable reason in error otherwise."""
    text: str | None
    served_model: str | None
    usage: dict | None
    cached: bool
    error: str | None
    attempts: int


def endpoint_from_env() -> tuple[str | None, str, str | None]:
    """The endpoint, key and endpoint identity from the environment; the key is only ever held
    in memory. LLM_ENDPOINT_ID, when set, names what serves the model independently of its
    address: serve.py sets it, since the embedded server gets a new port every time and the
    cache must still hit."""
    base_url = os.environ.get("LLM_BASE_URL") or None
    api_key = os.environ.get("LLM_API_KEY") or ""
    if not api_key and not base_url:
        raise InputError("no model endpoint: set LLM_BASE_URL (and LLM_API_KEY if the endpoint needs "
                         "one), or run `make bench`, which serves the embedded model locally")
    return base_url, api_key or NO_KEY, os.environ.get("LLM_ENDPOINT_ID") or base_url


def cache_key(endpoint: str | None, request: dict) -> str:
    """sha256 of everything that changes the output: endpoint, model, messages, sampling."""
    blob = json.dumps({"base_url": endpoint, **request}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _retry_after_s(response) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date), if there is one."""
    value = response.headers.get("retry-after") if response is not None else None
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
    """Thread-safe client for one endpoint; config gives seed, timeouts, retries and cache."""

    def __init__(self, config: dict, use_cache: bool = True) -> None:
        import openai  # the core dependency, imported here so --help works without it

        self._openai = openai
        self.base_url, self._api_key, self.endpoint_id = endpoint_from_env()
        self.seed = config["seed"]
        self.max_retries = config["max_retries"]
        self.backoff_s = config["retry_backoff_s"]
        self.cache_dir = config["cache_dir"] if use_cache else None
        self._client = openai.OpenAI(base_url=self.base_url, api_key=self._api_key,
                                     timeout=config["request_timeout_s"], max_retries=0)
        self._lock = threading.Lock()
        self.network_calls = 0  # requests actually sent; a warm rerun keeps this at zero

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
    def complete(self, model: str, messages: list[dict], max_tokens: int,
                 response_format: dict | None = None) -> Completion:
        """One chat completion at temperature 0 with the config seed; never raises on API errors."""
        request = {"model": model, "messages": messages, "temperature": 0.0, "seed": self.seed,
                   "max_tokens": max_tokens}
        if response_format is not None:
            request["response_format"] = response_format
        key = cache_key(self.endpoint_id, request)
        hit = self._cache_get(key)
        if hit is not None:
            return Completion(hit["text"], hit["served_model"], hit["usage"], True, None, 0)

        error = None
        for attempt in range(1, self.max_retries + 2):
            with self._lock:
                self.network_calls += 1
            entry, wait, error = self._attempt(request, attempt)
            if entry is not None:
                self._cache_put(key, entry)
                return Completion(entry["text"], entry["served_model"], entry["usage"], False, None, attempt)
            if wait is None or attempt > self.max_retries:
                break
            time.sleep(wait)
        return Completion(None, None, None, False, error, attempt)

    def _attempt(self, request: dict, attempt: int) -> tuple[dict | None, float | None, str | None]:
        """One request: (cache entry, None, None) on success, else (None, seconds to wait
        before a retry or None when retrying cannot help, error)."""
        o = self._openai
        try:
            r = self._client.chat.completions.create(**request)
        except o.BadRequestError as e:
            return None, None, f"bad_request: {self._scrub(_message(e))}"
        except o.RateLimitError as e:
            return None, self._backoff(e.response, attempt), "rate_limit"
        except o.APITimeoutError:
            return None, self._backoff(None, attempt), "timeout"
        except o.APIConnectionError:
            return None, self._backoff(None, attempt), "connection"
        except o.APIStatusError as e:
            if e.status_code >= 500:
                return None, self._backoff(e.response, attempt), f"server_error: {e.status_code}"
            return None, None, f"http_{e.status_code}: {self._scrub(_message(e))}"
        if not r.choices:
            return None, None, "empty_response: no choices"
        usage = None
        if r.usage is not None:
            usage = {"prompt_tokens": r.usage.prompt_tokens, "completion_tokens": r.usage.completion_tokens}
        return {"text": (r.choices[0].message.content or "").strip(), "served_model": r.model,
                "usage": usage}, None, None

    def _backoff(self, response, attempt: int) -> float:
        """Exponential backoff with full jitter, or the server's Retry-After when it sends one."""
        told = _retry_after_s(response)
        if told is not None:
            return min(told, MAX_RETRY_AFTER_S)
        # Jitter spreads retries of concurrent workers so they do not hit the server in step.
        return min(MAX_BACKOFF_S, self.backoff_s * 2 ** min(attempt - 1, 10)) * random.uniform(0.5, 1.0)

    def _scrub(self, text: str) -> str:
        """Never let the key reach a record, even if a server echoes it in an error."""
        if self._api_key and self._api_key != NO_KEY:
            text = text.replace(self._api_key, "***")
        return text[:300]


def _message(e: Exception) -> str:
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)  # optional fields of a foreign error body
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
    return str(getattr(e, "message", e))


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
