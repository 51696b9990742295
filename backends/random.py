"""random: k turns drawn at random, whatever the question; a query-blind floor for the artifact
audit.

The draw is seeded by the sha256 of the stored turn ids and the question's text, so one case and
one question always draw the same turns, on every machine and run, and two questions of a case
draw independently. Its recall is what chance gives: k over the history's length, per evidence
turn.
"""
from __future__ import annotations

import hashlib
import random
import threading

from backends import check_settings
from contract import Hit, MemoryItem


class RandomBackend:
    """Stores turns; search draws k of them without replacement, seeded per case and question."""
    name = "random"
    version = "random/1"
    deterministic = True  # the seed is a hash of what was stored and what was asked

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
        with self._lock:
            items = list(self._spaces.get(namespace, ()))
        # The namespace differs from run to run; the stored ids and the question do not.
        key = hashlib.sha256("\0".join([it.item_id for it in items] + [query]).encode("utf-8")).digest()
        drawn = random.Random(int.from_bytes(key[:8], "big")).sample(range(len(items)), min(max(k, 0), len(items)))
        return [Hit(text=items[i].text, score=float(len(drawn) - rank), source_ids=(items[i].item_id,),
                    timestamp=items[i].metadata.get("timestamp", "")) for rank, i in enumerate(drawn)]


def settings(section: dict) -> dict:
    """The section checked: random takes no keys."""
    return check_settings(section, {}, "random")


def create(section: dict, config: dict) -> RandomBackend:
    """k random turns, seeded per case and question, query ignored except as the seed."""
    settings(section)
    return RandomBackend()
