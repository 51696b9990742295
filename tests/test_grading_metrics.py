"""Answer metrics shared with score.py, on the grader's normalization, against hand-computed
examples: exact match, SQuAD-style token F1, and whether an answer states a given value."""
from __future__ import annotations

import pytest

from grading import exact_match, states_value, token_f1


@pytest.mark.parametrize("gold, answer, expected", [
    ("Postgres 16", "postgres 16.", True),
    ("June 22", "22 June", True),               # both are m06 d22
    ("3 days", "three days", True),
    ("Мира Окафор", "МИРА ОКАФОР", True),
    ("Postgres 16", "It is Postgres 16", False),
    ("Postgres 16", "Postgres 16.1", False),
    # A sign, a decimal point and a percent sign are part of the number: values that differ
    # stay apart, and spellings of one value still meet.
    ("-5", "5", False),
    ("16%", "16", False),
    ("1.5", "1/5", False),
    ("1.5", "15", False),
    ("1/5", "15", False),
    ("3.7", "3/7", False),
    ("1,5", "1 5", False),                      # a decimal comma, as written in Russian
    ("-5", "\u22125", True),                    # the Unicode minus sign
    ("16%", "16 %", True),
    ("Kafka 3.7", "kafka 3.7.", True),
    ("", "", False),                            # an empty gold matches nothing
])
def test_exact_match_is_equality_after_normalization(gold, answer, expected):
    assert exact_match(gold, answer) is expected


@pytest.mark.parametrize("gold, answer, expected", [
    # gold [postgres, 16], answer [it, runs, postgres, 16]: 2 shared, P = 2/4, R = 2/2, F1 = 2/3
    ("Postgres 16", "It runs Postgres 16", 2 / 3),
    # [mira, okafor] vs [mira, oyelaran]: 1 shared, P = R = 1/2, F1 = 1/2
    ("Mira Okafor", "Mira Oyelaran", 0.5),
    # multisets: gold {the: 2, cat: 1}, answer {the: 1, cat: 2}: 1 + 1 shared, P = R = 2/3
    ("the the cat", "the cat cat", 2 / 3),
    ("three days", "3 days", 1.0),              # the grader's normalization applies
    # [kafka, 3.7] vs [kafka, 3.7.1]: a version is one word, so 1 shared, P = R = 1/2
    ("Kafka 3.7", "Kafka 3.7.1", 0.5),
    ("Postgres 16", "Redis 7", 0.0),
    ("Postgres 16", "", 0.0),
    ("", "", 1.0),                              # SQuAD: both empty agree
])
def test_token_f1_matches_hand_computed_values(gold, answer, expected):
    assert token_f1(gold, answer) == pytest.approx(expected)


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
    ("Postgres 16", "", False),
])
def test_states_value_needs_the_whole_value_on_word_boundaries(answer, value, expected):
    assert states_value(answer, value) is expected
