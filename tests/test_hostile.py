"""Hostile input that reaches a path or the shell: a run id is a plain name, checked when the
config is read, so that no stage writes outside runs/ and results/ and the Makefile never pastes
it into a command."""
from __future__ import annotations

import os
import shutil
import stat
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


def special_paths(tmp_path) -> dict:
    """Outputs no stage may write: a folder, a FIFO (a device stands in the same class, not
    replaced here to keep the machine's /dev whole), and a file under /proc."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "folder").mkdir()
    return {"a folder": (str(tmp_path / "folder"), "is a directory"),
            "a FIFO": (str(fifo), "is not a regular file"),
            "a file under /proc": ("/proc/self/comm", "is under /proc")}


@pytest.mark.parametrize("kind", ["a folder", "a FIFO", "a file under /proc"])
def test_an_output_that_is_not_a_file_to_write_is_refused_naming_the_flag(tmp_path, fake_llm, capsys, kind):
    import check
    import run
    import score
    path, why = special_paths(tmp_path)[kind]
    cfg = write_config(tmp_path)
    run_file = str(tmp_path / "keyword.jsonl")
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", run_file, "--retrieval-only"]) == 0
    capsys.readouterr()
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", path]) == 2
    assert f"--out {path}: {why}" in capsys.readouterr().err and fake_llm.requests == 0
    assert run_cli(check.main, ["--runs", run_file, "--config", cfg, "--out", path]) == 2
    assert f"--out {path}: {why}" in capsys.readouterr().err
    assert run_cli(score.main, ["--config", cfg, "--runs", run_file, "--baseline", "keyword", "--json", path]) == 2
    assert f"--json {path}: {why}" in capsys.readouterr().err
    if kind == "a FIFO":
        assert stat.S_ISFIFO(os.stat(path).st_mode)  # still a FIFO: never replaced by a regular file


def test_a_second_writer_of_one_run_file_is_refused_at_once_naming_the_first(tmp_path, fake_llm, capsys):
    import run
    from fileio import output_lock
    cfg = write_config(tmp_path)
    out = str(tmp_path / "runs" / "keyword.jsonl")
    with output_lock(out):  # the first writer, this process
        assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", out]) == 2
        err = capsys.readouterr().err
        assert f"{out}: another process is writing it (pid {os.getpid()}:" in err and fake_llm.requests == 0
        # The same file by another name is the same file.
        alias = str(tmp_path / "runs" / ".." / "runs" / "keyword.jsonl")
        assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", alias]) == 2
    assert not os.path.exists(out)
    # Once the first is done, the file is free.
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", out]) == 0
