"""The fourth version of the bundled dataset (data/cases-v4.jsonl, data/dev-v4.jsonl): version 3's
cases with long statements and short mentions. Valid and sized as documented; every per-kind
test and check of version 3 holds on a small version 4 split made in memory (the tests are
version 3's, collected here so that they read this module's fixtures); the answer turn is long as
every statement is, and the services questions name come up in short turns that answer nothing;
the files of versions 1 to 3 are the published ones, byte for byte. Offline and fast."""
from __future__ import annotations

import hashlib
import os
import re
import sys
from collections import Counter

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "data"))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import cases_v3 as v3  # noqa: E402
import cases_v4 as v4  # noqa: E402
import make_cases  # noqa: E402
from conftest import made_in_other_processes  # noqa: E402
from dataset import load_dataset  # noqa: E402
# Version 3's tests, run on this module's `bundled` and `fixture` (pytest resolves a fixture from
# the module a test is collected in).
from test_dataset_v3 import (  # noqa: E402,F401
    test_a_random_ten_turns_hold_evidence_rarely_on_every_kind, test_aggregation_counts_or_orders_three_or_four_turns_and_filler_never_adds_to_a_count,
    test_answer_evidence_marks_the_turns_that_hold_the_answer, test_coreference_states_the_value_of_a_service_named_only_the_turn_before,
    test_every_bundled_case_passes_the_generators_checks, test_forgetting_marks_the_retracted_turn,
    test_near_duplicates_have_a_twin_stating_another_value, test_near_misses_ask_about_something_never_said_beside_something_said,
    test_openers_and_asides_are_as_common_on_evidence_as_elsewhere, test_paraphrase_answer_shares_no_content_word_with_the_question,
    test_plausible_guesses_stay_under_the_none_limits, test_split_facts_need_turns_from_two_sessions,
    test_the_check_refuses_a_count_that_filler_could_raise, test_the_check_refuses_a_wrong_gold_of_every_answerable_kind,
    test_the_check_refuses_answer_evidence_outside_the_evidence, test_the_newest_ten_turns_rarely_hold_evidence,
    test_time_golds_are_computed_from_the_sessions_date_not_stated, test_update_chains_mark_every_older_value)

CASES = os.path.join(ROOT, "data", "cases-v4.jsonl")
DEV = os.path.join(ROOT, "data", "dev-v4.jsonl")
# Pinned so that an accidental regeneration or edit shows up in review.
EXPECTED_TYPES = {"single_hop": 84, "multi_hop": 126, "temporal": 42, "knowledge_update": 49,
                  "abstention": 70, "preference": 7}
# The files results were published on: a later version must leave them as they are.
PUBLISHED = {
    "cases.jsonl": "35b25d9f6357c44680d3af9ee82ae98b0fcfaa0e9c634b547b7e6fce9d4abce4",
    "dev.jsonl": "20dcb64361e6e351ed7f3696f2d4b3cfd7fc12a85d692d423a72cbd6158e93a0",
    "cases-v2.jsonl": "3cfc243fa7092735e54540dd4a2766bc0d2dd70886106a089c2f354dce076ae6",
    "dev-v2.jsonl": "4aefa0ce2d1757038d0fa1faa10a7520162f66867d79f9addde9fc99ef61f3da",
    "cases-v3.jsonl": "1368574b21ae5043be7457af77b8710ee6f9785d57ffddd67824fcfaa8d7b768",
    "dev-v3.jsonl": "17d84afc0d3e0f4f134bae9f50e070c3f34740d77f86106b663ab1ebedb6a54b",
}
WORD = re.compile(r"\w+")
SHORT = 8  # words: a mention is no longer, and few statements are


@pytest.fixture(scope="module")
def bundled() -> list[dict]:
    return load_dataset(CASES)


@pytest.fixture(scope="module")
def fixture() -> list[dict]:
    """Eight cases made in memory with a seed of their own: eight questions of each kind."""
    return v4.make_split_v4(8, seed=4243, dev=False)


def words(text: str) -> int:
    return len(WORD.findall(text))


def test_the_files_validate_and_every_kind_has_at_least_40_questions(bundled: list[dict]) -> None:
    dev = load_dataset(DEV)
    kinds = Counter(q["meta"]["kind"] for c in bundled for q in c["questions"])
    assert set(kinds) == set(v3.KINDS) and min(kinds.values()) >= 40 and sum(kinds.values()) >= 300
    assert dict(Counter(q["type"] for c in bundled for q in c["questions"])) == EXPECTED_TYPES
    assert set(Counter(q["meta"]["kind"] for c in dev for q in c["questions"])) == set(v3.KINDS)
    ids = {c["case_id"] for c in bundled}
    assert not ids & {c["case_id"] for c in dev}
    assert not ids & {c["case_id"] for c in load_dataset(os.path.join(ROOT, "data", "cases-v3.jsonl"))}
    assert {c["meta"]["generator"] for c in bundled + dev} == {v4.GENERATOR}


def test_the_published_versions_are_unchanged() -> None:
    for name, digest in PUBLISHED.items():
        with open(os.path.join(ROOT, "data", name), "rb") as fh:
            assert hashlib.sha256(fh.read()).hexdigest() == digest, name


def test_answer_turns_are_long_as_every_statement_is(bundled: list[dict]) -> None:
    # Real chat's answer turns are longer than the rest (LoCoMo: 37 words against 23); here
    # because statements are long, so evidence is no longer than the statements around it.
    cited, statements, rest = [], [], []
    for case in bundled:
        ev = {e for q in case["questions"] for e in q["evidence"]}
        for s in case["sessions"]:
            for t in s["turns"]:
                n = words(t["text"])
                (cited if t["turn_id"] in ev else statements if n > SHORT else rest).append(n)
    mean = lambda v: sum(v) / len(v)  # noqa: E731
    assert mean(cited) > 1.4 * mean(statements + rest)
    assert abs(mean(cited) - mean(statements)) < 0.1 * mean(statements)


def test_the_services_questions_name_come_up_in_short_turns_that_answer_nothing(bundled: list[dict]) -> None:
    found = []
    for case in bundled:
        texts = {t["turn_id"]: t["text"] for s in case["sessions"] for t in s["turns"]}
        for q in case["questions"]:
            svc = next((k for k in q["meta"]["keywords"] if re.fullmatch(r"[a-z]+-\d+", k)), None)
            if q["evidence"] and svc:
                found.append(any(v3.names(t, svc) and words(t) <= SHORT for tid, t in texts.items()
                                 if tid not in q["evidence"]))
    assert len(found) >= 100 and sum(found) / len(found) > 0.5


def test_the_generator_is_deterministic_and_differs_from_version_3() -> None:
    # The same cases in this process and in two others with other string-hash salts.
    made = v4.make_split_v4(1, seed=12, dev=True)
    assert made_in_other_processes("cases_v4", "cases_v4.make_split_v4(1, seed=12, dev=True)") == {
        make_cases.render(made)}
    assert made[0]["sessions"] != v3.make_split_v3(1, seed=12, dev=True)[0]["sessions"]
