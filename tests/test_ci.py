"""CI cannot go green with a group of tests skipped: under CI=true a test that would skip for a
missing extra fails, any other skip fails the session, and the count of skipped tests is
printed for .ci/run."""
from __future__ import annotations

import os
import subprocess
import sys

from conftest import ROOT

TESTS = '''
import pytest

def test_needs_an_extra():
    pytest.importorskip("no_such_module_of_memory_bench")

def test_skips():
    pytest.skip("a reason")

def test_runs():
    assert True
'''


def pytest_run(tmp_path, ci: str | None, test: str) -> subprocess.CompletedProcess:
    """pytest on one test of TESTS with this suite's conftest, CI set to `ci` (or unset)."""
    (tmp_path / "test_sample.py").write_text(TESTS, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update({"PYTHONPATH": os.path.join(ROOT, "tests"), **({"CI": ci} if ci is not None else {})})
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "conftest", "-p", "no:cacheprovider",
                           f"test_sample.py::{test}"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)


def test_outside_ci_a_missing_extra_skips_and_the_count_is_printed(tmp_path):
    r = pytest_run(tmp_path, None, "test_needs_an_extra")
    assert r.returncode == 0 and "skipped tests: 1" in r.stdout


def test_under_ci_a_missing_extra_fails_naming_it(tmp_path):
    r = pytest_run(tmp_path, "true", "test_needs_an_extra")
    assert r.returncode == 1 and "skipped tests: 0" in r.stdout
    assert "CI=true: no_such_module_of_memory_bench is not installed" in r.stdout


def test_under_ci_any_skip_fails_the_session(tmp_path):
    r = pytest_run(tmp_path, "true", "test_skips")
    assert r.returncode == 1 and "skipped tests: 1" in r.stdout
    assert pytest_run(tmp_path, "true", "test_runs").returncode == 0
