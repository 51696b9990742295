"""The generic HTTP adapter against a real HTTP memory service that indexes asynchronously:
a flush that does not really wait finds nothing, and these tests would catch it."""
from __future__ import annotations

import pytest

from backends import load_backend
from interface import InputError, MemoryItem
from memory_service import MemoryService

TOKEN = "svc-token-123"


@pytest.fixture
def service(monkeypatch):
    svc = MemoryService(index_delay_s=0.6, token=TOKEN).start()
    monkeypatch.setenv("MEMORY_API_KEY", TOKEN)
    yield svc
    svc.stop()


def backend(service, **settings):
    cfg = {"backends": {"http": {"base_url": service.url, "token_env": "MEMORY_API_KEY",
                                 "poll_interval_s": 0.05, **settings}}}
    return load_backend("http", cfg)


ITEMS = [MemoryItem("t1", "user: billing runs on Postgres 16", {"timestamp": "2026-05-11T09:30:00Z"}),
         MemoryItem("t2", "user: search runs on Elasticsearch", {"timestamp": "2026-05-12T09:30:00Z"})]


@pytest.mark.parametrize("mode", ["status", "sentinel"])
def test_verified_flush_waits_until_searchable(service, mode):
    b = backend(service, flush=mode)
    b.reset("ns1")
    b.add("ns1", ITEMS)
    b.flush("ns1", 10)
    hits = b.search("ns1", "Which Postgres does billing run on?", 5)
    assert hits and hits[0].source_ids == ("t1",) and hits[0].timestamp == "2026-05-11T09:30:00Z"
    assert all("sentinel" not in h.text for h in hits)
    assert b.flush_note is None


def test_a_flush_that_does_not_wait_is_caught(service):
    b = backend(service, flush="delay", flush_delay_s=0)
    b.reset("ns1")
    b.add("ns1", ITEMS)
    b.flush("ns1", 10)
    assert b.search("ns1", "Postgres billing", 5) == []  # indexing has not finished
    assert "assumed, not verified" in b.flush_note


def test_flush_times_out_instead_of_hanging(service):
    slow = MemoryService(index_delay_s=30, token=TOKEN).start()
    try:
        b = backend(slow, flush="status")
        b.add("ns", ITEMS)
        with pytest.raises(TimeoutError):
            b.flush("ns", 0.3)
    finally:
        slow.stop()


def test_namespaces_are_isolated_and_reset_empties(service):
    b = backend(service)
    for ns in ("a", "b"):
        b.reset(ns)
    b.add("a", ITEMS)
    b.flush("a", 10)
    b.flush("b", 10)
    assert b.search("b", "Postgres", 5) == []
    assert len(b.search("a", "runs on", 1)) == 1  # never more than k
    b.reset("a")
    assert b.search("a", "Postgres", 5) == []


def test_missing_token_variable_is_a_clear_error(service, monkeypatch):
    monkeypatch.delenv("MEMORY_API_KEY")
    with pytest.raises(InputError, match="MEMORY_API_KEY"):
        backend(service)


def test_unknown_setting_is_named(service):
    with pytest.raises(InputError, match="backends.http.base_ur"):
        load_backend("http", {"backends": {"http": {"base_url": service.url, "base_ur": "x"}}})


def test_run_over_http_records_fixed_delay_assumption(tmp_path, service, fake_llm):
    import json
    import run
    from conftest import write_config
    from interface import run_cli
    cfg = write_config(tmp_path, backends={"http": {"base_url": service.url, "token_env": "MEMORY_API_KEY",
                                                    "flush": "delay", "flush_delay_s": 1.0}})
    out = tmp_path / "http.jsonl"
    assert run_cli(run.main, ["--config", cfg, "--backend", "http", "--out", str(out)]) == 0
    recs = [json.loads(l) for l in out.read_text().splitlines()]
    assert all("not verified" in r["flush_note"] for r in recs)
    assert any(r["retrieved_ids"] for r in recs)
    assert TOKEN not in out.read_text()
