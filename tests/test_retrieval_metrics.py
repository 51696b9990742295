"""recall_all@k and NDCG@k as LongMemEval computes them, LoCoMo's R@k (the share of a question's
evidence retrieved), and each system's paired difference in retrieval to the baseline, which
the model-free pass needs no answer for: against hand-computed values and against the official
definitions, transcribed below."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest

import metrics
import score
import stats
import wording
from cli import run_cli
from records import run_record, write_comparison


# LongMemEval's src/retrieval/eval_utils.py (xiaowu0162/LongMemEval, commit
# 9e0b455f4ef0e2ab8f2e582289761153549043fc), as written there but for np.asfarray, which numpy 2
# removed (np.asarray with dtype float64 is what it did).
def official_dcg(relevances, k):
    relevances = np.asarray(relevances, dtype=np.float64)[:k]
    if relevances.size:
        return relevances[0] + np.sum(relevances[1:] / np.log2(np.arange(2, relevances.size + 1)))
    return 0.


def official_ndcg(rankings, correct_docs, corpus_ids, k=10):
    relevances = [1 if doc_id in correct_docs else 0 for doc_id in corpus_ids]
    sorted_relevances = [relevances[idx] for idx in rankings[:k]]
    ideal_relevance = sorted(relevances, reverse=True)
    ideal_dcg = official_dcg(ideal_relevance, k)
    actual_dcg = official_dcg(sorted_relevances, k)
    if ideal_dcg == 0:
        return 0.
    return actual_dcg / ideal_dcg


def official_evaluate_retrieval(rankings, correct_docs, corpus_ids, k=10):
    recalled_docs = set(corpus_ids[idx] for idx in rankings[:k])
    recall_any = float(any(doc in recalled_docs for doc in correct_docs))
    recall_all = float(all(doc in recalled_docs for doc in correct_docs))
    ndcg_score = official_ndcg(rankings, correct_docs, corpus_ids, k)
    return recall_any, recall_all, ndcg_score


# LoCoMo's recall of a retrieved context (task_eval/evaluation.py of snap-research/locomo, commit
# 92286325a40764bee61f77824ddb95233b11c4d6, eval_question_answering): the share of the
# question's evidence ids among the retrieved ids.
def official_locomo_recall(evidence, context):
    return float(sum([ev in context for ev in evidence])) / len(evidence)


def record(evidence, retrieved, top_k=10, qid="q1", case="c1"):
    return run_record("A", qid, case, "yes", evidence, retrieved, top_k=top_k)


@pytest.mark.parametrize("retrieved, k, expected", [
    # evidence a and b; place 1 counts 1, place i >= 2 counts 1/log2(i); the ideal ranks a, b first: 1 + 1 = 2
    (["x", "a", "y", "b"], 3, (0.0, 1 / 2, 1 / 2)),
    (["x", "a", "y", "b"], 4, (1.0, (1 + 1 / 2) / 2, 1.0)),
    (["a", "b"], 10, (1.0, 1.0, 1.0)),
    (["b", "x", "a"], 10, (1.0, (1 + 1 / np.log2(3)) / 2, 1.0)),
    ([], 10, (0.0, 0.0, 0.0)),
    # a turn named twice (two hits of one turn, or hits carrying several turns) is ranked once
    (["x", "x", "a", "b"], 3, (1.0, (1 + 1 / np.log2(3)) / 2, 1.0)),
])
def test_rank_scores_by_hand(retrieved, k, expected):
    assert metrics.rank_scores(record(["a", "b"], retrieved), k) == pytest.approx(expected)


def test_rank_scores_agree_with_longmemeval_and_locomo_on_random_rankings():
    rng = random.Random(3)
    for _ in range(500):
        corpus = [f"t{i}" for i in range(rng.randint(1, 30))]
        evidence = rng.sample(corpus, rng.randint(1, min(5, len(corpus))))
        ranked = rng.sample(corpus, rng.randint(0, len(corpus)))
        k = rng.randint(1, 12)
        rankings = [corpus.index(t) for t in ranked]
        _, recall_all, ndcg = official_evaluate_retrieval(rankings, evidence, corpus, k)
        ours = metrics.rank_scores(record(evidence, ranked), k)
        assert ours == pytest.approx((recall_all, ndcg, official_locomo_recall(evidence, ranked[:k])))


def scored(tmp_path, systems: dict, baseline: str, retrieval_only: bool = False):
    systems = {name: [{**r, "retrieval_only": retrieval_only, "answer": None if retrieval_only else r["answer"]}
                      for r in recs] for name, recs in systems.items()}
    runs, verdicts, cfg = write_comparison(tmp_path, systems)
    out = tmp_path / "scores.json"
    assert run_cli(score.main, ["--runs", *runs, *([] if retrieval_only else ["--verdicts", verdicts]),
                                "--baseline", baseline, "--config", cfg, "--json", str(out),
                                "--resamples", "400"]) == 0
    return json.loads(out.read_text())


def test_the_system_row_carries_the_rank_metrics_at_the_searched_k(tmp_path):
    a = [record(["a"], ["x", "a"], top_k=1), record(["b"], ["b"], top_k=1, qid="q2", case="c2")]
    s = {x["label"]: x for x in scored(tmp_path, {"A": a}, "A")["systems"]}["A"]
    assert (s["rank_k"], s["recall_all_at_k"], s["ndcg_at_k"], s["evidence_recall_at_k"]) == (1, 0.5, 0.5, 0.5)


def test_the_model_free_pass_compares_each_system_with_the_baseline_in_retrieval(tmp_path):
    # base finds the evidence of 2 of 6 cases, sys of 5 of 6; `none` is a control, not compared
    def recs(name, found):
        return [run_record(name, f"q{i}", f"c{i}", None, [f"e{i}"], [f"e{i}"] if i in found else ["x"])
                for i in range(6)]
    s = scored(tmp_path, {"base": recs("base", {0, 1}), "sys": recs("sys", {0, 1, 2, 3, 4}),
                          "none": [{**r, "retrieved_ids": [], "context_ids": []} for r in recs("none", set())]},
               "base", retrieval_only=True)
    assert s["differences"] == []  # accuracy: nothing was graded
    d = {x["metric"]: x for x in s["retrieval_differences"]}
    assert {x["system"] for x in s["retrieval_differences"]} == {"sys"}
    assert set(d) == set(metrics.RETRIEVAL_DIFFERENCE_METRICS)
    r = d["recall_all_in_context"]
    assert r["difference"] == pytest.approx(3 / 6) and (r["questions"], r["clusters"]) == (6, 6)
    assert r["ci_low"] <= 0.5 <= r["ci_high"] and r["separated"] == (r["ci_low"] > 0)
    assert r["minimum_detectable_difference"] == pytest.approx((stats.Z95 + stats.Z80) * r["standard_error"])
    assert wording.separated_text(r) in ("separated", "not separated")


def test_recall_any_at_k_is_compared_with_the_baseline_too(tmp_path):
    # Four cases, each question with two evidence turns. base retrieves neither; sys retrieves
    # the first of them in three cases: recall_any@k +3/4, while every evidence turn in the
    # context (recall in ctx) is +0 for both.
    def recs(name, found):
        return [run_record(name, f"q{i}", f"c{i}", None, [f"e{i}a", f"e{i}b"], [f"e{i}a"] if i in found else ["x"])
                for i in range(4)]
    s = scored(tmp_path, {"base": recs("base", set()), "sys": recs("sys", {0, 1, 2})}, "base", retrieval_only=True)
    d = {x["metric"]: x for x in s["retrieval_differences"]}
    assert d["recall_any_at_k"]["difference"] == pytest.approx(3 / 4)
    assert d["recall_all_in_context"]["difference"] == 0.0
    # The same figure as the system rows' recall_any_at_k, one minus the other.
    rows = {x["label"]: x for x in s["systems"]}
    assert d["recall_any_at_k"]["difference"] == pytest.approx(rows["sys"]["recall_any_at_k"] -
                                                               rows["base"]["recall_any_at_k"])


def test_a_retrieval_difference_is_paired_on_the_questions_both_measure(tmp_path):
    base = [run_record("base", f"q{i}", f"c{i}", "yes", [f"e{i}"], [f"e{i}"]) for i in range(4)]
    # sys has no provenance on q0 and q1: they leave the pair; on q2 and q3 it misses what base found
    sys_ = [run_record("sys", f"q{i}", f"c{i}", "yes", [f"e{i}"], None if i < 2 else ["x"]) for i in range(4)]
    d = {x["metric"]: x for x in scored(tmp_path, {"base": base, "sys": sys_}, "base")["retrieval_differences"]}
    r = d["recall_all_in_context"]
    assert (r["difference"], r["questions"], r["clusters"]) == (-1.0, 2, 2)


def test_without_shared_measured_questions_the_difference_is_null_with_a_reason(tmp_path):
    base = [run_record("base", "q1", "c1", "yes", ["e1"], ["e1"])]
    sys_ = [run_record("sys", "q1", "c1", "yes", ["e1"], None)]
    r = scored(tmp_path, {"base": base, "sys": sys_}, "base")["retrieval_differences"][0]
    assert r["difference"] is None and "provenance" in r["note"] and wording.interval_text(r) == "n/a"
