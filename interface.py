"""The shared contract of memory-bench: records, the backend protocol, dataset and config
loading with validation, and JSONL I/O. Every stage script imports from here; nothing here
calls a model.

Usage:
  python interface.py validate data/cases.jsonl [more.jsonl ...]
  python -m backends check-config config.yaml     # the config, backend sections included
"""
from __future__ import annotations

import argparse
import contextlib
import difflib
import hashlib
import json
import os
import re
import select
import shlex
import signal
import sys
import threading
import tempfile
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import IO, Any, Iterator, Protocol

import yaml

# The question types the contract knows. The first six are those of the bundled data's engineering
# assistant; open_domain and adversarial from LoCoMo, assistant_recall from LongMemEval's
# single-session-assistant questions.
QUESTION_TYPES = (
    "single_hop", "multi_hop", "temporal", "knowledge_update", "abstention",
    "preference", "open_domain", "adversarial", "assistant_recall",
)

# Types whose gold says the asked fact is not in the history.
UNANSWERABLE_TYPES = ("abstention", "adversarial")

# The controls run.py computes itself; they validate the harness and are not memory systems.
CONTROL_NAMES = ("none", "oracle", "full_context")

# Exit codes shared by every script (docs/running.md lists them).
EXIT_OK, EXIT_BUG, EXIT_BAD_INPUT, EXIT_TOO_MANY_ERRORS, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_TERMINATED = 143  # 128 + SIGTERM, as a shell reports a process the signal ended
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: stdout's reader went away (`score.py ... | head`)


class InputError(Exception):
    """Bad input or config: the message names the file, line and field. Scripts exit 2."""


# ---------------------------------------------------------------------------------------------
# Records and the backend protocol: add and search, the one interface every system is tested by
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MemoryItem:
    """One stored turn: a stable id, its text and metadata (session_id, timestamp, role)."""
    item_id: str
    text: str
    metadata: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Hit:
    """One search result. source_ids is provenance: the MemoryItem ids that produced it.
    An empty tuple means the backend cannot say, and retrieval recall becomes null."""
    text: str
    score: float
    source_ids: tuple = ()
    timestamp: str = ""


class MemoryBackend(Protocol):
    """What every system under test implements. Optional attributes a backend may set:
    internal_model (an LLM it calls itself, disclosed beside its name in every report) and
    flush_note (set when readiness is assumed, e.g. after a fixed delay, not verified)."""
    name: str
    version: str

    def reset(self, namespace: str) -> None: ...
    def add(self, namespace: str, items: list[MemoryItem]) -> None: ...
    def flush(self, namespace: str, timeout_s: float) -> None: ...
    def search(self, namespace: str, query: str, k: int) -> list[Hit]: ...


def session_items(session: dict) -> list[MemoryItem]:
    """The items one session adds: each turn as 'role: text', with its session and time."""
    return [
        MemoryItem(item_id=t["turn_id"], text=f'{t["role"]}: {t["text"]}',
                   metadata={"session_id": session["session_id"],
                             "timestamp": session["timestamp"], "role": t["role"]})
        for t in session["turns"]
    ]


def items_sha256(items: list[MemoryItem]) -> str:
    """sha256 of exactly what a system was given to store, in order: ids, texts and metadata.
    Equal to the hash of the case's own turns (session_items) when nothing else leaked in."""
    return sha256_text("\n".join(json.dumps([it.item_id, it.text, it.metadata], sort_keys=True, ensure_ascii=False)
                                 for it in items))


def keyword_ranks(hits: list[Hit], question: dict) -> list[int] | None:
    """Ranks (1-based) of the hits that contain any expected keyword of the question
    (meta.keywords), or None when the question has no keywords. As Mneme's eval harness counts
    its recall@k: a hit counts when it contains AN expected keyword. A keyword matches on word
    boundaries, after NFKC, case folding and collapsed whitespace on both sides: "go" is not in
    "going", "pike-6" is not in "pike-61", and "Monday, November 17" matches as one phrase. A
    keyword followed by punctuation still matches ("flint-9's", ":8298/healthz"), so "3.7" is
    found in "3.7.1": the boundary is a letter or digit, not the grader's stricter reading.
    Keyword recall needs no provenance, so it is measurable for every system, including one
    that rewrites turns into facts or summaries."""
    keywords = [k for k in (question.get("meta") or {}).get("keywords") or [] if k.strip()]  # optional
    if not keywords:
        return None
    patterns = [re.compile(rf"(?<!\w){re.escape(_keyword_text(k))}(?!\w)") for k in keywords]
    return [rank for rank, h in enumerate(hits, 1) if any(p.search(_keyword_text(h.text)) for p in patterns)]


def _keyword_text(text: str) -> str:
    """The form keywords and hits are compared in: NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """--shard I/N as (I, N) with 0 <= I < N; None when absent."""
    if text is None:
        return None
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise InputError(f"--shard {text!r}: expected I/N, e.g. 0/4 (I counts from 0)") from None
    if not (n >= 1 and 0 <= i < n):
        raise InputError(f"--shard {text!r}: I must be in 0..N-1 and N at least 1")
    return i, n


def shard_of(case: dict, n: int) -> int:
    """The share (0..n-1) a case belongs to: a stable hash of its cluster (its case id unless
    the dataset groups cases), the same on every machine and Python, so N jobs split a run."""
    cluster = case.get("cluster", case["case_id"])  # optional in the contract
    return int(hashlib.sha256(cluster.encode("utf-8")).hexdigest()[:16], 16) % n


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
        if self.tty:
            self.stream.write("\r\033[K" + self.line())
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()

    def close(self) -> None:
        """The final line, always printed."""
        self.stream.write(("\r\033[K" if self.tty else "") + self.line() + "\n")
        self.stream.flush()


# ---------------------------------------------------------------------------------------------
# JSON and JSONL I/O
# ---------------------------------------------------------------------------------------------

def dumps(obj: Any) -> str:
    """One JSON line as every file here writes it: UTF-8 text, no NaN, no default=str."""
    return json.dumps(obj, ensure_ascii=False, allow_nan=False)


def decode_line(raw: bytes, path: str, lineno: int) -> str:
    """One line of a file as text; bytes that are not UTF-8 are an InputError naming the line."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}:{lineno}: bytes that are not UTF-8 at column {e.start + 1} "
                         f"(byte 0x{raw[e.start]:02x}); save the file as UTF-8") from None


def not_utf8_error(path: str) -> InputError:
    """The error for a file a text reader failed to decode: scans its bytes for the first line
    that is not UTF-8, so the message names path:line (the text reader only knows a chunk)."""
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                decode_line(raw, path, lineno)
            except InputError as e:
                return e
    return InputError(f"{path}: bytes that are not UTF-8")


def read_jsonl(path: str) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each non-blank line; a bad line is an InputError."""
    try:
        fh = open(path, "rb")
    except OSError as e:
        raise InputError(f"{path}: cannot open: {e.strerror}") from None
    with fh:
        for lineno, raw in enumerate(fh, 1):
            line = decode_line(raw, path, lineno)
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(f"{path}:{lineno}: invalid JSON: {e.msg} (column {e.colno})") from None
            if not isinstance(obj, dict):
                raise InputError(f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}")
            yield lineno, obj


def read_resumable(path: str) -> tuple[list[tuple[int, dict, str]], int]:
    """The records of an output file a stage is resuming, as (line number, object, line with
    its newline), and how many lines were cut. A last line without its newline is what a
    killed writer leaves: it is dropped and counted. Any other unreadable line is an error,
    since the file was then not written by this stage."""
    if not os.path.exists(path):
        return [], 0
    with open(path, "rb") as fh:
        lines = [decode_line(raw, path, lineno) for lineno, raw in enumerate(fh, 1)]
    out, cut = [], 0
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            if lineno == len(lines) and not line.endswith("\n"):
                cut += 1
                continue
            raise InputError(f"{path}:{lineno}: invalid JSON inside an output file; it was not written by "
                             f"this script: use --fresh or another --out") from None
        if not isinstance(obj, dict):
            raise InputError(f"{path}:{lineno}: expected a JSON object; use --fresh or another --out")
        out.append((lineno, obj, line if line.endswith("\n") else line + "\n"))
    return out, cut


# The process's umask, read once at import (reading it means setting it, which is not safe
# from worker threads): files written atomically get the permissions open() would give them.
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def read_json(path: str, what: str, fields: tuple = ()) -> dict:
    """A JSON summary another stage wrote (a manifest, scores, checks), with the fields the
    reader needs; anything else is an InputError naming the file and the fix."""
    try:
        with open(path, encoding="utf-8") as fh:
            obj = json.load(fh)
    except OSError as e:
        raise InputError(f"{path}: cannot open: {e.strerror}") from None
    except ValueError as e:
        raise InputError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(obj, dict):
        raise InputError(f"{path}: expected a JSON object (the {what})")
    missing = [f for f in fields if f not in obj]
    if missing:
        raise InputError(f"{path}: not the {what} (no field '{missing[0]}'); rerun the script that writes it")
    return obj


@contextlib.contextmanager
def atomic_open(path: str, mode: str = "w") -> Iterator[IO]:
    """A file written atomically: yields a temp file in the same folder ("w" text in UTF-8, or
    "wb"), which replaces `path` only when the block ends without an exception. The file gets
    the permissions open() would give it (mkstemp's temp files are private to their owner), so
    every output is readable like the others."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=os.path.basename(path))
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as fh:
            yield fh
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_atomic(path: str, data: str | bytes) -> None:
    """Write a whole file, text or bytes, atomically (atomic_open)."""
    with atomic_open(path, "wb" if isinstance(data, bytes) else "w") as fh:
        fh.write(data)


def check_generated(path: str, text: str, command: str) -> int:
    """A data generator's --check: EXIT_OK when path holds exactly text, else EXIT_BAD_INPUT with
    the reason on stderr (command: how to regenerate it)."""
    try:
        with open(path, encoding="utf-8") as fh:
            on_disk = fh.read()
    except OSError as e:
        print(f"error: {path}: cannot open: {e.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if on_disk != text:
        print(f"error: {path}: differs from the generator output; rerun {command}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"{path}: matches")
    return EXIT_OK


JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


def indented_json(obj: Any, depth: int = 0) -> str:
    """json.dumps(obj, ensure_ascii=False, allow_nan=False, indent=2) byte for byte, the format of
    every summary file (write_json_atomic), at `depth` levels in. With an indent, json runs its
    pure-Python encoder, a third of score.py's fixed cost at 12,000 question rows; here json's C
    encoder writes each container of scalars, with the newline and indent in its item separator,
    and a list of such dicts (the question rows) in one call, its rows' boundaries (`},` then a
    newline, found nowhere else in it) indented afterwards."""
    kind = type(obj)
    if obj and (kind is list or kind is dict):
        inner, deeper = "\n" + "  " * (depth + 1), "\n" + "  " * (depth + 2)
        if JSON_SCALARS.issuperset(map(type, obj.values() if kind is dict else obj)):
            text = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=("," + inner, ": ")).encode(obj)
            return text[0] + inner + text[1:-1] + inner[:-2] + text[-1]
        if kind is list and all(type(x) is dict and x and JSON_SCALARS.issuperset(map(type, x.values())) for x in obj):
            text = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=("," + deeper, ": ")).encode(obj)
            rows = text[2:-2].replace("}," + deeper + "{", inner + "}," + inner + "{" + deeper)
            return "[" + inner + "{" + deeper + rows + inner + "}" + inner[:-2] + "]"
        if kind is list:
            return "[" + inner + ("," + inner).join([indented_json(x, depth + 1) for x in obj]) + inner[:-2] + "]"
        if all(type(k) is str for k in obj):
            items = [f"{json.encoder.encode_basestring(k)}: {indented_json(v, depth + 1)}" for k, v in obj.items()]
            return "{" + inner + ("," + inner).join(items) + inner[:-2] + "}"
    # Anything else (an empty container, a scalar, keys that are not strings) as json writes it:
    # every newline of json's output is its own, so the indent of the levels above is added after each.
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, indent=2).replace("\n", "\n" + "  " * depth)


def write_json_atomic(path: str, obj: Any) -> None:
    """Write a JSON summary file atomically, indented for people (indented_json)."""
    write_atomic(path, indented_json(obj) + "\n")


def sha256_file(path: str) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sha256_text(text: str) -> str:
    """Hex sha256 of a string's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------------------------
# Time
# ---------------------------------------------------------------------------------------------

def parse_time(value: str) -> datetime:
    """Parse an ISO-8601 date or date-time; a time without zone is taken as UTC.
    Raises ValueError on anything else."""
    if not isinstance(value, str) or not value:
        raise ValueError("not a string")
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    dt = datetime.fromisoformat(text)
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


# ---------------------------------------------------------------------------------------------
# Dataset validation
# ---------------------------------------------------------------------------------------------

def _require(obj: dict, key: str, kind: type | tuple, where: str) -> Any:
    """Return obj[key] if present with the right type, else raise InputError naming it."""
    if key not in obj:
        raise InputError(f"{where}: missing required field '{key}'")
    value = obj[key]
    # bool is an int in Python; a count or id must not be true/false.
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise InputError(f"{where}: field '{key}' must be {_kind_name(kind)}, got a boolean")
    if not isinstance(value, kind):
        raise InputError(f"{where}: field '{key}' must be {_kind_name(kind)}, got {type(value).__name__}")
    return value


def _kind_name(kind: type | tuple) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {str: "a string", list: "a list", dict: "an object", int: "an integer",
             float: "a number", bool: "a boolean", type(None): "null"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _nonempty(value: str, key: str, where: str) -> str:
    if not value.strip():
        raise InputError(f"{where}: field '{key}' must not be empty")
    return value


def _time_field(obj: dict, key: str, where: str) -> datetime:
    raw = _require(obj, key, str, where)
    try:
        return parse_time(raw)
    except ValueError:
        raise InputError(f"{where}: field '{key}' is not an ISO-8601 date or time: {raw!r}") from None


def _optional_meta(obj: dict, where: str) -> None:
    if "meta" in obj and not isinstance(obj["meta"], dict):
        raise InputError(f"{where}: field 'meta' must be an object, got {type(obj['meta']).__name__}")


def _entry(obj: object, at: str, key: str, label: str, seen: set, scope: str) -> tuple[str, str]:
    """Check one list entry is an object with a non-empty id not seen before in its scope;
    return the id and the location to name in later errors ('<label> <id>')."""
    if not isinstance(obj, dict):
        raise InputError(f"{at}: expected an object")
    value = _nonempty(_require(obj, key, str, at), key, at)
    where = f"{label} {value}"
    if value in seen:
        raise InputError(f"{where}: duplicate {key} ({scope})")
    seen.add(value)
    return value, where


def validate_case(case: dict, where: str, seen_cases: set, seen_qids: set) -> None:
    """Check one case against the contract; raise InputError naming the first problem."""
    case_id = _nonempty(_require(case, "case_id", str, where), "case_id", where)
    where = f"{where}: case {case_id}"
    if case_id in seen_cases:
        raise InputError(f"{where}: duplicate case_id (case ids must be unique across the file)")
    seen_cases.add(case_id)
    _optional_meta(case, where)
    if "cluster" in case:
        # Cases cut from one source conversation share a cluster; the bootstrap resamples
        # clusters, since their questions are not independent.
        _nonempty(_require(case, "cluster", str, where), "cluster", where)

    sessions = _require(case, "sessions", list, where)
    if not sessions:
        raise InputError(f"{where}: field 'sessions' must not be empty")
    turn_ids: set = set()
    session_ids: set = set()
    previous: tuple[datetime, str] | None = None
    for i, session in enumerate(sessions):
        sid, s_where = _entry(session, f"{where}: sessions[{i}]", "session_id", f"{where}: session",
                              session_ids, "within the case")
        stamp = _time_field(session, "timestamp", s_where)
        if previous and stamp < previous[0]:
            raise InputError(f"{s_where}: field 'timestamp' {session['timestamp']} is earlier than "
                             f"session {previous[1]}; sessions must be in chronological order")
        previous = (stamp, sid)
        _optional_meta(session, s_where)
        for j, turn in enumerate(_require(session, "turns", list, s_where)):
            _, t_where = _entry(turn, f"{s_where}: turns[{j}]", "turn_id", f"{s_where}: turn", turn_ids,
                                "turn ids must be unique within a case")
            _nonempty(_require(turn, "role", str, t_where), "role", t_where)
            _require(turn, "text", str, t_where)
            _optional_meta(turn, t_where)

    questions = _require(case, "questions", list, where)
    for i, q in enumerate(questions):
        _, q_where = _entry(q, f"{where}: questions[{i}]", "qid", f"{where}: question", seen_qids,
                            "question ids must be unique across the file")
        qtype = _require(q, "type", str, q_where)
        if qtype not in QUESTION_TYPES:
            raise InputError(f"{q_where}: field 'type' is {qtype!r}; expected one of {', '.join(QUESTION_TYPES)}")
        asked = _time_field(q, "asked_at", q_where)
        if previous and asked < previous[0]:
            raise InputError(f"{q_where}: field 'asked_at' {q['asked_at']} is earlier than session "
                             f"{previous[1]} ({sessions[-1]['timestamp']}); a question is asked after the "
                             f"whole history it is about")
        _nonempty(_require(q, "question", str, q_where), "question", q_where)
        _nonempty(_require(q, "gold_answer", str, q_where), "gold_answer", q_where)
        evidence = _require(q, "evidence", list, q_where)
        for ev in evidence:
            if not isinstance(ev, str):
                raise InputError(f"{q_where}: field 'evidence' must hold turn id strings, got {ev!r}")
            if ev not in turn_ids:
                raise InputError(f"{q_where}: field 'evidence' names turn {ev!r}, which is not in case {case_id}")
        if len(set(evidence)) != len(evidence):
            raise InputError(f"{q_where}: field 'evidence' repeats a turn id")
        if qtype == "abstention" and evidence:
            raise InputError(f"{q_where}: field 'evidence' must be empty for an abstention question "
                             f"(the asked fact is never stated)")
        _optional_meta(q, q_where)
        answer = (q.get("meta") or {}).get("answer_evidence")  # optional: the answer-bearing turns
        if answer is not None and (not isinstance(answer, list) or not answer
                                   or not all(isinstance(x, str) for x in answer) or not set(answer) <= set(evidence)):
            raise InputError(f"{q_where}: field 'meta.answer_evidence' must be a non-empty list of turn ids from "
                             f"'evidence' (the evidence turns that state the answer), got {answer!r}")
        if not evidence and is_answerable(q) and not no_evidence_reason(q):
            raise InputError(f"{q_where}: field 'evidence' is empty for an answerable {qtype} question; "
                             f"list the turns that state the answer (the oracle control and recall need them), "
                             f"or say in meta.no_evidence why the source gives none")


def is_answerable(question: dict) -> bool:
    """Whether the gold is a fact stated in the history: not an abstention question, not a
    LoCoMo adversarial one, and not flagged unanswerable by an importer (meta.abstention)."""
    meta = question.get("meta") or {}  # meta is optional in the contract
    return question["type"] not in UNANSWERABLE_TYPES and not meta.get("abstention")


def no_evidence_reason(question: dict) -> str | None:
    """Why an answerable question names no evidence turn (meta.no_evidence, a sentence an
    importer writes when its source lists none), or None. Such a question is graded for
    accuracy; its recall is not defined."""
    meta = question.get("meta") or {}  # meta is optional in the contract
    reason = meta.get("no_evidence")  # optional: only importers of such sources write it
    return reason if isinstance(reason, str) and reason.strip() else None


def load_dataset(path: str) -> list[dict]:
    """Read and validate a whole dataset file before any model call; return its cases."""
    cases: list[dict] = []
    seen_cases: set = set()
    seen_qids: set = set()
    for lineno, case in read_jsonl(path):
        validate_case(case, f"{path}:{lineno}", seen_cases, seen_qids)
        cases.append(case)
    if not cases:
        raise InputError(f"{path}: the dataset holds no cases")
    return cases


def dataset_index(path: str) -> list[dict]:
    """Validate a whole dataset file before any model call, keeping only what a run plans with:
    each case's id, cluster and questions, not its sessions. A run then reads the cases again
    one at a time (iter_cases), so memory holds one case's history, not the dataset's
    (LongMemEval-S is 500 histories of about 115k tokens)."""
    index: list[dict] = []
    seen_cases: set = set()
    seen_qids: set = set()
    for lineno, case in read_jsonl(path):
        validate_case(case, f"{path}:{lineno}", seen_cases, seen_qids)
        index.append({"case_id": case["case_id"], "cluster": case.get("cluster", case["case_id"]),  # optional
                      "questions": case["questions"]})
    if not index:
        raise InputError(f"{path}: the dataset holds no cases")
    return index


def iter_cases(path: str, case_ids: set) -> Iterator[dict]:
    """The cases named, in file order, read again from a file dataset_index validated."""
    for lineno, case in read_jsonl(path):
        if case.get("case_id") in case_ids:  # validated by dataset_index before the run began
            yield case


def dataset_counts(cases: list[dict]) -> dict:
    """Counts of cases, sessions, turns and questions per type."""
    by_type = {t: 0 for t in QUESTION_TYPES}
    for case in cases:
        for q in case["questions"]:
            by_type[q["type"]] += 1
    return {
        "cases": len(cases),
        "sessions": sum(len(c["sessions"]) for c in cases),
        "turns": sum(len(s["turns"]) for c in cases for s in c["sessions"]),
        "questions": sum(by_type.values()),
        "questions_by_type": {t: n for t, n in by_type.items() if n},
    }


# ---------------------------------------------------------------------------------------------
# Format versions: every record says which format it is
# ---------------------------------------------------------------------------------------------

# The format of each kind of record, in its `format` field. A reader accepts its own version
# only and names the fix for any other: a file of another format is written again by the stage
# that wrote it, not read through branches for the fields another writer lacked.
RUN_FORMAT = "run/3"
VERDICT_FORMAT = "verdict/1"
SCORES_FORMAT = "scores/2"
CHECKS_FORMAT = "checks/1"
MANIFEST_FORMAT = "manifest/1"
CALIBRATION_FORMAT = "calibration/1"
AUDIT_FORMAT = "audit/1"
AUDIT_KEY_FORMAT = "audit_key/1"


def refuse_stale_checks_verdicts(checks: dict, path: str, verdicts_sha256: list[str]) -> None:
    """Refuse a checks.json whose verdicts are not these (by sha256): the verdicts were graded
    again since check.py ran, so its control and judge checks are about other verdicts. Both
    sides empty (a model-free comparison) match."""
    if sorted(checks["inputs"]["verdicts"].values()) != sorted(verdicts_sha256):
        checked = ", ".join(checks["inputs"]["verdicts"]) or "none"
        raise InputError(f"{path}: checked other verdicts than these ({checked}; a verdicts file graded again since "
                         f"is another, by its sha256): rerun check.py with these --runs and --verdicts")


def check_format(obj: dict, expected: str, where: str, fix: str) -> None:
    """Refuse a record of another format than `expected` (InputError naming where, the format
    found and the fix)."""
    kind = expected.split("/")[0]
    if "format" not in obj:
        raise InputError(f"{where}: no field 'format' (every {kind} record of format {expected!r} has one): {fix}")
    found = obj["format"]
    if found == expected:
        return
    if isinstance(found, str) and found.split("/")[0] != kind:
        raise InputError(f"{where}: a {found.split('/')[0]} record (format {found!r}), not a {kind} record")
    raise InputError(f"{where}: a {kind} record of format {found!r}; this code reads format {expected!r} only: {fix}")


def read_versioned(path: str, what: str, expected: str, fix: str, fields: tuple = ()) -> dict:
    """A JSON summary of a versioned format: its format first (another version is refused with
    `fix`, before any field it may lack is named), then the fields the reader needs."""
    obj = read_json(path, what)
    check_format(obj, expected, path, fix)
    missing = [f for f in fields if f not in obj]
    if missing:
        raise InputError(f"{path}: not the {what} of format {expected!r} (no field '{missing[0]}'): {fix}")
    return obj


def read_manifest(path: str, fields: tuple = ("dataset", "dataset_sha256")) -> dict:
    """manifest.py's manifest, of MANIFEST_FORMAT, with the fields the reader needs."""
    return read_versioned(path, "manifest of manifest.py", MANIFEST_FORMAT, "rerun manifest.py with the runs' config "
                          "(it records the dataset and the code, and changes no run)", fields)


def read_calibration_json(path: str, fields: tuple = ()) -> dict:
    """judge.py --calibrate's calibration.json, of CALIBRATION_FORMAT."""
    return read_versioned(path, "calibration.json of judge.py --calibrate", CALIBRATION_FORMAT,
                          "rerun judge.py --calibrate", fields)


def read_audit_json(path: str, fields: tuple = ()) -> dict:
    """audit.py join's audit.json, of AUDIT_FORMAT."""
    return read_versioned(path, "audit.json of audit.py join", AUDIT_FORMAT,
                          "rerun audit.py join on the labelled sheet and its key", fields)


def read_audit_key(path: str) -> list[tuple[int, dict]]:
    """The lines of audit.py sample's key, each of AUDIT_KEY_FORMAT, with their line numbers."""
    lines = list(read_jsonl(path))
    for lineno, k in lines:
        check_format(k, AUDIT_KEY_FORMAT, f"{path}:{lineno}", "draw a new sample with audit.py sample and label "
                     "its sheet")
    return lines


# ---------------------------------------------------------------------------------------------
# The dataset a comparison is held against
# ---------------------------------------------------------------------------------------------

ROOT = os.path.dirname(os.path.abspath(__file__))


def results_dir(run_id: str) -> str:
    """Where a comparison's results go unless told otherwise: results/RUN_ID/, one folder per
    config run_id, so that a second comparison does not overwrite the first."""
    return os.path.join(ROOT, "results", run_id)


@dataclass(frozen=True)
class Dataset:
    """A dataset as it is on disk now: its file, its sha256 and its validated index (each case's
    id, cluster and questions: dataset_index)."""
    path: str
    sha256: str
    cases: list

    def qids(self, limit: int | None = None, shard: str | None = None) -> list[str]:
        """The questions a run with this --limit and --shard makes, in dataset order."""
        return [q["qid"] for c in select_cases(self.cases, limit, parse_shard(shard)) for q in c["questions"]]


def select_cases(cases: list[dict], limit: int | None, shard: tuple[int, int] | None) -> list[dict]:
    """The cases a run makes: the dataset's first `limit`, then those of one shard."""
    cases = cases[:limit] if limit else cases
    return [c for c in cases if shard_of(c, shard[1]) == shard[0]] if shard else cases


def dataset_from(config: str | None, manifest: str | None, path: str | None = None) -> Dataset:
    """The dataset of a comparison: the one the manifest names (at `path` when it moved), which
    must still hash to what the manifest recorded; else the config's."""
    if manifest:
        m = read_manifest(manifest)
        # manifest.py writes the dataset relative to the repository
        found = path or (m["dataset"] if os.path.isabs(m["dataset"]) else os.path.join(ROOT, m["dataset"]))
        if not os.path.exists(found):
            raise InputError(f"{manifest}: names the dataset {m['dataset']}, which is not here; pass where it is "
                             f"now (the file with sha256 {m['dataset_sha256'][:12]})")
        cases = dataset_index(found)
        sha = sha256_file(found)
        if sha != m["dataset_sha256"]:
            raise InputError(f"{found}: hashes to {sha[:12]}, but {manifest} recorded {m['dataset_sha256'][:12]}: "
                             f"the dataset changed since the manifest was written; restore it, or make the "
                             f"comparison again on the dataset as it is (manifest.py, run.py --fresh)")
        return Dataset(found, sha, cases)
    found = load_config(config)["dataset"]
    cases = dataset_index(found)  # first: it names a missing file as the InputError it is
    return Dataset(found, sha256_file(found), cases)


MANIFEST_BACKEND_FIELDS = ("name", "id", "version", "code_sha256")


def check_manifest_describes(manifest: str, records: list[dict]) -> None:
    """Refuse a manifest that does not describe these run records (InputError naming the
    difference): a system it does not list, or one whose code (backend_code_sha256) or version
    differs from what it recorded. A manifest may list more systems than the runs hold (the
    model-free pass runs more)."""
    m = read_manifest(manifest, ("backends",))
    for b in m["backends"]:
        missing = [f for f in MANIFEST_BACKEND_FIELDS if f not in b]
        if missing:
            raise InputError(f"{manifest}: its backend entry {b.get('name')!r} has no field '{missing[0]}' "
                             f"(written by an older manifest.py); write it again: python manifest.py CONFIG "
                             f"--backends ...")
    listed = {b["name"]: b for b in m["backends"]}
    runs: dict = {}  # backend -> its first record
    for r in records:
        runs.setdefault(r["backend"], r)
    problems = []
    for name, r in runs.items():
        if name not in listed:
            problems.append(f"the runs hold {name!r} (--backend {r['backend_id']}), which it does not list (it lists "
                            f"{', '.join(repr(n) for n in listed)})")
        elif listed[name]["code_sha256"] != r["backend_code_sha256"]:
            problems.append(f"{name!r} ran code {str(r['backend_code_sha256'])[:12]}, the manifest recorded "
                            f"{str(listed[name]['code_sha256'])[:12]} (its code changed between the two)")
        elif listed[name]["version"] != r["backend_version"]:
            problems.append(f"{name!r} ran version {r['backend_version']!r}, the manifest recorded "
                            f"{listed[name]['version']!r}")
    if problems:
        ids = " ".join(dict.fromkeys(r["backend_id"] for r in runs.values()))
        raise InputError(f"{manifest}: does not describe these runs: " + "; ".join(problems)
                         + f". Write the manifest for what ran, with the code that ran it: python manifest.py CONFIG "
                           f"--backends {ids} (and rerun a system whose code changed, run.py --fresh)")


# ---------------------------------------------------------------------------------------------
# Run files (written by run.py, read by judge.py, check.py, score.py and report.py)
# ---------------------------------------------------------------------------------------------

# What the fairness contract holds constant across every file of one comparison (a difference in any
# of them, not the memory, could explain a difference in score): run.py records each in every
# record, its resume check refuses a file that differs in one, and judge.py and score.py refuse a
# set of files that differ. The budget is held constant within a comparison; a budget sweep (run.py
# --budgets) is one comparison per budget.
CONTRACT_FIELDS = ("dataset_sha256", "answer_model", "prompt_sha256", "top_k", "tokenizer",
                   "answer_max_tokens", "answer_sampling", "seed", "retrieval_only", "limit")
BUDGET_FIELD = "context_token_budget"
# What makes one run file one run: its format, the system's identity and the contract. run.py's
# resume check and merge.py's shard check both use it (run.py adds the shard it makes).
RUN_IDENTITY_FIELDS = ("format", "run_id", "backend", "backend_id", "backend_version", "backend_code_sha256",
                       "time_aware",
                       "extra_wait_s") + CONTRACT_FIELDS
# Every field of a run record of RUN_FORMAT: the readers index them without a default.
RUN_FIELDS = RUN_IDENTITY_FIELDS + (
    "shard", BUDGET_FIELD, "repeat", "internal_model", "flush_note", "deterministic", "case_id", "cluster", "qid",
    "type", "question", "asked_at", "gold_answer", "evidence", "meta", "retrieved_ids", "context_ids",
    "context_text", "context_tokens", "keyword_ranks", "hits_returned", "hits_kept", "hits_cut", "k_limited", "answer",
    "served_model", "usage", "finish_reason", "retries", "ingest_s", "flush_s", "added_items", "added_sha256",
    "internal_usage", "search_ms", "search_calls_in_flight", "cached", "error")


def system_key(rec: dict) -> tuple:
    """One system's run within a comparison: its name, repeat index and budget."""
    return rec["backend"], rec["repeat"], rec[BUDGET_FIELD]


def served_model_counts(records) -> dict:
    """How many answers each served model gave, {budget: {backend: Counter(served_model)}}, over
    the records that name one (repeats together). The contract holds the answer model constant
    within a budget: score.py warns and check.py WARNs when more than one model answered."""
    out: dict = {}
    for r in records:
        if r["served_model"] is not None:
            out.setdefault(r[BUDGET_FIELD], {}).setdefault(r["backend"], Counter())[r["served_model"]] += 1
    return out


def record_key(rec: dict) -> tuple:
    """One answer: this system, this repeat, this budget, this question. A verdict belongs to
    exactly one record key."""
    return (*system_key(rec), rec["qid"])


def read_run_files(paths: list[str], dataset: Dataset) -> list[tuple[str, int, dict]]:
    """(path, line, record) of every line of these run files, in one pass: each a run record of
    this format, made from the dataset as it is now and holding one of its questions, each
    answer in one file only. An empty file is refused: its system would leave the comparison
    without a word."""
    rows: list = []
    where: dict = {}  # record key -> "path:line"
    known = set(dataset.qids())
    for path in paths:
        before = len(rows)
        for lineno, rec in read_jsonl(path):
            at = f"{path}:{lineno}"
            check_format(rec, RUN_FORMAT, at, "rerun run.py with --fresh")
            missing = [f for f in RUN_FIELDS if f not in rec]
            if missing:
                raise InputError(f"{at}: not a run record of format {RUN_FORMAT!r}: no field '{missing[0]}'; --runs "
                                 f"takes the files run.py writes under runs/")
            if rec["dataset_sha256"] != dataset.sha256:
                raise InputError(f"{at}: made from the dataset with sha256 {rec['dataset_sha256'][:12]}; "
                                 f"{dataset.path} hashes to {dataset.sha256[:12]} now: the dataset changed since this "
                                 f"run (or this is another dataset's run): rerun it with --fresh")
            if rec["qid"] not in known:
                raise InputError(f"{at}: question {rec['qid']!r} is not in the dataset {dataset.path}")
            key = record_key(rec)
            if key in where:
                raise InputError(f"{at}: backend {rec['backend']!r} question {rec['qid']!r} (repeat {rec['repeat']}, "
                                 f"budget {rec[BUDGET_FIELD]}) is also in {where[key]}; each system's run belongs in "
                                 f"one file")
            where[key] = at
            rows.append((path, lineno, rec))
        if len(rows) == before:
            raise InputError(f"{path}: holds no records, so its system would be missing from the comparison; rerun "
                             f"run.py for it, or leave the file out of --runs")
    return rows


def contract_problems(rows: list[tuple[str, int, dict]]) -> list[str]:
    """Where these run records break the fairness contract: a contract field, or the set of
    budgets, differing between files (each named with its value)."""
    values: dict = {}   # contract field -> {value -> [paths]}
    budgets: dict = {}  # path -> set of budgets
    for path, _, rec in rows:
        for f in CONTRACT_FIELDS:
            values.setdefault(f, {}).setdefault(_hashable(rec[f]), set()).add(path)
        budgets.setdefault(path, set()).add(rec[BUDGET_FIELD])
    problems = [f"field '{f}' differs: " + "; ".join(f"{v!r} in {', '.join(sorted(ps))}" for v, ps in seen.items())
                for f, seen in values.items() if len(seen) > 1]
    if len({frozenset(b) for b in budgets.values()}) > 1:
        problems.append(f"field '{BUDGET_FIELD}' differs: "
                        + "; ".join(f"{sorted(b)} in {p}" for p, b in budgets.items()))
    return problems


def _hashable(value: Any) -> Any:
    return json.dumps(value, sort_keys=True) if isinstance(value, (list, dict)) else value


@dataclass(frozen=True)
class Comparison:
    """The run records one comparison is scored on, what --allow-partial left out, and how much
    of the dataset they cover."""
    records: list
    left_out: list   # one entry per system (and repeat, budget) lacking questions: file, backend, count, qids
    questions: int   # question records every system holds, over the budgets (the ones scored)
    coverage: dict   # dataset_questions, planned_questions, scored_questions, limit, shards, partial


def load_comparison(paths: list[str], dataset: Dataset, allow_partial: bool = False) -> Comparison:
    """Read run files (read_run_files) and check that together they are one comparison of the
    dataset's questions: the contract fields equal across files, and every system holding every
    question its run planned (the whole dataset, or what its --limit and --shard chose). A
    system that lacks questions is refused unless allow_partial, which keeps the questions every
    system holds and says what was left out."""
    rows = read_run_files(paths, dataset)
    problems = contract_problems(rows)
    if problems:
        raise InputError("these run files are not one comparison (the fairness contract holds these "
                         "constant; rerun the odd files with one config): " + " | ".join(problems))
    return coverage(rows, dataset, allow_partial)


def coverage(rows: list[tuple[str, int, dict]], dataset: Dataset, allow_partial: bool) -> Comparison:
    """Every system (and repeat) must hold the questions its run planned, budget by budget: the
    dataset's, or those of the --limit and --shard its records say. Refused unless allow_partial
    (InputError naming the file, the system and the first question missing)."""
    systems: dict = {}  # system key -> {"file", "runs": {(limit, shard)}, "qids"}
    for path, _, rec in rows:
        s = systems.setdefault(system_key(rec), {"file": path, "runs": set(), "qids": set()})
        s["runs"].add((rec["limit"], rec["shard"]))
        s["qids"].add(rec["qid"])
    order = dataset.qids()
    planned = {run: set(dataset.qids(*run)) for s in systems.values() for run in s["runs"]}
    left_out, common, expected_n = [], {}, 0
    for budget in sorted({key[2] for key in systems}):
        group = {key: s for key, s in systems.items() if key[2] == budget}
        expected = set().union(*(planned[run] for s in group.values() for run in s["runs"]))
        expected_n = max(expected_n, len(expected))
        common[budget] = set.intersection(*(s["qids"] for s in group.values()))
        for key, s in group.items():
            lacking = [q for q in order if q in expected and q not in s["qids"]]
            if lacking:
                left_out.append({"file": s["file"], "backend": key[0], "repeat": key[1], "budget": budget,
                                 "missing": len(lacking), "planned": len(expected), "qids": lacking})
    if left_out and not allow_partial:
        first = left_out[0]
        whose = "the dataset's" if first["planned"] == len(order) else "this run's planned (--limit, --shard)"
        raise InputError(f"{first['file']}: backend {first['backend']!r} (repeat {first['repeat']}, budget "
                         f"{first['budget']}) holds {first['planned'] - first['missing']} of {whose} "
                         f"{first['planned']} questions; {first['missing']} missing (first: {first['qids'][0]!r})"
                         + (f", and {len(left_out) - 1} more run(s) are partial" if len(left_out) > 1 else "")
                         + "; finish that run (rerun the same run.py command), or pass --allow-partial to score "
                           "every system on the questions all of them hold")
    kept = [rec for _, _, rec in rows if rec["qid"] in common[rec[BUDGET_FIELD]]]
    runs = {run for s in systems.values() for run in s["runs"]}
    return Comparison(records=kept, left_out=left_out, questions=sum(len(q) for q in common.values()),
                      coverage={"dataset_questions": len(order), "planned_questions": expected_n,
                                "scored_questions": min(len(q) for q in common.values()),
                                "limit": sorted({lim for lim, _ in runs if lim is not None}),
                                "shards": sorted({sh for _, sh in runs if sh is not None}),
                                "partial": bool(left_out)})


def verdict_inputs_sha256(rec: dict) -> str:
    """sha256 of everything of a run record a grade depends on: the question, its gold, type
    and annotations (the rules read meta: outdated answers, the source benchmark's rubric),
    and the answer (or, for a failed question, its error). Change any of them and the verdict
    is graded again."""
    return sha256_text(json.dumps({"question": rec["question"], "gold_answer": rec["gold_answer"],
                                   "type": rec["type"], "meta": rec["meta"], "answer": rec["answer"],
                                   "error": rec["error"] if rec["answer"] is None else None},
                                  sort_keys=True, ensure_ascii=False))


# A verdict's identity: what it graded (verdict_inputs_sha256) and who graded it: the rule set's
# hash and, for the LLM layer, the judge model and its prompts. judge.py reuses a verdict only
# when all four match; score.py refuses one that does not match its run record.
VERDICT_IDENTITY_FIELDS = ("inputs_sha256", "rules_sha256", "judge_model", "judge_prompt_sha256")


# Fields every verdicts line of VERDICT_FORMAT has (judge.py copies more through, for jq).
VERDICT_FIELDS = ("format", "backend", "repeat", BUDGET_FIELD, "qid", "type", "question", "gold_answer", "answer",
                  "verdict", "by", "rules_only_verdict", "judge_reason", "judge_error") + VERDICT_IDENTITY_FIELDS


def read_verdicts(path: str) -> dict:
    """Verdicts keyed by record_key, with their line; two for one answer is an error."""
    out: dict = {}
    for lineno, v in read_jsonl(path):
        check_format(v, VERDICT_FORMAT, f"{path}:{lineno}", "rerun judge.py with --fresh")
        missing = [f for f in VERDICT_FIELDS if f not in v]
        if missing:
            raise InputError(f"{path}:{lineno}: not a verdict of format {VERDICT_FORMAT!r} (no field "
                             f"'{missing[0]}'); rerun judge.py with --fresh")
        key = record_key(v)
        if key in out:
            raise InputError(f"{path}:{lineno}: a second verdict for {v['backend']!r} question {v['qid']!r} "
                             f"(the first is line {out[key][0]}); rerun judge.py, which keeps one per answer")
        out[key] = (lineno, v)
    return out


@dataclass(frozen=True)
class VerdictMatch:
    """Run records paired with their verdicts, and every way the verdicts fail to belong to them."""
    pairs: list        # (record, verdict) for every record that has one
    missing: list      # records with no verdict
    stale: list        # (line, record): the verdict graded another question, gold, annotation or answer
    graders: list      # the distinct graders (rules, judge model, judge prompts) of the pairs
    other_rules: list  # rules_sha256 prefixes other than the code's
    rules_sha256: str  # the code's

    def refuse(self, source: str | None, rerun: str) -> None:
        """Raise InputError for the first way the verdicts fail to belong: source names the
        verdicts file (None when each verdict's line is already "path:line"); rerun says what to
        run again."""
        def where(lineno) -> str:
            return f"{source}:{lineno}" if source else str(lineno)
        if self.missing:
            r = self.missing[0]
            raise InputError(f"{source or 'the verdicts'}: no verdict for {r['backend']!r} question {r['qid']!r} "
                             f"(and {len(self.missing) - 1} more); {rerun}")
        if self.stale:
            lineno, r, changed = self.stale[0]
            raise InputError(f"{where(lineno)}: the verdict of {r['backend']!r} question {r['qid']!r} graded another "
                             f"{changed} than its run record holds now (the dataset or the run changed since the "
                             f"verdicts); {rerun}")
        if self.other_rules:
            raise InputError(f"{source or 'the verdicts'}: graded by another rule set (rules_sha256 "
                             f"{', '.join(self.other_rules)}, this code's is {self.rules_sha256[:12]}); {rerun}")
        if len(self.graders) > 1:
            raise InputError(f"{source or 'the verdicts'}: the verdicts of these runs come from {len(self.graders)} "
                             f"different graders (rule sets or judge models: {self.graders}); grade them together: "
                             f"{rerun}")


def match_verdicts(records: list[dict], verdicts: dict, rules_sha256: str) -> VerdictMatch:
    """Pair each record with its verdict (read_verdicts) and find what score.py refuses: a missing
    verdict, one graded against something else than the record holds now (a gold edited in the
    dataset since, say), a mix of graders,
    and rules other than the code's (rules_sha256, passed in: grading.py builds on this module)."""
    pairs, missing, stale = [], [], []
    for r in records:
        found = verdicts.get(record_key(r))  # a missing verdict is reported, not defaulted
        if found is None:
            missing.append(r)
            continue
        lineno, v = found
        if v["inputs_sha256"] != verdict_inputs_sha256(r):
            # What changed, as far as the verdict's copies tell (it copies no annotations)
            changed = [f for f in ("question", "gold_answer", "type", "answer") if v[f] != r[f]]
            stale.append((lineno, r, " and ".join(changed) or "annotation (meta) or error"))
        pairs.append((r, v))
    graders = sorted({json.dumps({f: v[f] for f in VERDICT_IDENTITY_FIELDS[1:]}) for _, v in pairs})
    other = sorted({v["rules_sha256"][:12] for _, v in pairs if v["rules_sha256"] != rules_sha256})
    return VerdictMatch(pairs, missing, stale, graders, other, rules_sha256)


def verdict_identity(rec: dict, grader: dict) -> dict:
    """The identity a verdict of this run record must carry under this grader (a dict of
    rules_sha256, judge_model and judge_prompt_sha256)."""
    return {"inputs_sha256": verdict_inputs_sha256(rec), **{k: grader[k] for k in VERDICT_IDENTITY_FIELDS[1:]}}


# ---------------------------------------------------------------------------------------------
# Config
# ---------------------------------------------------------------------------------------------

# Every key config.yaml may hold: (accepted types, required). An unknown key is an error, so a
# typo cannot silently fall back to a default.
CONFIG_KEYS: dict[str, tuple[tuple, bool]] = {
    "run_id": ((str,), True),
    "dataset": ((str,), True),
    "seed": ((int,), True),
    "top_k": ((int,), True),
    "context_token_budget": ((int,), True),
    "flush_timeout_s": ((int, float), True),
    "answer_model": ((str,), True),
    "answer_max_tokens": ((int,), True),
    "answer_prompt": ((str,), True),
    "judge_model": ((str, type(None)), True),
    "judge_max_tokens": ((int,), False),
    "workers": ((int,), False),
    "tokenizer": ((str,), False),
    "request_timeout_s": ((int, float), False),
    "max_retries": ((int,), False),
    "retry_backoff_s": ((int, float), False),
    "max_error_rate": ((int, float), False),
    "cache_dir": ((str,), False),
    "repeats": ((int,), False),
    "time_aware_search": ((bool,), False),
    "answer_sampling": ((dict,), False),
    "judge_sampling": ((dict,), False),
    "backends": ((dict,), False),
    "checks": ((dict,), False),
}
CONFIG_DEFAULTS = {
    "judge_max_tokens": 60, "workers": 4, "tokenizer": "approx", "request_timeout_s": 120,
    "max_retries": 5, "retry_backoff_s": 1.0, "max_error_rate": 0.0,
    "cache_dir": ".cache/llm", "repeats": 1, "time_aware_search": False, "answer_sampling": {},
    "judge_sampling": {}, "backends": {}, "checks": {},
}
# Values out of these ranges would be accepted by the type check and fail later, mid-run, or
# silently do something else (a negative backoff sleeps not at all, a zero timeout fails every call).
CONFIG_RANGES: dict[str, tuple[Any, str]] = {
    **{k: ((lambda v: v >= 1), "at least 1") for k in
       ("top_k", "context_token_budget", "answer_max_tokens", "workers", "judge_max_tokens", "repeats")},
    **{k: ((lambda v: v > 0), "greater than 0") for k in ("request_timeout_s", "flush_timeout_s")},
    **{k: ((lambda v: v >= 0), "0 or more") for k in ("max_retries", "retry_backoff_s")},
    "max_error_rate": ((lambda v: 0 <= v <= 1), "between 0 and 1"),
}
PROMPT_FIELDS = ("{asked_at}", "{context}", "{question}")
# How a request to the answer model, or to the judge, states its limits (llm.sampling_params):
# the token limit's name (reasoning models take max_completion_tokens), the temperature (null:
# not sent) and whether the config seed is sent (reasoning models refuse both). These defaults
# are what every request always carried.
SAMPLING_DEFAULTS = {"max_tokens_param": "max_tokens", "temperature": 0.0, "send_seed": True}
MAX_TOKENS_PARAMS = ("max_tokens", "max_completion_tokens")


def did_you_mean(word: str, choices) -> str:
    """"; did you mean 'X'?" for the closest of choices to a misspelt name, or "" when none is
    close (difflib's ratio of at least 0.6, its default)."""
    by_lower = {c.lower(): c for c in choices}  # BM25 is close to bm25
    close = difflib.get_close_matches(word.lower(), list(by_lower), n=1)
    return f"; did you mean {by_lower[close[0]]!r}?" if close else ""


def load_config(path: str) -> dict:
    """Read config.yaml, reject unknown keys and wrong types, fill defaults.
    Relative paths (dataset, cache_dir) are resolved against the config's folder."""
    try:
        with open(path, encoding="utf-8") as fh:
            raw = yaml.safe_load(fh)
    except OSError as e:
        raise InputError(f"{path}: cannot open: {e.strerror}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        raise InputError(f"{path}{line}: invalid YAML: {getattr(e, 'problem', e)}") from None
    if not isinstance(raw, dict):
        raise InputError(f"{path}: expected a mapping of keys at the top level")
    for key, value in raw.items():
        if key not in CONFIG_KEYS:
            raise InputError(f"{path}: unknown key '{key}'{did_you_mean(key, CONFIG_KEYS)}; known keys: "
                             f"{', '.join(CONFIG_KEYS)}")
        kinds, _ = CONFIG_KEYS[key]
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            raise InputError(f"{path}: key '{key}' must be {_kind_name(kinds)}, got {type(value).__name__}")
    for key, (_, required) in CONFIG_KEYS.items():
        if required and key not in raw:
            raise InputError(f"{path}: missing required key '{key}'")
    cfg = {**CONFIG_DEFAULTS, **raw}
    for key, (ok, expected) in CONFIG_RANGES.items():
        if not ok(cfg[key]):
            raise InputError(f"{path}: key '{key}' must be {expected}, got {cfg[key]}")
    for name in PROMPT_FIELDS:
        if name not in cfg["answer_prompt"]:
            raise InputError(f"{path}: key 'answer_prompt' must contain the field {name}")
    try:
        cfg["answer_prompt"].format(asked_at="", context="", question="")
    except (KeyError, IndexError, ValueError) as e:
        raise InputError(f"{path}: key 'answer_prompt' has a stray brace field ({e}); "
                         f"write literal braces as {{{{ and }}}}") from None
    for key in ("answer_sampling", "judge_sampling"):
        cfg[key] = _sampling(path, key, cfg[key])
    for name, section in cfg["backends"].items():
        if not isinstance(section, dict):
            raise InputError(f"{path}: key 'backends.{name}' must be a mapping")
    base = os.path.dirname(os.path.abspath(path))
    for key in ("dataset", "cache_dir"):
        if not os.path.isabs(cfg[key]):
            cfg[key] = os.path.normpath(os.path.join(base, cfg[key]))
    if not os.path.isfile(cfg["dataset"]):
        raise InputError(f"{path}: key 'dataset' names {raw['dataset']!r}, which is not a file ({cfg['dataset']}"
                         + ("; a relative path is read from the config's folder" if not os.path.isabs(raw["dataset"])
                            else "") + "): set dataset: in the config to the dataset's path")
    cfg["config_path"] = os.path.abspath(path)
    return cfg


def _sampling(path: str, key: str, section: dict) -> dict:
    """A sampling section of the config with its defaults filled; a wrong key or value is an
    InputError naming it."""
    for name, value in section.items():
        where = f"{path}: key '{key}.{name}'"
        if name not in SAMPLING_DEFAULTS:
            raise InputError(f"{path}: unknown key '{key}.{name}'; known keys: {', '.join(SAMPLING_DEFAULTS)}")
        if name == "max_tokens_param" and value not in MAX_TOKENS_PARAMS:
            raise InputError(f"{where} must be one of {', '.join(MAX_TOKENS_PARAMS)}, got {value!r}")
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if name == "temperature" and value is not None and not (number and 0 <= value <= 2):
            raise InputError(f"{where} must be a number from 0 to 2, or null (not sent), got {value!r}")
        if name == "send_seed" and not isinstance(value, bool):
            raise InputError(f"{where} must be true or false, got {value!r}")
    return {**SAMPLING_DEFAULTS, **section}


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------

class ServiceDown(Exception):
    """A service the stage needs stopped answering (llm.EndpointDown: the model endpoint): the
    stage stops with exit 3; every record written stays, and the same command resumes."""


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: the stage stops as on Ctrl-C (records written stay, calls in flight are
    redone on resume), whatever SIGINT's disposition."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated()


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
    """Run a script's main: InputError prints one line and exits 2, ServiceDown exits 3, Ctrl-C
    exits 130, SIGTERM exits 143, a closed stdout exits 141. SIGINT keeps the disposition the
    process started with: a shell starts a background job with SIGINT ignored so that Ctrl-C
    spares it, and that choice is honoured. SIGTERM is caught unless it too was ignored, and
    only for the length of the call."""
    previous = signal.getsignal(signal.SIGTERM)
    catch = previous == signal.SIG_DFL and threading.current_thread() is threading.main_thread()
    if catch:
        signal.signal(signal.SIGTERM, _raise_terminated)
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
    except ServiceDown as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_TOO_MANY_ERRORS
    except Terminated as e:  # a stage may say what it kept and how to resume
        print(f"terminated: {e}" if str(e) else "terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except KeyboardInterrupt as e:
        print(f"interrupted: {e}" if str(e) else "interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if catch:
            signal.signal(signal.SIGTERM, previous)


def _main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    v = sub.add_parser("validate", help="validate dataset files and print their counts")
    v.add_argument("paths", nargs="+")
    a = ap.parse_args(argv)
    for path in a.paths:
        counts = dataset_counts(load_dataset(path))
        types = ", ".join(f"{t} {n}" for t, n in counts["questions_by_type"].items())
        print(f"{path}: ok: {counts['cases']} cases, {counts['sessions']} sessions, "
              f"{counts['turns']} turns, {counts['questions']} questions ({types})")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(_main))
