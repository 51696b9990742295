"""Signal dispositions a test's child starts with, set in the child (Popen's preexec_fn), so that
no test depends on what the shell that started pytest handed down: a background job of a shell
without job control (a script's `cmd &`, `nohup`, some CI runners) starts with SIGINT ignored,
and its children inherit that."""
from __future__ import annotations

import signal

STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def default_signals() -> None:
    """SIGINT and SIGTERM at their defaults and unblocked, as a terminal starts a command."""
    for s in STOP_SIGNALS:
        signal.signal(s, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def sigint_ignored() -> None:
    """SIGINT ignored and SIGTERM at its default, as a shell without job control starts a
    background job."""
    default_signals()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
