"""keyword: the dependency-free reference backend, the floor every memory system is compared with.

Score = token overlap between query and turn (each query token counted at most as often as it
occurs in the query); ties broken by the newer timestamp, then by insertion order. It is meant
to be a floor that anyone can reproduce byte for byte, not a good retriever.

Search goes through an inverted index built in add(), so it touches only the turns that share a
query token, and picks the top k without sorting every match (TieOrder below). In a namespace
of ARRAYS_FROM turns or more the overlaps are counted with numpy (one np.bincount over the posting
arrays); below that, in plain Python (Counter.update over the same arrays), which is as fast
there and needs no numpy import (run.py's start-up). The hits are the ones the original full
scan returned, Hit for Hit: ScanKeywordBackend below is that scan, which tests/test_backends.py
compares with the index on random data at both sizes and bench/backend_latency.py times.
"""
from __future__ import annotations

import bisect
import heapq
import re
import threading
from array import array
from collections import Counter
from itertools import islice
from typing import Callable, Hashable

from backends import check_settings, require
from contract import Hit, MemoryItem

TOKEN = re.compile(r"\w+", re.UNICODE)
# A namespace this large is searched with numpy arrays, a smaller one in plain Python, which
# needs no numpy import (run.py's start-up) and is as fast there; bm25 shares the threshold.
# Both paths give the same hits.
ARRAYS_FROM = 2000


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens (Unicode-aware)."""
    return [t.lower() for t in TOKEN.findall(text)]


def neg_time(stamp: str) -> tuple:
    """Sort key that puts newer ISO timestamps first (ascending order = newest first)."""
    # ISO strings of one dataset share a format, so a reversed string order is "newer first"
    # without parsing; encode as negated code points for an ascending sort. A string sorts
    # before the longer strings it is a prefix of: the scan this backend replaced did so.
    return tuple(-ord(ch) for ch in stamp)


class Postings:
    """A growing list of ints (positions, or ids) kept as a C array, with a numpy copy made at
    search time and reused until the list grows again."""

    __slots__ = ("values", "_array")

    def __init__(self) -> None:
        self.values = array("i")
        self._array = None

    def append(self, value: int) -> None:
        """Add one value at the end."""
        self.values.append(value)

    def __len__(self) -> int:
        return len(self.values)

    def numpy(self, np):
        """The values as an int32 ndarray (a copy: appending to `values` stays possible)."""
        if self._array is None or len(self._array) != len(self.values):
            self._array = np.array(self.values, dtype=np.int32)
        return self._array


class TieOrder:
    """Positions 0, 1, 2, ... with a timestamp key each; the top k of a score map without a full sort."""

    # Positions that share a timestamp share one key object, so the distinct keys are few (one per
    # session in run.py) and are kept sorted as they arrive; each key's positions are appended in
    # order. A query token as common as "the" can tie thousands of turns at the k-th score: those
    # ties are then taken by walking the keys in order, not by comparing thousands of key tuples
    # (comparing them would be most of the search's time).

    def __init__(self, stamp_key: Callable[[str], Hashable]) -> None:
        self._stamp_key = stamp_key
        self._by_stamp: dict[str, Hashable] = {}   # timestamp -> its key, one object per stamp
        self._groups: dict[Hashable, list[int]] = {}
        self._keys_sorted: list = []
        self.keys: list = []                        # position -> key
        self._ranks = None                          # position -> rank of its key, an ndarray
        self._ranks_stale = True                    # a new key moved the ranks of later keys

    def append(self, stamp: str) -> int:
        """Register the next position with this timestamp; returns the position."""
        key = self._by_stamp.get(stamp)
        if key is None:
            key = self._by_stamp[stamp] = self._stamp_key(stamp)
            self._groups[key] = []
            bisect.insort(self._keys_sorted, key)
            self._ranks_stale = True
        pos = len(self.keys)
        self.keys.append(key)
        self._groups[key].append(pos)
        return pos

    def ranks(self, np):
        """int64 array, position -> the rank of its key among the distinct keys (0 first)."""
        if self._ranks_stale or self._ranks is None:
            rank = {key: r for r, key in enumerate(self._keys_sorted)}
            self._ranks = np.fromiter(map(rank.__getitem__, self.keys), dtype=np.int64, count=len(self.keys))
            self._ranks_stale = False
        elif len(self._ranks) < len(self.keys):
            # New positions with known keys only: the ranks of the old ones did not move.
            rank = {key: r for r, key in enumerate(self._keys_sorted)}
            new = self.keys[len(self._ranks):]
            self._ranks = np.concatenate([self._ranks, np.fromiter(map(rank.__getitem__, new),
                                                                   dtype=np.int64, count=len(new))])
        return self._ranks

    def top_arrays(self, np, positions, scores, k: int):
        """top() over parallel arrays (distinct positions, float or int scores): the first k
        positions by (higher score, smaller key, smaller position), as a list of ints."""
        n = len(positions)
        if n > k:
            kth = np.partition(scores, n - k)[n - k]
            above = scores > kth
            chosen = positions[above]
            ties = positions[scores == kth]
            need = k - len(chosen)
            if need < len(ties):
                # Smallest (key rank, position) among the ties: one int64 per tie, exact.
                order = self.ranks(np)[ties] * len(self.keys) + ties
                ties = ties[np.argpartition(order, need - 1)[:need]]
            positions = np.concatenate([chosen, ties])
            scores = np.concatenate([scores[above], np.full(len(ties), kth, dtype=scores.dtype)])
        ranks = self.ranks(np)[positions]
        order = np.lexsort((positions, ranks, -scores))
        return positions[order].tolist()

    def top(self, scores: dict[int, float], k: int) -> list[int]:
        """The first k positions of `scores` sorted by (higher score, smaller key, smaller position)."""
        if len(scores) > k:
            kth = heapq.nlargest(k, scores.values())[-1]
            ties = [p for p, s in scores.items() if s >= kth]
            chosen = [p for p in ties if scores[p] > kth]  # fewer than k of them
            if chosen:
                ties = [p for p in ties if scores[p] == kth]
            need = k - len(chosen)
            # Walking the key order visits about need * n / len(ties) positions; comparing the
            # ties costs len(ties). Both give the same positions: pick the cheaper.
            if need < len(ties) and len(ties) * len(ties) > need * len(self.keys):
                chosen += self._first(set(ties), need)
            else:
                keys = self.keys
                chosen += heapq.nsmallest(need, ties, key=lambda p: (keys[p], p))
        else:
            chosen = list(scores)
        keys = self.keys
        return sorted(chosen, key=lambda p: (-scores[p], keys[p], p))

    def _first(self, wanted: set[int], n: int) -> list[int]:
        """The first n positions of `wanted` in (key, position) order."""
        out: list[int] = []
        for key in self._keys_sorted:
            out += islice(filter(wanted.__contains__, self._groups[key]), n - len(out))
            if len(out) == n:
                break
        return out


class _Namespace:
    """One namespace: its items, their tie order, and token -> postings by count level."""

    def __init__(self) -> None:
        self.items: list[MemoryItem] = []
        self.order = TieOrder(neg_time)
        # levels[token][j] lists, in insertion order, the positions whose turn holds the token at
        # least j + 1 times. A query holding it c times adds 1 per level up to c, which sums to
        # min(count in turn, c): counting every position of those levels gives the overlap.
        self.levels: dict[str, list[Postings]] = {}


class KeywordBackend:
    """Token-overlap search through an in-memory inverted index per namespace."""
    name = "keyword"
    # The same adds give the same hits, byte for byte (tests/test_backends.py): repeats reuse
    # one ingestion (run.py).
    deterministic = True
    version = "keyword-overlap 1.0"  # the index returns the scan's hits, so results are unchanged

    def __init__(self) -> None:
        self._np = None  # numpy, imported by the first search of a namespace of ARRAYS_FROM turns
        self._spaces: dict[str, _Namespace] = {}
        # add mutates the index while search reads it: one lock keeps a search from seeing a
        # half-appended posting list (run.py searches from worker threads).
        self._lock = threading.Lock()

    def reset(self, namespace: str) -> None:
        with self._lock:
            self._spaces.pop(namespace, None)  # drop the index, not just its items

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        counted = [(it, Counter(tokens(it.text))) for it in items]
        with self._lock:
            space = self._spaces.setdefault(namespace, _Namespace())
            for it, counts in counted:
                pos = space.order.append(it.metadata.get("timestamp", ""))
                space.items.append(it)
                for tok, c in counts.items():
                    levels = space.levels.setdefault(tok, [])
                    while len(levels) < c:
                        levels.append(Postings())
                    for level in levels[:c]:
                        level.append(pos)

    def flush(self, namespace: str, timeout_s: float) -> None:
        return None  # synchronous: searchable as soon as add returns

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        if k < 1:
            return []
        q = Counter(tokens(query))
        with self._lock:
            space = self._spaces.get(namespace)
            if space is None:
                return []
            levels = [level for tok, c in q.items() for level in space.levels.get(tok, ())[:c]]
            if len(space.items) < ARRAYS_FROM:
                overlap: Counter = Counter()
                for level in levels:
                    overlap.update(level.values)
                best = space.order.top(overlap, k)
                scores = [overlap[p] for p in best]
            else:
                best, scores = self._array_top(space, levels, k)
            items = space.items
        return [Hit(text=items[p].text, score=float(s), source_ids=(items[p].item_id,),
                    timestamp=items[p].metadata.get("timestamp", ""))
                for p, s in zip(best, scores)]

    def _array_top(self, space: _Namespace, levels: list[Postings], k: int) -> tuple[list[int], list[int]]:
        """The k best positions and their overlaps, counted with numpy."""
        if self._np is None:
            self._np = require("numpy", "keyword")
        np = self._np
        if not levels:
            return [], []
        counts = np.bincount(np.concatenate([level.numpy(np) for level in levels]), minlength=len(space.items))
        positions = np.flatnonzero(counts)
        best = space.order.top_arrays(np, positions, counts[positions], k)
        return best, counts[best].tolist()


class ScanKeywordBackend:
    """The full scan KeywordBackend replaced, kept as the reference that tests and
    bench/backend_latency.py compare it against: every turn scored, every match sorted."""
    name = "keyword-scan"
    version = KeywordBackend.version

    def __init__(self) -> None:
        self._store: dict[str, list[tuple[MemoryItem, Counter]]] = {}

    def reset(self, namespace: str) -> None:
        self._store[namespace] = []

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        self._store.setdefault(namespace, []).extend((it, Counter(tokens(it.text))) for it in items)

    def flush(self, namespace: str, timeout_s: float) -> None:
        return None

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        if k < 1:
            return []
        q = Counter(tokens(query))
        scored = []
        for order, (it, doc) in enumerate(self._store.get(namespace, [])):
            overlap = sum(min(c, q[t]) for t, c in doc.items())
            if overlap:
                # Sort key: more overlap, then newer timestamp, then earlier insertion.
                scored.append((-overlap, _scan_neg_time(it.metadata.get("timestamp", "")), order, it))
        scored.sort(key=lambda x: x[:3])
        return [Hit(text=it.text, score=float(-neg), source_ids=(it.item_id,),
                    timestamp=it.metadata.get("timestamp", ""))
                for neg, _, _, it in scored[:k]]


def _scan_neg_time(stamp: str) -> tuple:
    # The scan's own copy of neg_time, so that a change to the index's key cannot hide.
    return tuple(-ord(ch) for ch in stamp)


def settings(section: dict) -> dict:
    """The keyword backend takes no settings."""
    return check_settings(section, {}, "keyword")


def create(section: dict, config: dict) -> KeywordBackend:
    """The reference backend."""
    settings(section)
    return KeywordBackend()
