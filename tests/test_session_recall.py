"""bench/session_recall.py: Engram's recall by session, from hand-made run records whose answer
is known, and the script's refusal of ids that are not LoCoMo's, as a user runs it."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT

SCRIPT = os.path.join(ROOT, "bench", "session_recall.py")


def record(backend: str, evidence: list, retrieved: list | None) -> dict:
    return {"backend_id": backend, "evidence": evidence, "retrieved_ids": retrieved}


def run(tmp_path, records: list[dict], *args: str) -> subprocess.CompletedProcess:
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return subprocess.run([sys.executable, SCRIPT, str(path), *args], capture_output=True, text=True)


def test_a_question_counts_when_an_evidence_session_is_among_the_first_distinct_sessions(tmp_path):
    records = [
        # sessions in rank order 1, 2, 3: session 3 is the third distinct one
        record("engram", ["D3:7"], ["D1:1", "D1:2", "D2:5", "D1:3", "D3:1"]),
        # six hits from session 4, then session 9: the second distinct session
        record("engram", ["D9:2"], ["D4:1"] * 6 + ["D9:9"]),
        # evidence in session 5, which only a fourth distinct session would reach
        record("engram", ["D5:1", "D6:1"], ["D1:1", "D2:1", "D3:1", "D5:1"]),
        record("engram", [], ["D1:1"]),            # no evidence: not a question of this metric
        record("engram", ["D1:1"], None),          # no provenance: left out, counted apart
    ]
    out = run(tmp_path, records, "--sessions", "3")
    assert out.returncode == 0, out.stderr
    header, row = out.stdout.strip().split("\n")
    assert header.startswith("system\tquestions\tfound in 3 sessions")
    assert row.split("\t") == ["engram", "3", "2", "0.667", "1"]
    out = run(tmp_path, records, "--sessions", "4")
    assert out.stdout.strip().split("\n")[1].split("\t")[:4] == ["engram", "3", "3", "1.0"]


def test_an_id_that_is_not_locomos_is_refused_naming_the_line_and_field(tmp_path):
    out = run(tmp_path, [record("bm25", ["D1:1"], ["D1:1"]), record("bm25", ["D1:1"], ["s1-t3"])])
    assert out.returncode == 2
    assert "run.jsonl:2: field 'retrieved_ids': turn id 's1-t3'" in out.stderr
