"""Hostile input that reaches a path or the shell: a run id is a plain name, checked when the
config is read, so that no stage writes outside runs/ and results/ and the Makefile never pastes
it into a command."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

import manifest
from cli import run_cli
from conftest import write_config
from test_run_options import copy_of_the_code

HOSTILE_RUN_IDS = ["x$(touch pwned)", "with space", "/abs/evil", "../../tmp/evil", "..", "", "a/b", ".hidden",
                   "x\x1b[31mred", "x" * 101]


@pytest.mark.parametrize("run_id", HOSTILE_RUN_IDS)
def test_a_run_id_that_is_not_a_plain_name_is_refused_before_anything_is_written(tmp_path, capsys, run_id):
    cfg = write_config(tmp_path, run_id=run_id)
    before = set(os.listdir(tmp_path))
    assert run_cli(manifest.main, [cfg, "--backends", "none"]) == 2
    err = capsys.readouterr().err
    assert f"{cfg}: key 'run_id' must be a plain name" in err and f"got {run_id!r}" in err
    assert "\x1b" not in err  # an escape code in the value is shown escaped, never sent to the terminal
    assert set(os.listdir(tmp_path)) == before


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("run_id", ["x$(touch pwned)", "with space"])
def test_the_makefile_stops_on_a_run_id_that_is_not_a_plain_name_and_runs_nothing(tmp_path, run_id):
    repo = copy_of_the_code(tmp_path / "repo")
    shutil.copy(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Makefile"), repo)
    for folder in ("runs/keep", "results/keep"):
        os.makedirs(os.path.join(repo, folder))
    (tmp_path / "repo" / "space").write_text("not the run's to delete", encoding="utf-8")
    cfg = write_config(tmp_path, run_id=run_id)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL")}
    for target in ("clean-runs", "answers"):
        r = subprocess.run(["make", "--no-print-directory", target, f"CONFIG={cfg}", f"PY={sys.executable}"],
                           cwd=repo, env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode != 0 and "no valid run_id" in r.stderr, r.stdout + r.stderr
    assert not (tmp_path / "repo" / "pwned").exists() and not (tmp_path / "pwned").exists()
    assert (tmp_path / "repo" / "space").exists()
    assert os.listdir(os.path.join(repo, "runs")) == ["keep"] and os.listdir(os.path.join(repo, "results")) == ["keep"]
