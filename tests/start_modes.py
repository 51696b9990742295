"""Run a command in each of the ways `make test` gets started, several times, and say which runs
passed: no test's outcome may depend on the caller's signal dispositions, its terminal or its
standard input.

  terminal  on a pseudo-terminal of its own, as a session leader, SIGINT and SIGTERM at their
            defaults: an interactive shell's foreground job
  trap      bash -c "trap '' INT; COMMAND": SIGINT ignored, as a shell without job control (a
            script's `COMMAND &`, nohup, some CI runners) starts a background job
  setsid    setsid COMMAND < /dev/null: a new session, no terminal, no input

Each run's output goes to a log file beside the others in .cache/start-modes/ (git-ignored);
the last line of each is printed. Exit 0 when every run exited 0.

Usage:
  python tests/start_modes.py                          # the signal tests, each way 3 times
  python tests/start_modes.py --times 2 -- make test   # the whole suite as `make test` runs it
  python tests/start_modes.py --modes trap -- python -m pytest -q tests/test_contract.py
"""
from __future__ import annotations

import argparse
import os
import pty
import re
import shlex
import subprocess
import sys
import time

from dispositions import default_signals  # this folder: the dispositions the signal tests set too

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = ("terminal", "trap", "setsid")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
DEFAULT_COMMAND = [sys.executable, "-m", "pytest", "-q", "tests/test_contract.py", "tests/test_embedded.py",
                   "tests/test_faults.py"]


def on_terminal(command: list[str], log) -> int:
    """Run command on a new pseudo-terminal (its controlling terminal, as a session leader),
    copying what it writes to log; its exit code."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: a new session whose controlling terminal is the pty
        try:
            default_signals()
            os.chdir(ROOT)
            os.execvp(command[0], command)
        finally:
            os._exit(127)  # exec failed
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the terminal's other side closed, the command is done
            break
        if not data:
            break
        log.write(data)
    os.close(fd)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def run_once(mode: str, command: list[str], log) -> int:
    """The command started in this mode; its exit code."""
    if mode == "terminal":
        return on_terminal(command, log)
    if mode == "trap":
        argv = ["bash", "-c", "trap '' INT; " + shlex.join(command)]
        return subprocess.run(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                              preexec_fn=default_signals).returncode
    argv = ["setsid", "--wait", *command]
    return subprocess.run(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                          preexec_fn=default_signals).returncode


def last_line(path: str) -> str:
    """The last non-empty line of a log, terminal colours and carriage returns removed."""
    with open(path, "rb") as fh:
        lines = [ANSI.sub("", line.decode("utf-8", "replace")).replace("\r", "").strip()
                 for line in fh.read().splitlines()]
    return next((line for line in reversed(lines) if line), "(no output)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--times", type=int, default=3, help="runs per mode (default 3)")
    ap.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    ap.add_argument("command", nargs=argparse.REMAINDER, help="the command, after -- (default: the signal tests)")
    a = ap.parse_args(argv)
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    command = command or DEFAULT_COMMAND
    if a.times < 1:
        ap.error("--times must be at least 1")
    logs = os.path.join(ROOT, ".cache", "start-modes")
    os.makedirs(logs, exist_ok=True)
    print(f"command: {shlex.join(command)}")
    failed = 0
    for n in range(1, a.times + 1):
        for mode in a.modes:
            path = os.path.join(logs, f"{mode}-{n}.log")
            t0 = time.monotonic()
            with open(path, "wb") as log:
                code = run_once(mode, command, log)
            failed += code != 0
            print(f"{mode:<8} run {n}: exit {code:<3} {time.monotonic() - t0:6.1f} s  {last_line(path)}", flush=True)
    print(f"{a.times * len(a.modes) - failed} of {a.times * len(a.modes)} runs passed; logs in "
          f"{os.path.relpath(logs, ROOT)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
