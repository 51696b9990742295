"""bench/recall_separation.py: recall_any@k by score.py's definition, and a paired difference
that says when it has no interval instead of failing. Offline and fast."""
from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "bench", "recall_separation.py")


def record(qid: str, cluster: str, found: bool | None) -> dict:
    """The fields of a run record that recall reads; found None: the search failed."""
    return {"qid": qid, "cluster": cluster, "type": "single_hop", "meta": {}, "evidence": [f"{qid}-t1"],
            "retrieved_ids": None if found is None else ([f"{qid}-t1"] if found else ["other"]),
            "context_ids": None if found is None else [], "error": "timeout" if found is None else None,
            "keyword_ranks": None, "hits_kept": 0}


def write(path, records: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def separation(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, SCRIPT, *argv], capture_output=True, text=True, timeout=60)


def test_one_case_gives_a_difference_without_an_interval(tmp_path):
    base = write(tmp_path / "keyword.jsonl", [record("q1", "c1", False), record("q2", "c1", True)])
    other = write(tmp_path / "bm25.jsonl", [record("q1", "c1", True), record("q2", "c1", True)])
    r = separation("--baseline", base, other)
    assert r.returncode == 0, r.stderr
    assert "minus the baseline +0.500 (no interval) over 2 questions in 1 cases" in r.stdout


def test_a_failed_search_is_left_out_as_score_py_leaves_it_out(tmp_path):
    base = write(tmp_path / "keyword.jsonl", [record(f"q{i}", f"c{i}", False) for i in range(4)])
    other = write(tmp_path / "bm25.jsonl", [record("q0", "c0", None)] +
                  [record(f"q{i}", f"c{i}", True) for i in range(1, 4)])
    r = separation("--baseline", base, other)
    assert r.returncode == 0, r.stderr
    assert "recall_any@k 1.000, minus the baseline +1.00 [+1.00, +1.00] over 3 questions in 3 cases" in r.stdout


def test_runs_of_other_questions_are_refused_naming_both_files(tmp_path):
    base = write(tmp_path / "keyword.jsonl", [record("q1", "c1", True)])
    other = write(tmp_path / "bm25.jsonl", [record("x1", "c1", True)])
    r = separation("--baseline", base, other)
    assert r.returncode == 2 and other in r.stderr and base in r.stderr and "Traceback" not in r.stderr
