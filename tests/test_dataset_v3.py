"""The third version of the bundled dataset (data/cases-v3.jsonl, data/dev-v3.jsonl): valid, sized
as documented, its evidence a random pick among turns that look like the rest, and each of its
nine kinds built as data/README.md says. The per-kind tests run on a small split generated in
memory, so they test the generator itself; the file tests pin what is bundled. Offline and fast."""
from __future__ import annotations

import copy
import math
import os
import re
import sys
from collections import Counter
from datetime import date

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "data"))

import cases_v3 as v3  # noqa: E402
import make_cases  # noqa: E402
from conftest import made_in_other_processes  # noqa: E402
import phrases_v3  # noqa: E402
from dataset import load_dataset  # noqa: E402

CASES = os.path.join(ROOT, "data", "cases-v3.jsonl")
DEV = os.path.join(ROOT, "data", "dev-v3.jsonl")
# Pinned so that an accidental regeneration or edit shows up in review.
EXPECTED_TYPES = {"single_hop": 84, "multi_hop": 126, "temporal": 42, "knowledge_update": 43,
                  "abstention": 67, "preference": 16}


@pytest.fixture(scope="module")
def bundled() -> list[dict]:
    return load_dataset(CASES)


@pytest.fixture(scope="module")
def fixture() -> list[dict]:
    """Eight cases made in memory with a seed of their own: eight questions of each kind."""
    return v3.make_split_v3(8, seed=4243, dev=False)


def questions(cases: list[dict], kind: str) -> list[tuple[dict, dict]]:
    return [(c, q) for c in cases for q in c["questions"] if q["meta"]["kind"] == kind]


def turns(case: dict) -> dict:
    return {t["turn_id"]: t for s in case["sessions"] for t in s["turns"]}


def session_of(turn_id: str) -> int:
    return int(re.search(r"-s(\d+)t", turn_id).group(1))


# -- the bundled files ---------------------------------------------------------------------------

def test_the_files_validate_and_every_kind_has_at_least_40_questions(bundled: list[dict]) -> None:
    dev = load_dataset(DEV)
    kinds = Counter(q["meta"]["kind"] for c in bundled for q in c["questions"])
    assert set(kinds) == set(v3.KINDS) and min(kinds.values()) >= 40 and sum(kinds.values()) >= 300
    assert dict(Counter(q["type"] for c in bundled for q in c["questions"])) == EXPECTED_TYPES
    assert set(Counter(q["meta"]["kind"] for c in dev for q in c["questions"])) == set(v3.KINDS)
    assert not {c["case_id"] for c in bundled} & {c["case_id"] for c in dev}


def test_every_bundled_case_passes_the_generators_checks(bundled: list[dict]) -> None:
    assert [p for c in bundled for p in v3.check_case_v3(c)] == []


def test_answer_evidence_marks_the_turns_that_hold_the_answer(bundled: list[dict]) -> None:
    for case in bundled:
        for q in case["questions"]:
            if q["evidence"]:
                assert q["meta"]["answer_evidence"] and set(q["meta"]["answer_evidence"]) <= set(q["evidence"])
            else:
                assert "answer_evidence" not in q["meta"]


def test_a_random_ten_turns_hold_evidence_rarely_on_every_kind(bundled: list[dict]) -> None:
    # The expected share of questions whose evidence ten random turns of the case touch.
    per: dict = {}
    for case in bundled:
        n = sum(len(s["turns"]) for s in case["sessions"])
        for q in case["questions"]:
            if q["evidence"]:
                m = len(q["evidence"])
                per.setdefault(q["meta"]["kind"], []).append(1 - math.comb(n - m, 10) / math.comb(n, 10))
    assert max(sum(v) / len(v) for v in per.values()) < 0.10, per


def test_the_newest_ten_turns_rarely_hold_evidence(bundled: list[dict]) -> None:
    per: dict = {}
    for case in bundled:
        newest = set([t["turn_id"] for s in case["sessions"] for t in s["turns"]][-10:])
        for q in case["questions"]:
            if q["evidence"]:
                per.setdefault(q["meta"]["kind"], []).append(bool(newest & set(q["evidence"])))
    assert max(sum(v) / len(v) for v in per.values()) <= 0.10, per


def test_openers_and_asides_are_as_common_on_evidence_as_elsewhere(bundled: list[dict]) -> None:
    # A stock opener that mostly precedes facts would tell a reader where the evidence is.
    openers = tuple(o.strip().capitalize() for o in phrases_v3.OPENERS if o)
    share = {True: [], False: []}
    for case in bundled:
        cited = {e for q in case["questions"] for e in q["evidence"]}
        for t in turns(case).values():
            share[t["turn_id"] in cited].append(t["text"].startswith(openers))
    rates = {k: sum(v) / len(v) for k, v in share.items()}
    assert abs(rates[True] - rates[False]) < 0.08, rates


def test_plausible_guesses_stay_under_the_none_limits(bundled: list[dict]) -> None:
    rates = v3.guess_rate(bundled)
    assert all(rate <= v3.NONE_MAX.get(t, v3.NONE_MAX["default"]) for t, rate in rates.items()), rates


def test_the_generators_none_limits_are_check_pys() -> None:
    from config import CHECK_DEFAULTS, limit_for
    for qtype in ("single_hop", "multi_hop", "temporal", "knowledge_update", "preference"):
        assert v3.NONE_MAX.get(qtype, v3.NONE_MAX["default"]) == limit_for(CHECK_DEFAULTS, "none_max", qtype)


def test_the_generator_imports_no_stage_script() -> None:
    for name in ("cases_v3.py", "phrases_v3.py", "vocabulary.py"):
        text = open(os.path.join(ROOT, "data", name), encoding="utf-8").read()
        assert not re.search(r"^\s*(from|import) (check|run|score|judge)\b", text, re.M), name


# -- one test per kind, on the fixture -----------------------------------------------------------

def test_paraphrase_answer_shares_no_content_word_with_the_question(fixture: list[dict]) -> None:
    for case, q in questions(fixture, "paraphrase"):
        ids = turns(case)
        (answer,) = q["meta"]["answer_evidence"]
        said = {w[:5] for w in re.findall(r"\w+", ids[answer]["text"].lower())}
        assert not v3.content(q["question"], q["meta"]["ref"]) & said, q["qid"]
        if q["meta"]["ref"].startswith("the "):  # a nickname, defined in a bridge turn
            assert len(q["evidence"]) == 2 and answer == q["evidence"][1]


def test_coreference_states_the_value_of_a_service_named_only_the_turn_before(fixture: list[dict]) -> None:
    for case, q in questions(fixture, "coreference"):
        ids = turns(case)
        named, value = q["evidence"]
        assert q["meta"]["answer_evidence"] == [value]
        assert q["meta"]["antecedent"] in ids[named]["text"]
        assert q["meta"]["antecedent"] not in ids[value]["text"] and q["gold_answer"] in ids[value]["text"]
        assert session_of(named) == session_of(value)


def test_split_facts_need_turns_from_two_sessions(fixture: list[dict]) -> None:
    for case, q in questions(fixture, "split"):
        assert len(q["evidence"]) == 2 and session_of(q["evidence"][0]) != session_of(q["evidence"][1]), q["qid"]
        derivation = q["meta"].get("derivation")
        if derivation is None:  # the service follows a squad: the lead's turn holds the answer
            assert q["meta"]["answer_evidence"] == [q["evidence"][1]]
        elif derivation["op"] == "date_plus":  # the last frozen day, not the first day after it
            assert derivation["days"] == derivation["length_days"] - 1


def test_aggregation_counts_or_orders_three_or_four_turns_and_filler_never_adds_to_a_count(
        fixture: list[dict]) -> None:
    for case, q in questions(fixture, "aggregation"):
        derivation = q["meta"]["derivation"]
        assert 3 <= len(q["evidence"]) <= 4 and len({session_of(e) for e in q["evidence"]}) == len(q["evidence"])
        if derivation["op"] == "count":
            svc = q["meta"]["keywords"][0]
            paging = [tid for tid, t in turns(case).items() if v3.names(t["text"], svc)
                      and re.search(r"pag|woke", t["text"])]
            assert sorted(paging) == sorted(q["evidence"]) and q["gold_answer"] == str(len(paging))


def test_time_golds_are_computed_from_the_sessions_date_not_stated(fixture: list[dict]) -> None:
    for case, q in questions(fixture, "time"):
        ids = turns(case)
        assert not any(v3.states(ids[e]["text"], q["gold_answer"]) for e in q["evidence"]), q["qid"]
        derivation = q["meta"]["derivation"]
        if derivation["op"] == "relative_date":
            said_on = date.fromisoformat(derivation["session_date"])
            assert v3.month_day(v3.relative_date(derivation["phrase"], said_on)) == q["gold_answer"]


def test_update_chains_mark_every_older_value(fixture: list[dict]) -> None:
    for case, q in questions(fixture, "update_chain"):
        meta = q["meta"]
        assert meta["superseded_evidence"] and meta["outdated_answers"] and meta["depth"] >= 2
        assert all(session_of(e) < session_of(q["evidence"][0]) for e in meta["superseded_evidence"])
        assert q["gold_answer"] not in meta["outdated_answers"]


def test_near_duplicates_have_a_twin_stating_another_value(fixture: list[dict]) -> None:
    for case, q in questions(fixture, "near_duplicate"):
        ids = turns(case)
        (other,) = q["meta"]["distractor_answers"]
        assert any(v3.states(t["text"], other) for tid, t in ids.items() if tid not in q["evidence"])


def test_near_misses_ask_about_something_never_said_beside_something_said(fixture: list[dict]) -> None:
    for case, q in questions(fixture, "near_miss"):
        assert q["gold_answer"] == v3.IDK and q["evidence"] == []
        assert q["meta"]["near_miss"] and q["meta"]["never_said"]


def test_forgetting_marks_the_retracted_turn(fixture: list[dict]) -> None:
    for case, q in questions(fixture, "forgetting"):
        ids = turns(case)
        for e in q["meta"]["superseded_evidence"]:
            assert ids[e]["meta"]["retracted_by"] == q["meta"]["retraction"]


# -- the checks refuse what they should ----------------------------------------------------------

@pytest.mark.parametrize("kind", v3.KINDS[:7])
def test_the_check_refuses_a_wrong_gold_of_every_answerable_kind(fixture: list[dict], kind: str) -> None:
    case = copy.deepcopy(next(c for c, q in questions(fixture, kind) if q["type"] != "abstention"))
    q = next(q for q in case["questions"] if q["meta"]["kind"] == kind)
    q["gold_answer"] = "zz-nowhere-9"
    assert any(p.startswith(q["qid"]) for p in v3.check_case_v3(case))


def test_the_check_refuses_a_count_that_filler_could_raise(bundled: list[dict]) -> None:
    assert {q["meta"]["derivation"]["op"] for _, q in questions(bundled, "aggregation")} == {"count", "order"}
    case, q = next((c, q) for c, q in questions(bundled, "aggregation") if q["meta"]["derivation"]["op"] == "count")
    case = copy.deepcopy(case)
    svc = q["meta"]["keywords"][0]
    case["sessions"][0]["turns"].append({"turn_id": f"{case['case_id']}-s1t999", "role": "user",
                                         "text": f"{svc} had a noisy alert overnight that paged someone."})
    assert any("counted event" in p for p in v3.check_case_v3(case))


def test_the_check_refuses_answer_evidence_outside_the_evidence(fixture: list[dict]) -> None:
    case = copy.deepcopy(fixture[0])
    q = next(q for q in case["questions"] if q["evidence"])
    q["meta"]["answer_evidence"] = [case["sessions"][0]["turns"][0]["turn_id"]]
    assert any("answer_evidence" in p for p in v3.check_case_v3(case))


def test_the_generator_is_deterministic() -> None:
    # The same cases in this process and in two others with other string-hash salts.
    assert made_in_other_processes("cases_v3", "cases_v3.make_split_v3(2, seed=12, dev=True)") == {
        make_cases.render(v3.make_split_v3(2, seed=12, dev=True))}
