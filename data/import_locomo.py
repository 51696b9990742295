"""Import LoCoMo (locomo10.json, Maharana et al., ACL 2024) into memory-bench cases: one case
per conversation, one question per QA item, turn ids = LoCoMo's own dia_ids.

What it does (see data/IMPORTING.md for the reasons):
  - sessions in numeric order (session_10 after session_9), times parsed into ISO-8601;
    sessions that have a date but no turns (conv-26: 20..35) are skipped and reported;
  - each turn's role is the speaker's name (both participants are people);
  - image turns get their BLIP caption appended as " and shared <caption>." (the wording of
    LoCoMo's own evaluation code); --no-image-captions turns this off; the choice is in meta;
  - categories: 1 multi_hop, 2 temporal, 3 open_domain, 4 single_hop, 5 adversarial; a
    category-5 question's gold is that the conversation does not say, and its
    adversarial_answer is kept in meta as the trap, never as the gold;
  - qid = f"{sample_id}-q{index}" with the 0-based position in `qa` (question texts repeat);
  - evidence strings that name real turns in a malformed way ("D8:6; D9:17", "D:11:26",
    "D30:05", ids joined by spaces) are repaired; strings that name no real turn are dropped;
    every repair and drop is reported and kept in question meta;
  - an answerable question (categories 1-4) whose raw evidence is empty (4 of category 3) is
    kept and graded, with meta.no_evidence saying why (its recall is not defined) and reported;
    one whose evidence strings all named no turn would be dropped and reported;
  - asked_at = the time of the last session that has turns (questions carry no date);
  - observation / session_summary / event_summary are never read (they leak answers).

Usage:
  python data/import_locomo.py PATH/locomo10.json --out data/locomo.jsonl
  python data/import_locomo.py PATH/locomo10.json --out data/locomo.jsonl --no-image-captions
"""
from __future__ import annotations

import os
import re
import sys
from datetime import datetime
from typing import Any, Iterator

# Run as `python data/import_locomo.py` from anywhere: the repo root holds the shared modules.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]

from cli import InputError, run_cli  # noqa: E402
from contract import is_answerable  # noqa: E402
from fileio import sha256_file  # noqa: E402
from importlib_common import (CaseWriter, Report, answer_text, base_parser,  # noqa: E402
                              iter_json_array, require)

# Verified against the paper's counts and the official scoring code (shared/datasets/README.md);
# several public harnesses swap these.
CATEGORY_TYPES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop", 5: "adversarial"}
# The official scorer counts a category-5 answer right when it says the information is not
# there ("not mentioned" / "no information available"), so that is the gold.
ADVERSARIAL_GOLD = "Not mentioned in the conversation"
NO_EVIDENCE = "LoCoMo lists no evidence turn for this question"

SESSION_KEY = re.compile(r"session_(\d+)")
DATE_KEY = re.compile(r"session_(\d+)_date_time")
DIA_ID = re.compile(r"D(\d+):(\d+)")
# One id inside a malformed evidence string, as the raw file writes them: a stray colon after
# the D ("D:11:26") and leading zeros ("D30:05"). Several ids share one string, split by ';'
# or spaces ("D8:6; D9:17", "D9:1 D4:4 D4:6").
LOOSE_DIA_ID = re.compile(r"D:?(\d+):(\d+)")
EVIDENCE_SEPARATORS = re.compile(r"[;,\s]+")
# "1:56 pm on 8 May, 2023". Parsed by hand: strptime's %B and %p follow the C library locale.
DATE_TIME = re.compile(r"\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*",
                       re.IGNORECASE)
MONTHS = {m: i for i, m in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"), 1)}
# Top-level fields the importer knows. The derived ones are deliberately ignored.
KNOWN_FIELDS = {"sample_id", "conversation", "qa", "observation", "session_summary", "event_summary"}
SPEAKER_FIELDS = {"speaker_a", "speaker_b"}


def parse_locomo_time(raw: str, where: str) -> str:
    """'1:56 pm on 8 May, 2023' -> '2023-05-08T13:56:00' (no zone: the source gives none)."""
    m = DATE_TIME.fullmatch(raw) if isinstance(raw, str) else None
    month = MONTHS.get(m.group(5).lower()) if m else None
    if not m or not month:
        raise InputError(f"{where}: cannot parse session time {raw!r}; expected like '1:56 pm on 8 May, 2023'")
    hour = int(m.group(1)) % 12 + (12 if m.group(3).lower() == "p" else 0)
    try:
        stamp = datetime(int(m.group(6)), month, int(m.group(4)), hour, int(m.group(2)))
    except ValueError as e:
        raise InputError(f"{where}: session time {raw!r} is not a real date: {e}") from None
    return stamp.isoformat()


def convert_sessions(conv: dict, where: str, sample_id: str, captions: bool,
                     report: Report) -> tuple[list[dict], list[dict]]:
    """The case's sessions in numeric order, and the dated sessions skipped for having no turns."""
    numbers: set[int] = set()
    for key in conv:
        m = SESSION_KEY.fullmatch(key) or DATE_KEY.fullmatch(key)
        if m:
            numbers.add(int(m.group(1)))
        elif key not in SPEAKER_FIELDS:
            raise InputError(f"{where}: conversation {sample_id}: unknown field {key!r}")
    sessions: list[dict] = []
    skipped: list[dict] = []
    for n in sorted(numbers):
        key, date_key = f"session_{n}", f"session_{n}_date_time"
        s_where = f"{where}: conversation {sample_id}: {key}"
        turns_raw = conv[key] if key in conv else []
        if not isinstance(turns_raw, list):
            raise InputError(f"{s_where}: expected a list of turns, got {type(turns_raw).__name__}")
        if date_key not in conv:
            raise InputError(f"{s_where}: has turns but no '{date_key}'")
        stamp = parse_locomo_time(conv[date_key], f"{s_where}_date_time")
        if not turns_raw:
            # The contract allows an empty session, but an empty one adds nothing to memory and
            # would stretch the conversation's time span; skipping it and saying so is honest.
            skipped.append({"session": key, "date_time": conv[date_key]})
            report.note("empty_session_skipped", f"{s_where}: dated {conv[date_key]!r} but has no turns")
            continue
        turns = []
        for j, t in enumerate(turns_raw):
            t_where = f"{s_where}[{j}]"
            if not isinstance(t, dict):
                raise InputError(f"{t_where}: expected an object")
            text = require(t, "text", str, t_where)
            meta: dict[str, Any] = {}
            if "blip_caption" in t:
                caption = require(t, "blip_caption", str, t_where)
                meta["blip_caption"] = caption
                if "img_url" in t:
                    meta["img_url"] = t["img_url"]
                if "query" in t:
                    meta["image_query"] = t["query"]
                if captions:
                    # LoCoMo's task_eval builds its context the same way; the caption sometimes
                    # holds the answer, so leaving it out makes some questions unanswerable.
                    text = f"{text} and shared {caption}."
            turn = {"turn_id": require(t, "dia_id", str, t_where),
                    "role": require(t, "speaker", str, t_where), "text": text}
            if meta:
                turn["meta"] = meta
            turns.append(turn)
        sessions.append({"session_id": key, "timestamp": stamp, "turns": turns,
                         "meta": {"date_time": conv[date_key]}})
    return sessions, skipped


def repair_evidence(raw: str, turn_ids: set) -> list[str] | None:
    """The dia_ids a malformed evidence string names if every one is a real turn, else None."""
    ids = []
    for piece in EVIDENCE_SEPARATORS.split(raw.strip()):
        m = LOOSE_DIA_ID.fullmatch(piece)
        if not m:
            return None
        ids.append(f"D{int(m.group(1))}:{int(m.group(2))}")
    return ids if all(i in turn_ids for i in ids) else None


def convert_evidence(raw: list, turn_ids: set, q_where: str,
                     report: Report) -> tuple[list[str], list[dict], list]:
    """Kept evidence ids, the repaired strings ({"raw", "ids"}) and the dropped raw strings."""
    kept: list[str] = []
    repaired: list[dict] = []
    dropped: list = []
    for ev in raw:
        if isinstance(ev, str) and ev in turn_ids:
            ids = [ev]
        elif isinstance(ev, str) and (ids := repair_evidence(ev, turn_ids)) is not None:
            # Repaired only when the string itself names real turns: no guessing at ids.
            repaired.append({"raw": ev, "ids": ids})
            report.note("evidence_repaired", f"{q_where}: {ev!r} read as {ids}")
        elif isinstance(ev, str) and DIA_ID.fullmatch(ev):
            dropped.append(ev)
            report.note("evidence_missing_turn", f"{q_where}: {ev!r} names no turn of the conversation; dropped")
            continue
        else:
            dropped.append(ev)
            report.note("evidence_malformed", f"{q_where}: {ev!r} is not a dia_id like 'D1:3'; dropped")
            continue
        for i in ids:
            if i in kept:
                report.note("evidence_duplicate", f"{q_where}: {i!r} repeated; kept once")
            else:
                kept.append(i)
    return kept, repaired, dropped


def convert_conversation(record: Any, where: str, sha: str, variant: str, captions: bool,
                         report: Report) -> dict:
    """One LoCoMo conversation record as one case."""
    if not isinstance(record, dict):
        raise InputError(f"{where}: expected a conversation object, got {type(record).__name__}")
    for key in record:
        if key not in KNOWN_FIELDS:
            report.note("field_ignored", f"{where}: unknown top-level field {key!r} ignored")
    sample_id = require(record, "sample_id", str, where)
    conv = require(record, "conversation", dict, where)
    sessions, skipped = convert_sessions(conv, where, sample_id, captions, report)
    if not sessions:
        raise InputError(f"{where}: conversation {sample_id} has no session with turns")
    turn_ids = {t["turn_id"] for s in sessions for t in s["turns"]}
    asked_at = sessions[-1]["timestamp"]

    questions = []
    dropped_questions: list[str] = []
    for i, qa in enumerate(require(record, "qa", list, where)):
        qid = f"{sample_id}-q{i}"
        q_where = f"{where}: {qid}"
        if not isinstance(qa, dict):
            raise InputError(f"{q_where}: expected an object")
        category = require(qa, "category", int, q_where)
        if category not in CATEGORY_TYPES:
            raise InputError(f"{q_where}: unknown category {category}; expected 1..5")
        evidence, repaired, dropped = convert_evidence(require(qa, "evidence", list, q_where), turn_ids,
                                                       q_where, report)
        meta: dict[str, Any] = {"source": "locomo", "category": category}
        if category == 5:
            meta["adversarial_answer"] = answer_text(require(qa, "adversarial_answer", (str, int), q_where),
                                                     q_where)
            gold = ADVERSARIAL_GOLD
            if "answer" in qa:
                # 2 of 446 category-5 items carry an 'answer' too; the official scorer still
                # grades them as "not mentioned", so that stays the gold.
                meta["source_answer"] = answer_text(qa["answer"], q_where)
                report.note("adversarial_answer_kept_in_meta",
                            f"{q_where}: category 5 with answer {qa['answer']!r}; gold stays "
                            f"{ADVERSARIAL_GOLD!r}, answer kept in meta.source_answer")
        else:
            gold = answer_text(require(qa, "answer", (str, int), q_where), q_where)
            if not gold.strip():
                raise InputError(f"{q_where}: field 'answer' is empty")
        text = require(qa, "question", str, q_where)
        if not evidence and is_answerable({"type": CATEGORY_TYPES[category], "meta": meta}):
            if qa["evidence"]:
                # Its evidence named turns that are not in the conversation: the labels are broken.
                report.note("question_dropped_no_evidence", f"{q_where}: category {category} question with no "
                            f"evidence naming a turn (raw evidence {qa['evidence']!r}); dropped")
                dropped_questions.append(qid)
                continue
            # LoCoMo lists no evidence for it, and its published figures count it: graded for
            # accuracy, its recall undefined (the oracle gets an empty context), said in meta.
            meta["no_evidence"] = NO_EVIDENCE
            report.note("question_kept_no_evidence", f"{q_where}: category {category} question with an empty "
                        f"evidence list; kept and graded, recall not defined")
        if repaired:
            meta["repaired_evidence"] = repaired
        if dropped:
            meta["dropped_evidence"] = dropped
        questions.append({"qid": qid, "type": CATEGORY_TYPES[category], "asked_at": asked_at,
                          "question": text, "gold_answer": gold, "evidence": evidence, "meta": meta})

    return {"case_id": sample_id, "sessions": sessions, "questions": questions,
            "meta": {"source": "locomo", "variant": variant, "source_sha256": sha,
                     "image_captions": captions,
                     "speakers": [require(conv, "speaker_a", str, where), require(conv, "speaker_b", str, where)],
                     "asked_at_rule": "time of the last session with turns",
                     "skipped_empty_sessions": skipped, "dropped_questions": dropped_questions}}


def iter_cases(path: str, captions: bool, report: Report) -> Iterator[tuple[str, dict]]:
    """(source location, case) for each conversation in a LoCoMo file."""
    sha = sha256_file(path)
    variant = os.path.splitext(os.path.basename(path))[0]
    try:
        fh = open(path, encoding="utf-8")
    except OSError as e:
        raise InputError(f"{path}: cannot open: {e.strerror}") from None
    with fh:
        for index, record in iter_json_array(fh, path):
            where = f"{path}[{index}]"
            yield where, convert_conversation(record, where, sha, variant, captions, report)


def main(argv: list[str] | None = None) -> int:
    ap = base_parser(__doc__)
    ap.add_argument("path", help="locomo10.json")
    ap.add_argument("--no-image-captions", dest="captions", action="store_false",
                    help="do not append BLIP captions to image turns (default: append)")
    a = ap.parse_args(argv)
    report = Report()
    with CaseWriter(a.out, report, force=a.force) as writer:
        for where, case in iter_cases(a.path, a.captions, report):
            writer.write(case, where)
    report.print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
