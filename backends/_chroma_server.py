"""Start a real Chroma server (`chroma run`, from requirements-chroma.txt) on 127.0.0.1 and wait
until it answers, so that the `chroma` backend (settings host/port) or an HTTP preset can be
measured against Chroma's REST API instead of the embedded library.

Usage:
  python backends/_chroma_server.py --port 8000 --path .cache/chroma-server
  # then, in config.yaml:  chroma_server: {adapter: chroma, host: 127.0.0.1, port: 8000}
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

HEARTBEAT = "/api/v2/heartbeat"


def command(path: str, port: int) -> list[str]:
    """The `chroma run` command line; falls back to the module when the script is not on PATH."""
    exe = shutil.which("chroma")
    base = [exe] if exe else [sys.executable, "-c", "from chromadb.cli.cli import app; app()"]
    return base + ["run", "--host", "127.0.0.1", "--port", str(port), "--path", path]


def wait_ready(port: int, timeout_s: float, proc: subprocess.Popen | None = None) -> None:
    """Poll the heartbeat until it answers; raise if the server exits or the time runs out."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"chroma run exited with code {proc.returncode} before it was ready")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{HEARTBEAT}", timeout=1) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"chroma run did not answer on port {port} within {timeout_s:.0f} s")


def start(path: str, port: int, timeout_s: float = 60.0, log=subprocess.DEVNULL) -> subprocess.Popen:
    """Start `chroma run` and return its process once the heartbeat answers; stop it with
    proc.terminate(). A failed start terminates the process before raising."""
    os.makedirs(path, exist_ok=True)
    proc = subprocess.Popen(command(path, port), stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_ready(port, timeout_s, proc)
    except BaseException:
        proc.terminate()
        proc.wait(10)
        raise
    return proc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--path", default=".cache/chroma-server", help="the server's data folder")
    ap.add_argument("--timeout-s", type=float, default=60.0)
    a = ap.parse_args(argv)
    proc = start(a.path, a.port, a.timeout_s, log=None)  # log=None: the server's output goes to ours
    print(f"chroma server ready: http://127.0.0.1:{a.port} (pid {proc.pid}); Ctrl-C stops it", flush=True)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        proc.wait(10)
        return 130


if __name__ == "__main__":
    sys.exit(main())
