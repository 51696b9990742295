"""bm25: Okapi BM25 over SQLite FTS5, the lexical baseline beside `keyword`.

Chosen over bm25s by measurement (bench notes in backends/README.md): FTS5 takes incremental
adds at ~110k turns/s and answers a 10k-turn search in under 1 ms, while bm25s has no
incremental add, so every add would rebuild its index (0.35 s at 10k turns). FTS5 also ships
with Python's sqlite3, so this backend needs nothing installed.

Each namespace is its own FTS5 table, so BM25's document frequencies and average length are
computed over that namespace alone: another namespace can change neither hits nor scores.
FTS5's bm25() uses k1 = 1.2, b = 0.75 and is lower-is-better; a Hit's score is its negation.
A query is its word tokens, each double-quoted (raw text breaks MATCH syntax: '-', ':', '"',
AND/OR/NOT), joined with OR, since BM25 ranks any turn that shares a term.
"""
from __future__ import annotations

import json
import sqlite3
import threading

from backends import check_settings
from backends.keyword import tokens
from interface import Hit, MemoryItem

TOKENIZER = "unicode61 remove_diacritics 2"


class Bm25Backend:
    """One in-memory SQLite database; one FTS5 table per namespace; a lock serialises calls."""
    name = "bm25"

    def __init__(self) -> None:
        # check_same_thread=False because the harness searches from worker threads; the lock
        # below is what makes that safe (one connection is not safe for concurrent use).
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
        return None  # synchronous: a committed insert is searchable at once

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        terms = list(dict.fromkeys(tokens(query)))  # unique, in query order
        if k < 1 or not terms:
            return []
        match = " OR ".join(f'"{t}"' for t in terms)  # \w+ tokens hold no '"' to escape
        with self._lock:
            if namespace not in self._tables:
                return []
            table = self._tables[namespace]
            # Ties: newer timestamp first, then insertion order, as in `keyword`.
            rows = self._db.execute(
                f"SELECT text, item_id, timestamp, bm25({table}) AS s FROM {table} "
                f"WHERE {table} MATCH ? ORDER BY s, timestamp DESC, rowid LIMIT ?",
                (match, k)).fetchall()
        return [Hit(text=text, score=-s, source_ids=(item_id,), timestamp=stamp)
                for text, item_id, stamp, s in rows]


def create(settings: dict, config: dict) -> Bm25Backend:
    """The bm25 backend takes no settings."""
    check_settings(settings, {}, "bm25")
    return Bm25Backend()
