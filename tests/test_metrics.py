"""The metrics vector of score.py against hand-computed fixtures, the null cases included: no
provenance, no annotations, a single repeat, a retrieval-only run."""
from __future__ import annotations

import json
import statistics

import numpy as np
import pytest

import metrics
import score
import stats
import wording
from cli import run_cli
from formats import CALIBRATION_FORMAT
from records import RULES_ONLY, run_record, verdict_for, write_comparison


def rec(backend, qid, case, answer, **fields):
    """A record with no evidence and an empty context unless fields say otherwise."""
    return run_record(backend, qid, case, answer, fields.pop("evidence", []), fields.pop("retrieved", []),
                      **fields)


def scored(tmp_path, systems: dict, baseline: str, correct=lambda r: r["answer"] == "yes", extra=()):
    runs, verdicts, cfg = write_comparison(tmp_path, systems, correct, by="no_match")
    answered = any(not r["retrieval_only"] for recs in systems.values() for r in recs)
    out = tmp_path / "scores.json"
    assert run_cli(score.main, ["--runs", *runs, *(["--verdicts", verdicts] if answered else []), "--baseline",
                                baseline, "--config", cfg, "--json", str(out), "--resamples", "400", *extra]) == 0
    s = json.loads(out.read_text())
    return s, {x["label"]: x for x in s["systems"]}


# ---------------------------------------------------------------------------------------------
# Memory failure metrics
# ---------------------------------------------------------------------------------------------

def test_staleness_is_the_share_of_context_items_superseded_by_a_newer_stored_item(tmp_path):
    a = [rec("A", "q1", "c1", "yes", type="knowledge_update", meta={"superseded_evidence": ["t1"]},
             evidence=["t9"], retrieved=["t1", "t2"]),
         rec("A", "q2", "c2", "no", type="knowledge_update", meta={"superseded_evidence": ["t5"]},
             evidence=["t9"], retrieved=["t6", "t7", "t8"]),
         rec("A", "q3", "c3", "no", evidence=["t9"], retrieved=["t1"])]  # no annotation: not counted
    _, s = scored(tmp_path, {"A": a}, "A")
    assert s["A"]["staleness"] == pytest.approx(1 / 5) and s["A"]["staleness_note"] is None


@pytest.mark.parametrize("meta, retrieved, note", [
    ({}, ["t1"], "marks no superseded evidence"),
    ({"superseded_evidence": ["t1"]}, None, "needs provenance"),
])
def test_staleness_is_null_with_a_reason(tmp_path, meta, retrieved, note):
    a = [rec("A", "q1", "c1", "yes", meta=meta, evidence=["t9"], retrieved=retrieved)]
    _, s = scored(tmp_path, {"A": a}, "A")
    assert s["A"]["staleness"] is None and note in s["A"]["staleness_note"]


def test_contradiction_counts_answers_stating_a_replaced_value_as_the_answer(tmp_path):
    a = [rec("A", "q1", "c1", "Postgres 14", gold_answer="Postgres 16", meta={"outdated_answers": ["Postgres 14"]}),
         # Naming the old value beside the current one is history, not a contradiction.
         rec("A", "q2", "c2", "It moved from 3 days to 5 days", gold_answer="5 days",
             meta={"outdated_answers": ["3 days"]}),
         rec("A", "q3", "c3", "Postgres 14", gold_answer="Postgres 16")]  # not annotated: not counted
    _, s = scored(tmp_path, {"A": a}, "A")
    assert s["A"]["contradiction"] == 0.5


def test_contradiction_is_null_without_annotations(tmp_path):
    _, s = scored(tmp_path, {"A": [rec("A", "q1", "c1", "yes")]}, "A")
    assert s["A"]["contradiction"] is None and "outdated_answers" in s["A"]["contradiction_note"]


def test_write_precision_is_the_share_of_stored_items_that_reached_a_correct_answers_context(tmp_path):
    a = [rec("A", "q1", "c1", "yes", evidence=["t1"], retrieved=["t1", "t2"], added_items=10),
         rec("A", "q2", "c1", "no", evidence=["t3"], retrieved=["t3", "t4"], added_items=10),  # wrong: not counted
         rec("A", "q3", "c2", "yes", evidence=["t1"], retrieved=["t1"], added_items=10)]  # t1 of another case
    _, s = scored(tmp_path, {"A": a}, "A")
    assert s["A"]["stored_items"] == 20 and s["A"]["write_precision"] == pytest.approx(3 / 20)


def test_write_precision_is_null_for_a_control_and_without_provenance(tmp_path):
    ctl = [rec("oracle", "q1", "c1", "yes", evidence=["t1"], retrieved=["t1"], added_items=0)]
    blind = [rec("A", "q1", "c1", "yes", evidence=["t1"], retrieved=None, added_items=10)]
    _, s = scored(tmp_path, {"oracle": ctl, "A": blind}, "A")
    assert s["oracle"]["write_precision"] is None and "stored nothing" in s["oracle"]["write_precision_note"]
    assert s["A"]["write_precision"] is None and "provenance" in s["A"]["write_precision_note"]


def test_keyword_recall_needs_no_provenance(tmp_path):
    a = [rec("A", "q1", "c1", "yes", retrieved=None, keyword_ranks=[2], hits_kept=1),  # retrieved, cut
         rec("A", "q2", "c2", "yes", retrieved=None, keyword_ranks=[1], hits_kept=3),  # in context
         rec("A", "q3", "c3", "yes", retrieved=None, keyword_ranks=[], hits_kept=3),   # not retrieved
         rec("A", "q4", "c4", "yes", retrieved=None, keyword_ranks=None)]              # no keywords
    _, s = scored(tmp_path, {"A": a}, "A")
    assert s["A"]["keyword_recall_at_k"] == pytest.approx(2 / 3)
    assert s["A"]["keyword_recall_in_context"] == pytest.approx(1 / 3) and s["A"]["keyword_recall_n"] == 3


def test_every_memory_metric_is_also_given_per_question_type(tmp_path):
    a = [rec("A", "q1", "c1", "yes", evidence=["t1"], retrieved=["t1", "t2"], keyword_ranks=[1], hits_kept=2),
         rec("A", "q2", "c1", "no", evidence=["t2"], retrieved=["t9"], keyword_ranks=[], hits_kept=1),
         rec("A", "q3", "c2", "Postgres 14", gold_answer="Postgres 16", type="knowledge_update", evidence=["t5"],
             retrieved=["t4", "t5", "t6"], context_ids=["t4", "t5"],
             meta={"superseded_evidence": ["t4"], "outdated_answers": ["Postgres 14"]}),
         rec("A", "q4", "c2", "Postgres 16", gold_answer="Postgres 16", type="knowledge_update", evidence=["t5"],
             retrieved=["t5"], meta={"superseded_evidence": ["t4"], "outdated_answers": ["Postgres 14"]})]
    _, s = scored(tmp_path, {"A": a}, "A", correct=lambda r: r["answer"] in ("yes", "Postgres 16"))
    single, update = s["A"]["by_type"]["single_hop"], s["A"]["by_type"]["knowledge_update"]
    assert (single["n"], single["accuracy"], single["recall_any_at_k"], single["recall_all_in_context"]) == (2, 0.5, 0.5, 0.5)
    assert (single["keyword_recall_at_k"], single["keyword_recall_in_context"]) == (0.5, 0.5)
    assert single["staleness"] is None and "superseded" in single["staleness_note"]
    assert single["contradiction"] is None and "outdated_answers" in single["contradiction_note"]
    assert (update["accuracy"], update["recall_any_at_k"], update["recall_all_in_context"]) == (0.5, 1.0, 1.0)
    assert update["staleness"] == pytest.approx(1 / 3)  # t4 of {t4, t5} and {t5}
    assert update["contradiction"] == 0.5 and update["keyword_recall_at_k"] is None
    assert "no question has keywords" in update["keyword_recall_note"]


def test_a_retrieval_only_run_has_recall_per_type(tmp_path):
    a = [rec("A", "q1", "c1", None, evidence=["t1"], retrieved=["t1"], retrieval_only=True, served_model=None),
         rec("A", "q2", "c2", None, evidence=["t2"], retrieved=["t3"], retrieval_only=True, served_model=None,
             type="temporal")]
    _, by = scored(tmp_path, {"A": a}, "A")
    by_type = by["A"]["by_type"]
    assert by_type["single_hop"]["recall_any_at_k"] == 1 and by_type["temporal"]["recall_any_at_k"] == 0
    assert by_type["temporal"]["accuracy"] is None and "retrieval-only" in by_type["temporal"]["accuracy_note"]


# ---------------------------------------------------------------------------------------------
# Answers: exact match, F1, failure causes
# ---------------------------------------------------------------------------------------------

def test_exact_match_and_token_f1_against_the_gold(tmp_path):
    a = [rec("A", "q1", "c1", "postgres 16.", gold_answer="Postgres 16"),          # EM 1, F1 1
         rec("A", "q2", "c2", "It runs Postgres 16", gold_answer="Postgres 16"),   # EM 0, F1 2*(2/4*1)/(2/4+1) = 2/3
         rec("A", "q3", "c3", "MySQL", gold_answer="Postgres 16")]                 # EM 0, F1 0
    _, s = scored(tmp_path, {"A": a}, "A")
    assert s["A"]["exact_match"] == pytest.approx(1 / 3)
    assert s["A"]["token_f1"] == pytest.approx((1 + 2 / 3 + 0) / 3)


def test_exact_match_and_f1_are_on_answerable_questions_with_abstention_apart(tmp_path):
    # The `none` control declines everything: its "I don't know" matches an abstention gold
    # exactly, which must not count as an exact match on the answerable questions.
    a = [rec("none", "q1", "c1", "I don't know", gold_answer="Postgres 16"),             # EM 0, F1 0
         rec("none", "q2", "c2", "Postgres", gold_answer="Postgres 16"),                 # EM 0, F1 2*(1*1/2)/(3/2) = 2/3
         rec("none", "q3", "c3", "I don't know", gold_answer="I don't know", type="abstention")]  # EM 1, F1 1
    _, s = scored(tmp_path, {"none": a}, "none")
    assert s["none"]["exact_match"] == 0 and s["none"]["token_f1"] == pytest.approx(1 / 3)
    assert s["none"]["abstention_exact_match"] == 1 and s["none"]["abstention_token_f1"] == 1
    assert s["none"]["by_type"]["abstention"]["exact_match"] == 1


def test_each_wrong_answer_has_one_cause(tmp_path):
    a = [rec("A", "q1", "c1", "no", evidence=["t1"], retrieved=["t2"]),                  # retrieval_miss
         rec("A", "q2", "c1", "no", evidence=["t1"], retrieved=["t2", "t1"], context_ids=["t2"]),  # budget_miss
         rec("A", "q3", "c2", "no", evidence=["t1"], retrieved=["t1"]),                  # reader_miss
         rec("A", "q4", "c2", "no", evidence=["t1"], retrieved=None),                    # unmeasurable
         rec("A", "q5", "c3", None, evidence=["t1"], retrieved=None, error="timeout"),   # error
         rec("A", "q6", "c3", "no", type="abstention"),                                  # reader_miss
         rec("A", "q7", "c4", "yes", evidence=["t1"], retrieved=["t1"])]                 # right: no cause
    s, by = scored(tmp_path, {"A": a}, "A")
    causes = {q["qid"]: q["cause"] for q in s["questions"]}
    assert causes == {"q1": "retrieval_miss", "q2": "budget_miss", "q3": "reader_miss", "q4": "unmeasurable",
                      "q5": "error", "q6": "reader_miss", "q7": None}
    assert by["A"]["failure_causes"]["reader_miss"] == 2


def test_a_multi_evidence_question_has_one_precise_cause(tmp_path):
    # Evidence [t1, t2]: a turn search never found is a retrieval_miss whatever became of the
    # other; only when every evidence turn was retrieved can the budget be to blame.
    a = [rec("A", "q1", "c1", "no", evidence=["t1", "t2"], retrieved=["t1"]),                    # t2 never retrieved
         rec("A", "q2", "c1", "no", evidence=["t1", "t2"], retrieved=["t1", "t2"], context_ids=["t1"]),  # t2 cut
         rec("A", "q3", "c2", "no", evidence=["t1", "t2"], retrieved=["t9", "t1"], context_ids=["t9"]),  # t1 cut, t2 never
         rec("A", "q4", "c2", "no", evidence=["t1", "t2"], retrieved=["t2", "t1"], context_ids=["t2", "t1"])]
    s, by = scored(tmp_path, {"A": a}, "A")
    rows = {q["qid"]: q for q in s["questions"]}
    assert {q: r["cause"] for q, r in rows.items()} == {"q1": "retrieval_miss", "q2": "budget_miss",
                                                      "q3": "retrieval_miss", "q4": "reader_miss"}
    assert [(rows[q]["evidence_retrieved"], rows[q]["evidence_in_context"]) for q in ("q1", "q2", "q3", "q4")] == \
        [(1, 1), (2, 1), (1, 0), (2, 2)]
    assert by["A"]["failure_causes"]["retrieval_miss"] == 2 and by["A"]["failure_causes"]["budget_miss"] == 1


def test_judge_disagreement_is_a_cause_of_its_own():
    r = run_record("A", "q1", "c1", "Postgres 16 it is", ["t1"], ["t1"], gold_answer="Postgres 16")
    v = {**verdict_for(r, "incorrect", by="llm"), "rules_only_verdict": "correct"}
    assert metrics.failure_cause(r, v) == "judge_disagreement"
    assert metrics.failure_cause(r, {**v, "rules_only_verdict": None}) == "reader_miss"


# ---------------------------------------------------------------------------------------------
# Headroom and uncertainty
# ---------------------------------------------------------------------------------------------

def four_clusters(name, correct_qids, n=4):
    return [rec(name, f"q{i}", f"c{i}", "yes" if f"q{i % 4}" in correct_qids else "no") for i in range(n)]


def test_gap_closed_by_hand(tmp_path):
    # Eight clusters, the four-question pattern twice, so that almost no resample draws only
    # clusters where the oracle and none tie (a ratio undefined in that resample).
    systems = {"none": four_clusters("none", {"q0"}, 8), "oracle": four_clusters("oracle", {"q0", "q1", "q2"}, 8),
               "A": four_clusters("A", {"q0", "q1"}, 8)}
    _, s = scored(tmp_path, systems, "A")
    # (0.5 - 0.25) / (0.75 - 0.25)
    assert s["A"]["gap_closed"] == pytest.approx(0.5)
    assert s["none"]["gap_closed"] == 0 and s["oracle"]["gap_closed"] == 1
    # Every cluster holds one question, so a resample's ratio depends on which clusters it drew:
    # the interval must be wider than the point yet stay in [0, 1] (A is between none and oracle).
    lo, hi = s["A"]["gap_closed_ci"]
    assert 0 <= lo < 0.5 < hi <= 1


def test_gap_closed_interval_by_hand(tmp_path):
    # Two clusters of two questions. In X, none gets 0, oracle 2, A 2; in Y, none 0, oracle 2,
    # A 0. A resample of two clusters is XX (gap closed 4/4 = 1, p 1/4), XY or YX (2/4, p 1/2)
    # or YY (0/4, p 1/4): the 2.5% and 97.5% quantiles are 0 and 1.
    def system(name, right):
        return [rec(name, q, c, "yes" if q in right else "no") for q, c in (("x1", "X"), ("x2", "X"), ("y1", "Y"),
                                                                          ("y2", "Y"))]
    every = {"x1", "x2", "y1", "y2"}
    _, s = scored(tmp_path, {"none": system("none", set()), "oracle": system("oracle", every),
                             "A": system("A", {"x1", "x2"})}, "A", extra=("--resamples", "4000"))
    assert s["A"]["gap_closed"] == 0.5 and s["A"]["gap_closed_ci"] == [0.0, 1.0]
    # The same pattern in every cluster: every resample gives the point, a zero-width interval.
    same = {"none": four_clusters("none", {"q0"}, 8), "oracle": four_clusters("oracle", {"q0", "q1", "q2"}, 8),
            "A": four_clusters("A", {"q0", "q1"}, 8)}
    for recs in same.values():
        for r in recs:
            r["cluster"] = r["case_id"] = "c" + str(int(r["qid"][1:]) // 4)  # clusters of q0..q3, q4..q7
    _, s = scored(tmp_path, same, "A")
    assert s["A"]["gap_closed"] == 0.5 and s["A"]["gap_closed_ci"] == [0.5, 0.5]


def test_accuracy_interval_by_hand(tmp_path):
    # Two clusters of two questions, A right on X's and wrong on Y's: a resample is XX (accuracy
    # 1, p 1/4), XY or YX (0.5, p 1/2) or YY (0, p 1/4): the 2.5% and 97.5% quantiles are 0 and 1.
    a = [rec("A", q, c, "yes" if c == "X" else "no") for q, c in (("x1", "X"), ("x2", "X"), ("y1", "Y"), ("y2", "Y"))]
    _, s = scored(tmp_path, {"A": a}, "A", extra=("--resamples", "4000"))
    assert s["A"]["accuracy"] == 0.5 and s["A"]["accuracy_ci"] == [0.0, 1.0]
    assert wording.estimate_text(s["A"]["accuracy"], s["A"]["accuracy_ci"]) == "0.500 [0.00, 1.00]"
    # One cluster: no interval (resampling it always draws it).
    _, s = scored(tmp_path, {"A": [{**r, "cluster": "X", "case_id": "X"} for r in a]}, "A")
    assert s["A"]["accuracy_ci"] is None and wording.estimate_text(0.5, None) == "0.500"


def test_gap_closed_is_null_without_the_controls_or_when_the_oracle_does_not_beat_none(tmp_path):
    _, s = scored(tmp_path, {"A": four_clusters("A", {"q0"})}, "A")
    assert s["A"]["gap_closed"] is None and "controls" in s["A"]["gap_closed_note"]
    systems = {"none": four_clusters("none", {"q0"}), "oracle": four_clusters("oracle", {"q1"}),
               "A": four_clusters("A", {"q0"})}
    _, s = scored(tmp_path, systems, "A")
    assert s["A"]["gap_closed"] is None and "does not score above none" in s["A"]["gap_closed_note"]


def test_abstention_is_kept_out_of_the_headline_and_shown_apart(tmp_path):
    def system(name, right):
        return [rec(name, "q1", "c1", "yes" if "q1" in right else "no"),
                rec(name, "q2", "c2", "yes" if "q2" in right else "no"),
                rec(name, "q3", "c3", "yes" if "q3" in right else "no", type="abstention")]
    s, by = scored(tmp_path, {"A": system("A", {"q3"}), "B": system("B", {"q1"})}, "B")
    assert by["A"]["accuracy"] == 0 and by["A"]["abstention_accuracy"] == 1 and by["A"]["accuracy_all"] == 1 / 3
    d = s["differences"][0]
    assert d["difference"] == -0.5 and d["abstention"]["difference"] == 1.0
    assert d["by_type"]["single_hop"]["difference"] == -0.5 and d["by_type"]["abstention"]["difference"] == 1.0


def test_minimum_detectable_difference_by_hand(tmp_path):
    # Four clusters of one question each. A minus B is +1, 0, 0, +1 on them: the paired difference
    # is 0.5, and a resample's mean difference is the mean of four draws from {1, 0, 0, 1}, whose
    # standard deviation is sqrt(0.25 / 4) = 0.25. The minimum detectable difference at 80% power
    # and 95% confidence is (1.959964 + 0.841621) x 0.25 = 0.70040. 10,000 resamples estimate that
    # standard deviation within about 1%.
    b = four_clusters("B", {"q1"})
    a = four_clusters("A", {"q0", "q1", "q3"})
    s, _ = scored(tmp_path, {"A": a, "B": b}, "B", extra=("--resamples", "10000"))
    d = s["differences"][0]
    assert d["difference"] == 0.5 and d["standard_error"] == pytest.approx(0.25, rel=0.02)
    assert d["minimum_detectable_difference"] == pytest.approx((1.959964 + 0.841621) * 0.25, rel=0.02)
    mdd = s["minimum_detectable_difference"]["1200"]
    assert mdd["value"] == d["minimum_detectable_difference"] and mdd["method"] == "paired_bootstrap_se"
    assert "80% power at 95% confidence" in mdd["formula"]
    # The z values are the normal quantiles to full precision, and the formula's text spells the
    # ones the value was computed with.
    assert (stats.Z95, stats.Z80) == (statistics.NormalDist().inv_cdf(0.975), statistics.NormalDist().inv_cdf(0.8))
    assert stats.Z95 == pytest.approx(1.959963984540054, abs=1e-15)
    assert mdd["formula"].startswith(f"({stats.Z95:.3f} + {stats.Z80:.3f}) x ")
    assert mdd["formula"].startswith("(1.960 + 0.842) x ")
    # One cluster: no interval, no standard error, nothing detectable to say.
    one = {"A": [rec("A", "q1", "c1", "yes"), rec("A", "q2", "c1", "no")],
           "B": [rec("B", "q1", "c1", "no"), rec("B", "q2", "c1", "no")]}
    s, _ = scored(tmp_path, one, "B")
    assert s["minimum_detectable_difference"]["1200"]["value"] is None
    assert "two clusters" in s["minimum_detectable_difference"]["1200"]["note"]
    # Two systems that agree on every question: the standard error is 0, and so would be the
    # minimum detectable difference, claiming that any difference is detected; it is n/a instead.
    s, _ = scored(tmp_path, {"A": four_clusters("A", {"q1"}), "B": b}, "B")
    assert s["differences"][0]["standard_error"] == 0 and s["differences"][0]["minimum_detectable_difference"] is None
    assert s["minimum_detectable_difference"]["1200"] == {"value": None, "method": "paired_bootstrap_se",
                                                          "formula": wording.MDD_FORMULA, "note": wording.NO_SPREAD}


def test_a_withheld_interval_has_no_minimum_detectable_difference(tmp_path, capsys):
    # Two clusters hold the answerable questions and ten more hold only abstention questions: a
    # resample draws no answerable question with probability (10/12)^12 = 0.11, above the 5%
    # interval() allows, so the interval is withheld, and with it the standard error and the
    # minimum detectable difference that would be scaled from it.
    def system(name, right):
        return ([rec(name, f"q{i}", f"c{i}", "yes" if i in right else "no") for i in range(2)] +
                [rec(name, f"u{i}", f"d{i}", "no", type="abstention") for i in range(10)])
    s, _ = scored(tmp_path, {"A": system("A", {0, 1}), "B": system("B", {1})}, "B")
    d = s["differences"][0]
    assert (d["difference"], d["clusters"]) == (0.5, 2)
    assert (d["ci_low"], d["ci_high"], d["standard_error"], d["minimum_detectable_difference"]) == (None,) * 4
    assert d["separated"] is None and wording.reading(d) == "no interval (too few resamples define it)"
    assert s["minimum_detectable_difference"]["1200"]["value"] is None
    assert s["minimum_detectable_difference"]["1200"]["note"] == wording.WITHHELD
    assert "minimum detectable difference at budget 1200: n/a (more than 5%" in capsys.readouterr().out
    # The one summary serves retrieval too: no interval, no standard error, no MDD, and why.
    summary = stats.paired_summary(0.5, np.array([np.nan] * 90 + [0.5] * 10), clusters=2)
    assert summary == {"difference": 0.5, "ci_low": None, "ci_high": None, "standard_error": None}


def test_with_two_identical_repeats_the_noise_floor_is_0_and_the_minimum_detectable_difference_is_not(
        tmp_path, capsys):
    # A deterministic endpoint at temperature 0: repeat 1 is graded as repeat 0 on every question,
    # so the noise floor is exactly 0; the sample of questions still bounds what can be detected.
    r0 = four_clusters("B", {"q0", "q2"})
    a = four_clusters("A", {"q0", "q1", "q2"})
    s, by = scored(tmp_path, {"B": r0 + [{**r, "repeat": 1} for r in r0], "A": a}, "B")
    assert by["B"]["noise_floor"]["ci_low"] == by["B"]["noise_floor"]["ci_high"] == 0
    mdd = s["minimum_detectable_difference"]["1200"]
    assert mdd["value"] > 0.3 and mdd["note"] is None
    # Each figure says how it was computed, as the minimum detectable difference does.
    assert by["B"]["noise_floor_method"] == "paired_bootstrap_interval"
    assert by["B"]["noise_floor_formula"].startswith("repeat 1 minus repeat 0 of the same system on answerable "
                                                     "questions, question by question")
    out = capsys.readouterr().out
    assert "B (baseline): 2 repeats: accuracy 0.500, 0.500" in out and "noise floor (repeat 1 vs 0) 0.00 [0.00, 0.00]" in out
    assert f"noise floor: {by['B']['noise_floor_formula']} (paired_bootstrap_interval)" in out
    assert f"minimum detectable difference at budget 1200: {wording.rate(mdd['value'])}, (1.960 + 0.842) x" in out


def test_repeats_give_the_spread_and_the_noise_floor(tmp_path):
    r0 = four_clusters("A", {"q0", "q1"})
    r1 = [{**r, "repeat": 1} for r in four_clusters("A", {"q0", "q2", "q3"})]
    b = four_clusters("B", {"q0"})
    s, by = scored(tmp_path, {"A": r0 + r1, "B": b}, "B")
    rep = by["A"]["repeat_accuracy"]
    assert rep["per_repeat"] == [0.5, 0.75] and rep["mean"] == 0.625 and rep["min"] == 0.5
    assert by["A"]["noise_floor"]["difference"] == 0.25  # repeat 1 minus repeat 0
    assert by["A"]["accuracy"] == 0.625                     # the row is over all repeats
    # A's repeat 1 minus repeat 0 is 0, -1, +1, +1 on its four clusters: a resample's mean is 1
    # with p (2/4)^4 = 1/16 > 2.5%, so that interval's upper end is 1: one repeat's drift.
    assert by["A"]["noise_floor"]["ci_high"] == 1.0
    # The difference is between means over repeats, so its noise floor is the means' own: A's
    # repeats spread by sd 0.25 / sqrt(2), a standard error of sd / sqrt(2) = 0.125 for the mean
    # of two; B has one repeat (unmeasured, adds nothing); 1.96 x 0.125 = 0.245, and A - B =
    # 0.625 - 0.25 is outside it.
    d = s["differences"][0]
    assert metrics.repeat_standard_error(by["A"]) == pytest.approx(0.125)
    assert d["noise_floor"] == pytest.approx(stats.Z95 * 0.125) and d["difference"] == 0.375
    assert d["within_noise_floor"] is False


def test_a_system_that_differs_between_repeats_has_one_figure_over_them(tmp_path):
    # The `none` control answers 0 of 8 answerable questions in repeat 0 and 3 of 8 in repeat 1:
    # every figure is over both repeats, 3 of 16, wherever it is shown.
    def none(right, repeat):
        return [rec("none", f"q{i}", f"c{i}", "yes" if i in right else "no", repeat=repeat) for i in range(8)]
    s, by = scored(tmp_path, {"none": none(set(), 0) + none({0, 1, 2}, 1), "B": four_clusters("B", {"q0"}, 8)}, "B")
    assert by["none"]["accuracy"] == 3 / 16 and by["none"]["by_type"]["single_hop"]["accuracy"] == 3 / 16
    assert by["none"]["repeat_accuracy"]["per_repeat"] == [0.0, 0.375]
    assert by["none"]["gap_closed"] is None and by["none"]["correct"] == 3 and by["none"]["records"] == 16


def test_the_noise_floor_is_a_note_beside_the_interval_on_the_means_own_spread(tmp_path):
    # Four clusters of four questions. The baseline B gets one per cluster right in repeat 0 and two
    # in repeat 1: repeat 1 minus repeat 0 is +0.25 in every cluster (its row's noise floor, one
    # repeat's drift, is exactly 0.25); over both repeats B is 0.375. The differences are to B's
    # mean of two repeats, whose run-to-run standard error is sd(0.25, 0.5) / sqrt(2) = 0.125:
    # the noise floor is 1.96 x 0.125 = 0.245. C is 0.375 above B (outside), D 0.125 (within).
    def system(name, right_per_cluster, repeat=0):
        return [{**rec(name, f"q{c}{i}", f"c{c}", "yes" if i < right_per_cluster else "no"), "repeat": repeat}
                for c in range(4) for i in range(4)]
    s, by = scored(tmp_path, {"B": system("B", 1) + system("B", 2, repeat=1), "C": system("C", 3),
                              "D": system("D", 2)}, "B")
    assert by["B"]["noise_floor"] == {"difference": 0.25, "ci_low": 0.25, "ci_high": 0.25, "standard_error": 0.0,
                                      "questions": 16, "clusters": 4}
    diffs = {d["system"]: d for d in s["differences"]}
    floor = stats.Z95 * 0.125
    assert (diffs["C"]["difference"], diffs["C"]["within_noise_floor"]) == (0.375, False)
    assert (diffs["D"]["difference"], diffs["D"]["within_noise_floor"]) == (0.125, True)
    assert diffs["C"]["noise_floor"] == diffs["D"]["noise_floor"] == pytest.approx(floor)
    assert diffs["C"]["separated"] is True and wording.reading(diffs["C"]) == "better"
    # D is +0.125 in every cluster, so its interval separates it from B: "better" stands, and the
    # noise floor is a note beside it, never in its place.
    assert diffs["D"]["separated"] is True
    assert wording.reading(diffs["D"]) == "better; within the noise floor"


def test_a_single_repeat_has_no_noise_floor(tmp_path):
    _, by = scored(tmp_path, {"A": four_clusters("A", {"q0"})}, "A")
    assert by["A"]["noise_floor"] is None and "single repeat" in by["A"]["noise_floor_note"]


def test_a_budget_sweep_is_one_comparison_per_budget(tmp_path, capsys):
    def at(name, budget, right, in_context, k_limited):
        return [{**r, "context_token_budget": budget, "evidence": ["t1"], "retrieved_ids": ["t2", "t1"],
                 "context_ids": ["t2", "t1"] if r["qid"] in in_context else ["t2"], "k_limited": r["qid"] in k_limited}
                for r in four_clusters(name, right)]
    every = {"q0", "q1", "q2", "q3"}
    systems = {"A": at("A", 500, {"q0"}, {"q0"}, set()) + at("A", 2000, {"q0", "q1", "q2"}, every, {"q0", "q1"}),
               "B": at("B", 500, {"q0"}, every, set()) + at("B", 2000, {"q0"}, every, every)}
    s, by = scored(tmp_path, systems, "B")
    assert by["A@500"]["accuracy"] == 0.25 and by["A@2000"]["accuracy"] == 0.75
    assert by["A@500"]["recall_all_in_context"] == 0.25 and by["A@2000"]["recall_all_in_context"] == 1.0
    assert by["A@500"]["recall_any_at_k"] == by["A@2000"]["recall_any_at_k"] == 1.0  # one search, cut per budget
    assert by["A@500"]["k_limited_share"] == 0 and by["A@2000"]["k_limited_share"] == 0.5
    assert by["B@2000"]["k_limited_share"] == 1
    assert {d["system"]: d["difference"] for d in s["differences"]} == {"A@500": 0.0, "A@2000": 0.5}
    assert {d["baseline"] for d in s["differences"]} == {"B@500", "B@2000"}
    curve = section(capsys.readouterr().out, "budget curve")
    assert curve == ["B: 500: 0.250 / 1.00 / 0.00, 2000: 0.250 / 1.00 / 1.00",
                     "A: 500: 0.250 / 0.250 / 0.00, 2000: 0.750 / 1.00 / 0.500"]


def test_k_limited_share_is_the_share_of_records_whose_context_k_bounded(tmp_path):
    a = [{**r, "k_limited": flag} for r, flag in zip(four_clusters("A", {"q0"}), (True, False, True, None))]
    _, by = scored(tmp_path, {"A": a}, "A")
    assert by["A"]["k_limited_share"] == pytest.approx(2 / 3) and by["A"]["k_limited_n"] == 3
    assert by["A"]["k_limited_note"].startswith("measured on 3 of 4 records")


def test_a_retrieval_only_run_measures_retrieval_and_says_accuracy_was_not(tmp_path):
    a = [rec("A", "q1", "c1", None, evidence=["t1"], retrieved=["t1"], retrieval_only=True, served_model=None)]
    _, by = scored(tmp_path, {"A": a}, "A")
    s = by["A"]
    assert s["recall_any_at_k"] == 1.0 and s["accuracy"] is None and "retrieval-only" in s["accuracy_note"]


# ---------------------------------------------------------------------------------------------
# Cost and latency
# ---------------------------------------------------------------------------------------------

def test_tokens_calls_and_internal_usage(tmp_path):
    u = {"calls": 2, "cached": 1, "prompt_tokens": 100, "completion_tokens": 10, "prompt_tokens_missing": 0,
         "completion_tokens_missing": 0}
    a = [rec("A", "q1", "c1", "yes", usage={"prompt_tokens": 50, "completion_tokens": 5}, cached=False, retries=2,
             internal_usage=u, context_tokens=30),
         rec("A", "q2", "c1", "yes", usage={"prompt_tokens": 70, "completion_tokens": 3}, cached=True,
             internal_usage=u, context_tokens=50),  # same case: its internal usage counted once
         rec("A", "q3", "c2", None, usage=None, cached=False, internal_usage=None, context_tokens=None,
             error="timeout"),
         # The endpoint gave no prompt count: left out of the prompt figures and counted as missing, not as 0.
         rec("A", "q4", "c2", "yes", usage={"prompt_tokens": None, "completion_tokens": 4}, cached=False,
             internal_usage=None, context_tokens=None)]
    _, by = scored(tmp_path, {"A": a}, "A")
    s = by["A"]
    assert s["prompt_tokens"] == 120 and s["mean_prompt_tokens"] == 60 and s["prompt_tokens_missing"] == 2
    assert s["completion_tokens"] == 12 and s["mean_completion_tokens"] == 4 and s["completion_tokens_missing"] == 1
    assert s["usage_note"] == ("counted on the calls that reported usage: 2 of 4 answer calls gave no prompt token "
                               "count, 1 no completion token count (1 of the calls failed)")
    assert s["answer_calls"] == 4 and s["answer_calls_cached"] == 1 and s["answer_requests"] == 3 + 2
    assert s["internal_usage"] == u and s["internal_usage_note"] is None
    assert s["mean_context_tokens"] == 40 and s["total_context_tokens"] == 80
    # An internal model that reported no completion count on one of its 3 calls.
    v = {**u, "calls": 3, "prompt_tokens_missing": 0, "completion_tokens_missing": 1}
    _, by = scored(tmp_path, {"A": [{**r, "internal_usage": v if r["internal_usage"] else None} for r in a]}, "A")
    assert by["A"]["internal_usage"]["completion_tokens_missing"] == 1
    assert by["A"]["internal_usage_note"] == ("token counts are of the calls that reported usage: 0 of 3 internal "
                                              "calls gave no prompt token count, 1 no completion token count")


def test_cost_and_latency_nulls_have_reasons(tmp_path):
    ctl = [rec("none", "q1", "c1", None, retrieval_only=True, served_model=None, search_ms=None, ingest_s=None,
               flush_s=None, added_items=0, search_calls_in_flight=None)]
    _, by = scored(tmp_path, {"none": ctl}, "none")
    s = by["none"]
    assert s["prompt_tokens"] is None and s["completion_tokens"] is None and s["mean_completion_tokens"] is None
    assert s["usage_note"] == "no answer model was asked (retrieval-only run)"
    assert s["internal_usage"] is None and s["internal_usage_note"] == "the system calls no model of its own"
    assert s["ingest_s"] is None and s["ingest_s_note"] == "a control stores nothing"
    assert s["search_ms_p95"] is None and s["search_ms_note"] == "a control searches nothing"
    assert s["store_items_mean"] is None and s["store_items_note"] == "a control stores nothing"


def test_latency_at_the_store_size_it_was_measured_at(tmp_path):
    a = [rec("A", f"q{i}", f"c{i // 2}", "yes", search_ms=float(i + 1), ingest_s=1.0 + i // 2, flush_s=0.5,
             added_items=100 * (1 + i // 2), search_calls_in_flight=i % 2) for i in range(4)]
    _, by = scored(tmp_path, {"A": a}, "A")
    s = by["A"]
    assert (s["search_ms_p50"], s["search_ms_p95"], s["search_ms_max"]) == (2.0, 4.0, 4.0)
    assert s["ingest_s"] == {"mean": 1.5, "p50": 1.0, "max": 2.0}
    assert s["store_items_mean"] == 150 and s["store_items_max"] == 200 and s["search_contended_share"] == 0.5


# ---------------------------------------------------------------------------------------------
# The bootstrap
# ---------------------------------------------------------------------------------------------

def test_vectorised_bootstrap_equals_the_plain_loop_over_the_same_resamples():
    rng = np.random.default_rng(5)
    clusters = [f"c{i}" for i in range(37)]
    diff = {c: list(rng.integers(-1, 2, size=int(rng.integers(1, 6)))) for c in clusters}
    boot = stats.ClusterBootstrap(clusters, 2500, 11)
    sums, counts = boot.column({c: sum(d) for c, d in diff.items()}), boot.column({c: len(d) for c, d in diff.items()})
    fast = boot.totals(np.column_stack([sums, counts]))
    plain = []
    for block in boot.counts():
        for row in block:
            total = count = 0
            for i, c in enumerate(boot.clusters):  # every draw of a cluster adds its questions
                total += row[i] * sum(diff[c])
                count += row[i] * len(diff[c])
            plain.append((total, count))
    assert np.array_equal(fast, np.array(plain, dtype=float))
    assert all(row.sum() == len(clusters) for block in boot.counts() for row in block)  # each resample draws n



@pytest.mark.parametrize("clusters", [1, 7, 400])
def test_bootstrap_resamples_do_not_depend_on_how_many_draws_are_made_or_used_at_once(monkeypatch, clusters):
    # A resample depends on the seed and its position only: counting the draws a chunk at a time,
    # and using the counts a piece at a time, gives the resamples of one draw per block.
    boot = stats.ClusterBootstrap([f"c{i}" for i in range(clusters)], 2100, 3)
    monkeypatch.setattr(stats, "BOOTSTRAP_CHUNK", 10 ** 9)
    monkeypatch.setattr(stats, "BOOTSTRAP_PIECE", 1)
    whole = np.vstack(list(boot.counts()))
    for chunk in (1, clusters + 1, 5 * clusters - 1):
        for piece in (1, 2000 * clusters, 10 ** 9):
            monkeypatch.setattr(stats, "BOOTSTRAP_CHUNK", chunk)
            monkeypatch.setattr(stats, "BOOTSTRAP_PIECE", piece)
            assert np.array_equal(np.vstack(list(boot.counts())), whole)
    draws = np.random.default_rng([3, 2000]).integers(0, clusters, size=(100, clusters))
    assert np.array_equal(whole[2000:], [np.bincount(d, minlength=clusters) for d in draws])


def test_bootstrap_totals_past_float32_are_exact():
    # A resample's total can pass 2^24, where float32 stops adding whole numbers exactly.
    boot = stats.ClusterBootstrap(["a", "b", "c", "d"], 300, 2)
    columns = np.array([[2.0 ** 23, 1], [2.0 ** 23, 1], [3, 0], [2.0 ** 23 + 1, 1]])
    counts = np.vstack([block.astype(np.float64) for block in boot.counts()])
    assert np.array_equal(boot.totals(columns), counts @ columns)

# ---------------------------------------------------------------------------------------------
# The comparison as a whole
# ---------------------------------------------------------------------------------------------

def test_systems_answered_by_different_served_models_are_a_warning(tmp_path):
    # Each system is consistent on its own; the comparison is not.
    systems = {"keyword": [{**r, "served_model": "model-A"} for r in four_clusters("keyword", {"q0"})],
               "full_context": [{**r, "served_model": "model-B"} for r in four_clusters("full_context", {"q0"})]}
    s, _ = scored(tmp_path, systems, "keyword")
    assert s["served_models"] == {"1200": {"full_context": {"model-B": 4}, "keyword": {"model-A": 4}}}
    assert s["warnings"] == ["The comparison was answered by more than one served model (model-A, model-B): "
                             "`full_context` model-B (4 answers); `keyword` model-A (4 answers). The answer model "
                             "was not held constant, so differences between these systems are not differences of "
                             "memory alone."]
    same = {name: four_clusters(name, {"q0"}) for name in ("keyword", "full_context")}
    s, _ = scored(tmp_path, same, "keyword")
    assert s["warnings"] == []


# ---------------------------------------------------------------------------------------------
# stdout: every number of the JSON, in the report's order
# ---------------------------------------------------------------------------------------------

def section(out: str, title: str) -> list[str]:
    """The lines of one stdout section, from its title to the next blank line."""
    return out.split(f"\n{title}", 1)[1].split("\n\n", 1)[0].splitlines()[1:]


def test_stdout_orders_controls_first_marks_the_baseline_and_rounds_tokens(tmp_path, capsys):
    systems = {name: [{**r, "context_tokens": t} for r, t in zip(four_clusters(name, {"q0"}), (100, 125, 100, 125))]
               for name in ("A", "B", "C", "none", "oracle")}
    scored(tmp_path, systems, "B")
    out = capsys.readouterr().out
    assert out.startswith("DEVELOPMENT RUN, not for publication: ")  # no manifest, no checks
    table = out.split("\n\n", 2)[1].splitlines()
    assert [line.split(" | ")[0] for line in table[1:]] == ["none (control)", "oracle (control)", "B (baseline)", "A", "C"]
    assert all(line.split(" | ")[-3] == "113" for line in table[1:])  # 112.5 tokens, whole, half up
    paired = section(out, "paired difference vs B")
    assert [line.split(":")[0] for line in paired if not line.startswith(("  ", "minimum", "note"))] == ["A", "C"]


def test_stdout_shows_cost_latency_repeats_and_per_type_differences(tmp_path, capsys):
    u = {"calls": 3, "cached": 1, "prompt_tokens": 1500, "completion_tokens": 40, "prompt_tokens_missing": 0,
         "completion_tokens_missing": 0}
    a = [rec("A", "q1", "c1", "yes", usage={"prompt_tokens": 1000, "completion_tokens": 7}, context_tokens=600,
             internal_usage=u, ingest_s=2.0, flush_s=0.5, added_items=40, search_ms=3.0, search_calls_in_flight=1),
         rec("A", "q2", "c2", "no", type="temporal", usage={"prompt_tokens": 1201, "completion_tokens": None},
             context_tokens=801, ingest_s=4.0, flush_s=1.5, added_items=60, search_ms=5.0, search_calls_in_flight=0)]
    again = [{**r, "repeat": 1, "answer": "yes"} for r in a]
    b = [rec("B", "q1", "c1", "no"), rec("B", "q2", "c2", "no", type="temporal")]
    scored(tmp_path, {"A": a + again, "B": b}, "B")
    out = capsys.readouterr().out
    # Over both repeats of A (repeat 1 the same records, answered "yes"): every count doubles.
    cost = dict(line.split(": ", 1) for line in section(out, "cost and latency (over all repeats)"))
    assert cost["A"] == ("context tokens 701 mean, 2,802 total; prompt tokens 4,402, completion tokens 14 (per "
                         "question: 1,101 prompt, 7 completion) [counted on the calls that reported usage: 0 of 4 "
                         "answer calls gave no prompt token count, 2 no completion token count]; answer calls 4 (0 "
                         "cached, 4 requests sent); internal model 6 calls (2 cached), 3,000 prompt + 80 completion "
                         "tokens; ingest 3.00 s/case (p50 2.00, max 4.00), flush 1.00 s (max 1.50); search p50 "
                         "3.00 / p95 5.00 / max 5.00 ms at 50 items per namespace (max 60), 0.500 of searches while "
                         "answer calls were in flight; on the accuracy-latency frontier")
    assert cost["B (baseline)"].startswith("context tokens 10 mean, 20 total; answer tokens n/a (the endpoint "
                                           "reported no token usage on any of the 2 answer calls)")
    repeats = dict(line.split(": ", 1) for line in section(out, "repeats and the noise floor"))
    # Repeat 0 gets q1 right, repeat 1 both: 0.5 and 1; sd of the two sqrt(0.125) = 0.354; repeat 1 minus
    # repeat 0 is 0 on c1 and 1 on c2, so resamples of the two clusters give [0, 1].
    assert repeats["A"] == ("2 repeats: accuracy 0.500, 1.00; mean 0.750, sd 0.354, min 0.500, max 1.00; noise "
                            "floor (repeat 1 vs 0) +0.500 [0.00, +1.00]")
    assert repeats["B (baseline)"] == "1 repeat: n/a (a single repeat: run with --repeat 2 or more to measure the " \
                                      "noise floor)"
    paired = section(out, "paired difference vs B")
    # Over both repeats, A gets single_hop q1 right twice and temporal q2 right once; B neither.
    assert paired[1] == "  by type: single_hop +1.00 (no interval), temporal +0.500 (no interval)"


def test_stdout_prints_the_graders_calibration_on_the_held_out_set_beside_the_tuning_set(tmp_path, capsys):
    def labelled(path: str, wrong: int, right: int, fa: int, fr: int, kappa: float) -> dict:
        return {"calibration_set": path, "kappa": kappa, "by_kind": {}, "judge_failures": 0,
                "overall": {"n": wrong + right, "known_wrong": wrong, "known_right": right, "false_accepts": fa,
                            "false_rejects": fr, "false_accept_rate": fa / wrong, "false_reject_rate": fr / right,
                            "false_accept_ci95": stats.wilson_interval(fa, wrong),
                            "false_reject_ci95": stats.wilson_interval(fr, right)}}
    cal = {"format": CALIBRATION_FORMAT, "grader": RULES_ONLY, "grading": "rules only",
           **labelled("data/calibration.jsonl", 138, 123, 0, 28, 0.78),
           "heldout": labelled("data/heldout.jsonl", 216, 186, 0, 94, 0.45)}
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(cal))
    scored(tmp_path, {"A": four_clusters("A", {"q0"})}, "A", extra=("--calibration", str(path)))
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("judge calibration"))
    # The held-out rates first, as the ones to quote, and the set the rules were tuned on named;
    # Wilson intervals of 0 of 216 = [0, 0.0175] and 94 of 186 = [0.434, 0.576], as docs/grading.md gives.
    assert line == (f"judge calibration of this grader (rules only; rules {RULES_ONLY['rules_sha256'][:12]}, judge "
                    f"none), 95% Wilson intervals: held-out set data/heldout.jsonl (never tuned on: the rates to "
                    f"quote): false accepts 0 of 216 (0.00, 0.00–0.0175), false rejects 94 of 186 (0.505, "
                    f"0.434–0.576), kappa 0.450; tuning set data/calibration.jsonl (the rules were tuned on it): false "
                    f"accepts 0 of 138 (0.00, 0.00–0.0271), false rejects 28 of 123 (0.228, 0.162–0.309), kappa 0.780")
    assert line.endswith(wording.calibration_text(cal))


def test_with_only_the_controls_beside_the_baseline_the_minimum_detectable_difference_is_over_them(tmp_path):
    # make bench's default systems: the controls and the baseline. No system is compared, yet the
    # sample's power is still measured, on the controls' paired differences, and said so.
    b = four_clusters("B", {"q0", "q2"})
    s, _ = scored(tmp_path, {"none": four_clusters("none", set()), "oracle": four_clusters("oracle", {"q0", "q1", "q3"}),
                             "B": b + [{**r, "repeat": 1} for r in b]}, "B")
    mdd = s["minimum_detectable_difference"]["1200"]
    assert s["differences"] == [] and mdd["value"] > 0 and "over the controls" in mdd["formula"]
