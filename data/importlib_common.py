"""Shared pieces of the dataset importers in data/: a streaming reader for JSON arrays, the
validating JSONL writer, the report of dropped and repaired items, and the question-type map.

Not a script; the importers put the repository root and data/ on sys.path, then import it.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from typing import IO, Any, Iterator

from cli import InputError
from contract import QUESTION_TYPES
from dataset import validate_case
from fileio import atomic_open, dumps, not_utf8_error

# 1 MiB of text per read: big enough that LongMemEval-M (about 5 MB per record) needs only a
# few reads per record, small enough that memory stays at one record plus one chunk.
DEFAULT_BUFSIZE = 1 << 20
# The first line of ijson's message for these faults, in its C backend and its pure-Python one.
TRUNCATED = ("parse error: premature EOF", "Incomplete JSON content")
TRAILING = ("parse error: trailing garbage", "Additional data found")

# Type strings a hand-written dataset may use, after lower-casing and turning '-' and ' ' into
# '_'. Only the obvious spellings: anything else is an error unless --default-type is given,
# because a wrong type silently moves a question into another row of the report.
TYPE_ALIASES = {
    **{t: t for t in QUESTION_TYPES},
    "singlehop": "single_hop", "single": "single_hop", "single_session_user": "single_hop",
    "multihop": "multi_hop", "multi": "multi_hop", "multi_session": "multi_hop",
    "temporal_reasoning": "temporal", "time": "temporal",
    "update": "knowledge_update", "knowledge_updates": "knowledge_update",
    "unanswerable": "abstention", "no_answer": "abstention", "abstain": "abstention",
    "single_session_preference": "preference",
    "opendomain": "open_domain",
    "single_session_assistant": "assistant_recall",
}


KIND_NAMES = {str: "a string", int: "an integer", list: "a list", dict: "an object", bool: "a boolean"}


def map_type(raw: Any, where: str, default: str | None) -> str:
    """The contract type for a dataset's type string; unknown ones fail unless default is set."""
    if isinstance(raw, str):
        key = re.sub(r"[-\s]+", "_", raw.strip().lower())
        if key in TYPE_ALIASES:
            return TYPE_ALIASES[key]
    if default is not None:
        return default
    raise InputError(f"{where}: unknown question type {raw!r}; expected one of "
                     f"{', '.join(QUESTION_TYPES)} (or pass --default-type)")


def answer_text(value: Any, where: str) -> str:
    """A gold answer as a string: integers (LoCoMo, LongMemEval) become their decimal text."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise InputError(f"{where}: field 'answer' must be a string or an integer, got {value!r}")


def require(obj: dict, key: str, kind: type | tuple, where: str) -> Any:
    """obj[key] if present and of the given type, else an InputError naming the field."""
    if key not in obj:
        raise InputError(f"{where}: missing required field '{key}'")
    value = obj[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join(KIND_NAMES.get(k, k.__name__) for k in kinds)
        raise InputError(f"{where}: field '{key}' must be {names}, got {type(value).__name__}")
    return value


# ---------------------------------------------------------------------------------------------
# Streaming JSON array reader
# ---------------------------------------------------------------------------------------------

class Utf8Reader:
    """A text file's content as UTF-8 bytes, which ijson reads, after a head already read from
    it; a chunk that is not UTF-8 is the InputError naming the line (fileio.not_utf8_error)."""

    def __init__(self, head: str, fh: IO[str], path: str) -> None:
        self._head, self._fh, self._path = head.encode("utf-8"), fh, path

    def read(self, n: int = -1) -> bytes:
        """Up to n characters of text, encoded (the head first)."""
        if self._head and n:
            head, self._head = self._head, b""
            return head
        try:
            return self._fh.read(n).encode("utf-8")
        except UnicodeDecodeError:
            raise not_utf8_error(self._path) from None


def array_head(fh: IO[str], path: str) -> str:
    """The text that opens the file up to its '[' (without a byte-order mark), read from fh; an
    InputError naming the line if it does not open a JSON array, which ijson alone would read
    as an array without elements."""
    head, line = "", 1
    while True:
        try:
            char = fh.read(1)
        except UnicodeDecodeError:
            raise not_utf8_error(path) from None
        if char == "[":
            return head + char
        if not char or char not in " \t\r\n\ufeff":
            raise InputError(f"{path}:{line}: expected a JSON array ('[') at the top level")
        head += char if char != "\ufeff" else ""
        line += char == "\n"


def elements(n: int) -> str:
    """'1 element', '2 elements'."""
    return f"{n} element" + ("" if n == 1 else "s")


def iter_json_array(fh: IO[str], path: str, bufsize: int = DEFAULT_BUFSIZE) -> Iterator[tuple[int, Any]]:
    """Yield (index, element) for each element of the top-level JSON array in fh, parsed by
    ijson in chunks of bufsize characters, so that memory holds one element at a time. Errors
    name the element by its index, as jq's `.[index]` finds it: ijson does not say where in the
    file an element starts."""
    try:
        import ijson  # the importers' requirement, not the core's
    except ImportError:
        raise InputError("reading a JSON array needs ijson; install it with: "
                         "pip install -r data/requirements.txt") from None
    head = array_head(fh, path)
    count = 0
    try:
        for value in ijson.items(Utf8Reader(head, fh, path), "item", use_float=True, buf_size=bufsize):
            yield count, value
            count += 1
    except ijson.JSONError as e:
        message = str(e).splitlines()[0] if str(e) else type(e).__name__
        if message.startswith(TRUNCATED):
            raise InputError(f"{path}: the file ends inside the top-level array, after {elements(count)}") from None
        if message.startswith(TRAILING):
            raise InputError(f"{path}: unexpected data after the top-level array of {elements(count)}") from None
        raise InputError(f"{path}[{count}]: invalid JSON in the top-level array: {message}") from None


# ---------------------------------------------------------------------------------------------
# Report of what was kept, dropped and repaired
# ---------------------------------------------------------------------------------------------

class Report:
    """Counts of the written cases and every dropped, repaired or flagged item, for stderr."""

    def __init__(self) -> None:
        self.cases = self.sessions = self.turns = self.questions = 0
        self.by_type: dict[str, int] = {t: 0 for t in QUESTION_TYPES}
        self.items: list[tuple[str, str]] = []

    def note(self, kind: str, message: str) -> None:
        """Record one dropped / repaired / flagged item under a short stable kind."""
        self.items.append((kind, message))

    def count_case(self, case: dict) -> None:
        """Add one written case to the counts."""
        self.cases += 1
        self.sessions += len(case["sessions"])
        self.turns += sum(len(s["turns"]) for s in case["sessions"])
        self.questions += len(case["questions"])
        for q in case["questions"]:
            self.by_type[q["type"]] += 1

    def kinds(self) -> dict[str, int]:
        """How many items of each kind were noted."""
        out: dict[str, int] = {}
        for kind, _ in self.items:
            out[kind] = out.get(kind, 0) + 1
        return out

    def print(self, out_path: str, stream: IO[str] | None = None) -> None:
        """Print every noted item and the counts (to stderr unless a stream is given)."""
        stream = stream or sys.stderr  # looked up per call, so redirection (and capsys) works
        for kind, message in self.items:
            print(f"{kind}: {message}", file=stream)
        types = ", ".join(f"{t} {n}" for t, n in self.by_type.items() if n)
        print(f"wrote {out_path}: {self.cases} cases, {self.sessions} sessions, {self.turns} turns, "
              f"{self.questions} questions ({types})", file=stream)
        if self.items:
            kinds = ", ".join(f"{k} {n}" for k, n in self.kinds().items())
            print(f"noted items: {kinds}", file=stream)


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------

class CaseWriter:
    """Validate each case against the contract and stream it to a temp file next to the output
    (fileio.atomic_open), which replaces the output on a clean exit only, so a failed import
    never leaves a partial file behind."""

    def __init__(self, out_path: str, report: Report, force: bool = False) -> None:
        if os.path.exists(out_path) and not force:
            raise InputError(f"{out_path}: already exists; pass --force to overwrite it")
        self.out_path = out_path
        self.report = report
        self.seen_cases: set = set()
        self.seen_qids: set = set()
        self._open: Any = None
        self._fh: IO[str] | None = None

    def __enter__(self) -> "CaseWriter":
        self._open = atomic_open(self.out_path)
        self._fh = self._open.__enter__()
        return self

    def write(self, case: dict, where: str) -> None:
        """Validate one case (errors name `where`, the source location) and append it."""
        validate_case(case, where, self.seen_cases, self.seen_qids)
        assert self._fh is not None
        self._fh.write(dumps(case) + "\n")
        self.report.count_case(case)

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None and self.report.cases == 0:
            empty = InputError(f"{self.out_path}: the import produced no cases; nothing written")
            self._open.__exit__(InputError, empty, None)  # the temp file is removed
            raise empty
        self._open.__exit__(exc_type, exc, tb)


def base_parser(doc: str) -> argparse.ArgumentParser:
    """The argparse parser every importer starts from: --help is the script docstring."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output JSONL path (written atomically)")
    ap.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    return ap
