"""newest: the k newest turns, whatever the question; a query-blind floor for the artifact audit.

It never reads the query, so whatever it finds it finds because evidence sits near the end of a
history. artifacts.py runs it beside the real systems: on a dataset whose evidence cannot be told
from the rest without the question, it finds evidence for few questions.
"""
from __future__ import annotations

import threading

from backends import check_settings
from contract import Hit, MemoryItem


class NewestBackend:
    """Stores turns in order; search returns the last k added, newest first."""
    name = "newest"
    version = "newest/1"
    deterministic = True  # no state besides the adds, in their order

    def __init__(self) -> None:
        self._spaces: dict[str, list[MemoryItem]] = {}
        self._lock = threading.Lock()

    def reset(self, namespace: str) -> None:
        with self._lock:
            self._spaces.pop(namespace, None)

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        with self._lock:
            self._spaces.setdefault(namespace, []).extend(items)

    def flush(self, namespace: str, timeout_s: float) -> None:
        return None  # synchronous: searchable as soon as add returns

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        # Sessions are added in chronological order (run.py), so insertion order is time order,
        # and within a session it is the order of the turns.
        with self._lock:
            items = list(self._spaces.get(namespace, ()))
        newest = items[::-1][:max(k, 0)]
        return [Hit(text=it.text, score=float(len(newest) - i), source_ids=(it.item_id,),
                    timestamp=it.metadata.get("timestamp", "")) for i, it in enumerate(newest)]


def settings(section: dict) -> dict:
    """The section checked: newest takes no keys."""
    return check_settings(section, {}, "newest")


def create(section: dict, config: dict) -> NewestBackend:
    """The k newest turns, query ignored."""
    settings(section)
    return NewestBackend()
