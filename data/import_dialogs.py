"""Import a two-file dialog layout (dialogs.jsonl, one message per line, and
questions.jsonl) into memory-bench cases: one case per conv_id.

  dialogs.jsonl:   {"conv_id", "session", "turn", "role", "text", "ts"}   (session, turn: integers)
  questions.jsonl: {"conv_id", "qid", "question", "answer", "type"}
                   optional: "asked_at", "evidence": [[session, turn], ...] (the answer's messages)

What it does (see data/IMPORTING.md for the reasons):
  - sessions ordered by session number, turns by turn number; a session's timestamp is its
    earliest message's ts, and each turn keeps its own ts in meta;
  - turn ids f"{conv_id}-s{session}t{turn}", session ids f"s{session}";
  - type strings mapped onto the contract's types (single-hop, multi_hop, temporal-reasoning,
    ...); an unknown one is an error naming path:line unless --default-type is given;
  - asked_at = the question's own asked_at if present, else the conversation's last message;
  - evidence = the messages a question's optional "evidence" names; the layout itself has no
    such field, so an answerable question without it is dropped and reported (the contract
    needs evidence for the oracle control and recall);
  - a conversation with no question (left) is dropped and reported.

Usage:
  python data/import_dialogs.py --dialogs data/dialogs.jsonl --questions data/questions.jsonl --out data/cases.jsonl
  python data/import_dialogs.py --dialogs D.jsonl --questions Q.jsonl --out cases.jsonl --default-type single_hop
"""
from __future__ import annotations

import os
import sys
from typing import Any

# Run as `python data/import_dialogs.py` from anywhere: the repo root holds the shared modules.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]

from cli import InputError, run_cli  # noqa: E402
from contract import QUESTION_TYPES, is_answerable  # noqa: E402
from dataset import parse_time  # noqa: E402
from fileio import read_jsonl, sha256_file  # noqa: E402
from importlib_common import CaseWriter, Report, answer_text, base_parser, map_type, require  # noqa: E402


def read_dialogs(path: str) -> dict[str, dict[int, dict[int, tuple[str, dict]]]]:
    """conv_id -> session -> turn -> (where, message), in first-appearance order of conv_id."""
    convs: dict[str, dict[int, dict[int, tuple[str, dict]]]] = {}
    for lineno, msg in read_jsonl(path):
        where = f"{path}:{lineno}"
        conv_id = require(msg, "conv_id", str, where)
        session = require(msg, "session", int, where)
        turn = require(msg, "turn", int, where)
        require(msg, "role", str, where)
        require(msg, "text", str, where)
        try:
            parse_time(require(msg, "ts", str, where))
        except ValueError:
            raise InputError(f"{where}: field 'ts' is not an ISO-8601 time: {msg['ts']!r}") from None
        turns = convs.setdefault(conv_id, {}).setdefault(session, {})
        if turn in turns:
            raise InputError(f"{where}: conv {conv_id} session {session} turn {turn} repeats "
                             f"{turns[turn][0]}")
        turns[turn] = (where, msg)
    if not convs:
        raise InputError(f"{path}: holds no messages")
    return convs


def build_sessions(conv_id: str, sessions: dict[int, dict[int, tuple[str, dict]]]) -> list[dict]:
    """The contract's sessions of one conversation."""
    out = []
    for number in sorted(sessions):
        turns = sessions[number]
        msgs = [turns[t][1] for t in sorted(turns)]
        # The earliest message stamps the session; messages keep their own ts in meta because
        # the contract has one time per session.
        start = min(msgs, key=lambda m: parse_time(m["ts"]))["ts"]
        out.append({"session_id": f"s{number}", "timestamp": start,
                    "turns": [{"turn_id": f"{conv_id}-s{number}t{t}", "role": turns[t][1]["role"],
                               "text": turns[t][1]["text"], "meta": {"ts": turns[t][1]["ts"]}}
                              for t in sorted(turns)]})
    return out


def read_evidence(q: dict, conv_id: str, sessions: dict[int, dict[int, tuple[str, dict]]], where: str) -> list[str]:
    """The turn ids a question's optional "evidence" names, as [session, turn] pairs."""
    if "evidence" not in q:
        return []
    ids = []
    for i, pair in enumerate(require(q, "evidence", list, where)):
        if (not isinstance(pair, list) or len(pair) != 2
                or not all(isinstance(n, int) and not isinstance(n, bool) for n in pair)):
            raise InputError(f"{where}: field 'evidence'[{i}] is {pair!r}; expected [session, turn] integers")
        session, turn = pair
        if turn not in sessions.get(session, {}):
            raise InputError(f"{where}: field 'evidence'[{i}] {pair} names no message of conv {conv_id}")
        ids.append(f"{conv_id}-s{session}t{turn}")
    return ids


def main(argv: list[str] | None = None) -> int:
    ap = base_parser(__doc__)
    ap.add_argument("--dialogs", required=True, help="dialogs.jsonl (one message per line)")
    ap.add_argument("--questions", required=True, help="questions.jsonl")
    ap.add_argument("--variant", default="seed001", help="recorded in each case's meta (default seed001)")
    ap.add_argument("--default-type", choices=QUESTION_TYPES,
                    help="type for questions whose type string is not recognised (default: error)")
    a = ap.parse_args(argv)
    convs = read_dialogs(a.dialogs)
    dialogs_sha, questions_sha = sha256_file(a.dialogs), sha256_file(a.questions)
    report = Report()

    last_ts = {conv_id: max((m for s in sessions.values() for _, m in s.values()),
                            key=lambda m: parse_time(m["ts"]))["ts"]
               for conv_id, sessions in convs.items()}
    questions: dict[str, list[tuple[str, dict]]] = {}
    qid_lines: dict[str, str] = {}
    for lineno, q in read_jsonl(a.questions):
        where = f"{a.questions}:{lineno}"
        conv_id = require(q, "conv_id", str, where)
        if conv_id not in convs:
            raise InputError(f"{where}: conv_id {conv_id!r} has no messages in {a.dialogs}")
        qid = require(q, "qid", str, where)
        if qid in qid_lines:
            raise InputError(f"{where}: qid {qid!r} repeats {qid_lines[qid]}")
        qid_lines[qid] = where
        raw_type = require(q, "type", str, where)
        qtype = map_type(raw_type, where, a.default_type)
        if qtype != raw_type:
            report.note("type_mapped", f"{where}: {qid}: type {raw_type!r} imported as {qtype!r}")
        meta: dict[str, Any] = {"source": "dialogs", "source_type": raw_type}
        if "asked_at" in q:
            asked_at = require(q, "asked_at", str, where)
            try:
                parse_time(asked_at)
            except ValueError:
                raise InputError(f"{where}: field 'asked_at' is not an ISO-8601 time: {asked_at!r}") from None
        else:
            asked_at, meta["asked_at_rule"] = last_ts[conv_id], "last message of the conversation"
        text = require(q, "question", str, where)
        gold = answer_text(require(q, "answer", (str, int), where), where)
        if not text.strip() or not gold.strip():
            raise InputError(f"{where}: fields 'question' and 'answer' must not be empty")
        evidence = read_evidence(q, conv_id, convs[conv_id], where)
        answerable = is_answerable({"type": qtype, "meta": meta})
        if evidence and not answerable:
            raise InputError(f"{where}: field 'evidence' must be empty for an {qtype} question "
                             f"(the asked fact is never stated)")
        if not evidence and answerable:
            report.note("question_dropped_no_evidence", f"{where}: {qid}: {qtype} question names no "
                        f"evidence; dropped")
            continue
        questions.setdefault(conv_id, []).append((where, {
            "qid": qid, "type": qtype, "asked_at": asked_at, "question": text,
            "gold_answer": gold, "evidence": evidence, "meta": meta}))

    with CaseWriter(a.out, report, force=a.force) as writer:
        for conv_id, sessions in convs.items():
            first_where = next(iter(next(iter(sessions.values())).values()))[0]
            if conv_id not in questions:
                report.note("conversation_dropped", f"{first_where}: conv {conv_id} has no questions left")
                continue
            case = {"case_id": conv_id, "sessions": build_sessions(conv_id, sessions),
                    "questions": [q for _, q in questions[conv_id]],
                    "meta": {"source": "dialogs", "variant": a.variant, "source_sha256": dialogs_sha,
                             "questions_sha256": questions_sha}}
            writer.write(case, first_where)
    report.print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
