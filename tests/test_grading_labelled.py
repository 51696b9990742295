"""The rule layer on labelled answers (tests/data/rule_labels.jsonl, written by hand: answers a
rule could wrongly decide, such as a near-miss value, a hedge or a decline, and their relatives;
part of the tuning set): rules never call a known-wrong answer correct, with or without an LLM
judge. Run with -s to see the counts."""
from __future__ import annotations

import os

import pytest

from fileio import read_jsonl
from grading import decide
from labelled import rule_errors
from rules import deterministic

LABELLED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "rule_labels.jsonl")


def labelled() -> list[dict]:
    return [obj for _, obj in read_jsonl(LABELLED)]


def test_labelled_set_has_both_labels_unique_ids_and_a_reason_for_each():
    items = labelled()
    assert len(items) >= 60
    assert {i["label"] for i in items} == {"correct", "incorrect"}
    assert len({i["id"] for i in items}) == len(items)
    assert all(i["why"].strip() for i in items)


@pytest.mark.parametrize("with_judge", [False, True])
def test_rules_never_accept_a_known_wrong_answer(with_judge):
    errors = rule_errors(labelled(), with_judge)
    print(f"\nrule layer {'with' if with_judge else 'without'} a judge on {errors['n']} labelled answers: "
          f"{errors['false_accepts']} false accepts, {errors['false_rejects']} false rejects "
          f"{errors['false_reject_ids']}, {errors['undecided']} left to the judge")
    assert errors["false_accepts"] == 0, errors["false_accept_ids"]


def test_with_a_judge_the_rules_decide_only_equality_and_declines_and_reject_nothing_right():
    items = labelled()
    decided = [deterministic(i, with_judge=True) for i in items]
    assert {d[1] for d in decided if d is not None} == {"exact", "declined"}
    assert all(d[0] == "incorrect" for d in decided if d is not None and d[1] == "declined")
    assert rule_errors(items, with_judge=True)["false_rejects"] == 0


def test_rule_errors_counts_a_hand_made_fixture():
    def item(id_: str, answer: str, label: str) -> dict:
        return {"id": id_, "question": "Which Postgres version does billing run?", "type": "single_hop",
                "gold_answer": "Postgres 16", "meta": {}, "answer": answer, "label": label}
    items = [
        item("a", "postgres 16", "incorrect"),          # mislabelled on purpose: exact -> a false accept
        item("b", "I don't know.", "correct"),          # mislabelled: `declined` -> a false reject, judge or not
        item("c", "Mira", "correct"),                   # no rule decides: no_match (incorrect) without a judge
        item("d", "It runs Postgres 16", "correct"),    # `contains` without a judge, the judge's with one
    ]
    without, judged = rule_errors(items, with_judge=False), rule_errors(items, with_judge=True)
    assert {k: without[k] for k in ("n", "undecided", "false_accepts", "false_rejects", "known_wrong", "known_right")} \
        == {"n": 4, "undecided": 0, "false_accepts": 1, "false_rejects": 2, "known_wrong": 1, "known_right": 3}
    assert (without["false_accept_ids"], without["false_reject_ids"]) == (["a"], ["b", "c"])
    # With a judge, c and d are the judge's: the rules' count is over a and b alone.
    assert {k: judged[k] for k in ("n", "undecided", "false_accepts", "false_rejects")} \
        == {"n": 2, "undecided": 2, "false_accepts": 1, "false_rejects": 1}
    assert (judged["false_accept_ids"], judged["false_reject_ids"]) == (["a"], ["b"])


def test_decide_is_the_rules_then_no_match_without_a_judge_and_leaves_the_rest_to_one():
    record = {"question": "Which Postgres version does billing run?", "type": "single_hop",
              "gold_answer": "Postgres 16", "meta": {}, "answer": "Mira"}
    assert decide(record, with_judge=False) == ("incorrect", "no_match")
    assert decide(record, with_judge=True) is None
    assert decide({**record, "answer": "Postgres 16"}, with_judge=True) == ("correct", "exact")
