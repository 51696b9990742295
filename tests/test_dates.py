"""Dates graded by the day they name (normalization.name_days): the labelled date set
(data/dates.jsonl, every date form on both sides, never tuned on) held to its target and to the
rates docs/grading.md quotes, and the rule's own promises one by one: the year of a yearless
date from asked_at, a wrong weekday, an ambiguous numeric date, no asked_at."""
from __future__ import annotations

import json
import os
import re

import pytest

from cli import InputError
from grading import decide, load_calibration
from metrics import calibration_rates
from normalization import name_days
from rules import RULES_SHA256, deterministic
from stats import wilson_interval
from conftest import ROOT

DATES = os.path.join(ROOT, "data", "dates.jsonl")
# The second date set, written after the rule and measured once at rules 1d21ceb953f2, never
# tuned on: its false rejects are held at or below what that measurement found.
DATES2 = os.path.join(ROOT, "data", "dates2.jsonl")
DATES2_RECORDED = {"false_accepts": 0, "false_rejects": 4}


def rates(with_judge: bool, path: str = DATES) -> dict:
    items = load_calibration(path)
    return calibration_rates(items, [(decide(i, with_judge) or ("incorrect",))[0] for i in items])["overall"]


def test_the_date_set_covers_both_sides_and_every_kind_of_date_it_names():
    items = load_calibration(DATES)
    kinds = {i["kind"] for i in items}
    assert {"date_format", "wrong_year", "wrong_weekday", "ambiguous_date", "other_value"} <= kinds
    assert sum(i["label"] == "correct" for i in items) >= 50 and sum(i["label"] == "incorrect" for i in items) >= 50
    assert all("asked_at" in i for i in items)


@pytest.mark.parametrize("with_judge", [False, True])
def test_no_wrong_date_is_accepted_and_at_most_one_right_date_in_ten_is_rejected(with_judge):
    overall = rates(with_judge)
    print(f"\ndates, rules {'with' if with_judge else 'without'} a judge: {overall['false_accepts']} of "
          f"{overall['known_wrong']} false accepts, {overall['false_rejects']} of {overall['known_right']} "
          f"false rejects")
    assert overall["false_accepts"] == 0
    if not with_judge:  # with a judge the rules leave every answer but the gold's own form to it
        assert overall["false_rejects"] <= overall["known_right"] / 10


@pytest.mark.parametrize("with_judge", [False, True])
def test_the_second_date_set_gets_no_more_errors_than_when_it_was_measured(with_judge):
    overall = rates(with_judge, DATES2)
    assert overall["false_accepts"] == 0
    if not with_judge:
        assert overall["false_rejects"] <= DATES2_RECORDED["false_rejects"], (
            "more right dates of data/dates2.jsonl rejected than when it was measured: a regression; do not edit "
            "the set or the recorded count to pass")


@pytest.mark.parametrize("doc, path", [("README.md", DATES), (os.path.join("docs", "grading.md"), DATES),
                                       (os.path.join("docs", "grading.md"), DATES2)])
def test_docs_quote_the_rates_the_rules_make_on_the_date_sets(doc, path):
    text = open(os.path.join(ROOT, doc), encoding="utf-8").read()
    assert f"rules `{RULES_SHA256[:12]}`" in text
    overall = rates(False, path)
    row = next(line for line in text.splitlines() if line.startswith(f"| `{os.path.relpath(path, ROOT)}`"))
    for k, n in ((overall["false_accepts"], overall["known_wrong"]),
                 (overall["false_rejects"], overall["known_right"])):
        low, high = wilson_interval(k, n)
        assert f"{k} of {n} ({100 * k / n:.1f}%, {100 * low:.1f}-{100 * high:.1f}%)" in row, row


def rec(gold: str, answer: str, asked_at: str | None, question: str = "Which date was the reindexing?") -> dict:
    out = {"question": question, "gold_answer": gold, "answer": answer, "type": "temporal", "meta": {}}
    return out if asked_at is None else {**out, "asked_at": asked_at}


def test_a_yearless_date_takes_the_year_that_puts_it_nearest_the_question():
    # Asked at the end of January, "November 25" is the November just past.
    assert name_days("November 25", "2026-01-31T09:00:00Z") == "2025-11-25"
    assert name_days("January 10", "2025-12-20T09:00:00Z") == "2026-01-10"
    assert deterministic(rec("November 25", "November 25, 2025", "2026-01-31T09:00:00Z"), False)[0] == "correct"
    assert deterministic(rec("November 25", "November 25, 2026", "2026-01-31T09:00:00Z"), False) is None


@pytest.mark.parametrize("answer", ["February 20, 2026", "2026-02-20", "Friday, February 20", "Feb 20th",
                                    "20 February", "2/20/2026", "20.02.2026", "February 20 (a Friday)"])
def test_any_form_of_the_same_day_is_the_gold_even_before_a_judge(answer):
    record = rec("February 20", answer, "2026-04-08T09:00:00Z")
    assert deterministic(record, with_judge=True) == ("correct", "exact")


@pytest.mark.parametrize("answer", ["Thursday, February 20", "February 20, 2025", "February 21", "3/4/2026",
                                   "Friday", "February 2026"])
def test_another_day_year_or_weekday_and_an_ambiguous_date_are_not_accepted(answer):
    gold = "March 4" if answer == "3/4/2026" else "February 20"
    assert deterministic(rec(gold, answer, "2026-04-08T09:00:00Z"), with_judge=False) is None


def test_without_asked_at_a_yearless_date_stays_as_written():
    assert name_days("Friday, February 20", None) == "Friday, February 20"
    assert name_days("Friday, February 20, 2026", None) == "2026-02-20"
    assert deterministic(rec("February 20", "February 20, 2026", None), with_judge=False) is None


def test_a_labelled_answer_with_an_asked_at_that_is_no_timestamp_is_refused(tmp_path):
    item = json.loads(open(DATES, encoding="utf-8").readline())
    path = tmp_path / "dates.jsonl"
    path.write_text(json.dumps({**item, "asked_at": "last Tuesday"}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"dates.jsonl:1: field 'asked_at'"):
        load_calibration(str(path))


@pytest.mark.parametrize("dataset", ["cases-v2.jsonl", "dev-v2.jsonl", "cases.jsonl", "dev.jsonl"])
def test_every_bundled_yearless_date_gold_takes_the_year_of_its_evidence(dataset):
    # The nearest year to asked_at is the year the history means: each date gold's day falls
    # within six months of the session that states it (the furthest, 42 days).
    import datetime
    from dataset import load_dataset
    golds = 0
    for case in load_dataset(os.path.join(ROOT, "data", dataset)):
        said = {t["turn_id"]: datetime.date.fromisoformat(s["timestamp"][:10]) for s in case["sessions"]
                for t in s["turns"]}
        for q in case["questions"]:
            day = name_days(q["gold_answer"], q["asked_at"])
            if not re.fullmatch(r"\d{4}-\d\d-\d\d", day) or not q["evidence"]:
                continue
            golds += 1
            named = datetime.date.fromisoformat(day)
            assert min(abs((named - said[e]).days) for e in q["evidence"]) <= 183, (q["qid"], q["gold_answer"], day)
    assert golds > 0
