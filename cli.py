"""The command-line frame every script runs in: the exit codes, the errors a script stops on
(InputError exits 2 with one line, ServiceDown 3), run_cli, which turns them, Ctrl-C, SIGTERM and a
closed stdout into those codes, and the progress line on stderr; and printable(), through which
every line a script prints reaches the terminal, its values' control characters escaped."""
from __future__ import annotations

import errno
import os
import re
import select
import shlex
import signal
import sys
import threading
import time
from typing import Any, Iterable, TextIO

# Every script's exit codes, each with one meaning (docs/running.md lists them).
EXIT_OK = 0
EXIT_BUG = 1  # a crash: a traceback
EXIT_BAD_INPUT = 2  # bad input or config, named before any model call
# Stopped with work left (more failed calls than max_error_rate allows, the endpoint gone, max_cost
# reached): every record written is kept, and the same command goes on from there.
EXIT_UNFINISHED = 3
EXIT_CHECK_FAILED = 4  # the checks ran and one FAILed (check.py, artifacts.py)
EXIT_SHEET_INCOMPLETE = 5  # audit.py: rows of the audit sheet have no human verdict yet
EXIT_INTERRUPTED = 130  # 128 + SIGINT: Ctrl-C
EXIT_HUNG_UP = 129  # 128 + SIGHUP: serve.py's terminal went away
EXIT_TERMINATED = 143  # 128 + SIGTERM, as a shell reports a process the signal ended
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: stdout's reader went away (`score.py ... | head`)
# A write that failed for want of room: the disk is full, the user's quota or the file size limit reached.
DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})

# Characters a terminal acts on instead of showing, so that text from a dataset, a run file or an
# endpoint (an id, an answer, an error) could retitle the window, clear the screen or move the
# cursor: the C0 controls but newline and tab, DEL and the C1 controls (ECMA-48), and the
# bidirectional embeddings, overrides and isolates, which reorder the text shown around them
# (Unicode UAX #9; Boucher and Anderson, "Trojan Source", arXiv:2111.00169).
UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


class InputError(Exception):
    """Bad input or config: the message names the file, line and field. Scripts exit 2."""


class ServiceDown(Exception):
    """A service the stage needs stopped answering (llm.EndpointDown: the model endpoint): the
    stage stops with exit 3; every record written stays, and the same command resumes."""


class CostCapReached(Exception):
    """The config's max_cost was reached (run.py): the stage stops before finishing, with exit 3
    as when the endpoint went away; every record written stays, and the same command resumes
    once max_cost is raised."""


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: the stage stops as on Ctrl-C (records written stay, calls in flight are
    redone on resume), whatever SIGINT's disposition."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated()


def printable(text: str) -> str:
    """Text as it may reach a terminal: each UNPRINTABLE character as its escape, \\x1b below
    DEL and \\u007f, \\u0085, \\u202e from DEL on. json.dumps writes the C0 controls as \\u001b
    itself, and the \\u form is JSON's own, so JSON printed on stdout stays JSON that reads back
    the same. A backslash is left as it is, so that ordinary output never changes."""
    return UNPRINTABLE.sub(_escape, text)


def _escape(m: re.Match) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x7f else f"\\u{code:04x}"


class PrintableStream:
    """A text stream that writes through printable(): run_cli puts one over stdout and stderr,
    so every line a script prints shows its values escaped, whichever print it came from. What
    a script means as a control code (Progress's erase-line) goes to .unescaped."""

    def __init__(self, stream: TextIO) -> None:
        self.unescaped = getattr(stream, "unescaped", stream)  # run_cli inside run_cli: escaped once

    def write(self, text: str) -> int:
        """Write the text escaped; the count is of the text given, as a stream's is."""
        self.unescaped.write(printable(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        """Write each line escaped."""
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.unescaped, name)  # flush, fileno, isatty, encoding: the stream's own


def stop_note(script: str, out: str, kept: int, total: int, what: str, argv: list[str] | None) -> str:
    """What a stopped stage kept and the command that resumes it: the one given (argv, or the
    process's own arguments), without --fresh, which would discard what was kept."""
    args = [x for x in (sys.argv[1:] if argv is None else argv) if x != "--fresh"]
    return (f"{kept} of {total} {what} kept in {out}; the same command resumes from there: "
            f"{shlex.join(['python', script, *args])}")


def stdout_closed() -> bool:
    """Whether stdout's reader has gone away: poll reports an error on the write end of a pipe
    that no process reads any more (a BrokenPipeError may also come from a socket)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by an object without a descriptor
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


def run_cli(main_fn, argv: list[str] | None = None) -> int:
    """Run a script's main: InputError and a full disk print one line and exit 2, ServiceDown
    exits 3, Ctrl-C exits 130, SIGTERM exits 143, a closed stdout exits 141. SIGINT keeps the disposition the
    process started with: a shell starts a background job with SIGINT ignored so that Ctrl-C
    spares it, and that choice is honoured. SIGTERM is caught unless it too was ignored, and
    only for the length of the call. For that length too, stdout and stderr write through
    printable(): whatever a script prints, a value in it reaches the terminal escaped."""
    previous = signal.getsignal(signal.SIGTERM)
    catch = previous == signal.SIG_DFL and threading.current_thread() is threading.main_thread()
    if catch:
        signal.signal(signal.SIGTERM, _raise_terminated)
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = PrintableStream(sys.stdout), PrintableStream(sys.stderr)
    try:
        code = main_fn(argv)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's flush at exit
        return code
    except BrokenPipeError:
        if not stdout_closed():
            raise
        # The reader of stdout went away (`| head`): end as a program SIGPIPE ends, silently and
        # with 128 + SIGPIPE, so `set -o pipefail` still tells a cut pipeline from a full one
        # (Python ignores SIGPIPE, so without this a traceback and exit 1). Nothing more is
        # written: stdout goes to /dev/null, or the interpreter's last flush would fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as e:
        if e.errno not in DISK_FULL:
            raise
        # Not a bug of the script: one line, and what to do. A record cut by the full disk is
        # a last line without its newline, which the resuming stage drops and redoes.
        where = f"{e.filename}: " if e.filename else ""
        print(f"error: {where}cannot write: {e.strerror}; free space on the disk and rerun the same command: "
              f"every whole record written is kept, and the stage goes on from there", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ServiceDown as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_UNFINISHED
    except CostCapReached as e:
        print(f"stopped: {e}", file=sys.stderr)
        return EXIT_UNFINISHED
    except Terminated as e:  # a stage may say what it kept and how to resume
        print(f"terminated: {e}" if str(e) else "terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except KeyboardInterrupt as e:
        print(f"interrupted: {e}" if str(e) else "interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        sys.stdout, sys.stderr = streams
        if catch:
            signal.signal(signal.SIGTERM, previous)


class Progress:
    """One progress line on stderr: on a terminal it updates in place (done/total, rate, ETA,
    cache hits, errors, and the current phase, ingestion included); off a terminal a line every
    few seconds, so logs stay readable."""
    EVERY_S = 5.0
    TTY_EVERY_S = 0.2

    def __init__(self, label: str, total: int, unit: str, stream=None) -> None:
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty()
        self.done = self.errors = self.cached = 0
        self.base = 0  # what was done before the current count started (switch)
        self.phase_text = ""
        self.t0 = time.monotonic()
        self.last = 0.0

    def phase(self, text: str) -> None:
        """What the stage is doing now (e.g. ingesting case 3/46)."""
        self.phase_text = text
        self._maybe_print()

    def update(self, done: int | None, errors: int, cached: int) -> None:
        """Counts so far; done None keeps the count (errors and cached of records written
        while another unit is counted)."""
        if done is not None:
            self.done = done
        self.errors, self.cached = errors, cached
        self._maybe_print()

    def switch(self, total: int, unit: str, phase: str, done: int = 0) -> None:
        """Count another unit from now on, e.g. cases while ingesting, then records while
        answering: the rate and ETA start again from `done` already counted."""
        self.total, self.unit, self.phase_text = total, unit, phase
        self.done = self.base = done
        self.t0 = time.monotonic()
        self.last = 0.0
        self._maybe_print()

    def line(self) -> str:
        """The progress line's text."""
        elapsed = max(1e-9, time.monotonic() - self.t0)
        rate = (self.done - self.base) / elapsed
        left = self.total - self.done
        eta = f"{int(left / rate) // 60}:{int(left / rate) % 60:02d}" if rate > 0 and left > 0 else "-"
        phase = f" [{self.phase_text}]" if self.phase_text else ""
        return (f"{self.label}: {self.done}/{self.total} {self.unit}{phase}, {rate:.2f}/s, ETA {eta}, "
                f"{self.cached} cached, {self.errors} errors")

    def _maybe_print(self) -> None:
        now = time.monotonic()
        if now - self.last < (self.TTY_EVERY_S if self.tty else self.EVERY_S):
            return
        self.last = now
        self._write("" if self.tty else "\n")

    def close(self) -> None:
        """The final line, always printed."""
        self._write("\n")

    def _write(self, end: str) -> None:
        # On a terminal the line begins with a carriage return and the erase-line code, which
        # must reach it as codes (past run_cli's PrintableStream); the text itself, whose phase
        # may name a case id, is escaped like any other.
        stream = getattr(self.stream, "unescaped", self.stream)
        stream.write(("\r\033[K" if self.tty else "") + printable(self.line()) + end)
        stream.flush()
