"""Import LongMemEval (Wu et al., ICLR 2025: longmemeval_s / _m / _oracle, original or cleaned)
into memory-bench cases: one case per question, holding that question's own haystack.

What it does (see data/IMPORTING.md for the reasons):
  - streams the file (LongMemEval-M is 2.75 GB) one element at a time (ijson);
  - sessions sorted by time (the oracle file is not);
  - turn ids are the official `<session_id>_<1-based index over the session's turns>`;
    a session id repeated inside one haystack is renamed `<id>~<n>` and reported;
  - evidence = turns flagged has_answer, as in LongMemEval's own retrieval metric; an answer
    session that flags none adds no evidence (listed in meta.unflagged_answer_sessions), and
    an answerable question with no flagged turn at all is dropped and reported;
  - asked_at = question_date in ISO-8601, or the latest session's time when sessions are
    dated after it: they are history whose clock time the benchmark drew at random, so they
    are kept for every system, flagged ("after_question": true), and the move is reported
    (question meta keeps the original question_date); integer answers become strings;
  - `_abs` question ids become type "abstention" with evidence [] (the would-be evidence is in
    meta.would_be_evidence); question meta holds "source", "source_type" and "abstention", and
    an answerable question's "answer_evidence" (its flagged turns: each states the answer or a
    part of it);
  - --per-type N takes a stratified sample: reservoir sampling per contract type, seeded with
    --seed, in a first streaming pass; a second pass writes the chosen cases in file order.

The variant (s, m, oracle, with a _cleaned suffix for the 2025-09 cleaned release) is read from
the file name (longmemeval_s*.json, ...) unless --variant is given.

Usage:
  python data/import_longmemeval.py PATH/longmemeval_s.json --out data/lme_s.jsonl
  python data/import_longmemeval.py PATH/longmemeval_m.json --out data/lme_m_sample.jsonl --per-type 10 --seed 1
  python data/import_longmemeval.py PATH/my_copy.json --variant oracle_cleaned --out data/lme_oracle.jsonl
"""
from __future__ import annotations

import argparse
import os
import random
import re
import sys
from typing import Any, Iterator

# Run as `python data/import_longmemeval.py` from anywhere: the repo root holds the shared modules.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]

from cli import InputError, run_cli  # noqa: E402
from fileio import sha256_file  # noqa: E402
from importlib_common import (DEFAULT_BUFSIZE, CaseWriter, Report, answer_text,  # noqa: E402
                              base_parser, iter_json_array, require)

# The official question types; `_abs` on the question id marks abstention (type kept as base).
TYPE_MAP = {
    "single-session-user": "single_hop",
    "single-session-assistant": "assistant_recall",
    "single-session-preference": "preference",
    "temporal-reasoning": "temporal",
    "knowledge-update": "knowledge_update",
    "multi-session": "multi_hop",
}
VARIANTS = ("s", "m", "oracle", "s_cleaned", "m_cleaned", "oracle_cleaned")
VARIANT_NAME = re.compile(r"longmemeval_(s|m|oracle)(?=[_.])", re.IGNORECASE)
# "2023/05/30 (Tue) 23:40"; the weekday is redundant and not checked.
LME_TIME = re.compile(r"\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\([A-Za-z]{3}\))?\s*(\d{1,2}):(\d{2})\s*")
KNOWN_FIELDS = {"question_id", "question_type", "question", "answer", "question_date",
                "haystack_session_ids", "haystack_dates", "haystack_sessions", "answer_session_ids"}


def parse_lme_time(raw: Any, where: str) -> str:
    """'2023/05/30 (Tue) 23:40' -> '2023-05-30T23:40:00' (no zone: the source gives none)."""
    m = LME_TIME.fullmatch(raw) if isinstance(raw, str) else None
    if not m:
        raise InputError(f"{where}: cannot parse time {raw!r}; expected like '2023/05/30 (Tue) 23:40'")
    y, mo, d, h, mi = (int(g) for g in m.groups())
    if not (1 <= mo <= 12 and 1 <= d <= 31 and h < 24 and mi < 60):
        raise InputError(f"{where}: time {raw!r} is out of range")
    return f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:00"


def variant_of(path: str, given: str | None) -> str:
    """The LongMemEval variant: --variant if given, else from the file name."""
    if given:
        return given
    name = os.path.basename(path)
    m = VARIANT_NAME.match(name)
    if not m:
        raise InputError(f"{path}: cannot tell the variant from the file name; pass --variant "
                         f"({', '.join(VARIANTS)})")
    return m.group(1).lower() + ("_cleaned" if "cleaned" in name.lower() else "")


def contract_type(record: dict, where: str) -> tuple[str, str, bool]:
    """(contract type, source question_type, abstention) of one record."""
    qid = require(record, "question_id", str, where)
    source_type = require(record, "question_type", str, where)
    if source_type not in TYPE_MAP:
        raise InputError(f"{where}: question {qid}: unknown question_type {source_type!r}; "
                         f"expected one of {', '.join(TYPE_MAP)}")
    abstention = qid.endswith("_abs")
    return ("abstention" if abstention else TYPE_MAP[source_type]), source_type, abstention


def convert_sessions(ids: list, dates: list, raw_sessions: list, asked_at: str, where: str,
                     report: Report) -> tuple[list[dict], dict[str, list[dict]], set[str]]:
    """The haystack's sessions in file order, with the official turn ids; a session id that
    repeats is renamed (and reported). Also each original session id's sessions, and the ids of
    the turns flagged has_answer."""
    sessions: list[dict] = []
    used: set[str] = set(x for x in ids if isinstance(x, str))
    seen: dict[str, int] = {}
    by_original: dict[str, list[dict]] = {}
    flagged: set[str] = set()
    for i, (sid, date, raw) in enumerate(zip(ids, dates, raw_sessions)):
        s_where = f"{where}: haystack_sessions[{i}]"
        if not isinstance(sid, str) or not sid:
            raise InputError(f"{s_where}: session id {sid!r} is not a non-empty string")
        if not isinstance(raw, list):
            raise InputError(f"{s_where}: expected a list of turns, got {type(raw).__name__}")
        seen[sid] = seen.get(sid, 0) + 1
        final_sid = sid
        if seen[sid] > 1:
            # Two sessions with one id would give two turns the same official id; rename the
            # later one so every turn id stays unique, and say so.
            n = seen[sid]
            while f"{sid}~{n}" in used:
                n += 1
            final_sid = f"{sid}~{n}"
            used.add(final_sid)
            report.note("duplicate_session_renamed", f"{s_where}: session id {sid!r} repeats in the "
                        f"haystack; renamed {final_sid!r}")
        turns = []
        for j, t in enumerate(raw):
            t_where = f"{s_where}[{j}]"
            if not isinstance(t, dict):
                raise InputError(f"{t_where}: expected an object")
            tid = f"{final_sid}_{j + 1}"
            turns.append({"turn_id": tid, "role": require(t, "role", str, t_where),
                          "text": require(t, "content", str, t_where)})
            if t.get("has_answer") is True:  # optional field: absent means not evidence
                flagged.add(tid)
        stamp = parse_lme_time(date, f"{where}: haystack_dates[{i}]")
        meta: dict[str, Any] = {"haystack_index": i}
        if final_sid != sid:
            meta["original_session_id"] = sid
        if stamp > asked_at:  # both are zone-less ISO strings of one fixed width
            meta["after_question"] = True
        session = {"session_id": final_sid, "timestamp": stamp, "turns": turns, "meta": meta}
        sessions.append(session)
        by_original.setdefault(sid, []).append(session)
    return sessions, by_original, flagged


def in_time_order(sessions: list[dict], where: str, report: Report) -> list[dict]:
    """The sessions sorted by time, stably; a haystack out of order is reported."""
    order = sorted(range(len(sessions)), key=lambda k: sessions[k]["timestamp"])  # stable
    if order != list(range(len(sessions))):
        report.note("sessions_reordered", f"{where}: haystack not in time order; sessions sorted by date")
    return [sessions[k] for k in order]


def asked_after_every_session(sessions: list[dict], question_date: str, where: str, report: Report) -> tuple[str, list]:
    """(asked_at, the sessions dated after question_date): the time of the last session when
    some are later than the question's own date (reported), else question_date."""
    late = [s["session_id"] for s in sessions if "after_question" in s["meta"]]
    if not late:
        return question_date, late
    # LongMemEval's own reader sees every haystack session and "answers the question after
    # all the interaction sessions" (README). Its compile script draws session times at
    # random and takes question_date from the question itself when it has one
    # (data/custom_history/sample_haystack_and_timestamp.py), so a session can land later
    # on the question's day (77 of 500 S questions: LongMemEval issue #8). They are
    # history, at times evidence: keep them for every system and ask after the last one.
    asked_at = sessions[-1]["timestamp"]
    kind = "asked_at_moved" if asked_at[:10] == question_date[:10] else "asked_at_moved_to_later_day"
    report.note(kind, f"{where}: {len(late)} session(s) dated after question_date {question_date} "
                f"({', '.join(late)}); kept, and asked_at moved to the last one, {asked_at}")
    return asked_at, late


def unflagged_answer_sessions(answer_ids: list, by_original: dict[str, list[dict]], flagged: set[str], where: str,
                              report: Report) -> list[str]:
    """The answer sessions that flag no turn has_answer (reported, as is an answer session
    missing from the haystack)."""
    unflagged: list[str] = []
    for aid in answer_ids:
        if aid not in by_original:
            report.note("answer_session_missing", f"{where}: answer session {aid!r} is not in the haystack")
            continue
        # LongMemEval's turn-level recall counts only turns flagged has_answer
        # (src/retrieval/run_retrieval.py), so an answer session that flags none is no evidence.
        unflagged.extend(s["session_id"] for s in by_original[aid]
                         if not flagged.intersection(t["turn_id"] for t in s["turns"]))
    if unflagged:
        report.note("answer_session_unflagged", f"{where}: answer session(s) {', '.join(unflagged)} "
                    f"flag no turn; they add no evidence")
    return unflagged


def convert_record(record: Any, where: str, sha: str, variant: str, report: Report) -> dict | None:
    """One LongMemEval question record as one case; None when it is dropped (and reported)."""
    if not isinstance(record, dict):
        raise InputError(f"{where}: expected a question object, got {type(record).__name__}")
    qtype, source_type, abstention = contract_type(record, where)
    qid = record["question_id"]
    where = f"{where}: question {qid}"
    for key in record:
        if key not in KNOWN_FIELDS:
            report.note("field_ignored", f"{where}: unknown field {key!r} ignored")
    question_date = parse_lme_time(require(record, "question_date", str, where), f"{where}: question_date")
    ids = require(record, "haystack_session_ids", list, where)
    dates = require(record, "haystack_dates", list, where)
    raw_sessions = require(record, "haystack_sessions", list, where)
    if not len(ids) == len(dates) == len(raw_sessions):
        raise InputError(f"{where}: haystack_session_ids ({len(ids)}), haystack_dates ({len(dates)}) and "
                         f"haystack_sessions ({len(raw_sessions)}) must have the same length")
    answer_ids = require(record, "answer_session_ids", list, where)

    sessions, by_original, flagged = convert_sessions(ids, dates, raw_sessions, question_date, where, report)
    sessions = in_time_order(sessions, where, report)
    asked_at, late = asked_after_every_session(sessions, question_date, where, report)
    flagged_evidence = [t["turn_id"] for s in sessions for t in s["turns"] if t["turn_id"] in flagged]
    unflagged = unflagged_answer_sessions(answer_ids, by_original, flagged, where, report)
    text = require(record, "question", str, where)
    gold = answer_text(require(record, "answer", (str, int), where), where)
    if not flagged_evidence and not abstention:
        report.note("question_dropped_no_evidence", f"{where}: {qtype} question with no turn flagged "
                    f"has_answer; dropped")
        return None

    meta = {"source": "longmemeval", "source_type": source_type, "abstention": abstention,
            "answer_session_ids": answer_ids}
    if unflagged:
        meta["unflagged_answer_sessions"] = unflagged
    if late:
        meta["question_date"] = question_date
    evidence = flagged_evidence
    if abstention:
        # The contract: an abstention question's fact is never stated, so it has no evidence.
        if evidence:
            meta["would_be_evidence"] = evidence
        evidence = []
    else:
        # Every flagged turn states (part of) the answer: LongMemEval flags no bridge turns.
        meta["answer_evidence"] = list(evidence)
    question = {"qid": qid, "type": qtype, "asked_at": asked_at, "question": text, "gold_answer": gold,
                "evidence": evidence, "meta": meta}
    return {"case_id": qid, "sessions": sessions, "questions": [question],
            "meta": {"source": "longmemeval", "variant": variant, "source_sha256": sha}}


def iter_records(path: str, bufsize: int) -> Iterator[tuple[int, Any]]:
    """(index, record) for each element of the file, streamed."""
    try:
        fh = open(path, encoding="utf-8")
    except OSError as e:
        raise InputError(f"{path}: cannot open: {e.strerror}") from None
    with fh:
        yield from iter_json_array(fh, path, bufsize)


def sample_indices(path: str, per_type: int, seed: int, bufsize: int) -> set[int]:
    """Record indices of a stratified sample: up to per_type per contract type, by reservoir
    sampling (Vitter's algorithm R) in one streaming pass, so memory holds only the indices."""
    rng = random.Random(seed)
    seen: dict[str, int] = {}
    chosen: dict[str, list[int]] = {}
    for index, record in iter_records(path, bufsize):
        where = f"{path}[{index}]"
        if not isinstance(record, dict):
            raise InputError(f"{where}: expected a question object, got {type(record).__name__}")
        qtype = contract_type(record, where)[0]
        seen[qtype] = seen.get(qtype, 0) + 1
        pool = chosen.setdefault(qtype, [])
        if len(pool) < per_type:
            pool.append(index)
        else:
            j = rng.randrange(seen[qtype])
            if j < per_type:
                pool[j] = index
    return {i for pool in chosen.values() for i in pool}


def main(argv: list[str] | None = None) -> int:
    ap = base_parser(__doc__)
    ap.add_argument("path", help="a LongMemEval JSON file (a list of question records)")
    ap.add_argument("--variant", choices=VARIANTS, help="override the variant read from the file name")
    ap.add_argument("--per-type", type=int, metavar="N", help="stratified sample: at most N questions per type")
    ap.add_argument("--seed", type=int, default=0, help="seed of the --per-type sample (default 0)")
    ap.add_argument("--bufsize", type=int, default=DEFAULT_BUFSIZE, 
                    help=argparse.SUPPRESS)  # for tests of chunk boundaries only
    a = ap.parse_args(argv)
    if a.per_type is not None and a.per_type < 1:
        raise InputError(f"--per-type must be at least 1, got {a.per_type}")
    if a.bufsize < 1:
        raise InputError(f"--bufsize must be at least 1, got {a.bufsize}")
    variant = variant_of(a.path, a.variant)
    if not os.path.isfile(a.path):
        raise InputError(f"{a.path}: no such file")
    sha = sha256_file(a.path)
    keep = sample_indices(a.path, a.per_type, a.seed, a.bufsize) if a.per_type else None
    report = Report()
    with CaseWriter(a.out, report, force=a.force) as writer:
        for index, record in iter_records(a.path, a.bufsize):
            if keep is not None and index not in keep:
                continue
            where = f"{a.path}[{index}]"
            case = convert_record(record, where, sha, variant, report)
            if case is None:
                continue
            if keep is not None:
                case["meta"]["sample"] = {"per_type": a.per_type, "seed": a.seed}
            writer.write(case, where)
    report.print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
