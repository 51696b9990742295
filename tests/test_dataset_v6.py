"""The sixth version of the bundled dataset (data/cases-v6.jsonl, data/dev-v6.jsonl), the default:
version 5's cases, with the words questions are asked in said as often in turns that answer
nothing. Valid and sized as documented; every per-kind test and check of versions 3 to 5 holds on
it (collected here so that they read this module's fixtures); the question asides state nothing a
question asks and are drawn alike for evidence and the rest; a question's words come up in many
more turns that answer nothing than on version 5; the files of versions 1 to 5 are the published
ones, byte for byte. Offline and fast."""
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
import cases_v5 as v5  # noqa: E402
import cases_v6 as v6  # noqa: E402
import make_cases  # noqa: E402
from conftest import made_in_other_processes  # noqa: E402
import phrases_v6  # noqa: E402
from config import load_config  # noqa: E402
from dataset import load_dataset  # noqa: E402
import vocabulary  # noqa: E402
# Versions 3's, 4's and 5's tests, run on this module's `bundled`, `dev` and `fixture` (pytest
# resolves a fixture from the module a test is collected in).
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
from test_dataset_v4 import (  # noqa: E402,F401
    test_answer_turns_are_long_as_every_statement_is, test_the_services_questions_name_come_up_in_short_turns_that_answer_nothing)
from test_dataset_v5 import (  # noqa: E402,F401
    test_coreference_asks_by_what_was_done_to_the_service_never_by_its_name,
    test_every_questions_evidence_fits_the_default_budget_as_the_oracle_is_given_it,
    test_the_generators_count_of_the_evidence_is_never_below_the_oracles)
from test_dataset_v5 import PUBLISHED as PUBLISHED_BEFORE_5  # noqa: E402

CASES = os.path.join(ROOT, "data", "cases-v6.jsonl")
DEV = os.path.join(ROOT, "data", "dev-v6.jsonl")
CONFIG = os.path.join(ROOT, "config.yaml")
# Pinned so that an accidental regeneration or edit shows up in review.
EXPECTED_TYPES = {"single_hop": 84, "multi_hop": 126, "temporal": 42, "knowledge_update": 41,
                  "abstention": 70, "preference": 15}
# The files results were published on: a later version must leave them as they are.
PUBLISHED = {**PUBLISHED_BEFORE_5,
             "cases-v5.jsonl": "9224aebc2d55100e360ee6303c1bcb7ad1370e2bc6f1af7f46ede009e6c6aa97",
             "dev-v5.jsonl": "96ffe96d493cde11bed3ffeb6dc00e0dfbca8dec012b1ec782d9076af9d02a6b"}
WORD = re.compile(r"\w+")
SERVICE = re.compile(r"[a-z]+-\d+")


@pytest.fixture(scope="module")
def bundled() -> list[dict]:
    return load_dataset(CASES)


@pytest.fixture(scope="module")
def dev() -> list[dict]:
    return load_dataset(DEV)


@pytest.fixture(scope="module")
def fixture() -> list[dict]:
    """Eight cases made in memory with a seed of their own: eight questions of each kind."""
    return v6.make_split_v6(8, seed=4243, dev=False)


def question_words(question: str) -> set[str]:
    """A question's lower-cased words, without the service it names (its name and number)."""
    words = set(WORD.findall(question.lower()))
    for name in SERVICE.findall(question.lower()):
        words -= set(name.split("-"))
    return words


def echoing_turns(cases: list[dict], shared: int) -> float:
    """Per answerable question, how many turns that are not its evidence share at least `shared`
    of its words (its service's name left out), on average."""
    counts = []
    for case in cases:
        turn_words = [(t["turn_id"], set(WORD.findall(t["text"].lower())))
                      for s in case["sessions"] for t in s["turns"]]
        for q in case["questions"]:
            if q["evidence"]:
                asked = question_words(q["question"])
                counts.append(sum(1 for tid, ws in turn_words
                                  if tid not in q["evidence"] and len(asked & ws) >= shared))
    return sum(counts) / len(counts)


def test_the_files_validate_and_every_kind_has_at_least_40_questions(bundled: list[dict], dev: list[dict]) -> None:
    kinds = Counter(q["meta"]["kind"] for c in bundled for q in c["questions"])
    assert set(kinds) == set(v3.KINDS) and min(kinds.values()) >= 40 and sum(kinds.values()) >= 300
    assert dict(Counter(q["type"] for c in bundled for q in c["questions"])) == EXPECTED_TYPES
    assert set(Counter(q["meta"]["kind"] for c in dev for q in c["questions"])) == set(v3.KINDS)
    ids = {c["case_id"] for c in bundled}
    assert not ids & {c["case_id"] for c in dev}
    assert not ids & {c["case_id"] for c in load_dataset(os.path.join(ROOT, "data", "cases-v5.jsonl"))}
    assert {c["meta"]["generator"] for c in bundled + dev} == {v6.GENERATOR}


def test_version_6_is_the_default_dataset_and_its_budget_is_the_generators() -> None:
    cfg = load_config(CONFIG)
    assert cfg["dataset"] == CASES
    assert cfg["context_token_budget"] == v5.EVIDENCE_BUDGET and cfg["tokenizer"] == "approx"


def test_the_published_versions_are_unchanged() -> None:
    for name, digest in PUBLISHED.items():
        with open(os.path.join(ROOT, "data", name), "rb") as fh:
            assert hashlib.sha256(fh.read()).hexdigest() == digest, name


def test_the_question_asides_state_nothing_a_question_asks() -> None:
    # They name no service, region, cluster or person and hold no number; none uses the words a
    # counted night page or a rollout order is found by.
    regions = set(vocabulary.REGIONS)
    for aside in phrases_v6.QUESTION_ASIDES:
        assert not SERVICE.search(aside) and not re.search(r"\d|\{", aside), aside
        assert not any(r in aside for r in regions), aside
        assert not re.search(r"\b(page|paged|woke|woken|night|first to move)\b", aside, re.I), aside


def test_the_question_asides_are_as_common_on_evidence_as_on_other_statements(bundled: list[dict]) -> None:
    # Drawn with the same odds after every statement: an aside in a question's words must not
    # tell a reader where the evidence is.
    share = {True: [], False: []}
    for case in bundled:
        cited = {e for q in case["questions"] for e in q["evidence"]}
        for s in case["sessions"]:
            for t in s["turns"]:
                if len(WORD.findall(t["text"])) > 20:  # statements; the short turns carry no aside
                    share[t["turn_id"] in cited].append(any(a in t["text"] for a in phrases_v6.QUESTION_ASIDES))
    rates = {k: sum(v) / len(v) for k, v in share.items()}
    assert abs(rates[True] - rates[False]) < 0.08, rates


def test_a_questions_words_come_up_in_more_turns_that_answer_nothing_than_on_version_5(bundled: list[dict]) -> None:
    # What version 6 changes: counting the words a turn shares with the question no longer finds
    # the fact, because many turns that answer nothing share as many.
    version_5 = load_dataset(os.path.join(ROOT, "data", "cases-v5.jsonl"))
    assert echoing_turns(bundled, 4) > 1.5 * echoing_turns(version_5, 4)


def test_the_generator_is_deterministic_and_differs_from_version_5() -> None:
    # The same cases in this process and in two others with other string-hash salts.
    made = v6.make_split_v6(1, seed=12, dev=True)
    assert made_in_other_processes("cases_v6", "cases_v6.make_split_v6(1, seed=12, dev=True)") == {
        make_cases.render(made)}
    assert made[0]["sessions"] != v5.make_split_v5(1, seed=12, dev=True)[0]["sessions"]
