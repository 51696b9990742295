"""Starting and stopping helper servers: a free loopback port, and a stop that ends a server's
whole process group. Shared by serve.py (the embedded model) and backends/_chroma_server.py
(Chroma's REST server), which build on nothing else of each other."""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
from collections.abc import Iterator

# A server may wait for the request in flight before it exits on TERM (uvicorn does); a long
# prompt can take tens of seconds on two cores, so after this grace the group is killed.
STOP_GRACE_S = 5.0
STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def signals_ignored() -> Iterator[None]:
    """SIGINT and SIGTERM ignored inside, restored after: a second Ctrl-C or TERM must not abort
    a stop halfway and orphan what is being stopped. Restored, so that a caller that goes on (a
    test session) still stops on Ctrl-C, and the children it starts later do not inherit the
    ignored signal."""
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)


def stop(proc: subprocess.Popen) -> None:
    """Stop a server started in its own process group (start_new_session): TERM to the group,
    then KILL if it lingers; Ctrl-C and TERM are ignored meanwhile."""
    with signals_ignored():
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        except ProcessLookupError:
            pass


def log_tail(path: str, chars: int = 800) -> str:
    """The end of a server's log, for an error message: what it said last before it failed."""
    try:
        with open(path, "rb") as f:
            return f.read()[-chars:].decode("utf-8", "replace").strip() or "(no output)"
    except OSError:
        return "(no log)"
