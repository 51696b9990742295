"""Answer metrics shared with score.py: exact match and token F1 under the metric normalization
of the official evaluations, held to the numbers the official code computes on a fixture of
answers to real LoCoMo questions (tests/official_metrics.py says which files, at which commits,
and how) and to hand-computed examples; the LoCoMo category of a record; the Porter stemmer
LoCoMo's F1 runs; and whether an answer states a given value (on the verdict normalization)."""
from __future__ import annotations

import json
import math
import os

import pytest

from conftest import ROOT, SHARED
from normalization import exact_match, locomo_category, metric_normalize, porter_stem, token_f1
from official_metrics import fixture_rows
from rules import states_value
from test_importers import shared

FIXTURE = os.path.join(ROOT, "tests", "data", "metric_fixture.jsonl")


def test_em_and_f1_equal_the_official_evaluations_on_the_fixture():
    # Numbers written by tests/official_metrics.py from the official code: LoCoMo's
    # task_eval/evaluation.py (snap-research/locomo, commit 92286325a40764bee61f77824ddb95233b11c4d6)
    # and SQuAD's evaluate-v2.0.py (rajpurkar/SQuAD-explorer, commit
    # eee5fdbf62f8613a7812b03419e6b29617b74fd1).
    with open(shared(os.path.join(SHARED, "locomo", "locomo10.json")), encoding="utf-8") as fh:
        rows = {(r["sample_id"], r["qa_index"], r["answer_index"]): r for r in fixture_rows(json.load(fh))}
    with open(FIXTURE, encoding="utf-8") as fh:
        expected = [json.loads(line) for line in fh]
    assert len(expected) == 2 * len(rows) and {e["metric"] for e in expected} == {"locomo", "squad"}
    assert {e["category"] for e in expected if e["metric"] == "locomo"} == {1, 2, 3, 4, 5}
    differ = []
    for e in expected:
        r = rows[(e["sample_id"], e["qa_index"], e["answer_index"])]
        category = e["category"] if e["metric"] == "locomo" else None
        em, f1 = exact_match(r["gold"], r["answer"], category), token_f1(r["gold"], r["answer"], category)
        if em != e["em"] or not math.isclose(f1, e["f1"], abs_tol=1e-12):
            differ.append((e["metric"], category, r["gold"], r["answer"], (e["em"], e["f1"]), (em, f1)))
    assert differ == []
    # The fixture tells the metrics apart: neither all right nor all wrong, with partial F1s.
    assert 0 < sum(e["em"] for e in expected) < len(expected)
    assert sum(0 < e["f1"] < 1 for e in expected) > 50


@pytest.mark.parametrize("gold, answer, em, f1", [
    ("The Beatles", "Beatles", True, 1.0),              # articles removed
    ("Postgres 16", "postgres 16.", True, 1.0),         # case and punctuation
    # [postgres, 16] vs [it, runs, postgres, 16]: 2 shared, P = 2/4, R = 2/2, F1 = 2/3
    ("Postgres 16", "It runs Postgres 16", False, 2 / 3),
    # [mira, okafor] vs [mira, oyelaran]: 1 shared, P = R = 1/2
    ("Mira Okafor", "Mira Oyelaran", False, 0.5),
    # multisets: gold {cat: 1, dog: 2}, answer {cat: 2, dog: 1}: 1 + 1 shared, P = R = 2/3
    ("dog cat dog", "cat dog cat", False, 2 / 3),
    ("three days", "3 days", False, 0.5),               # SQuAD writes no number one way
    ("-5", "5", True, 1.0),                             # ... and drops the sign with the punctuation
    ("Kafka 3.7", "Kafka 3.7.1", False, 0.5),           # [kafka, 37] vs [kafka, 371]
    ("Мира Окафор", "МИРА ОКАФОР", True, 1.0),
    ("Postgres 16", "", False, 0.0),
    ("the", "a", True, 1.0),                            # both empty once articles go: they agree
])
def test_squad_em_and_f1_match_hand_computed_values(gold, answer, em, f1):
    assert exact_match(gold, answer) is em
    assert token_f1(gold, answer) == pytest.approx(f1)


def test_locomo_rules_by_category_against_hand_computed_values():
    # Category 2 and 4: F1 over Porter stems, commas and "and" removed; EM on token sets.
    assert token_f1("Adoption agencies", "adoption agency", 4) == 1.0    # agenc / agenc
    assert exact_match("love, faith, and strength", "strength faith love", 4) is True
    # [7, may, 2023] vs [on, 7, may]: 2 shared, P = 2/3, R = 2/3
    assert token_f1("7 May 2023", "on 7 May", 2) == pytest.approx(2 / 3)
    # Category 1: each comma-separated part of the gold takes its best part of the answer,
    # averaged: beach 1, mountains 1 (mountain), forest 0.
    assert token_f1("beach, mountains, forest", "mountain, beach", 1) == pytest.approx(2 / 3)
    # Category 3: the gold up to its first ';'.
    assert exact_match("Likely no; since this one went badly", "likely no", 3) is True
    assert token_f1("Likely no; since this one went badly", "likely no", 3) == 1.0
    # Category 5: the phrases alone, for EM and F1.
    for answer, score in (("It is not mentioned.", 1.0), ("No information available", 1.0), ("I don't know", 0.0)):
        assert token_f1("Not mentioned in the conversation", answer, 5) == score
        assert exact_match("Not mentioned in the conversation", answer, 5) is bool(score)
    assert metric_normalize("Beach, Mountains and the forest!", locomo=True) == "beach mountains forest"


def test_locomo_category_only_for_imported_locomo_questions():
    assert locomo_category({"type": "multi_hop", "meta": {"source": "locomo", "category": 1}}) == 1
    assert locomo_category({"type": "multi_hop", "meta": {"source": "longmemeval"}}) is None
    assert locomo_category({"type": "multi_hop", "meta": {}}) is None
    assert locomo_category({"type": "multi_hop"}) is None


@pytest.mark.parametrize("word, stem", [
    # Porter (1980)'s own examples, and NLTK's departures that LoCoMo's F1 runs.
    ("caresses", "caress"), ("ponies", "poni"), ("cats", "cat"), ("feed", "feed"), ("agreed", "agre"),
    ("plastered", "plaster"), ("motoring", "motor"), ("conflated", "conflat"), ("hopping", "hop"),
    ("falling", "fall"), ("filing", "file"), ("happy", "happi"), ("relational", "relat"),
    ("generalization", "gener"), ("electrical", "electr"), ("adjustment", "adjust"), ("controll", "control"),
    ("ties", "tie"), ("dying", "die"), ("skies", "sky"), ("by", "by"), ("fly", "fli"), ("say", "say"),
    ("archaeology", "archaeolog"), ("agencies", "agenc"), ("Running", "run"),
])
def test_porter_stem_matches_known_stems(word, stem):
    assert porter_stem(word) == stem


@pytest.mark.parametrize("answer, value, expected", [
    ("It still runs Postgres 14.", "Postgres 14", True),
    ("It moved from 4.24.1 to 4.25.17", "4.24.1", True),
    ("Владелец — Мира Окафор.", "Мира Окафор", True),
    ("Postgres 14.2", "Postgres 14", False),    # a longer version is another value
    ("Postgres 140", "Postgres 14", False),
    ("4.24.10 is live", "4.24.1", False),
    ("It runs on pike-6b", "pike-6", False),
    ("It is -5 degrees", "5", False),           # a negative number is another number
    ("16% of users", "16", False),
    ("It is 1.5", "5", False),
    ("It costs $400", "€400", False),           # another currency
    ("Postgres 16", "", False),
])
def test_states_value_needs_the_whole_value_on_word_boundaries(answer, value, expected):
    assert states_value(answer, value) is expected
