"""The deterministic grading layers: numbers, dates, punctuation, Unicode (Cyrillic included),
abstention both ways, hedged answers, and the judge's strict JSON parsing."""
from __future__ import annotations

import pytest

import grading
from grading import deterministic, normalize, parse_verdict, rubric_for


def rec(gold: str, answer: str, qtype: str = "single_hop", meta: dict | None = None,
        question: str = "Which one is it?") -> dict:
    return {"question": question, "gold_answer": gold, "answer": answer, "type": qtype, "meta": meta or {}}


def rules_only(record: dict) -> tuple[str, str] | None:
    return deterministic(record, with_judge=False)


FREEZE = "When does the billing release freeze end?"


# Before the gold, `contains` allows only filler, openings ("it runs on") and the question's own
# words, so each answer here comes with the question it answers.
@pytest.mark.parametrize("gold, answer, layer, question", [
    ("Postgres 16", "postgres 16.", "exact", "Which one is it?"),
    ("Postgres 16", "  POSTGRES   16 ", "exact", "Which one is it?"),
    ("Mira Okafor", "The job is owned by Mira Okafor.", "contains", "Who owns the ledger-sync job?"),
    ("quartz-7", "It runs on quartz 7", "contains", "Which one is it?"),
    ("3 days", "It took three days.", "contains", "Which one is it?"),
    ("2 weeks", "The freeze lasts two weeks", "contains", "How long does the release freeze last?"),
    ("June 22", "The freeze ends on June 22nd, 2026.", "contains", FREEZE),
    ("June 22", "It ends 2026-06-22.", "contains", FREEZE),
    ("June 22", "It ends on 22 June.", "contains", FREEZE),
    ("1,000 requests", "1000 requests per second", "contains", "How many requests per second does it allow?"),
    ("ё-кластер", "Сервис живёт на е-кластер", "contains", "На каком кластере живёт сервис?"),
    ("Мира Окафор", "Владелец — Мира Окафор.", "contains", "Кто владелец ledger-sync?"),
    ("22 июня", "Это 22 июня 2026 года", "contains", "Когда закончится заморозка?"),
    ("ｆｕｌｌ-width 16", "full width 16", "exact", "Which one is it?"),
])
def test_correct_by_rule(gold, answer, layer, question):
    assert rules_only(rec(gold, answer, question=question)) == ("correct", layer)


@pytest.mark.parametrize("gold, answer", [
    ("Postgres 16", "Postgres 14"),
    ("Postgres 16", "Postgres 164"),           # token boundaries, not substrings
    ("June 22", "June 2"),
    ("16", "It is 2016"),
])
def test_wrong_facts_are_not_correct_by_rule(gold, answer):
    assert rules_only(rec(gold, answer)) is None


POSTGRES = "Which Postgres version does billing run on?"


# The review of the rules-only grading: each of these was correct by `contains`. Another value
# before the gold, a change away from it or towards it, a list, an approximation.
@pytest.mark.parametrize("gold, answer, question", [
    ("Postgres 16", "Billing runs on MySQL; reporting runs on Postgres 16", POSTGRES),
    ("Postgres 16", "Cassandra and Postgres 16", POSTGRES),
    ("Postgres 16", "They stopped using Postgres 16", POSTGRES),
    ("Postgres 16", "Billing moved off Postgres 16", POSTGRES),
    ("Postgres 16", "They plan to move to Postgres 16", POSTGRES),
    ("Postgres 16", "Billing used to run on Postgres 16", POSTGRES),
    ("Postgres 16", "Billing also runs Postgres 16", POSTGRES),
    ("Go", "Rust and Go", "Which language does the user want code examples in?"),
    ("Redis", "Valkey, Redis", "Which cache does billing use?"),
    ("Tariq Mbeki", "Mira Okafor, Tariq Mbeki", "Who took over ledger-sync from Mira Okafor?"),
    ("16", "about 16 days", "How many days did the migration take?"),
    ("16", "It took around 16 days.", "How many days did the migration take?"),
    ("16", "roughly 16 days", "How many days did the migration take?"),
    ("16", "~16 days", "How many days did the migration take?"),
    ("1,000 requests", "about 1000 requests", "How many requests per second does it allow?"),
])
def test_another_value_a_change_or_an_approximation_around_the_gold_is_not_correct_by_rule(gold, answer, question):
    assert rules_only(rec(gold, answer, question=question)) is None


@pytest.mark.parametrize("answer", [
    "Either Postgres 14 or Postgres 16.",
    "Maybe Postgres 16",
    "It is not Postgres 16",
    "Возможно, Postgres 16",
])
def test_hedged_or_negated_answers_are_left_undecided(answer):
    assert rules_only(rec("Postgres 16", answer)) is None


def test_answer_naming_the_outdated_value_too_is_undecided():
    meta = {"outdated_answers": ["Postgres 14"]}
    assert rules_only(rec("Postgres 16", "Postgres 14, later Postgres 16", "knowledge_update", meta)) is None
    assert rules_only(rec("Postgres 16", "It runs Postgres 16", "knowledge_update", meta)) == ("correct", "contains")


@pytest.mark.parametrize("answer", ["I don't know", "I do not know.", "The memories do not mention Redis.",
                                    "That was never mentioned.", "There is no information about it.",
                                    "Не знаю", "Об этом нет информации."])
def test_abstention_declining_is_correct(answer):
    record = rec("I don't know", answer, "abstention", question="Which Redis version does billing use?")
    assert rules_only(record) in (("correct", "abstention"), ("correct", "exact"))


def test_abstention_with_a_made_up_fact_is_not_correct():
    assert rules_only(rec("I don't know", "Redis 7.2", "abstention")) is None


@pytest.mark.parametrize("answer", ["I don't know", "The memories do not say.", "Не знаю."])
def test_declining_a_factual_question_is_incorrect(answer):
    assert rules_only(rec("Postgres 16", answer)) == ("incorrect", "declined")


def test_normalize_dates_numbers_and_unicode():
    assert normalize("June 22nd, 2026") == normalize("2026-06-22") == "2026 m06 d22"
    assert normalize("Ёлка, ТРИ!") == "елка три"
    assert normalize("Twenty-one days") == normalize("twenty one days") == "21 days"
    assert normalize("20 1") == "20 1"  # digits are left as written
    assert normalize("-5, 16 %, 1.5 and 3/7; Kafka 3.7.1") == "-5 16% 1.5 and 3 7 kafka 3.7.1"
    assert normalize("pike-6, 3-5 days, 16GB") == "pike 6 3 5 days 16gb"  # a hyphen after a word is no sign
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
    pref = {"question": "q", "gold_answer": "x", "answer": "x", "type": "preference",
            "meta": {"source": "longmemeval", "source_type": "single-session-preference"}}
    assert deterministic(pref, with_judge=False) is None and deterministic(pref, with_judge=True) is None


# Issue "One comparison you can trust", "Rules decide only what is beyond doubt": each of these
# was decided wrongly by the rules before, with or without a judge.

@pytest.mark.parametrize("with_judge", [False, True])
def test_abstention_followed_by_a_guess_is_not_correct(with_judge):
    record = rec("I don't know", "I don't know. Probably Redis 7.", "abstention",
                 question="Which Redis version does billing use?")
    assert deterministic(record, with_judge) is None


@pytest.mark.parametrize("with_judge", [False, True])
def test_decline_that_goes_on_to_give_the_value_is_left_to_the_judge(with_judge):
    record = rec("Postgres 16", "I don't know the exact minor version, but it's Postgres 16",
                 question="Which Postgres version does billing run?")
    assert deterministic(record, with_judge) is None


@pytest.mark.parametrize("gold, answer", [
    ("Kafka 3.7", "Kafka 3.7.1"),
    ("Kafka 3.7", "It runs Kafka 3.7.1 now."),
    ("ledger-sync", "It is ledger-sync-v2."),
    ("16", "about 16.5"),
    ("ledger", "ledger-backfill caused it"),
    ("7", "version 3.7"),
])
@pytest.mark.parametrize("with_judge", [False, True])
def test_gold_extended_into_another_value_is_not_contained(gold, answer, with_judge):
    assert deterministic(rec(gold, answer), with_judge) is None


def test_gold_followed_by_a_full_stop_is_still_contained():
    assert rules_only(rec("Kafka 3.7", "It runs Kafka 3.7.")) == ("correct", "contains")


def test_no_idea_is_a_decline_and_never_the_gold_no():
    record = rec("No", "No idea.", question="Was the incident ticket filed?")
    assert rules_only(record) == ("incorrect", "declined")
    assert deterministic(record, with_judge=True) is None


@pytest.mark.parametrize("gold, answer", [
    ("4", "12 vegetarian and 4 vegan, so 16"),
    ("4", "4 vegan guests, 16 in total"),
    ("Mira Okafor", "Mira Okafor, then Tariq Mbeki"),
    ("Mira Okafor", "Tariq Mbeki took over from Mira Okafor"),
    ("pike-6", "pike-6 before the move to clough-3"),
])
@pytest.mark.parametrize("with_judge", [False, True])
def test_gold_stated_on_the_way_to_another_value_is_not_correct(gold, answer, with_judge):
    record = rec(gold, answer, question="How many guests are vegan, and who owns the job on which cluster?")
    assert deterministic(record, with_judge) is None


@pytest.mark.parametrize("gold, answer, qtype, expected", [
    ("Postgres 16", "postgres 16.", "single_hop", ("correct", "exact")),
    ("3 days", "Three days", "temporal", ("correct", "exact")),
    ("I don't know", "I don't know.", "abstention", ("correct", "exact")),
    ("I don't know", "The memories never mention which Redis version billing uses.", "abstention",
     ("correct", "abstention")),
    ("I don't know", "Об этом нет информации.", "abstention", ("correct", "abstention")),
    ("Mira Okafor", "The job is owned by Mira Okafor.", "single_hop", None),
    ("June 22", "It ends on June 22nd, 2026.", "temporal", None),
    ("Postgres 16", "I don't know.", "single_hop", None),
    ("I don't know", "Redis 7.2", "abstention", None),
])
def test_with_a_judge_rules_decide_only_exact_matches_and_pure_abstentions(gold, answer, qtype, expected):
    record = rec(gold, answer, qtype, question="Which Redis version does billing use?")
    assert deterministic(record, with_judge=True) == expected


def test_rule_set_hash_changes_when_a_table_entry_changes(monkeypatch):
    assert grading.rules_sha256() == grading.RULES_SHA256  # recomputing is stable
    monkeypatch.setattr(grading, "HEDGES", grading.HEDGES | {"allegedly"})
    assert grading.rules_sha256() != grading.RULES_SHA256


def test_rule_set_hash_changes_when_a_rule_function_changes(monkeypatch):
    def deterministic(record: dict, with_judge: bool) -> tuple[str, str] | None:
        return "correct", "exact"
    monkeypatch.setattr(grading, "deterministic", deterministic)
    assert grading.rules_sha256() != grading.RULES_SHA256


def test_a_shift_word_from_the_question_is_framing_but_a_hedge_from_it_is_still_a_hedge():
    after = rec("7 days", "7 days after the outage.", "temporal",
                question="How many days after the loam-store outage did the permanent fix ship?")
    assert rules_only(after) == ("correct", "contains")
    either = rec("report-fanout", "blob-gc or report-fanout",
                 question="Which job or component was behind the zephyr-push incident?")
    assert rules_only(either) is None


def test_rule_set_hash_covers_every_function_and_table_deterministic_uses():
    import inspect
    import types

    def names_used(fn) -> set[str]:
        names, codes = set(), [fn.__code__]
        while codes:
            code = codes.pop()
            names |= set(code.co_names)
            codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
        return names

    functions, tables, todo = set(), set(), ["deterministic"]
    while todo:
        name = todo.pop()
        functions.add(name)
        for used in names_used(inspect.unwrap(getattr(grading, name))):
            value = inspect.unwrap(getattr(grading, used, None))  # a cached rule is still a rule
            if isinstance(value, types.FunctionType) and value.__module__ == "grading" and used not in functions:
                todo.append(used)
            elif used.isupper() and not isinstance(value, types.ModuleType):
                tables.add(used)
    assert functions <= set(grading.RULE_FUNCTIONS)
    assert tables <= set(grading.RULE_TABLES)
    assert {"normalize", "_contains_gold", "pure_abstention"} <= functions and {"HEDGES", "DECLINES"} <= tables
