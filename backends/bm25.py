"""bm25: Okapi BM25 exactly as SQLite FTS5 ranks it, over an in-memory inverted index.

The lexical baseline beside `keyword`. Ranking is FTS5's: a query is its word tokens (`\\w+`,
lower-cased, unique), each one an FTS5 phrase, OR-ed; a turn's score is FTS5's bm25() (k1 = 1.2,
b = 0.75, IDF floored at 1e-6, document length in FTS5 tokens), computed over the namespace
alone; ties go to the newer timestamp, then to insertion order (FTS5's ORDER BY bm25, timestamp
DESC, rowid). Turns and query phrases are split by SQLite's own unicode61 tokenizer, so both
sides see FTS5's tokens.

Why not FTS5 itself: at 10k turns a search matched thousands of rows, and SQLite computed
bm25() for each (a docsize lookup and an instance walk per row) and fetched each row's content
to sort by timestamp, well over the 5 ms a search may take (`python bench/backend_latency.py
--backends bm25 --fts5-breakdown` times each step). Here the same arithmetic runs over posting
lists of only the turns that share a term. In a namespace of ARRAYS_FROM turns or more it runs
in numpy, and a search stops reading a phrase's postings once no turn found only through it
could reach the top k (MaxScore, Turtle and Flood 1995): rare phrases are read first, and the
common ones only looked up for the turns still in the running; every score is then summed again
in the query's phrase order, as FTS5 sums, so it is the same double. Below that size (a
LongMemEval or LoCoMo case), and with a question date, the sums run in plain Python, which is as
fast there and needs no numpy import. Fts5Bm25Backend below is the FTS5 backend this replaced;
tests/test_backends.py checks the two agree Hit for Hit, every score to the bit, on random text
at both sizes, and the bench times both.
"""
from __future__ import annotations

import json
import math
import re
import sqlite3
import threading
from collections import Counter
from itertools import repeat
from operator import add

from backends import check_settings, require
from backends.keyword import ARRAYS_FROM, Postings, TieOrder, tokens
from cli import InputError
from contract import Hit, MemoryItem
from dataset import parse_time

TOKENIZER = "unicode61 remove_diacritics 2"
K1, B = 1.2, 0.75  # FTS5's bm25() constants (sqlite ext/fts5/fts5_aux.c)
# unicode61's token characters in ASCII are letters and digits, folded to lower case: an ASCII
# text is split here without a round trip to SQLite (a test checks this against SQLite).
ASCII_TOKEN = re.compile(r"[a-z0-9]+")
# Relative slack on the pruning bounds: a bound and the score it bounds are sums of the same
# terms in different orders, which can differ in the last bits; pruning only what falls short
# by more than this keeps every turn that could tie.
SLACK = 1e-9


def saturation(count, length, avgdl):
    """A term's count in a turn, saturated and normalized by the turn's length, as FTS5's
    fts5Bm25Function writes it: (count (k1 + 1)) / (count + k1 (1 - b + b length / avgdl)), on
    floats or numpy arrays alike. Times the IDF it is the term's score, the same double as
    FTS5's (the same operations in the same order)."""
    return (count * (K1 + 1.0)) / (count + K1 * (1 - B + B * length / avgdl))


def _sqlite_desc(stamp: str) -> tuple:
    """Sort key for SQLite's `ORDER BY timestamp DESC`: code points reversed, and a string
    before its own prefixes (the terminator 1 sorts after every negated code point)."""
    return tuple(-ord(ch) for ch in stamp) + (1,)


class _Term:
    """One term's postings: the positions holding it, a pair id per position, and the largest
    count and shortest turn among them (its bm25 term can be no larger than theirs)."""

    __slots__ = ("positions", "pids", "max_count", "min_length")

    def __init__(self) -> None:
        self.positions = Postings()
        self.pids = Postings()
        self.max_count = 0
        self.min_length = 1 << 62


class _Namespace:
    """One namespace: stored turns, FTS5 token counts, and term -> postings."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str]] = []   # (text, item_id, timestamp)
        self.total_tokens = 0
        self.order = TieOrder(_sqlite_desc)
        # A pair is (count in turn, turn length): all a term's bm25 weight depends on besides
        # the IDF, so a search computes each distinct pair's weight once, in one array.
        self.postings: dict[str, _Term] = {}
        self.pair_ids: dict[tuple[int, int], int] = {}
        self.pairs: list[tuple[int, int]] = []
        self._tf = None                              # (key, ndarray of each pair's tf part)

    def pair_id(self, count: int, length: int) -> int:
        """The id of (count, length), registered on first use."""
        pid = self.pair_ids.get((count, length))
        if pid is None:
            pid = self.pair_ids[(count, length)] = len(self.pairs)
            self.pairs.append((count, length))
        return pid

    def tf_parts(self, np):
        """Each pair's (count (k1 + 1)) / (count + k1 (1 - b + b length / avgdl)), as FTS5
        computes it; the same for every term, until a turn is added."""
        key = (len(self.pairs), len(self.rows), self.total_tokens)
        if self._tf is None or self._tf[0] != key:
            avgdl = self.total_tokens / len(self.rows)
            pairs = np.array(self.pairs, dtype=np.float64).reshape(-1, 2)
            count, length = pairs[:, 0], pairs[:, 1]
            self._tf = (key, saturation(count, length, avgdl))
        return self._tf[1]


class _Phrase:
    """One query phrase's postings in a search: sorted positions, their bm25 terms (computed
    on demand from pair ids when the phrase is a single term), and an upper bound on them."""

    def __init__(self, positions, idf: float, bound: float, pids=None, weights=None) -> None:
        self.positions = positions
        self.idf = idf
        self.bound = bound
        self._pids = pids
        self._weights = weights

    def weights(self, tf, index=None):
        """The bm25 terms of every position, or of the positions at `index`."""
        if self._weights is not None:
            return self._weights if index is None else self._weights[index]
        pids = self._pids if index is None else self._pids[index]
        return self.idf * tf[pids]


class Bm25Backend:
    """An inverted index per namespace; SQLite (in memory) only splits text into FTS5 tokens."""
    name = "bm25"
    deterministic = True  # exact arithmetic and a fixed tie order: the same adds give the same hits

    def __init__(self, recency_half_life_days: float | None = None) -> None:
        # Time-aware search (which add and search alone do not exercise), off unless set: with a
        # half-life, a turn's BM25 score is halved for every half-life between its timestamp
        # and the question's date, so of two matching turns the newer ranks first (the
        # "recency term" that moves staleness in "Metrics That Actually Matter").
        self.half_life_days = recency_half_life_days
        self.uses_time = recency_half_life_days is not None
        if self.uses_time:
            self.name = f"bm25 (recency, half-life {recency_half_life_days:g} days)"
        # check_same_thread=False because the harness searches from worker threads; the lock
        # below is what makes that safe (one connection is not safe for concurrent use), and it
        # also keeps a search from seeing a half-added turn.
        self._np = None  # numpy, imported by the first search of a namespace of ARRAYS_FROM turns
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._lock = threading.Lock()
        # A contentless FTS5 table is only a tokenizer: rows go in, fts5vocab reads their tokens
        # back in order, 'delete-all' empties it.
        self._db.execute(f"CREATE VIRTUAL TABLE split USING fts5(text, content='', tokenize='{TOKENIZER}')")
        self._db.execute("CREATE VIRTUAL TABLE split_tokens USING fts5vocab(split, 'instance')")
        self._spaces: dict[str, _Namespace] = {}
        self.version = (f"bm25-fts5 2.0 (FTS5 bm25() k1=1.2 b=0.75 in Python over sqlite "
                        f"{sqlite3.sqlite_version} {TOKENIZER} tokens"
                        + (f"; score x 0.5^(age / {recency_half_life_days:g} days))" if self.uses_time else ")"))

    def _split(self, texts: list[str]) -> list[list[str]]:
        """Each text's FTS5 tokens, in order. Call with the lock held."""
        out: list[list[str]] = []
        slow: list[tuple[int, str]] = []
        for i, text in enumerate(texts):
            if text.isascii():
                out.append(ASCII_TOKEN.findall(text.lower()))
            else:
                out.append([])
                slow.append((i, text))
        if slow:
            try:
                self._db.executemany("INSERT INTO split(rowid, text) VALUES (?, ?)", slow)
                for i, term in self._db.execute("SELECT doc, term FROM split_tokens ORDER BY doc, offset"):
                    out[i].append(term)
            finally:
                self._db.execute("INSERT INTO split(split) VALUES ('delete-all')")
                self._db.commit()  # the scratch table's writes stay out of one endless transaction
        return out

    def reset(self, namespace: str) -> None:
        with self._lock:
            self._spaces.pop(namespace, None)  # drop the index, not just its rows

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        with self._lock:
            split = self._split([it.text for it in items])  # before any change: a bad text adds nothing
            space = self._spaces.setdefault(namespace, _Namespace())
            for it, toks in zip(items, split):
                stamp = it.metadata.get("timestamp", "")
                pos = space.order.append(stamp)
                space.rows.append((it.text, it.item_id, stamp))
                length = len(toks)
                space.total_tokens += length
                for term, count in Counter(toks).items():
                    t = space.postings.get(term)
                    if t is None:
                        t = space.postings[term] = _Term()
                    t.positions.append(pos)
                    t.pids.append(space.pair_id(count, length))
                    if count > t.max_count:
                        t.max_count = count
                    if length < t.min_length:
                        t.min_length = length

    def flush(self, namespace: str, timeout_s: float) -> None:
        return None  # synchronous: searchable as soon as add returns

    def search(self, namespace: str, query: str, k: int, now: str | None = None) -> list[Hit]:
        """The k best turns by BM25 (decayed by age at `now` when a half-life is configured)."""
        terms = list(dict.fromkeys(tokens(query)))  # unique, in query order: the old MATCH phrases
        if k < 1 or not terms:
            return []
        with self._lock:
            space = self._spaces.get(namespace)
            if space is None or not space.rows:
                return []
            decay = now is not None and self.half_life_days is not None
            if decay or len(space.rows) < ARRAYS_FROM:
                # A decayed score has no bound from the phrases alone: every match is scored.
                scores = self._python_scores(space, self._split(terms))
                if decay:
                    scores = self._decayed(space, scores, now)
                best = space.order.top(scores, k)
                found = [scores[p] for p in best]
            else:
                best, found = self._array_top(space, self._split(terms), k)
            rows = space.rows
        return [Hit(text=rows[p][0], score=s, source_ids=(rows[p][1],), timestamp=rows[p][2])
                for p, s in zip(best, found)]

    def _python_scores(self, space: _Namespace, phrases: list[list[str]]) -> dict[int, float]:
        """position -> score of every turn holding a phrase, summed phrase after phrase as FTS5
        sums them."""
        scores: dict[int, float] = {}
        for phrase in phrases:
            positions, added = self._phrase_terms(space, phrase)
            # scores[pos] = scores.get(pos, 0.0) + term, with the loop in C (a phrase lists each
            # position once, so each is read before it is written). A phrase a turn lacks adds
            # 0.0 in FTS5: no change.
            if scores:
                added = map(add, map(scores.get, positions, repeat(0.0)), added)
            scores.update(zip(positions, added))
        return scores

    def _phrase_terms(self, space: _Namespace, phrase: list[str]) -> tuple[list[int], list[float]]:
        """The positions holding the phrase, and each one's bm25 term for it (fts5Bm25Function)."""
        keys: list  # per position, what its term depends on besides the IDF: a pair or its id
        if len(phrase) == 1:
            t = space.postings.get(phrase[0])
            if t is None:
                return [], []
            positions, keys = t.positions.values.tolist(), t.pids.values.tolist()
            pair_of = {pid: space.pairs[pid] for pid in set(keys)}
        elif phrase:
            positions, keys = self._adjacent(space, phrase)
            pair_of = {pair: pair for pair in set(keys)}
        else:
            return [], []  # a token with no FTS5 token in it ('_') is an empty phrase: no match
        if not positions:
            return [], []
        avgdl = space.total_tokens / len(space.rows)
        idf = self._idf(len(space.rows), len(positions))
        # The same operations in the same order as FTS5's C, so every score is the same double.
        weight = {key: idf * saturation(count, length, avgdl) for key, (count, length) in pair_of.items()}
        return positions, list(map(weight.__getitem__, keys))

    def _array_top(self, space: _Namespace, phrases: list[list[str]], k: int) -> tuple[list[int], list[float]]:
        """The k best positions and their scores, with numpy and MaxScore."""
        if self._np is None:
            self._np = require("numpy", "bm25")
        np = self._np
        tf = space.tf_parts(np)
        found = [p for p in (self._phrase(space, ph, tf) for ph in phrases) if p is not None]
        if not found:
            return [], []
        positions = self._contenders(np, found, k, len(space.rows), tf)
        scores = self._sum(np, found, positions, tf, len(space.rows))
        best = space.order.top_arrays(np, positions, scores, k)
        return best, (scores[np.searchsorted(positions, best)].tolist() if best else [])

    @staticmethod
    def _contenders(np, phrases: list[_Phrase], k: int, n_rows: int, tf):
        """Sorted positions that hold every turn whose score could be among the k best (ties
        included), reading the phrases' postings from the highest bound down and stopping once
        the phrases left could not lift an unseen turn to the k-th score so far (MaxScore)."""
        ranked = sorted(phrases, key=lambda p: (-p.bound, len(p.positions)))
        left = [0.0] * (len(ranked) + 1)  # left[i]: the most phrases i.. can add to one turn
        for i in range(len(ranked) - 1, -1, -1):
            left[i] = left[i + 1] + ranked[i].bound
        # Sums over the phrases read so far, in bound order (bounds on scores, not scores). Every
        # bm25 term is positive (the IDF floor is 1e-6), so the turns seen are those above 0.
        partial = np.zeros(n_rows)
        read = 0.0  # the most the phrases read so far add to a turn: no k-th score exceeds it
        for i, phrase in enumerate(ranked):
            if read * (1 + SLACK) > left[i] * (1 - SLACK):  # else no k-th score can exceed left[i]
                seen = np.flatnonzero(partial)
                kth = np.partition(partial[seen], len(seen) - k)[len(seen) - k] if len(seen) >= k else 0.0
                if left[i] * (1 + SLACK) < kth * (1 - SLACK):
                    # Turns outside `seen` score at most left[i]: they cannot reach the top k.
                    # A seen turn stays if what it has plus what is left could reach kth.
                    return seen[partial[seen] + left[i] * (1 + SLACK) >= kth * (1 - SLACK)]
            partial[phrase.positions] += phrase.weights(tf)
            read += phrase.bound
        seen = np.flatnonzero(partial)
        if len(seen) > k:
            kth = np.partition(partial[seen], len(seen) - k)[len(seen) - k]
            return seen[partial[seen] >= kth * (1 - SLACK)]
        return seen

    @staticmethod
    def _sum(np, phrases: list[_Phrase], positions, tf, n_rows: int):
        """The scores of `positions` (sorted), each phrase's term added in query order, as FTS5
        adds them (so each is the same double); a phrase a turn lacks adds nothing."""
        total = np.zeros(n_rows)
        for phrase in phrases:
            # Adding a whole posting list costs its length; looking the positions up in it,
            # len(positions) binary searches: whichever is cheaper, into the same sums.
            if len(phrase.positions) < 4 * len(positions):
                total[phrase.positions] += phrase.weights(tf)
            else:
                index = np.searchsorted(phrase.positions, positions)
                index[index == len(phrase.positions)] = 0
                hit = phrase.positions[index] == positions
                total[positions[hit]] += phrase.weights(tf, index[hit])
        return total[positions]

    def _phrase(self, space: _Namespace, phrase: list[str], tf) -> _Phrase | None:
        """A query phrase's postings with its IDF and bound (fts5Bm25Function); None when no
        turn holds it. Call with the lock held."""
        np = self._np
        if not phrase:
            return None  # a token with no FTS5 token in it ('_') is an empty phrase: no match
        n_rows = len(space.rows)
        avgdl = space.total_tokens / n_rows
        if len(phrase) == 1:
            t = space.postings.get(phrase[0])
            if t is None:
                return None
            idf = self._idf(n_rows, len(t.positions))
            count, length = t.max_count, t.min_length
            bound = idf * saturation(count, length, avgdl)
            return _Phrase(t.positions.numpy(np), idf, bound, pids=t.pids.numpy(np))
        positions, terms = self._phrase_terms(space, phrase)
        if not positions:
            return None
        weights = np.array(terms)
        return _Phrase(np.array(positions, dtype=np.int32), self._idf(n_rows, len(positions)), float(weights.max()),
                       weights=weights)

    @staticmethod
    def _idf(n_rows: int, matches: int) -> float:
        """FTS5's IDF, floored at 1e-6 (a term in over half the turns would be negative)."""
        idf = math.log((n_rows - matches + 0.5) / (matches + 0.5))
        return 1e-6 if idf <= 0.0 else idf

    def _decayed(self, space: _Namespace, scores: dict[int, float], now: str) -> dict[int, float]:
        """Scores halved per half-life of age at `now`; a turn without a readable time, or dated
        after `now`, keeps its score."""
        now_s = parse_time(now).timestamp()
        out = {}
        for pos, score in scores.items():
            stamp = space.rows[pos][2]
            try:
                age_days = max(0.0, (now_s - parse_time(stamp).timestamp()) / 86400)
            except ValueError:
                age_days = 0.0
            out[pos] = score * 0.5 ** (age_days / self.half_life_days)
        return out

    def _adjacent(self, space: _Namespace, phrase: list[str]) -> tuple[list[int], list[tuple[int, int]]]:
        """Positions holding the tokens of `phrase` adjacent, with (phrase count, turn length)."""
        # A \w+ token that FTS5 splits ('e_mail') is a phrase: its tokens must be adjacent. Rare,
        # so the candidate turns are split again rather than every turn's positions being kept.
        candidates = set(space.postings[phrase[0]].positions.values) if phrase[0] in space.postings else set()
        for term in phrase[1:]:
            candidates.intersection_update(space.postings[term].positions.values if term in space.postings else ())
        positions, pairs = [], []
        ordered = sorted(candidates)
        width = len(phrase)
        for pos, toks in zip(ordered, self._split([space.rows[p][0] for p in ordered])):
            count = sum(toks[i:i + width] == phrase for i in range(len(toks) - width + 1))
            if count:
                positions.append(pos)
                pairs.append((count, len(toks)))
        return positions, pairs


class Fts5Bm25Backend:
    """The FTS5 backend Bm25Backend replaced, kept as the reference that tests and
    bench/backend_latency.py compare it against: one FTS5 table per namespace, ranked by SQLite."""
    name = "bm25-fts5"

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._lock = threading.Lock()
        self._tables: dict[str, str] = {}
        self.version = f"bm25-fts5 sqlite {sqlite3.sqlite_version} (k1=1.2 b=0.75, {TOKENIZER})"

    def _table(self, namespace: str) -> str:
        # Table names come from a counter, never from the namespace text (no SQL injection).
        if namespace not in self._tables:
            table = f"ns_{len(self._tables)}"
            self._db.execute(f"CREATE VIRTUAL TABLE {table} USING fts5("
                             f"text, item_id UNINDEXED, timestamp UNINDEXED, metadata UNINDEXED, "
                             f"tokenize = '{TOKENIZER}')")
            self._tables[namespace] = table
        return self._tables[namespace]

    def reset(self, namespace: str) -> None:
        with self._lock:
            self._db.execute(f"DELETE FROM {self._table(namespace)}")
            self._db.commit()

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        rows = [(it.text, it.item_id, it.metadata.get("timestamp", ""),
                 json.dumps(it.metadata, ensure_ascii=False, sort_keys=True)) for it in items]
        with self._lock:
            self._db.executemany(f"INSERT INTO {self._table(namespace)} "
                                 f"(text, item_id, timestamp, metadata) VALUES (?, ?, ?, ?)", rows)
            self._db.commit()

    def flush(self, namespace: str, timeout_s: float) -> None:
        return None

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        terms = list(dict.fromkeys(tokens(query)))  # unique, in query order
        if k < 1 or not terms:
            return []
        match = " OR ".join(f'"{t}"' for t in terms)  # \w+ tokens hold no '"' to escape
        with self._lock:
            if namespace not in self._tables:
                return []
            table = self._tables[namespace]
            rows = self._db.execute(
                f"SELECT text, item_id, timestamp, bm25({table}) AS s FROM {table} "
                f"WHERE {table} MATCH ? ORDER BY s, timestamp DESC, rowid LIMIT ?",
                (match, k)).fetchall()
        return [Hit(text=text, score=-s, source_ids=(item_id,), timestamp=stamp)
                for text, item_id, stamp, s in rows]


def settings(section: dict) -> dict:
    """The section checked, defaults filled: recency_half_life_days (null: plain BM25)."""
    s = check_settings(section, {"recency_half_life_days": ((int, float, type(None)), None)}, "bm25")
    if s["recency_half_life_days"] is not None and s["recency_half_life_days"] <= 0:
        raise InputError(f"config: key 'backends.bm25.recency_half_life_days' must be greater than 0, "
                         f"got {s['recency_half_life_days']}")
    return s


def create(section: dict, config: dict) -> Bm25Backend:
    """BM25 over its own index; time-aware with a half-life (and time_aware_search: true)."""
    return Bm25Backend(settings(section)["recency_half_life_days"])
