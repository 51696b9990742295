"""The deterministic grading layers: numbers, dates, punctuation, Unicode (Cyrillic included),
abstention both ways, hedged answers, and the judge's strict JSON parsing."""
from __future__ import annotations

import pytest

from grading import deterministic, normalize, parse_verdict, rubric_for


def rec(gold: str, answer: str, qtype: str = "single_hop", meta: dict | None = None) -> dict:
    return {"gold_answer": gold, "answer": answer, "type": qtype, "meta": meta or {}}


@pytest.mark.parametrize("gold, answer, layer", [
    ("Postgres 16", "postgres 16.", "exact"),
    ("Postgres 16", "  POSTGRES   16 ", "exact"),
    ("Mira Okafor", "The job is owned by Mira Okafor.", "contains"),
    ("quartz-7", "It runs on quartz 7", "contains"),
    ("3 days", "It took three days.", "contains"),
    ("2 weeks", "The freeze lasts two weeks", "contains"),
    ("June 22", "The freeze ends on June 22nd, 2026.", "contains"),
    ("June 22", "It ends 2026-06-22.", "contains"),
    ("June 22", "It ends on 22 June.", "contains"),
    ("1,000 requests", "about 1000 requests", "contains"),
    ("ё-кластер", "Сервис живёт на е-кластер", "contains"),
    ("Мира Окафор", "Владелец — Мира Окафор.", "contains"),
    ("22 июня", "Заморозка закончится 22 июня 2026 года", "contains"),
    ("ｆｕｌｌ-width 16", "full width 16", "exact"),
])
def test_correct_by_rule(gold, answer, layer):
    assert deterministic(rec(gold, answer)) == ("correct", layer)


@pytest.mark.parametrize("gold, answer", [
    ("Postgres 16", "Postgres 14"),
    ("Postgres 16", "Postgres 164"),           # token boundaries, not substrings
    ("June 22", "June 2"),
    ("16", "It is 2016"),
])
def test_wrong_facts_are_not_correct_by_rule(gold, answer):
    assert deterministic(rec(gold, answer)) is None


@pytest.mark.parametrize("answer", [
    "Either Postgres 14 or Postgres 16.",
    "Maybe Postgres 16",
    "It is not Postgres 16",
    "Возможно, Postgres 16",
])
def test_hedged_or_negated_answers_are_left_undecided(answer):
    assert deterministic(rec("Postgres 16", answer)) is None


def test_answer_naming_the_outdated_value_too_is_undecided():
    meta = {"outdated_answers": ["Postgres 14"]}
    assert deterministic(rec("Postgres 16", "Postgres 14, later Postgres 16", "knowledge_update", meta)) is None
    assert deterministic(rec("Postgres 16", "It runs Postgres 16", "knowledge_update", meta)) == ("correct", "contains")


@pytest.mark.parametrize("answer", ["I don't know", "I do not know.", "The memories do not mention Redis.",
                                    "That was never mentioned.", "There is no information about it.",
                                    "Не знаю", "Об этом нет информации."])
def test_abstention_declining_is_correct(answer):
    assert deterministic(rec("I don't know", answer, "abstention")) in (("correct", "abstention"), ("correct", "exact"))


def test_abstention_with_a_made_up_fact_is_not_correct():
    assert deterministic(rec("I don't know", "Redis 7.2", "abstention")) is None


@pytest.mark.parametrize("answer", ["I don't know", "The memories do not say.", "Не знаю."])
def test_declining_a_factual_question_is_incorrect(answer):
    assert deterministic(rec("Postgres 16", answer)) == ("incorrect", "declined")


def test_normalize_dates_numbers_and_unicode():
    assert normalize("June 22nd, 2026") == normalize("2026-06-22") == "2026 m06 d22"
    assert normalize("Ёлка, ТРИ!") == "елка три"
    assert normalize("Twenty-one days") == normalize("twenty one days") == "21 days"
    assert normalize("20 1") == "20 1"  # digits are left as written
    assert "may" in normalize("It may rain").split()  # the modal verb is not a month


def test_parse_verdict_is_strict():
    assert parse_verdict('{"verdict": "correct"}') == "correct"
    assert parse_verdict('```json\n{"verdict": "incorrect"}\n```') == "incorrect"
    for raw in ("correct", '{"verdict": "yes"}', "[1]", '{"verdict": "correct"} extra'):
        assert parse_verdict(raw) == "unparseable"


def test_rubrics_follow_the_source_benchmark():
    assert rubric_for({"type": "temporal", "meta": {"source": "longmemeval", "source_type": "temporal-reasoning"}}) == "lme_temporal"
    assert rubric_for({"type": "abstention", "meta": {"source": "longmemeval", "abstention": True}}) == "unanswerable"
    assert rubric_for({"type": "adversarial", "meta": {"source": "locomo", "category": 5}}) == "unanswerable"
    assert rubric_for({"type": "preference", "meta": {"source": "longmemeval", "source_type": "single-session-preference"}}) == "lme_preference"
    assert rubric_for({"type": "single_hop", "meta": {}}) == "default"
    # A preference rubric is not a string to match: no rule decides it.
    assert deterministic({"gold_answer": "x", "answer": "x", "type": "preference",
                          "meta": {"source": "longmemeval", "source_type": "single-session-preference"}}) is None
