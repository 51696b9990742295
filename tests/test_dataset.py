"""The bundled dataset (data/cases.jsonl, data/dev.jsonl): valid, sized as documented, and
authored to the conventions in data/README.md. Offline and fast: reads two files and reruns
the seeded generator in memory."""
from __future__ import annotations

import os
import re
import sys
import unicodedata

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "data"))

from contract import QUESTION_TYPES  # noqa: E402
from dataset import load_dataset  # noqa: E402

CASES = os.path.join(ROOT, "data", "cases.jsonl")
DEV = os.path.join(ROOT, "data", "dev.jsonl")
# Pinned so that an accidental regeneration or edit shows up in review.
EXPECTED_TEST_COUNTS = {"single_hop": 41, "multi_hop": 40, "temporal": 41,
                        "knowledge_update": 40, "abstention": 40, "preference": 40}
EXPECTED_TEST_CASES = 46
LONG_CASE_TOKENS = 3000  # approx tokens (len // 4) of turn text; the default budget is 1200


def _norm(text: str) -> list[str]:
    """Case-folded word tokens, punctuation dropped (a simple form of the grader's rule)."""
    s = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"[^\w\s]|_", " ", s).split()


def _contains(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))


def _approx_tokens(case: dict) -> int:
    return sum(len(t["text"]) // 4 for s in case["sessions"] for t in s["turns"])


@pytest.fixture(scope="module")
def test_cases() -> list[dict]:
    return load_dataset(CASES)


@pytest.fixture(scope="module")
def dev_cases() -> list[dict]:
    return load_dataset(DEV)


def test_both_files_pass_the_validator(test_cases: list[dict], dev_cases: list[dict]) -> None:
    assert test_cases and dev_cases


def test_test_set_counts_are_pinned(test_cases: list[dict]) -> None:
    counts = {t: 0 for t in QUESTION_TYPES}
    for case in test_cases:
        for q in case["questions"]:
            counts[q["type"]] += 1
    assert len(test_cases) == EXPECTED_TEST_CASES
    assert {t: n for t, n in counts.items() if n} == EXPECTED_TEST_COUNTS
    assert sum(counts.values()) >= 200
    assert all(n >= 25 for n in EXPECTED_TEST_COUNTS.values())


def test_sessions_per_case_in_range(test_cases: list[dict], dev_cases: list[dict]) -> None:
    for case in test_cases + dev_cases:
        assert 3 <= len(case["sessions"]) <= 12, case["case_id"]


def test_dev_set_is_separate(test_cases: list[dict], dev_cases: list[dict]) -> None:
    assert len(dev_cases) >= 10
    assert not {c["case_id"] for c in test_cases} & {c["case_id"] for c in dev_cases}
    test_qids = {q["qid"] for c in test_cases for q in c["questions"]}
    assert not test_qids & {q["qid"] for c in dev_cases for q in c["questions"]}
    # Different story facts: the named things that are gold answers (services, clusters,
    # people) never overlap. Preference options are a shared closed set, so they are left out.
    import phrases_v1
    options = {gold for pref in phrases_v1.PREFS for _, gold in pref[1]}

    def names(cases: list[dict]) -> set:
        return {w for c in cases for s in c["sessions"] for t in s["turns"]
                for w in re.findall(r"\b[a-z]+-[a-z0-9]+\b|\b[A-Z][a-z]+ [A-Z][a-z]+\b", t["text"])
                if w in {q["gold_answer"] for q in c["questions"]} and w not in options}
    assert not names(test_cases) & names(dev_cases)


def test_knowledge_updates_are_annotated(test_cases: list[dict], dev_cases: list[dict]) -> None:
    for case in test_cases + dev_cases:
        turn_ids = {t["turn_id"] for s in case["sessions"] for t in s["turns"]}
        for q in case["questions"]:
            if q["type"] != "knowledge_update":
                continue
            meta = q["meta"]
            assert meta["superseded_evidence"], q["qid"]
            assert set(meta["superseded_evidence"]) <= turn_ids, q["qid"]
            assert not set(meta["superseded_evidence"]) & set(q["evidence"]), q["qid"]
            assert meta["outdated_answers"] and q["gold_answer"] not in meta["outdated_answers"]


def test_long_cases_exceed_the_context_budget(test_cases: list[dict]) -> None:
    long_cases = [c for c in test_cases if _approx_tokens(c) > LONG_CASE_TOKENS]
    assert len(long_cases) >= 0.25 * len(test_cases)


def test_gold_answer_not_in_its_question(test_cases: list[dict], dev_cases: list[dict]) -> None:
    for case in test_cases + dev_cases:
        for q in case["questions"]:
            if q["type"] != "abstention":
                assert not _contains(_norm(q["question"]), _norm(q["gold_answer"])), q["qid"]


def test_abstentions_have_no_evidence(test_cases: list[dict], dev_cases: list[dict]) -> None:
    for case in test_cases + dev_cases:
        for q in case["questions"]:
            if q["type"] == "abstention":
                assert q["gold_answer"] == "I don't know" and q["evidence"] == [], q["qid"]
            else:
                assert q["evidence"], q["qid"]


def test_stated_golds_appear_in_evidence(test_cases: list[dict], dev_cases: list[dict]) -> None:
    # Non-computed golds are stated verbatim, so an oracle given the evidence can match them.
    for case in test_cases + dev_cases:
        texts = {t["turn_id"]: t["text"] for s in case["sessions"] for t in s["turns"]}
        for q in case["questions"]:
            if q["type"] in ("single_hop", "multi_hop", "knowledge_update", "preference"):
                evidence = _norm(" ".join(texts[e] for e in q["evidence"]))
                assert _contains(evidence, _norm(q["gold_answer"])), q["qid"]


def test_keywords_cooccur_in_an_evidence_turn(test_cases: list[dict], dev_cases: list[dict]) -> None:
    for case in test_cases + dev_cases:
        texts = {t["turn_id"]: t["text"].lower() for s in case["sessions"] for t in s["turns"]}
        for q in case["questions"]:
            keywords = [k.lower() for k in q["meta"]["keywords"]]
            if q["type"] == "abstention":
                assert keywords == []
            else:
                assert keywords and any(all(k in texts[e] for k in keywords) for e in q["evidence"])


def test_asked_after_last_session(test_cases: list[dict], dev_cases: list[dict]) -> None:
    from dataset import parse_time
    for case in test_cases + dev_cases:
        last = parse_time(case["sessions"][-1]["timestamp"])
        for q in case["questions"]:
            assert parse_time(q["asked_at"]) > last, q["qid"]


def test_files_match_the_seeded_generator() -> None:
    import make_cases
    assert make_cases.main(["--check"]) == 0


def test_the_version_1_checks_name_each_broken_convention_and_the_generator_refuses_such_a_case(
        test_cases: list[dict], monkeypatch) -> None:
    # Returned and raised, not asserted, so that `python -O data/make_cases.py --check` runs them.
    import cases_v1
    case = test_cases[0]
    assert cases_v1.check_case(case) == []
    q = next(q for q in case["questions"] if q["type"] != "abstention")
    spoiled = {**case, "questions": [{**q, "question": f"{q['question']} Is it {q['gold_answer']}?",
                                      "meta": {**q["meta"], "keywords": ["no-such-keyword"]}}]}
    problems = cases_v1.check_case(spoiled)
    assert problems == [f"{q['qid']}: the gold {q['gold_answer']!r} is in the question",
                        f"{q['qid']}: no evidence turn holds all its keywords ['no-such-keyword']"]
    monkeypatch.setattr(cases_v1, "check_case", lambda case: [f"{case['case_id']}q1: spoiled"])
    with pytest.raises(RuntimeError, match="mb001: the generator made a case its own checks refuse: mb001q1: spoiled"):
        cases_v1.make_split(1, seed=7, dev=False)
