"""The one decision of correctness (decide: the rules, then the judge, else no_match), shared
by judge.py, calibration and the rules-only view, and the labelled sets the graders are measured
on. The rules are in rules.py, the normalizations they compare with in normalization.py, the
judge's rubrics and prompt in rubrics.py. Nothing here calls a model.
"""
from __future__ import annotations

import datetime

from cli import InputError
from contract import QUESTION_TYPES
from fileio import read_jsonl
from rubrics import LABELS
from rules import deterministic

# ---------------------------------------------------------------------------------------------
# The decision: the rules, then the judge (judge.py asks it when decide leaves an answer to
# it), else `no_match`; and the labelled sets on which metrics.calibration_rates counts how
# often a grader (rules, LLM judge, a person) is wrong.
# ---------------------------------------------------------------------------------------------

def decide(record: dict, with_judge: bool) -> tuple[str, str] | None:
    """The one decision of correctness before a judge, for judging, calibration and the
    rules-only view alike: (verdict, layer) when a rule decides (deterministic); without a judge,
    ("incorrect", "no_match") when none does, so rules-only grading is a strict lower bound;
    with one, None: the judge decides."""
    decided = deterministic(record, with_judge)
    if decided is not None or with_judge:
        return decided
    return "incorrect", "no_match"


# The labelled sets: real questions with answers of known kinds. The tuning sets, which the
# rules were tuned on: data/calibration.jsonl, and data/tuning2.jsonl, written by someone who
# never read the rules, aimed at full-sentence answers and the wrong answers that look like them
# (an outdated value inside a sentence, a wrong detail beside the gold, a guess after a
# decline). The held-out sets (data/heldout.jsonl, data/dates.jsonl, data/dates2.jsonl), on
# which the rules are measured and never tuned. Known-right kinds are what a too-strict grader
# rejects, known-wrong kinds what a too-lenient one accepts.
# Wrong kinds only the date set (data/dates.jsonl) holds: the right day with a weekday that is
# not its own, and a numeric date that reads as two days ("3/4/2026").
DATE_WRONG_KINDS = ("wrong_weekday", "ambiguous_date")
RIGHT_KINDS = ("verbose", "paraphrase", "number_form", "date_format", "other_script", "restated_question",
               "exact_form", "abstain_unanswerable")
WRONG_KINDS = ("other_value", "outdated", "vague", "hedge", "beside_other", "confident_unanswerable",
               "guess_unanswerable", "abstain_answerable", "near_miss_symbol", "wrong_year", "extra_candidate",
               "question_form", "negation", "partial_list", "outdated_in_sentence", "wrong_detail",
               "guess_after_decline") + DATE_WRONG_KINDS
CALIBRATION_FIELDS = {"id": str, "qid": str, "type": str, "question": str, "gold_answer": str, "meta": dict,
                      "answer": str, "label": str, "kind": str}
# The question's date, which a yearless date takes its year from (name_days): optional, since
# most labelled answers need none; when given, an ISO-8601 timestamp.
CALIBRATION_OPTIONAL = {"asked_at": str}


def load_calibration(path: str) -> list[dict]:
    """The items of a judge calibration file, every line checked: required fields and their
    types, no unknown field, known label, kind and question type, a kind that fits the label,
    unique ids. A bad line is an InputError naming `path:line` and the field."""
    items: list[dict] = []
    seen: dict[str, int] = {}
    for lineno, obj in read_jsonl(path):
        where = f"{path}:{lineno}"
        for key, kind in CALIBRATION_FIELDS.items():
            if key not in obj:
                raise InputError(f"{where}: missing required field '{key}'")
            if not isinstance(obj[key], kind):
                raise InputError(f"{where}: field '{key}' must be {'a string' if kind is str else 'an object'}, "
                                 f"got {type(obj[key]).__name__}")
            if kind is str and not obj[key].strip():
                raise InputError(f"{where}: field '{key}' must not be empty")
        unknown = sorted(set(obj) - set(CALIBRATION_FIELDS) - set(CALIBRATION_OPTIONAL))
        if unknown:
            raise InputError(f"{where}: unknown field '{unknown[0]}'; expected only "
                             f"{', '.join([*CALIBRATION_FIELDS, *CALIBRATION_OPTIONAL])}")
        if "asked_at" in obj:
            try:
                datetime.datetime.fromisoformat(obj["asked_at"].replace("Z", "+00:00"))
            except (TypeError, AttributeError, ValueError):
                raise InputError(f"{where}: field 'asked_at' is {obj['asked_at']!r}; expected an ISO-8601 "
                                 f"timestamp such as 2026-02-13T09:00:00Z") from None
        if obj["type"] not in QUESTION_TYPES:
            raise InputError(f"{where}: field 'type' is {obj['type']!r}; expected one of {', '.join(QUESTION_TYPES)}")
        if obj["label"] not in LABELS:
            raise InputError(f"{where}: field 'label' is {obj['label']!r}; expected 'correct' or 'incorrect'")
        if obj["kind"] not in RIGHT_KINDS + WRONG_KINDS:
            raise InputError(f"{where}: field 'kind' is {obj['kind']!r}; expected one of "
                             f"{', '.join(RIGHT_KINDS + WRONG_KINDS)}")
        expected = "correct" if obj["kind"] in RIGHT_KINDS else "incorrect"
        if obj["label"] != expected:
            raise InputError(f"{where}: field 'label' is {obj['label']!r}, but kind {obj['kind']!r} "
                             f"is labelled {expected!r}")
        if obj["kind"] in ("outdated", "outdated_in_sentence") and not obj["meta"].get("outdated_answers"):
            # optional in meta, required for these kinds
            raise InputError(f"{where}: field 'meta' needs outdated_answers for kind {obj['kind']!r}")
        if obj["id"] in seen:
            raise InputError(f"{where}: field 'id' {obj['id']!r} was already used on line {seen[obj['id']]}")
        seen[obj["id"]] = lineno
        items.append(obj)
    if not items:
        raise InputError(f"{path}: no calibration items")
    return items
