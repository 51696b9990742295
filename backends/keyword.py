"""keyword: the dependency-free reference backend of the seed guide (section 4.1).

Score = token overlap between query and turn (each query token counted at most as often as it
occurs in the query); ties broken by the newer timestamp, then by insertion order. It is meant
to be a floor that anyone can reproduce byte for byte, not a good retriever.
"""
from __future__ import annotations

import re
from collections import Counter

from backends import check_settings
from interface import Hit, MemoryItem

TOKEN = re.compile(r"\w+", re.UNICODE)


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens (Unicode-aware)."""
    return [t.lower() for t in TOKEN.findall(text)]


class KeywordBackend:
    """Token-overlap search over an in-memory list per namespace."""
    name = "keyword"
    version = "keyword-overlap 1.0"

    def __init__(self) -> None:
        self._store: dict[str, list[tuple[MemoryItem, Counter]]] = {}

    def reset(self, namespace: str) -> None:
        self._store[namespace] = []

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        self._store.setdefault(namespace, []).extend((it, Counter(tokens(it.text))) for it in items)

    def flush(self, namespace: str, timeout_s: float) -> None:
        return None  # synchronous: searchable as soon as add returns

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        q = Counter(tokens(query))
        scored = []
        for order, (it, doc) in enumerate(self._store.get(namespace, [])):
            overlap = sum(min(c, q[t]) for t, c in doc.items())
            if overlap:
                # Sort key: more overlap, then newer timestamp, then earlier insertion.
                scored.append((-overlap, _neg_time(it.metadata.get("timestamp", "")), order, it))
        scored.sort(key=lambda x: x[:3])
        return [Hit(text=it.text, score=float(-neg), source_ids=(it.item_id,),
                    timestamp=it.metadata.get("timestamp", ""))
                for neg, _, _, it in scored[:k]]


def _neg_time(stamp: str) -> tuple:
    # ISO strings of one dataset share a format, so a reversed string order is "newer first"
    # without parsing; encode as negated code points for an ascending sort.
    return tuple(-ord(ch) for ch in stamp)


def create(settings: dict, config: dict) -> KeywordBackend:
    """The keyword backend takes no settings."""
    check_settings(settings, {}, "keyword")
    return KeywordBackend()
