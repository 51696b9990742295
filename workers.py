"""Concurrency for the stages: they submit model calls to worker threads and write every record
from the main thread, so a file is appended by one thread only."""
from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any


class Workers:
    """Daemon worker threads for model calls; results come back to the main thread in
    completion order. Daemon threads, unlike concurrent.futures', are not joined at exit: a
    Ctrl-C ends the stage at once (exit 130) instead of waiting out every call in flight, whose
    questions then have no record and are redone on resume."""

    def __init__(self, n: int) -> None:
        self._todo: queue.SimpleQueue = queue.SimpleQueue()
        self._done: queue.SimpleQueue = queue.SimpleQueue()
        self._stopped = threading.Event()
        self.pending = 0
        for _ in range(n):
            threading.Thread(target=self._work, daemon=True).start()

    def _work(self) -> None:
        while True:
            tag, fn, args = self._todo.get()
            if self._stopped.is_set():
                continue  # a call raised (a refused key): send nothing more, the stage is stopping
            try:
                self._done.put((tag, fn(*args), None))
            except BaseException as e:  # handed to the main thread, which re-raises it
                self._stopped.set()
                self._done.put((tag, None, e))

    def stop(self) -> None:
        """Send nothing more: the calls still queued are dropped (a stage stopping at its cost
        cap must not go on paying for them); a call in flight finishes."""
        self._stopped.set()

    def submit(self, tag: Any, fn: Callable, *args: Any) -> None:
        """Queue fn(*args); its result comes back from results() with tag."""
        self.pending += 1
        self._todo.put((tag, fn, args))

    def results(self, block: bool) -> Iterator[tuple[Any, Any]]:
        """(tag, result) of finished calls: with block=False those ready now, with block=True
        every pending one. An exception raised by a call is raised here, in the main thread."""
        while self.pending:
            try:
                # A timeout keeps the main thread responsive to Ctrl-C while it waits.
                tag, result, error = self._done.get(timeout=0.2) if block else self._done.get_nowait()
            except queue.Empty:
                if block:
                    continue
                return
            self.pending -= 1
            if error is not None:
                raise error
            yield tag, result
