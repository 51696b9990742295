"""The shared contract of memory-bench: records, the backend protocol, dataset and config
loading with validation, and JSONL I/O. Every stage script imports from here; nothing here
calls a model.

Usage:
  python interface.py validate data/cases.jsonl [more.jsonl ...]
  python interface.py check-config config.yaml
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterator, Protocol

import yaml

# The question types the contract knows. The first six come from the seed guide's engineering
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

# Exit codes shared by every script (STYLE.md).
EXIT_OK, EXIT_BUG, EXIT_BAD_INPUT, EXIT_TOO_MANY_ERRORS, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class InputError(Exception):
    """Bad input or config: the message names the file, line and field. Scripts exit 2."""


# ---------------------------------------------------------------------------------------------
# Records and the backend protocol (seed guide, section 4)
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
    internal_model (an LLM it calls itself, disclosed per the seed guide's rule 2) and
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


def write_atomic(path: str, text: str) -> None:
    """Write a whole file atomically: a temp file in the same folder, then os.replace."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=os.path.basename(path))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_json_atomic(path: str, obj: Any) -> None:
    """Write a JSON summary file atomically, indented for people."""
    write_atomic(path, json.dumps(obj, ensure_ascii=False, allow_nan=False, indent=2) + "\n")


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
        # clusters, since their questions are not independent (seed guide, section 7).
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
        if not evidence and is_answerable(q):
            raise InputError(f"{q_where}: field 'evidence' is empty for an answerable {qtype} question; "
                             f"list the turns that state the answer (the oracle control and recall need them)")


def is_answerable(question: dict) -> bool:
    """Whether the gold is a fact stated in the history: not an abstention question, not a
    LoCoMo adversarial one, and not flagged unanswerable by an importer (meta.abstention)."""
    meta = question.get("meta") or {}  # meta is optional in the contract
    return question["type"] not in UNANSWERABLE_TYPES and not meta.get("abstention")


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
# Run files (written by run.py, read by judge.py and score.py)
# ---------------------------------------------------------------------------------------------

# Fields every run record has; a file whose lines lack them is not a run file.
RUN_FIELDS = ("run_id", "backend", "backend_version", "repeat", "case_id", "qid", "type", "question",
              "gold_answer", "evidence", "answer", "prompt_sha256", "retrieved_ids", "context_ids",
              "context_tokens", "error")


def load_runs(paths: list[str]) -> list[dict]:
    """All run records; anything that is not a run file written by run.py is an error."""
    records: list[dict] = []
    seen: dict = {}
    for path in paths:
        for lineno, rec in read_jsonl(path):
            missing = [f for f in RUN_FIELDS if f not in rec]
            if missing:
                hint = " (it looks like a verdicts file)" if "verdict" in rec else ""
                raise InputError(f"{path}:{lineno}: not a run record: no field '{missing[0]}'{hint}; "
                                 f"--runs takes the files run.py writes under runs/")
            key = (rec["backend"], rec["repeat"], rec["qid"])
            if key in seen:
                raise InputError(f"{path}:{lineno}: backend {rec['backend']!r} question {rec['qid']!r} "
                                 f"is also in {seen[key]}; each system's run belongs in one file")
            seen[key] = f"{path}:{lineno}"
            records.append(rec)
    if not records:
        raise InputError("the run files hold no records")
    return records


def verdict_key(rec: dict) -> tuple:
    """What a verdict is a verdict of: this system's answer to this question."""
    return (rec["run_id"], rec["backend"], rec["repeat"], rec["qid"],
            sha256_text(rec["answer"] if rec["answer"] is not None else "\0error:" + str(rec["error"])))


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
    "backends": ((dict,), False),
}
CONFIG_DEFAULTS = {
    "judge_max_tokens": 60, "workers": 4, "tokenizer": "approx", "request_timeout_s": 120,
    "max_retries": 5, "retry_backoff_s": 1.0, "max_error_rate": 0.0,
    "cache_dir": ".cache/llm", "backends": {},
}
PROMPT_FIELDS = ("{asked_at}", "{context}", "{question}")


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
            raise InputError(f"{path}: unknown key '{key}'; known keys: {', '.join(CONFIG_KEYS)}")
        kinds, _ = CONFIG_KEYS[key]
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise InputError(f"{path}: key '{key}' must be {_kind_name(kinds)}, got {type(value).__name__}")
    for key, (_, required) in CONFIG_KEYS.items():
        if required and key not in raw:
            raise InputError(f"{path}: missing required key '{key}'")
    cfg = {**CONFIG_DEFAULTS, **raw}
    for key in ("top_k", "context_token_budget", "answer_max_tokens", "workers", "judge_max_tokens"):
        if cfg[key] < 1:
            raise InputError(f"{path}: key '{key}' must be at least 1, got {cfg[key]}")
    if cfg["max_retries"] < 0 or not 0 <= cfg["max_error_rate"] <= 1:
        raise InputError(f"{path}: key 'max_retries' must be >= 0 and 'max_error_rate' in [0, 1]")
    for name in PROMPT_FIELDS:
        if name not in cfg["answer_prompt"]:
            raise InputError(f"{path}: key 'answer_prompt' must contain the field {name}")
    try:
        cfg["answer_prompt"].format(asked_at="", context="", question="")
    except (KeyError, IndexError, ValueError) as e:
        raise InputError(f"{path}: key 'answer_prompt' has a stray brace field ({e}); "
                         f"write literal braces as {{{{ and }}}}") from None
    for name, section in cfg["backends"].items():
        if not isinstance(section, dict):
            raise InputError(f"{path}: key 'backends.{name}' must be a mapping")
    base = os.path.dirname(os.path.abspath(path))
    for key in ("dataset", "cache_dir"):
        if not os.path.isabs(cfg[key]):
            cfg[key] = os.path.normpath(os.path.join(base, cfg[key]))
    cfg["config_path"] = os.path.abspath(path)
    return cfg


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------

def run_cli(main_fn, argv: list[str] | None = None) -> int:
    """Run a script's main: InputError prints one line and exits 2, Ctrl-C exits 130."""
    try:
        return main_fn(argv)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    v = sub.add_parser("validate", help="validate dataset files and print their counts")
    v.add_argument("paths", nargs="+")
    c = sub.add_parser("check-config", help="validate a config file")
    c.add_argument("path")
    a = ap.parse_args(argv)
    if a.command == "check-config":
        cfg = load_config(a.path)
        print(f"{a.path}: ok (run_id {cfg['run_id']}, dataset {os.path.relpath(cfg['dataset'])})")
        return EXIT_OK
    for path in a.paths:
        counts = dataset_counts(load_dataset(path))
        types = ", ".join(f"{t} {n}" for t, n in counts["questions_by_type"].items())
        print(f"{path}: ok: {counts['cases']} cases, {counts['sessions']} sessions, "
              f"{counts['turns']} turns, {counts['questions']} questions ({types})")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(_main))
