"""Start a real Chroma server (`chroma run`, from requirements-chroma.txt) on 127.0.0.1 and wait
until it answers, so that the `chroma` backend (settings host/port) or an HTTP preset can be
measured against Chroma's REST API instead of the embedded library.

Usage:
  python -m backends._chroma_server -- COMMAND ...
      a server on a free port and a temporary data folder for the length of COMMAND, which
      sees its URL in CHROMA_URL (the `chroma_http` preset reads it); stopped when COMMAND
      ends, fails or is interrupted, e.g.
      python -m backends._chroma_server -- make bench SYSTEMS="none oracle chroma chroma_http"
  python -m backends._chroma_server --port 8000 --path .cache/chroma-server
      a server until Ctrl-C; in config.yaml:  chroma_server: {adapter: chroma, host: 127.0.0.1, port: 8000}
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from processes import free_port, stop

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HEARTBEAT = "/api/v2/heartbeat"


def command(path: str, port: int) -> list[str]:
    """The `chroma run` command line of this interpreter's chromadb (the pinned one), not of
    whatever `chroma` script comes first on PATH."""
    return [sys.executable, "-c", "import sys; from chromadb.cli.cli import app; sys.argv[0] = 'chroma'; app()",
            "run", "--host", "127.0.0.1", "--port", str(port), "--path", path]


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
    """Start `chroma run` in its own process group and return it once the heartbeat answers;
    stop it with stop(proc). A failed start stops the process before raising."""
    os.makedirs(path, exist_ok=True)
    proc = subprocess.Popen(command(path, port), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_ready(port, timeout_s, proc)
    except BaseException:
        stop(proc)
        raise
    return proc


def main(argv: list[str] | None = None) -> int:
    """Serve until Ctrl-C, or for the length of COMMAND; return the command's exit code."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=0, help="0 (default): a free port")
    ap.add_argument("--path", default="", help="the server's data folder; default: a temporary one, removed at exit")
    ap.add_argument("--timeout-s", type=float, default=60.0)
    ap.add_argument("command", nargs=argparse.REMAINDER, help="a command to run beside the server, after --")
    a = ap.parse_args(argv)
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    port = a.port or free_port()
    # .cache is git-ignored and absent from a fresh clone until something creates it.
    os.makedirs(os.path.join(ROOT, ".cache"), exist_ok=True)
    path = a.path or tempfile.mkdtemp(prefix="chroma-server-", dir=os.path.join(ROOT, ".cache"))
    # SIGTERM (a CI timeout, `kill`) must stop the server too, like Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    proc = start(path, port, a.timeout_s, log=None if not command else subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        if not command:
            print(f"chroma server ready: {url} (pid {proc.pid}); Ctrl-C stops it", flush=True)
            return proc.wait()
        print(f"chroma server ready: {url}; running the command with CHROMA_URL={url}", file=sys.stderr)
        return subprocess.run(command, env={**os.environ, "CHROMA_URL": url}).returncode
    except KeyboardInterrupt:
        return 130
    finally:
        stop(proc)
        if not a.path:
            shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
