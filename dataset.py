"""The dataset: validation of a whole file against the case contract before any model call,
its index, counts and shards, and the dataset a comparison is held against.

Usage:
  python dataset.py validate data/cases.jsonl [more.jsonl ...]
  python -m backends check-config config.yaml     # the config, backend sections included
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterator

from cli import EXIT_OK, InputError, run_cli
from config import ROOT, kind_name, load_config
from contract import QUESTION_TYPES, is_answerable, kind_of, no_evidence_reason
from fileio import read_jsonl, sha256_data
from formats import read_manifest


def parse_time(value: str) -> datetime:
    """Parse an ISO-8601 date or date-time; a time without zone is taken as UTC.
    Raises ValueError on anything else."""
    if not isinstance(value, str) or not value:
        raise ValueError("not a string")
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    dt = datetime.fromisoformat(text)
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def _require(obj: dict, key: str, kind: type | tuple, where: str) -> Any:
    """Return obj[key] if present with the right type, else raise InputError naming it."""
    if key not in obj:
        raise InputError(f"{where}: missing required field '{key}'")
    value = obj[key]
    # bool is an int in Python; a count or id must not be true/false.
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise InputError(f"{where}: field '{key}' must be {kind_name(kind)}, got a boolean")
    if not isinstance(value, kind):
        raise InputError(f"{where}: field '{key}' must be {kind_name(kind)}, got {type(value).__name__}")
    return value


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


@dataclass(frozen=True)
class Dataset:
    """A dataset as it is on disk now: its file, its sha256 and its validated index (each case's
    id, cluster and questions: dataset_index)."""
    path: str
    sha256: str
    cases: list

    def qids(self, limit: int | None = None, shard: str | None = None, sample: int | None = None,
             seed: int | None = None) -> list[str]:
        """The questions a run with this --limit, --shard and --sample (drawn with `seed`) makes,
        in dataset order."""
        return [q["qid"] for c in select_cases(self.cases, limit, parse_shard(shard), sample, seed)
                for q in c["questions"]]


def select_cases(cases: list[dict], limit: int | None, shard: tuple[int, int] | None,
                 sample: int | None = None, seed: int | None = None) -> list[dict]:
    """The cases a run makes: the dataset's first `limit`, then those of one shard, then, with a
    sample, only the sampled questions of each (sample_questions) and only the cases that hold one."""
    cases = cases[:limit] if limit else cases
    cases = [c for c in cases if shard_of(c, shard[1]) == shard[0]] if shard else cases
    if sample is None:
        return cases
    chosen = sample_questions(cases, sample, seed)
    kept = [{**c, "questions": [q for q in c["questions"] if q["qid"] in chosen]} for c in cases]
    return [c for c in kept if c["questions"]]


def sample_questions(cases: list[dict], per_kind: int, seed: int | None) -> set[str]:
    """A stratified sample: `per_kind` questions of every kind (contract.kind_of: meta.kind, else
    the type; all of a kind that has fewer), each kind's drawn in the order of sha256(seed, qid). The draw depends on nothing but the
    seed and the ids, so every system, shard and machine answers the same questions, and a
    question in the sample of N is in the sample of N + 1."""
    if seed is None:
        raise ValueError("a sample needs the run's seed")
    by_kind: dict = {}
    for c in cases:
        for q in c["questions"]:
            by_kind.setdefault(kind_of(q), []).append(q["qid"])
    return {qid for qids in by_kind.values()
            for qid in sorted(qids, key=lambda qid: sample_rank(seed, qid))[:per_kind]}


def sample_rank(seed: int, qid: str) -> str:
    """Where a question comes in its kind's draw: a hash of the seed and its id."""
    return hashlib.sha256(f"{seed}:{qid}".encode("utf-8")).hexdigest()


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
        sha = sha256_data(found)
        if sha != m["dataset_sha256"]:
            raise InputError(f"{found}: hashes to {sha[:12]}, but {manifest} recorded {m['dataset_sha256'][:12]}: "
                             f"the dataset changed since the manifest was written; restore it, or make the "
                             f"comparison again on the dataset as it is (manifest.py, run.py --fresh)")
        return Dataset(found, sha, cases)
    found = load_config(config)["dataset"]
    cases = dataset_index(found)  # first: it names a missing file as the InputError it is
    return Dataset(found, sha256_data(found), cases)


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
