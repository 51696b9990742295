"""The generic HTTP adapter against a real HTTP memory service that indexes asynchronously:
a flush that does not really wait finds nothing, and these tests would catch it."""
from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest
import yaml

from backends import load_backend
from cli import InputError
from config import load_config
from conftest import ROOT, TINY, backend_config, write_config
from contract import MemoryItem
from memory_service import MemoryService

TOKEN = "svc-token-123"


@pytest.fixture
def service(monkeypatch):
    svc = MemoryService(index_delay_s=0.6, token=TOKEN).start()
    monkeypatch.setenv("MEMORY_API_KEY", TOKEN)
    yield svc
    svc.stop()


def backend(tmp_path, service, **settings):
    cfg = backend_config(tmp_path, {"http": {"base_url": service.url, "token_env": "MEMORY_API_KEY",
                                             "poll_interval_s": 0.05, **settings}})
    return load_backend("http", cfg)


ITEMS = [MemoryItem("t1", "user: billing runs on Postgres 16", {"timestamp": "2026-05-11T09:30:00Z"}),
         MemoryItem("t2", "user: search runs on Elasticsearch", {"timestamp": "2026-05-12T09:30:00Z"})]


@pytest.mark.parametrize("mode", ["status", "sentinel"])
def test_verified_flush_waits_until_searchable(tmp_path, service, mode):
    b = backend(tmp_path, service, flush=mode)
    b.reset("ns1")
    b.add("ns1", ITEMS)
    b.flush("ns1", 10)
    hits = b.search("ns1", "Which Postgres does billing run on?", 5)
    assert hits and hits[0].source_ids == ("t1",) and hits[0].timestamp == "2026-05-11T09:30:00Z"
    assert all("sentinel" not in h.text for h in hits)
    assert b.flush_note is None


def test_a_flush_that_does_not_wait_is_caught(tmp_path, service):
    b = backend(tmp_path, service, flush="delay", flush_delay_s=0)
    b.reset("ns1")
    b.add("ns1", ITEMS)
    b.flush("ns1", 10)
    assert b.search("ns1", "Postgres billing", 5) == []  # indexing has not finished
    assert "assumed, not verified" in b.flush_note


def test_flush_times_out_instead_of_hanging(tmp_path, service):
    slow = MemoryService(index_delay_s=30, token=TOKEN).start()
    try:
        b = backend(tmp_path, slow, flush="status")
        b.add("ns", ITEMS)
        with pytest.raises(TimeoutError):
            b.flush("ns", 0.3)
    finally:
        slow.stop()


def test_namespaces_are_isolated_and_reset_empties(tmp_path, service):
    b = backend(tmp_path, service)
    for ns in ("a", "b"):
        b.reset(ns)
    b.add("a", ITEMS)
    b.flush("a", 10)
    b.flush("b", 10)
    assert b.search("b", "Postgres", 5) == []
    assert len(b.search("a", "runs on", 1)) == 1  # never more than k
    b.reset("a")
    assert b.search("a", "Postgres", 5) == []


def test_missing_token_variable_is_a_clear_error(tmp_path, service, monkeypatch):
    monkeypatch.delenv("MEMORY_API_KEY")
    with pytest.raises(InputError, match="MEMORY_API_KEY"):
        backend(tmp_path, service)


def test_unknown_setting_is_named(tmp_path, service):
    with pytest.raises(InputError, match="backends.http.base_ur"):
        load_backend("http", backend_config(tmp_path, {"http": {"base_url": service.url, "base_ur": "x"}}))


def test_run_over_http_records_fixed_delay_assumption(tmp_path, service, fake_llm):
    import run
    from cli import run_cli
    cfg = write_config(tmp_path, backends={"http": {"base_url": service.url, "token_env": "MEMORY_API_KEY",
                                                    "flush": "delay", "flush_delay_s": 1.0}})
    out = tmp_path / "http.jsonl"
    assert run_cli(run.main, ["--config", cfg, "--backend", "http", "--out", str(out)]) == 0
    recs = [json.loads(l) for l in out.read_text().splitlines()]
    assert all("not verified" in r["flush_note"] for r in recs)
    assert any(r["retrieved_ids"] for r in recs)
    assert TOKEN not in out.read_text()


# ---------------------------------------------------------------------------------------------
# The `chroma_http` preset of config.yaml: the same generic adapter against Chroma's real REST
# server (`chroma run`): collections made by id, column layouts, embeddings sent by the adapter.
# ---------------------------------------------------------------------------------------------

def chroma_preset(port: int, tmp_path, embed: str = "wordllama") -> dict:
    """config.yaml, loaded as run.py loads it, with its chroma_http preset pointed at the test
    server; wordllama keeps it fast."""
    cfg = load_config(write_config(tmp_path))
    cfg["backends"]["chroma_http"].update(base_url=f"http://127.0.0.1:{port}", base_url_env=None, embed=embed)
    return cfg


def chroma_http(port: int, tmp_path):
    pytest.importorskip("wordllama", reason="wordllama not installed (pip install -r backends/requirements-dense.txt)")
    return load_backend("chroma_http", chroma_preset(port, tmp_path))


def test_chroma_preset_contract(chroma_server, tmp_path):
    b = chroma_http(chroma_server, tmp_path)
    assert "chromadb" in b.version and "service reports" in b.version and "wordllama" in b.version
    more = [MemoryItem(f"t{i}", f"user: note number {i} about the release train", {"timestamp": "2026-05-13"})
            for i in range(3, 9)]
    for ns in ("case/a", "case/b"):  # '/' is not allowed in a Chroma name: namespace_style sha256
        b.reset(ns)
    b.add("case/a", ITEMS)
    b.add("case/a", more)
    b.add("case/b", [MemoryItem("b1", "user: I order pizza on Fridays", {"timestamp": "2026-04-01"})])
    for ns in ("case/a", "case/b"):
        b.flush(ns, 10)  # sentinel: verified by searching for it
    hits = b.search("case/a", "Which Postgres does billing run on?", 3)
    assert len(hits) == 3 and hits[0].source_ids == ("t1",) and hits[0].timestamp == "2026-05-11T09:30:00Z"
    assert all("sentinel" not in h.text for h in b.search("case/a", "memory-bench-sentinel", 10))
    assert [h.source_ids for h in b.search("case/b", "pizza", 5)] == [("b1",)]  # isolated
    assert hits[0].score > hits[1].score  # a cosine distance turned into a similarity
    b.reset("case/a")
    assert b.search("case/a", "Postgres", 5) == []
    assert b.search("case/b", "pizza", 1)[0].source_ids == ("b1",)  # reset empties only its own


def test_chroma_preset_ranks_like_embedded_chroma(chroma_server, tmp_path):
    """Same vectors, same database engine: over REST through the generic adapter, Chroma must
    return what the chromadb library returns in process. A wrong column or field mapping shows."""
    pytest.importorskip("chromadb")
    from contract import session_items
    from dataset import load_dataset
    cfg = chroma_preset(chroma_server, tmp_path)
    cfg["backends"]["chroma"] = {"model": "wordllama"}
    over_rest, embedded = load_backend("chroma_http", cfg), load_backend("chroma", cfg)
    for case in load_dataset(TINY):
        for b in (over_rest, embedded):
            b.reset(case["case_id"])
            for session in case["sessions"]:
                b.add(case["case_id"], session_items(session))
            b.flush(case["case_id"], 10)
        for q in case["questions"]:
            a = over_rest.search(case["case_id"], q["question"], 5)
            e = embedded.search(case["case_id"], q["question"], 5)
            assert [h.source_ids for h in a] == [h.source_ids for h in e]
            assert [h.score for h in a] == pytest.approx([h.score for h in e], abs=1e-4)


def test_run_over_chroma_server_wrapper(tmp_path, fake_llm):
    """The command that needs the server starts it: `_chroma_server -- run.py`; afterwards the
    server is gone and the command's exit code is the wrapper's."""
    pytest.importorskip("chromadb")
    pytest.importorskip("wordllama")
    cfg_path = write_config(tmp_path)
    with open(cfg_path, encoding="utf-8") as fh:
        cfg = yaml.safe_load(fh)
    cfg["backends"]["chroma_http"]["embed"] = "wordllama"
    with open(cfg_path, "w", encoding="utf-8") as fh:
        yaml.safe_dump(cfg, fh)
    out, seen = tmp_path / "chroma_http.jsonl", tmp_path / "url"

    def wrapped(*command: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "backends._chroma_server", "--", *command],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)

    probe = f"import os, sys; open({str(seen)!r}, 'w').write(os.environ['CHROMA_URL']); sys.exit(5)"
    assert wrapped(sys.executable, "-c", probe).returncode == 5
    port = int(seen.read_text().rsplit(":", 1)[1])
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0  # stopped when the command ended
    done = wrapped(sys.executable, "run.py", "--config", cfg_path, "--backend", "chroma_http", "--out", str(out))
    assert done.returncode == 0, done.stderr
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert recs and all(r["error"] is None and r["flush_note"] is None for r in recs)
    assert all("service reports" in r["backend_version"] for r in recs)
    assert any(r["retrieved_ids"] for r in recs)


def test_id_paths_need_a_create_step(tmp_path, service):
    with pytest.raises(InputError, match="create_path"):
        backend(tmp_path, service, add_path="/c/{id}/add")
    with pytest.raises(InputError, match="add_layout"):
        backend(tmp_path, service, add_layout="diagonal")
    with pytest.raises(InputError, match="CHROMA_URL"):
        load_backend("http", backend_config(tmp_path, {"http": {"base_url_env": "CHROMA_URL"}}))
