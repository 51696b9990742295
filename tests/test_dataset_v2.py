"""The second version of the bundled dataset (data/cases-v2.jsonl, data/dev-v2.jsonl): valid,
sized as documented, and each of its nine kinds of question built as data/README.md says. The
per-kind tests run on a small split generated in memory, so they test the generator itself;
the file tests pin what is bundled. Offline and fast."""
from __future__ import annotations

import copy
import os
import re
import sys
from collections import Counter
from datetime import date, datetime, timedelta

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "data"))

import cases_v2  # noqa: E402
import make_cases  # noqa: E402
from conftest import made_in_other_processes  # noqa: E402
from cases_v1 import WORD  # noqa: E402
from phrases_v1 import IDK  # noqa: E402
from vocabulary import month_day  # noqa: E402
from dataset import load_dataset  # noqa: E402

CASES = os.path.join(ROOT, "data", "cases-v2.jsonl")
DEV = os.path.join(ROOT, "data", "dev-v2.jsonl")
# Pinned so that an accidental regeneration or edit shows up in review.
EXPECTED_TYPES = {"single_hop": 84, "multi_hop": 126, "temporal": 42, "knowledge_update": 42,
                  "abstention": 72, "preference": 12}


@pytest.fixture(scope="module")
def bundled() -> list[dict]:
    return load_dataset(CASES)


@pytest.fixture(scope="module")
def fixture() -> list[dict]:
    """Six cases made in memory with a seed of their own: six questions of each kind."""
    return cases_v2.make_split_v2(6, seed=4242, dev=False)


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
    assert set(kinds) == set(cases_v2.V2_KINDS) and min(kinds.values()) >= 40
    assert sum(kinds.values()) >= 300
    assert dict(Counter(q["type"] for c in bundled for q in c["questions"])) == EXPECTED_TYPES
    assert set(Counter(q["meta"]["kind"] for c in dev for q in c["questions"])) == set(cases_v2.V2_KINDS)
    assert not {c["case_id"] for c in bundled} & {c["case_id"] for c in dev}


def test_every_bundled_case_passes_the_generators_checks(bundled: list[dict]) -> None:
    assert [p for c in bundled for p in cases_v2.check_case_v2(c)] == []


def test_histories_are_long_and_mostly_unrelated_work(bundled: list[dict]) -> None:
    for case in bundled:
        ids = turns(case)
        cited = {e for q in case["questions"] for e in q["evidence"] + q["meta"].get("superseded_evidence", [])}
        assert 14 <= len(case["sessions"]) <= 20 and len(ids) >= 200, case["case_id"]
        assert len(cited) < 0.15 * len(ids), case["case_id"]
        # A 270-token window of the newest turns sees a small part of the history.
        assert sum(len(t["text"]) // 4 for t in ids.values()) > 10 * 270, case["case_id"]


def test_plausible_guesses_stay_under_the_none_limits(bundled: list[dict]) -> None:
    rates = cases_v2.guess_rate(bundled)
    assert all(rate <= cases_v2.guess_max(t) for t, rate in rates.items()), rates
    answerable = [q for c in bundled for q in c["questions"] if q["type"] != "abstention"]
    overall = sum(rates[q["type"]] for q in answerable) / len(answerable)
    assert overall <= 0.10, overall


# -- one test per kind, on the fixture -----------------------------------------------------------

def test_paraphrase_evidence_shares_no_content_word_with_the_question(fixture: list[dict]) -> None:
    for case, q in questions(fixture, "paraphrase"):
        ids = turns(case)
        svc, gold = q["meta"]["keywords"]
        answer_turn = next(ids[e]["text"] for e in q["evidence"] if gold in ids[e]["text"])
        drop = set(WORD.findall(f"{svc} {q['meta']['ref']} {gold}".lower()))
        asked = cases_v2.unframe(q["question"])
        assert not cases_v2.content_stems(answer_turn, drop) & cases_v2.content_stems(asked, drop), q["qid"]
        if q["meta"]["ref"] != svc:  # named by its nickname: the nickname's turn is evidence too
            assert len(q["evidence"]) == 2 and q["meta"]["ref"] not in answer_turn


def test_coreference_states_the_value_of_a_service_named_only_a_turn_before(fixture: list[dict]) -> None:
    for case, q in questions(fixture, "coreference"):
        ids = turns(case)
        named, value = q["evidence"]
        assert q["meta"]["antecedent"] in ids[named]["text"]
        assert q["meta"]["antecedent"] not in ids[value]["text"] and q["gold_answer"] in ids[value]["text"]
        assert session_of(named) == session_of(value) and named < value


def test_split_facts_need_turns_from_two_sessions(fixture: list[dict]) -> None:
    ops = set()
    for case, q in questions(fixture, "split"):
        ids = turns(case)
        first, second = (ids[e]["text"] for e in q["evidence"])
        assert session_of(q["evidence"][0]) < session_of(q["evidence"][1]), q["qid"]
        derivation = q["meta"]["derivation"]
        ops.add(derivation["op"])
        if derivation["op"] != "join" or len(derivation["parts"]) == 2:
            # Neither turn states the answer; each states a part of it.
            assert not cases_v2._states(first, q["gold_answer"]) and not cases_v2._states(second, q["gold_answer"])
        if derivation["op"] == "sum":
            assert cases_v2._states(first, str(derivation["values"][0]))
            assert cases_v2._states(second, str(derivation["values"][1]))
        elif derivation["op"] == "join" and len(derivation["parts"]) == 2:
            assert derivation["parts"][0] in first and derivation["parts"][1] in second
        elif derivation["op"] == "join":  # the service's squad, then the squad's lead
            svc = re.findall(r"[a-z]+-[a-z0-9]+", cases_v2.unframe(q["question"]))[0]
            assert svc in first and svc not in second and q["gold_answer"] in second
    assert len(ops) >= 2


def test_aggregation_counts_or_orders_turns_from_three_sessions_or_more(fixture: list[dict]) -> None:
    for case, q in questions(fixture, "aggregation"):
        derivation = q["meta"]["derivation"]
        assert len({session_of(e) for e in q["evidence"]}) >= 3, q["qid"]
        if derivation["op"] == "count":
            assert q["gold_answer"] == str(len(q["evidence"]))
        else:
            assert q["gold_answer"] in derivation["sequence"] and len(derivation["sequence"]) == len(q["evidence"])


def test_time_golds_are_computed_from_the_sessions_date_not_stated(fixture: list[dict]) -> None:
    seen = set()
    for case, q in questions(fixture, "time"):
        ids = turns(case)
        assert not any(cases_v2._states(ids[e]["text"], q["gold_answer"]) for e in q["evidence"]), q["qid"]
        derivation = q["meta"]["derivation"]
        seen.add(derivation.get("phrase", "").split(" ")[0] or derivation["op"])
        if derivation["op"] == "relative_date":
            said_on = date.fromisoformat(derivation["session_date"])
            others = [ids[e]["text"] for e in q["evidence"][1:]]
            assert month_day(cases_v2.resolve_relative(derivation["phrase"], said_on, others)) == q["gold_answer"]
    assert len(seen) >= 3  # several kinds of relative date and durations in six questions


def test_update_chains_are_three_deep_or_more_and_older_values_are_marked(fixture: list[dict]) -> None:
    for case, q in questions(fixture, "update_chain"):
        meta = q["meta"]
        assert len(meta["superseded_evidence"]) >= 2 and meta["depth"] >= 3
        assert all(session_of(e) < session_of(q["evidence"][0]) for e in meta["superseded_evidence"])
        assert q["gold_answer"] not in meta["outdated_answers"] and meta["outdated_answers"]


def test_near_duplicates_have_a_twin_stating_another_value(fixture: list[dict]) -> None:
    for case, q in questions(fixture, "near_duplicate"):
        ids = turns(case)
        twin, other = q["meta"]["twin"], q["meta"]["distractor_answers"][0]
        assert other != q["gold_answer"]
        assert any(twin in t["text"] and other in t["text"] for tid, t in ids.items() if tid not in q["evidence"])


def test_near_misses_ask_about_something_never_said_beside_something_said(fixture: list[dict]) -> None:
    for case, q in questions(fixture, "near_miss"):
        texts = [t["text"] for t in turns(case).values()]
        assert q["gold_answer"] == IDK and q["evidence"] == []
        assert not any(all(cases_v2._states(t, w) for w in q["meta"]["never_said"]) for t in texts)
        assert any(all(cases_v2._states(t, w) for w in q["meta"]["near_miss"]) for t in texts)


def test_forgetting_marks_the_retracted_turn_for_staleness_and_contradiction(fixture: list[dict],
                                                                               bundled: list[dict]) -> None:
    """On the fixture and the first bundled cases: the fixture's six forgetting questions are all
    retractions, and a correction (an owner corrected, answerable) must be seen too."""
    seen = set()
    for case, q in questions(fixture + bundled[:6], "forgetting"):
        seen.add(q["type"])
        ids = turns(case)
        meta = q["meta"]
        (retracted,) = meta["superseded_evidence"]
        assert ids[retracted]["meta"] == {"retracted_by": meta["retraction"]}
        assert session_of(retracted) < session_of(meta["retraction"])
        assert any(cases_v2._states(ids[retracted]["text"], o) for o in meta["outdated_answers"])
        assert q["gold_answer"] == IDK if q["type"] == "abstention" else q["evidence"] == [meta["retraction"]]
    assert seen == {"abstention", "knowledge_update"}


# -- the check can fail ------------------------------------------------------------------------

@pytest.mark.parametrize("spoil, message", [
    (lambda q: q.update(evidence=q["evidence"][:0] + ["nowhere-s1t1"]), "is not in the case"),
    (lambda q: q.update(gold_answer="zz-404"), "not stated by its evidence"),
    (lambda q: q["meta"].update(keywords=["no-such-word"]), "keywords do not co-occur"),
])
def test_the_check_names_a_spoiled_question(fixture: list[dict], spoil, message: str) -> None:
    case = copy.deepcopy(fixture[0])
    q = next(q for q in case["questions"] if q["meta"]["kind"] == "paraphrase")
    spoil(q)
    assert any(message in p and q["qid"] in p for p in cases_v2.check_case_v2(case))


def wrong_gold(q: dict) -> str:
    """A wrong gold a careless edit could leave: the next count or date, another service of the
    same sequence, the value an update replaced; else a value nothing states."""
    derivation, gold = q["meta"].get("derivation"), q["gold_answer"]  # derivation: computed golds only
    op = derivation["op"] if derivation else None
    if op == "order":
        return next(s for s in derivation["sequence"] if s != gold)
    if op in ("count", "sum"):
        return str(int(gold) + 1)
    if op == "days_between":
        return f"{int(gold.split()[0]) + 1} days"
    if op in ("relative_date", "date_plus"):
        return month_day(datetime.strptime(f"{gold} 2024", "%B %d %Y").date() + timedelta(days=1))
    if q["meta"].get("outdated_answers"):
        return q["meta"]["outdated_answers"][0]
    return "zz-404"


@pytest.mark.parametrize("kind", [k for k in cases_v2.V2_KINDS if k != "near_miss"])
def test_the_check_refuses_a_wrong_gold_of_every_kind(fixture: list[dict], bundled: list[dict], kind: str) -> None:
    """Every answerable question of the kind, in the fixture and the first bundled cases (the
    fixture's forgetting questions are all retractions, which have no gold to get wrong)."""
    spoiled = 0
    for case in fixture + bundled[:6]:
        for q in case["questions"]:
            if q["meta"]["kind"] != kind or q["type"] == "abstention":
                continue
            bad = copy.deepcopy(case)
            target = next(b for b in bad["questions"] if b["qid"] == q["qid"])
            target["gold_answer"] = wrong_gold(q)
            assert any(q["qid"] in p for p in cases_v2.check_case_v2(bad)), (q["qid"], target["gold_answer"])
            spoiled += 1
    assert spoiled


def test_the_check_refuses_a_near_miss_that_was_said(fixture: list[dict]) -> None:
    case = copy.deepcopy(fixture[0])
    q = next(q for q in case["questions"] if q["meta"]["kind"] == "near_miss")
    q["meta"]["never_said"] = q["meta"]["near_miss"]
    assert any("so this is no near miss" in p and q["qid"] in p for p in cases_v2.check_case_v2(case))


def test_the_check_refuses_a_distractor_equal_to_the_gold_and_an_unmarked_retraction(fixture: list[dict]) -> None:
    case = copy.deepcopy(fixture[0])
    twin = next(q for q in case["questions"] if q["meta"]["kind"] == "near_duplicate")
    twin["meta"]["distractor_answers"] = [twin["gold_answer"]]
    forgot = next(q for q in case["questions"] if q["meta"]["kind"] == "forgetting")
    for s in case["sessions"]:
        for t in s["turns"]:
            t.pop("meta", None)
    problems = cases_v2.check_case_v2(case)
    assert any("is the gold" in p and twin["qid"] in p for p in problems)
    assert any("is not marked retracted_by" in p and forgot["qid"] in p for p in problems)


def test_the_check_refuses_an_order_question_with_an_unknown_pick(fixture: list[dict], bundled: list[dict]) -> None:
    # An order question asks for the first, the last, or the one after a named one; any other
    # pick is a generator bug, not a question to read as "after".
    case = next(c for c in fixture + bundled if any(q["meta"].get("derivation", {}).get("op") == "order"
                                                   for q in c["questions"]))
    case = copy.deepcopy(case)
    q = next(q for q in case["questions"] if q["meta"].get("derivation", {}).get("op") == "order")
    assert cases_v2.check_case_v2(case) == []
    q["meta"]["derivation"]["pick"] = "middle"
    with pytest.raises(ValueError, match=f"{q['qid']}: unknown order pick 'middle'; expected first, last or after"):
        cases_v2.check_case_v2(case)


def test_the_generator_refuses_to_write_a_case_its_checks_refuse(monkeypatch) -> None:
    monkeypatch.setattr(cases_v2, "check_case_v2", lambda case: ["hd001q1 (paraphrase): spoiled"])
    with pytest.raises(RuntimeError, match="hd001: the generator made a case its own checks refuse: hd001q1"):
        cases_v2.make_split_v2(1, seed=99, dev=False)


def test_the_generator_is_deterministic() -> None:
    # The same text in this process and in two others with other string-hash salts.
    assert made_in_other_processes("cases_v2", "cases_v2.make_split_v2(2, seed=99, dev=True)") == {
        make_cases.render(cases_v2.make_split_v2(2, seed=99, dev=True))}
