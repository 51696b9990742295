"""hash: cosine top-k over signed feature-hashing vectors; deterministic, no dependencies.

Mneme's eval harness ships this embedder as its no-key, no-spend baseline for CI.
Here it is the floor of the vector backends: the same cosine ranking as `dense`, but a text's
vector is its hashed word unigrams and bigrams instead of a model's embedding, so any machine
reproduces its hits byte for byte. Only turns that share at least one hashed feature (bucket)
with the query are candidates; a query that shares none gets no hits.
"""
from __future__ import annotations

import threading

from backends import check_settings
from backends._embed import HashEmbedder
from backends.keyword import TieOrder, neg_time
from cli import InputError
from contract import Hit, MemoryItem


class _Namespace:
    """Items, their tie order and an inverted index bucket -> [(position, value)]."""

    def __init__(self) -> None:
        self.items: list[MemoryItem] = []
        # The tie-break of _embed.rank_key (newer timestamp, then insertion order), applied
        # without sorting every scored item: nearly every item shares a bucket with a query.
        self.order = TieOrder(neg_time)
        self.postings: dict[int, list[tuple[int, float]]] = {}


class HashBackend:
    """Exact cosine over sparse hashed vectors, searched through an inverted index."""
    name = "hash"
    deterministic = True  # a fixed hash and exact search: the same adds give the same hits

    def __init__(self, dim: int = 1024) -> None:
        self.embedder = HashEmbedder(dim)
        self.version = self.embedder.name
        self._spaces: dict[str, _Namespace] = {}
        # add mutates the index while search reads it: one lock keeps a search from seeing a
        # half-appended posting list.
        self._lock = threading.Lock()

    def reset(self, namespace: str) -> None:
        with self._lock:
            self._spaces.pop(namespace, None)  # drop the index, not just its items

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        vectors = self.embedder.passages([it.text for it in items])
        with self._lock:
            space = self._spaces.setdefault(namespace, _Namespace())
            for it, vec in zip(items, vectors):
                pos = space.order.append(it.metadata.get("timestamp", ""))
                space.items.append(it)
                for idx, val in vec.items():
                    space.postings.setdefault(idx, []).append((pos, val))

    def flush(self, namespace: str, timeout_s: float) -> None:
        return None  # synchronous: searchable as soon as add returns

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        if k < 1:
            return []
        q = self.embedder.query(query)
        with self._lock:
            space = self._spaces.get(namespace)
            if space is None:
                return []
            scores: dict[int, float] = {}
            for idx in sorted(q):  # fixed order, so float sums are the same on every run
                qv = q[idx]
                for pos, val in space.postings.get(idx, ()):
                    scores[pos] = scores.get(pos, 0.0) + qv * val
            items = space.items
            return [Hit(text=items[pos].text, score=scores[pos], source_ids=(items[pos].item_id,),
                        timestamp=items[pos].metadata.get("timestamp", ""))
                    for pos in space.order.top(scores, k)]


def settings(section: dict) -> dict:
    """The section checked, defaults filled: dim (int, default 1024), the number of buckets."""
    s = check_settings(section, {"dim": ((int,), 1024)}, "hash")
    if s["dim"] < 2:
        raise InputError(f"config: key 'backends.hash.dim' must be at least 2, got {s['dim']}")
    return s


def create(section: dict, config: dict) -> HashBackend:
    """Hashed bag-of-words vectors, exact cosine search."""
    return HashBackend(dim=settings(section)["dim"])
