"""The held-out labelled set (data/heldout.jsonl): written by someone who never read rules.py,
committed as data (no generator writes it), and measured once after the rules were frozen. The
rules' error counts on it are held at or below what was recorded then, so that a change to
rules.py which lowers the tuning set's errors and raises the held-out set's fails here: that
change was fitted to the tuning set. Run with -s to see both sets' counts."""
from __future__ import annotations

import os
import sys
from collections import Counter

import pytest

from conftest import ROOT
from fileio import read_jsonl
from grading import RIGHT_KINDS, WRONG_KINDS, load_calibration
from metrics import calibration_rates
from rules import RULES_SHA256
from stats import wilson_interval
from labelled import rule_errors, rules_verdicts

HELDOUT = os.path.join(ROOT, "data", "heldout.jsonl")
TUNING = (os.path.join(ROOT, "data", "calibration.jsonl"), os.path.join(ROOT, "data", "tuning2.jsonl"),
          os.path.join(ROOT, "tests", "data", "rule_labels.jsonl"))
# Rules-only errors recorded when the held-out set was measured, once, after the rules were
# frozen (rules 0392c04aea8c): 0 false accepts of 216 known-wrong answers, 77 false rejects of
# 186 known-right ones; 76 at rules 1d21ceb953f2, where dates are graded by the day they name
# (a change written for its own date set, data/dates.jsonl, not for these answers).
HELDOUT_RECORDED = {"false_accepts": 0, "false_rejects": 76}
# The tuning sets' at the same rules, for the message: 0/259 and 18/183 (calibration.jsonl),
# 0/227 and 81/365 (tuning2.jsonl), 0/98 and 15/71 (rule_labels.jsonl, 169 items since the asked clause).
TUNING_RECORDED = {"false_accepts": 0, "false_rejects": 18 + 81 + 15}
REGRESSION = ("rules.py makes more {what} on the held-out set (data/heldout.jsonl) than recorded: {now} > {then} "
              "(the tuning set: {tuning_now} now, {tuning_then} recorded). A change to the rules that lowers the "
              "tuning set's errors and raises the held-out set's is a regression: it was fitted to the answers it "
              "was tuned on. Revert it, or find a rule that does not; do not edit data/heldout.jsonl or these "
              "recorded numbers to pass. Lower counts are welcome: then lower the recorded ones.")


def tuning_items() -> list[dict]:
    return load_calibration(TUNING[0]) + load_calibration(TUNING[1]) + [obj for _, obj in read_jsonl(TUNING[2])]


def test_heldout_set_is_large_and_covers_every_kind_it_names():
    items = load_calibration(HELDOUT)
    kinds = Counter(i["kind"] for i in items)
    assert len(items) >= 200 and min(kinds.values()) >= 10, kinds
    new_kinds = {"near_miss_symbol", "wrong_year", "extra_candidate", "question_form", "negation", "partial_list",
                 "restated_question", "exact_form", "abstain_unanswerable"}
    assert new_kinds <= set(kinds) <= set(RIGHT_KINDS + WRONG_KINDS)


def test_heldout_set_is_data_that_no_generator_writes():
    sys.path.insert(0, os.path.join(ROOT, "data"))
    import make_calibration
    assert make_calibration.OUT == "calibration.jsonl"
    with open(os.path.join(ROOT, "data", "make_calibration.py"), encoding="utf-8") as fh:
        assert "heldout.jsonl" not in fh.read().replace("The held-out set (data/heldout.jsonl)", "")


@pytest.mark.parametrize("what", ["false_accepts", "false_rejects"])
def test_rules_make_no_more_errors_on_the_heldout_set_than_recorded(what):
    heldout, tuning = rule_errors(load_calibration(HELDOUT), False), rule_errors(tuning_items(), False)
    print(f"\nrules only, {what}: held-out {heldout[what]} (recorded {HELDOUT_RECORDED[what]}), "
          f"tuning {tuning[what]} (recorded {TUNING_RECORDED[what]})")
    assert heldout[what] <= HELDOUT_RECORDED[what], REGRESSION.format(
        what=what.replace("_", " "), now=heldout[what], then=HELDOUT_RECORDED[what], tuning_now=tuning[what],
        tuning_then=TUNING_RECORDED[what])


def test_rules_accept_no_wrong_heldout_answer_with_a_judge():
    errors = rule_errors(load_calibration(HELDOUT), True)
    assert errors["false_accepts"] == 0, errors["false_accept_ids"]


def rate_cell(k: int, n: int) -> str:
    """A count as README.md and docs/grading.md write it: 'k of n (p%, low-high%)', Wilson 95%."""
    low, high = wilson_interval(k, n)
    return f"{k} of {n} ({100 * k / n:.1f}%, {100 * low:.1f}-{100 * high:.1f}%)"


@pytest.mark.parametrize("doc", ["README.md", os.path.join("docs", "grading.md")])
def test_the_docs_quote_the_rates_the_rules_make_now(doc):
    text = open(os.path.join(ROOT, doc), encoding="utf-8").read()
    assert f"rules `{RULES_SHA256[:12]}`" in text, f"{doc} quotes rates of other rules: measure them again"
    for path in (HELDOUT, TUNING[0]):
        items = load_calibration(path)
        overall = calibration_rates(items, rules_verdicts(items))["overall"]
        row = next(line for line in text.splitlines() if line.startswith(f"| `{os.path.relpath(path, ROOT)}`"))
        assert rate_cell(overall["false_accepts"], overall["known_wrong"]) in row, (doc, row)
        assert rate_cell(overall["false_rejects"], overall["known_right"]) in row, (doc, row)
