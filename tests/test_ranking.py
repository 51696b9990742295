"""bench/ranking.py: Kendall's tau-b against hand-computed rankings, and the script on two small
datasets, run as a user runs it (a subprocess), printing both rankings and tau."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, write_config
from stats import kendall_tau_b
from test_artifacts import make_cases, write

sys.path.insert(0, os.path.join(ROOT, "bench"))
import ranking  # noqa: E402


@pytest.mark.parametrize("b, tau", [({"a": 4, "b": 3, "c": 2, "d": 1}, 1.0),       # the same order
                                    ({"a": 1, "b": 2, "c": 3, "d": 4}, -1.0),      # reversed
                                    # the bundled set's order against LoCoMo's, as first measured:
                                    # 3 of 6 pairs agree, 3 disagree
                                    ({"a": 0.419, "b": 0.585, "c": 0.332, "d": 0.458}, 0.0)])
def test_kendall_tau_b_of_hand_computed_rankings(b, tau):
    a = {"a": 0.928, "b": 0.886, "c": 0.614, "d": 0.510}
    assert kendall_tau_b(a, b) == pytest.approx(tau)


def test_kendall_tau_b_corrects_for_ties_and_is_undefined_when_all_tie():
    # pairs: (a,b) tied in the first only; (a,c), (b,c) concordant: (2 - 0) / sqrt(2 * 3)
    assert kendall_tau_b({"a": 1, "b": 1, "c": 0}, {"a": 2, "b": 1, "c": 0}) == pytest.approx(2 / 6 ** 0.5)
    assert kendall_tau_b({"a": 1, "b": 1}, {"a": 2, "b": 1}) is None


def test_the_script_prints_both_rankings_and_tau_on_any_dataset(tmp_path):
    bundled = write(tmp_path, make_cases(3, tell=None, turns=40), "bundled.jsonl")
    real = write(tmp_path, make_cases(3, tell=None, turns=40, seed=1), "real.jsonl")
    cfg = write_config(tmp_path, dataset=bundled)
    out = tmp_path / "ranking.json"
    systems = ["keyword", "bm25", "hash"] + (["dense_wordllama"] if _has("wordllama") else [])
    code = ("import sys, ranking; ranking.SYSTEMS = tuple(sys.argv[1].split()); "
            "sys.argv = ['ranking.py'] + sys.argv[2:]; sys.exit(ranking.run_cli(ranking.main))")
    r = subprocess.run([sys.executable, "-c", code, " ".join(systems), "--config", cfg, "--real", real,
                        "--json", str(out)], cwd=os.path.join(ROOT, "bench"), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"{bundled}: ") and lines[1].startswith(f"{real}: ")
    assert all(s in lines[0] and s in lines[1] for s in systems)
    assert lines[2].startswith("Kendall's tau-b between the two rankings: ")
    figures = json.loads(out.read_text())
    assert set(figures["recall_any_at_k"]["real"]) == set(systems)
    assert figures["kendall_tau_b"] is None or -1 <= figures["kendall_tau_b"] <= 1


def test_a_missing_real_dataset_names_the_import_command(tmp_path, capsys):
    cfg = write_config(tmp_path)
    assert ranking.run_cli(ranking.main, ["--config", cfg, "--real", str(tmp_path / "nope.jsonl")]) == 2
    assert "python data/import_locomo.py" in capsys.readouterr().err


def _has(module: str) -> bool:
    try:
        __import__(module)
        return True
    except ImportError:
        return False
