"""Shared fixtures: the fake OpenAI-compatible endpoint, a config in tmp_path, and a way to run
a script's main() in-process or as a subprocess."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fake_llm import FakeLLM  # noqa: E402

TINY = os.path.join(ROOT, "tests", "data", "tiny.jsonl")
API_KEY = "sk-test-SECRET-do-not-write-9f2c"
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "datasets"))
# Under CI=true no test may skip: a group skipped for a missing extra (chroma, dense, mem0, the
# plots) would let CI go green without running it. pytest.importorskip fails instead, and the
# session fails when anything skipped (.ci/run prints the count, which must be 0).
CI = os.environ.get("CI") == "true"
_importorskip = pytest.importorskip


def _import_or_fail(modname: str, *args, **kwargs):
    """pytest.importorskip under CI=true: a missing module fails the test, naming it."""
    try:
        return _importorskip(modname, *args, **kwargs)
    except pytest.skip.Exception as e:
        pytest.fail(f"CI=true: {modname} is not installed, and CI must not skip its tests ({e})", pytrace=False)


if CI:
    pytest.importorskip = _import_or_fail


def pytest_terminal_summary(terminalreporter) -> None:
    """The count of skipped tests, last, for .ci/run."""
    terminalreporter.write_line(f"skipped tests: {len(terminalreporter.stats.get('skipped', []))}")


def pytest_sessionfinish(session, exitstatus) -> None:
    """Under CI=true a session with a skipped test fails."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if CI and reporter is not None and reporter.stats.get("skipped") and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture
def fake_llm(monkeypatch):
    """A running fake endpoint, with LLM_BASE_URL and LLM_API_KEY pointing at it."""
    server = FakeLLM().start()
    monkeypatch.setenv("LLM_BASE_URL", server.url)
    monkeypatch.setenv("LLM_API_KEY", API_KEY)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory):
    """A real `chroma run` server on a free loopback port for the whole test session; its port."""
    pytest.importorskip("chromadb", reason="chromadb not installed (pip install -r backends/requirements-chroma.txt)")
    from backends._chroma_server import start
    from processes import free_port, stop
    port = free_port()
    proc = start(str(tmp_path_factory.mktemp("chroma-server")), port)
    yield port
    stop(proc)


def in_fresh_process(code: str, hash_seed: int) -> str:
    """What `code` prints, run by a new interpreter with this PYTHONHASHSEED (Python salts str
    hashes per process, so set and dict orders of strings differ between processes): what a test
    of "the same in every process" compares, where two calls in one process would share a salt."""
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed),
           "PYTHONPATH": os.pathsep.join((ROOT, os.path.join(ROOT, "data")))}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def made_in_other_processes(module: str, call: str) -> set[str]:
    """The JSONL text `call` (a dataset generator's split, of data/`module`) makes in two new
    interpreters with other string-hash salts: one text if the generator is the same everywhere."""
    code = f"import make_cases, {module}; print(make_cases.render({call}), end='')"
    return {in_fresh_process(code, seed) for seed in (1, 2)}


def write_config(tmp_path, dataset: str = TINY, **overrides) -> str:
    """A config.yaml in tmp_path, from the repository's config with overrides, cache in tmp."""
    import yaml
    with open(os.path.join(ROOT, "config.yaml"), encoding="utf-8") as fh:
        cfg = yaml.safe_load(fh)
    cfg.update({"dataset": dataset, "cache_dir": str(tmp_path / "cache"), "retry_backoff_s": 0.01,
                "workers": 3})
    cfg.update(overrides)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return str(path)


def backend_config(tmp_path, backends: dict) -> dict:
    """What run.py hands backends.load_backend, cut to what backends read: the backends section
    and the harness keys load_config always fills (pinned model, sampling, client settings)."""
    from config import SAMPLING_DEFAULTS
    return {"backends": backends, "answer_model": "stub-model", "seed": 7, "max_retries": 0,
            "retry_backoff_s": 0.0, "request_timeout_s": 10, "cache_dir": str(tmp_path / "llm-cache"),
            "answer_sampling": dict(SAMPLING_DEFAULTS)}


@pytest.fixture
def config(tmp_path):
    """Path of a config for the tiny dataset."""
    return write_config(tmp_path)


def script(name: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run a repository script as a user would, from the repository root."""
    return subprocess.run([sys.executable, os.path.join(ROOT, name), *args], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=300)


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    """The report tests' realistic comparison: none, oracle, full_context, keyword and hash
    through every stage against the fake endpoint, budget 60 tokens; one per test module."""
    from report_pipeline import pipeline  # here: report_pipeline imports this module
    with pytest.MonkeyPatch.context() as mp:
        paths = pipeline(tmp_path_factory.mktemp("real"), monkeypatch=mp)
    paths["md_text"] = open(paths["md"], encoding="utf-8").read()
    paths["html_text"] = open(paths["html"], encoding="utf-8").read()
    return paths
