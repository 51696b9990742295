"""Answer-bearing recall against hand-computed fixtures: a question counts as found only when a
turn that states the answer (meta.answer_evidence) was retrieved or reached the context, not when
a bridge turn alone did; per kind and overall, null with its reason where nothing is marked."""
from __future__ import annotations

import json

import pytest

import score
from cli import InputError, run_cli
from dataset import validate_case
from records import run_record, write_comparison


def rec(qid, case, evidence, retrieved, context=None, **fields):
    """A retrieval-only record of system A."""
    return run_record("A", qid, case, None, evidence, retrieved, context_ids=context if context is not None else retrieved,
                      retrieval_only=True, served_model=None, **fields)


def scored(tmp_path, recs):
    runs, _, cfg = write_comparison(tmp_path, {"A": recs})
    out = tmp_path / "scores.json"
    assert run_cli(score.main, ["--runs", *runs, "--baseline", "A", "--config", cfg, "--json", str(out),
                                "--resamples", "50"]) == 0
    return json.loads(out.read_text())["systems"][0]


def test_a_bridge_turn_alone_is_found_by_recall_any_and_not_by_answer_recall(tmp_path):
    # q1: only the bridge t1 retrieved; q2: the answer turn t4 retrieved, cut from the context;
    # q3: the answer turn in the context; q4 marks no answer-bearing turn (left out of answer recall).
    recs = [rec("q1", "c1", ["t1", "t2"], ["t1", "t9"], meta={"kind": "coreference", "answer_evidence": ["t2"]}),
            rec("q2", "c1", ["t3", "t4"], ["t4", "t3"], context=["t3"],
                meta={"kind": "coreference", "answer_evidence": ["t4"]}),
            rec("q3", "c2", ["t5"], ["t5"], meta={"kind": "paraphrase", "answer_evidence": ["t5"]}),
            rec("q4", "c2", ["t6"], ["t7"], meta={"kind": "paraphrase"})]
    s = scored(tmp_path, recs)
    assert s["recall_any_at_k"] == pytest.approx(3 / 4)  # q1, q2, q3
    assert s["answer_recall_at_k"] == pytest.approx(2 / 3)  # q2, q3 of the three marked
    assert s["answer_recall_in_context"] == pytest.approx(1 / 3)  # q3 only: q2's answer turn was cut
    assert s["answer_recall_n"] == 3 and "3 of 4" in s["answer_recall_note"]
    coref, para = s["by_kind"]["coreference"], s["by_kind"]["paraphrase"]
    assert (coref["n"], coref["recall_any_at_k"], coref["answer_recall_at_k"], coref["answer_recall_in_context"]) == \
        (2, 1.0, 0.5, 0.0)
    assert (para["recall_any_at_k"], para["answer_recall_at_k"], para["answer_recall_n"]) == (0.5, 1.0, 1)
    # The kind is the type when the dataset names none; the type table has it too.
    assert s["by_type"]["single_hop"]["answer_recall_at_k"] == pytest.approx(2 / 3)


def test_answer_recall_is_null_with_its_reason_when_the_dataset_marks_nothing(tmp_path):
    s = scored(tmp_path, [rec("q1", "c1", ["t1"], ["t1"]), rec("q2", "c2", ["t2"], ["t3"], type="temporal")])
    assert s["recall_any_at_k"] == 0.5
    assert s["answer_recall_at_k"] is None and s["answer_recall_in_context"] is None and s["answer_recall_n"] == 0
    assert "marks no answer-bearing turns (meta.answer_evidence)" in s["answer_recall_note"]
    assert set(s["by_kind"]) == {"single_hop", "temporal"}
    assert s["by_kind"]["temporal"]["answer_recall_at_k"] is None


@pytest.mark.parametrize("marked", [[], ["t9"], "t1", [1]])
def test_answer_evidence_must_be_a_subset_of_the_evidence(marked):
    case = {"case_id": "c1", "sessions": [{"session_id": "s1", "timestamp": "2026-05-01T10:00:00Z", "turns": [
        {"turn_id": "t1", "role": "user", "text": "a"}, {"turn_id": "t9", "role": "user", "text": "b"}]}],
        "questions": [{"qid": "q1", "type": "single_hop", "asked_at": "2026-05-02T10:00:00Z", "question": "q?",
                       "gold_answer": "a", "evidence": ["t1"], "meta": {"answer_evidence": marked}}]}
    with pytest.raises(InputError, match="meta.answer_evidence"):
        validate_case(case, "cases.jsonl:1", set(), set())
