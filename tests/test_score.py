"""score.py against hand-computed fixtures."""
from __future__ import annotations

import json

import pytest

import metrics
import score
import stats
import wording
from cli import run_cli
from records import run_record, verdict_for, write_comparison


def paired(diff: dict, resamples: int, seed: int) -> tuple:
    """A minus B over clusters of questions, diff {cluster: [A right minus B right, per question]}
    (1, 0 or -1): (point, ci_low, ci_high) from metrics.BudgetStats."""
    rows = {label: {0: [{"cluster": c, "correct": (d > 0) if label == "A" else (d < 0), "answerable": True,
                         "type": "single_hop"} for c, ds in diff.items() for d in ds]} for label in ("A", "B")}
    d = metrics.BudgetStats(rows, resamples, seed).paired(("A", metrics.ALL), ("B", metrics.ALL), "answerable")
    return d["difference"], d["ci_low"], d["ci_high"]


def test_bootstrap_with_identical_cases_has_a_zero_width_interval():
    # Every case has the same mean difference, so every resample has it too.
    diff = {"c1": [1, 0], "c2": [0, 1], "c3": [1, 0]}
    assert paired(diff, 1000, 0) == (0.5, 0.5, 0.5)


def test_bootstrap_two_cases_by_hand():
    # Cases A (diff 0) and B (diff 1): a resample of two cases has mean 0 (AA, p=1/4), 0.5 (AB or
    # BA, p=1/2) or 1 (BB, p=1/4). The 2.5% and 97.5% quantiles are therefore 0 and 1.
    assert paired({"A": [0], "B": [1]}, 10000, 3) == (0.5, 0.0, 1.0)


def test_bootstrap_point_is_the_mean_over_questions_not_cases():
    # 3 questions in case A with diff 1, 1 question in case B with diff 0: 3/4, not 1/2.
    assert paired({"A": [1, 1, 1], "B": [0]}, 2000, 1) == (0.75, 0.0, 1.0)


def test_percentile_nearest_rank():
    xs = list(range(1, 101))
    assert stats.percentile(xs, 0.025) == 3 and stats.percentile(xs, 0.975) == 98
    assert stats.percentile([7], 0.5) == 7


def _rec(backend, qid, case, answer, evidence, retrieved):
    return run_record(backend, qid, case, answer, evidence, retrieved)


def test_score_table_by_hand(tmp_path):
    a = [_rec("A", "q1", "c1", "yes", ["t1"], ["t1"]), _rec("A", "q2", "c1", "no", ["t2"], ["t9"]),
         _rec("A", "q3", "c2", "yes", ["t3", "t4"], ["t3"])]
    b = [_rec("B", "q1", "c1", "no", ["t1"], None), _rec("B", "q2", "c1", "no", ["t2"], None),
         _rec("B", "q3", "c2", "no", ["t3", "t4"], None)]
    runs, verdicts, cfg = write_comparison(tmp_path, {"A": a, "B": b})
    out = tmp_path / "s.json"
    assert run_cli(score.main, ["--runs", *runs, "--verdicts", verdicts, "--baseline", "B", "--config", cfg,
                                "--json", str(out), "--resamples", "200"]) == 0
    s = json.loads(out.read_text())
    A = next(x for x in s["systems"] if x["label"] == "A")
    B = next(x for x in s["systems"] if x["label"] == "B")
    assert A["accuracy"] == pytest.approx(2 / 3) and B["accuracy"] == 0.0
    assert A["recall_any_at_k"] == pytest.approx(2 / 3)      # q1 and q3 hit, q2 misses
    assert A["recall_all_in_context"] == pytest.approx(1 / 3)  # q3 lacks t4
    assert B["recall_any_at_k"] is None and "provenance" in B["recall_note"]
    d = s["differences"][0]
    assert d["system"] == "A" and d["difference"] == pytest.approx(2 / 3) and d["cases"] == 2



def test_scores_json_is_written_as_every_summary_file(tmp_path):
    # score.py writes its JSON through fileio.write_json_atomic, every summary file's writer,
    # whose fast encoder must give the bytes of json.dumps(..., indent=2).
    a = [_rec("A", "q1", "c1", "yes", ["t1"], ["t1"]), _rec("A", "q2", "c1", "naïve \"},\n{\"", ["t2"], ["t9"]),
         run_record("A", "q3", "c2", None, [], None, type="abstention", error="timeout"),
         run_record("A", "q4", "c3", "yes", ["t4"], ["t4"], type="temporal", meta={"outdated_answers": ["no"]})]
    b = [_rec("B", q, c, "no", ev, None) for q, c, ev in (("q1", "c1", ["t1"]), ("q2", "c1", ["t2"]))] + \
        [run_record("B", "q3", "c2", "no", [], None, type="abstention"),
         run_record("B", "q4", "c3", "no", ["t4"], None, type="temporal", meta={"outdated_answers": ["no"]})]
    runs, verdicts, cfg = write_comparison(tmp_path, {"A": a, "B": b})
    out = tmp_path / "s.json"
    assert run_cli(score.main, ["--runs", *runs, "--verdicts", verdicts, "--baseline", "B", "--config", cfg,
                                "--json", str(out), "--resamples", "50"]) == 0
    text = out.read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), ensure_ascii=False, allow_nan=False, indent=2) + "\n"


def test_failed_questions_are_not_called_missing_provenance():
    """A system whose questions all failed retrieved nothing: the recall note must say they
    failed (not blame provenance), and the findings must quote the error."""
    ok = _rec("C", "q1", "c1", "yes", ["t1"], ["t1"])
    bad = {**_rec("C", "q2", "c1", "no", ["t2"], None), "answer": None,
           "error": "backend: RuntimeError: extractor call failed: context length"}
    no_ids = _rec("C", "q3", "c2", "no", ["t3"], None)
    verdict = lambda r, v="incorrect": verdict_for(r, v, by="no_match")
    s = metrics.Scoring([(ok, verdict(ok, "correct")), (bad, verdict(bad)), (no_ids, verdict(no_ids))], 10).systems["C"]
    assert s["recall_n"] == 1 and "1 failed" in s["recall_note"] and "1 returned hits without" in s["recall_note"]
    all_failed = metrics.Scoring([(bad, verdict(bad))], 10).systems["C"]
    assert all_failed["recall_any_at_k"] is None
    assert "1 failed" in all_failed["recall_note"] and "provenance" not in all_failed["recall_note"]
    text = "\n".join(wording.disclosures([all_failed]))
    assert "1 of 1 question records failed" in text and "extractor call failed: context length" in text


def test_missing_verdict_is_an_error(tmp_path, capsys):
    runs, verdicts, cfg = write_comparison(tmp_path, {"A": [_rec("A", "q1", "c1", "yes", [], [])]})
    open(verdicts, "w").close()
    assert run_cli(score.main, ["--runs", *runs, "--verdicts", verdicts, "--baseline", "A", "--config", cfg]) == 2
    assert "no verdict for 'A' question 'q1'" in capsys.readouterr().err


def test_findings_state_the_control_numbers_and_leave_the_verdict_to_check_py():
    # `none` gets 3 of 20 preference questions: 0.15 pooled, above the old hard-coded 0.10, but
    # within check.py's per-type limit for preference (0.20). score.py must not contradict it.
    def system(label, acc, by_type=None):
        return {"label": label, "backend": label, "budget": 1200, "accuracy": acc, "by_type": by_type or {}}
    none_types = {"preference": {"n": 20, "answerable_n": 20, "accuracy": 0.15, "answerable_accuracy": 0.15},
                  "abstention": {"n": 2, "answerable_n": 0, "accuracy": 1.0, "answerable_accuracy": None}}
    scores = {"budgets": [1200], "checks": None, "systems": [system("none", 0.15, none_types), system("oracle", 0.5),
                                                             system("weak", 0.1), system("lucky", 0.9)]}
    text = "\n".join(score.control_findings(scores))
    assert ("The `none` control (no memory at all) answers 0.150 of answerable questions; per type: preference "
            "0.150 (n=20). Whether that is within its limits is check.py's verdict (config.yaml checks.none_max, "
            "per type): run check.py and pass --checks.") in text
    assert "guessed" not in text and "reaches only" not in text and "abstention" not in text
    assert "`weak` answers fewer answerable questions (0.100) than the `none` control (0.150)" in text
    assert "`lucky` scores above the oracle (0.900 against 0.500)" in text
    # With check.py's results, its verdicts are quoted instead of the numbers.
    scores["checks"] = {"status": "PASS", "counts": {"PASS": 1}, "not_passed": [], "controls": [
        {"id": "controls/none", "status": "PASS", "summary": "preference 0.150 (n=20, max 0.20)"}],
        "reader": {"verdict": "adequate", "text": "reader adequate for accuracy: oracle 0.500 >= 0.50"}}
    text = "\n".join(score.control_findings(scores))
    assert "check.py controls/none: PASS: preference 0.150 (n=20, max 0.20)" in text
    assert "check.py's verdict on the reader: reader adequate for accuracy: oracle 0.500 >= 0.50" in text
    assert "answers 0.150 of answerable questions" not in text and "`lucky` scores above" not in text


def test_one_case_gives_no_interval(tmp_path):
    recs = {"A": [_rec("A", "q1", "c1", "yes", [], []), _rec("A", "q2", "c1", "no", [], [])],
            "B": [_rec("B", "q1", "c1", "no", [], []), _rec("B", "q2", "c1", "no", [], [])]}
    runs, verdicts, cfg = write_comparison(tmp_path, recs)
    out = tmp_path / "s.json"
    assert run_cli(score.main, ["--runs", *runs, "--verdicts", verdicts, "--baseline", "B", "--json", str(out),
                                "--resamples", "100", "--config", cfg]) == 0
    d = json.loads(out.read_text())["differences"][0]
    assert d["difference"] == 0.5 and d["ci_low"] is None and d["ci_high"] is None
