"""summary_buffer: the last N turns verbatim plus a rolling summary of every older turn.

Mneme's summary_buffer strategy (LangChain's ConversationSummaryBufferMemory): a turn that falls
out of the buffer is folded into a running summary, which the pinned answer model writes. So this
backend calls a model itself, and discloses it (a system is reported with its model): its name
says "summary_buffer (internal summarizer: <model>)" and `internal_model` is the model.

search ignores the query (this is a buffer, not a retriever) and returns at most k hits: the
summary first, then the newest buffered turns in chronological order. The summary hit has no
source_ids: it merges every older turn, and which of their facts survived the model's rewriting
is unknown, so claiming all of them (lineage) would report a recall the context does not have;
retrieval recall is then null for the question, as for mem0's merged facts. (Measured on
data/dev.jsonl with the embedded model: lineage ids gave this backend recall 0.98 beside an
accuracy of 0.016, below keyword's.) The buffered turns keep their ids. Each add that
overflows the buffer makes one model call (old summary + overflowed turns -> new summary), so
ingestion costs one call per session at most.
A failed call raises: the turns would otherwise vanish from memory without a trace.
"""
from __future__ import annotations

import threading

from backends import check_settings
from cli import InputError
from contract import Hit, MemoryItem
from fileio import sha256_text

SUMMARY_PROMPT = """Progressively summarize the lines of a conversation, adding onto the previous summary and returning a new summary.
Keep every concrete fact: names, numbers, versions, dates, decisions and preferences. When a new line changes an earlier fact, keep the newest value and say when it changed.

Current summary:
{summary}

New lines of conversation:
{new_lines}

New summary:"""
PROMPT_SHA = sha256_text(SUMMARY_PROMPT)[:12]


class _Namespace:
    def __init__(self) -> None:
        self.summary = ""
        self.summarized: list[MemoryItem] = []   # turns folded into the summary, in order
        self.buffer: list[MemoryItem] = []


class SummaryBufferBackend:
    """Summary + recent-turn buffer per namespace; `client` needs .complete() as in llm.py."""

    def __init__(self, client, model: str, recent_turns: int = 10, summary_max_tokens: int = 256) -> None:
        self._client = client
        self.llm_client = client  # run.py counts the summarizer's calls apart from the answer model's
        self.internal_model = model
        self.recent_turns = recent_turns
        self.summary_max_tokens = summary_max_tokens
        self.name = f"summary_buffer (internal summarizer: {model})"
        self.version = (f"summary_buffer 1.1 (last {recent_turns} turns verbatim, summary "
                        f"<= {summary_max_tokens} tokens, no source ids on the summary, prompt sha256:{PROMPT_SHA})")
        self._spaces: dict[str, _Namespace] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def _space(self, namespace: str) -> tuple[_Namespace, threading.Lock]:
        with self._lock:
            if namespace not in self._spaces:
                self._spaces[namespace] = _Namespace()
                self._locks[namespace] = threading.Lock()
            return self._spaces[namespace], self._locks[namespace]

    def reset(self, namespace: str) -> None:
        with self._lock:
            self._spaces[namespace] = _Namespace()
            self._locks.setdefault(namespace, threading.Lock())

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        space, lock = self._space(namespace)
        # One lock per namespace: a summary call holds it for seconds, other namespaces go on.
        with lock:
            buffer = space.buffer + list(items)
            cut = max(0, len(buffer) - self.recent_turns)
            overflow, keep = buffer[:cut], buffer[cut:]
            if overflow:
                space.summary = self._summarize(space.summary, overflow)
                space.summarized = space.summarized + overflow
            space.buffer = keep

    def _summarize(self, summary: str, turns: list[MemoryItem]) -> str:
        lines = "\n".join(f'[{t.metadata.get("timestamp", "")}] {t.text}' for t in turns)
        prompt = SUMMARY_PROMPT.format(summary=summary or "(empty)", new_lines=lines)
        result = self._client.complete(model=self.internal_model, max_tokens=self.summary_max_tokens,
                                       messages=[{"role": "user", "content": prompt}])
        if result.error is not None:
            raise RuntimeError(f"summarizer call failed: {result.error}")
        text = (result.text or "").strip()
        if not text:
            raise RuntimeError("summarizer returned an empty summary")
        return text

    def flush(self, namespace: str, timeout_s: float) -> None:
        return None  # add returns after the summary is written

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        if k < 1:
            return []
        space, lock = self._space(namespace)
        with lock:
            summary, summarized, buffer = space.summary, space.summarized, space.buffer
        hits = []
        if summary:
            hits.append(Hit(text=f"Summary of the earlier conversation: {summary}", score=1.0,
                            source_ids=(), timestamp=summarized[-1].metadata.get("timestamp", "")))
        room = k - len(hits)
        recent = buffer[-room:] if room > 0 else []
        hits.extend(Hit(text=t.text, score=1.0, source_ids=(t.item_id,),
                        timestamp=t.metadata.get("timestamp", "")) for t in recent)
        return hits


def settings(section: dict) -> dict:
    """The section checked, defaults filled: recent_turns (default 10), summary_max_tokens (256)."""
    s = check_settings(section, {"recent_turns": ((int,), 10), "summary_max_tokens": ((int,), 256)},
                       "summary_buffer")
    for key in ("recent_turns", "summary_max_tokens"):
        if s[key] < 1:
            raise InputError(f"config: key 'backends.summary_buffer.{key}' must be at least 1, got {s[key]}")
    return s


def create(section: dict, config: dict) -> SummaryBufferBackend:
    """The summarizer is config['answer_model'] through llm.LLMClient (LLM_BASE_URL, LLM_API_KEY)."""
    s = settings(section)
    from llm import LLMClient
    return SummaryBufferBackend(LLMClient(config), config["answer_model"],
                                recent_turns=s["recent_turns"], summary_max_tokens=s["summary_max_tokens"])
