"""check.py, the instrument's own checks: each check fails on a crafted bad input and passes on a
good one, a check that cannot run says why instead of passing, and the JSON holds what was
printed."""
from __future__ import annotations

import json
import math
import os

import pytest

import check
import judge
import run
import score
from cli import run_cli
from config import CHECK_DEFAULTS
from conftest import ROOT, TINY, write_config
from dataset import load_dataset
from memory_service import MemoryService
from records import run_record, verdict_for, write_comparison, write_jsonl

TYPES = ("single_hop", "temporal", "abstention")


def records(path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def system(name: str, correct: set, **fields) -> list[dict]:
    """Six answers of one system over three cases: q0..q5 of types single_hop, temporal,
    abstention (twice each); the answer is "yes" (graded correct) for the qids in `correct`."""
    def evidence(i: int) -> list:
        return [] if TYPES[i % 3] == "abstention" else [f"c{i // 2}-t1"]
    return [run_record(name, f"q{i}", f"c{i // 2}", "yes" if f"q{i}" in correct else "no", evidence(i),
                       [] if name == "none" else evidence(i) if name == "oracle" else [f"c{i // 2}-t1"],
                       type=TYPES[i % 3], **fields) for i in range(6)]


GOOD = {"none": system("none", {"q2", "q5"}, context_tokens=0),
        "oracle": system("oracle", {f"q{i}" for i in range(6)}),
        "keyword": system("keyword", {"q0", "q2", "q5"}, context_tokens=900)}


def checked(tmp_path, systems: dict, *extra: str, checks: dict | None = None, correct=None) -> tuple[int, dict, str]:
    """Write the systems' runs and verdicts, run check.py; (exit code, checks.json by id, stdout)."""
    runs, verdicts, cfg = write_comparison(tmp_path, systems, **({"correct": correct} if correct else {}),
                                           checks=checks or {})
    out = tmp_path / "checks.json"
    code = run_cli(check.main, ["--runs", *runs, "--verdicts", verdicts, "--config", cfg, "--out", str(out), *extra])
    return code, ({c["id"]: c for c in json.loads(out.read_text())["checks"]} if out.exists() else {}), str(out)


# ---------------------------------------------------------------------------------------------
# Controls
# ---------------------------------------------------------------------------------------------

def test_controls_pass_on_a_good_comparison_with_hand_computed_numbers(tmp_path, capsys):
    code, c, _ = checked(tmp_path, GOOD)
    assert code == 0
    assert c["controls/none"]["status"] == "PASS"
    # none answers only the abstention questions: 0 of 2 single_hop, 0 of 2 temporal.
    assert c["controls/none"]["numbers"]["by_type"] == {"single_hop": {"n": 2, "accuracy": 0.0},
                                                        "temporal": {"n": 2, "accuracy": 0.0}}
    assert "controls/oracle" not in c  # the oracle's accuracy is the reader's verdict, not an instrument check
    # keyword: q0 right of the four answerable questions, 1/4, between none 0 and oracle 1.
    assert c["controls/order"]["status"] == "PASS"
    assert c["controls/order"]["numbers"] == {"none": 0.0, "oracle": 1.0, "systems": {"keyword": 0.25}}
    out = capsys.readouterr().out
    assert "PASS  controls/order: answerable accuracy: none 0.00, oracle 1.00; keyword 0.250" in out


def test_a_none_that_answers_factual_questions_fails_and_lists_them(tmp_path, capsys):
    systems = {**GOOD, "none": system("none", {"q0", "q2", "q5"}, context_tokens=0)}
    code, c, _ = checked(tmp_path, systems)
    assert code == 4
    none = c["controls/none"]
    # single_hop: q0 right of q0, q3: 0.5 > 0.10.
    assert none["status"] == "FAIL" and none["numbers"]["by_type"]["single_hop"]["accuracy"] == 0.5
    assert [i["qid"] for i in none["items"]] == ["q0"]
    assert "guessed" in none["summary"]
    assert "- single_hop q0: 'question q0'" in capsys.readouterr().out


def test_the_none_control_is_held_to_its_limit_on_the_answerable_questions_of_a_type(tmp_path, capsys):
    # single_hop holds q0 and q3 (answerable) and q6, q7 that an importer flagged unanswerable
    # (meta.abstention). `none` declines everything: right on q6 and q7 only, so single_hop is
    # 2 of 4 over all its questions but 0 of 2 over the answerable ones, the figure none_max limits.
    def flagged(name: str, answer: str) -> list[dict]:
        return [run_record(name, q, "c3", answer, [], [], type="single_hop", meta={"abstention": True},
                           **({"context_tokens": 0} if name == "none" else {"context_tokens": 900}
                              if name == "keyword" else {})) for q in ("q6", "q7")]
    systems = {name: recs + flagged(name, "yes") for name, recs in GOOD.items()}
    code, c, _ = checked(tmp_path, systems)
    none = c["controls/none"]
    assert code == 0 and none["status"] == "PASS", none["summary"]
    assert none["numbers"]["by_type"] == {"single_hop": {"n": 2, "accuracy": 0.0},
                                          "temporal": {"n": 2, "accuracy": 0.0}}
    assert none["summary"].startswith("single_hop 0.00 (n=2, max 0.10)")
    # score.py writes the same per-type figure to scores.json, beside the type's accuracy over all
    # its questions.
    runs, verdicts, cfg = write_comparison(tmp_path, systems)
    out = tmp_path / "scores.json"
    assert run_cli(score.main, ["--runs", *runs, "--verdicts", verdicts, "--config", cfg, "--baseline", "keyword",
                                "--json", str(out), "--resamples", "50"]) == 0
    rows = {s["backend"]: s for s in json.loads(out.read_text())["systems"]}
    single = rows["none"]["by_type"]["single_hop"]
    assert (single["accuracy"], single["answerable_accuracy"], single["answerable_n"]) == (0.5, 0.0, 2)
    out = capsys.readouterr().out
    assert "per type: single_hop 0.00 (n=2), temporal 0.00 (n=2)" in out
    # The oracle is held to its limit on all of a type's questions, and shown so.
    assert "per type (all of each type's questions): abstention 1.00 (n=2), single_hop 1.00 (n=4)" in out


def reader(out: str) -> dict:
    """check.py's verdict on the reader, from the checks.json at `out`."""
    return json.loads(open(out, encoding="utf-8").read())["reader"]


def test_a_reader_right_on_most_of_the_evidence_is_adequate_with_its_weak_types_listed(tmp_path, capsys):
    systems = {**GOOD, "oracle": system("oracle", {"q0", "q2", "q3", "q4", "q5"})}
    code, c, out = checked(tmp_path, systems)
    r = reader(out)
    # answerable: q0, q1, q3, q4; the oracle misses q1: 3 of 4 = 0.75 >= reader_min 0.50. temporal:
    # q4 right, q1 wrong: 0.5 < 0.70 (the temporal oracle_min); single_hop 1.0.
    assert code == 0 and r["verdict"] == "adequate"
    assert (r["oracle_accuracy"], r["oracle_n"], r["limit"], r["none_accuracy"]) == (0.75, 4, 0.5, 0.0)
    assert r["types_below"] == ["temporal"] and r["by_type"]["temporal"] == {"n": 2, "accuracy": 0.5, "limit": 0.7}
    assert [(i["type"], i["qid"]) for i in r["wrong"]] == [("temporal", "q1")]
    assert r["text"] == ("reader adequate for accuracy: oracle 0.750 >= 0.50 on 4 answerable question(s) given exactly "
                         "their evidence; below checks.oracle_min on temporal 0.500 (n=2, min 0.70)")
    assert f"reader: {r['text']}" in capsys.readouterr().out


def test_a_reader_that_cannot_read_is_a_verdict_on_the_reader_not_a_failed_check(tmp_path, capsys):
    # The oracle answers q5 (abstention) and q0 only: 1 of 4 answerable = 0.25 < 0.50.
    systems = {**GOOD, "oracle": system("oracle", {"q0", "q5"})}
    code, c, out = checked(tmp_path, systems)
    r = reader(out)
    assert code == 0 and json.loads(open(out).read())["status"] == "PASS"
    assert r["verdict"] == "inadequate" and r["oracle_accuracy"] == 0.25
    assert r["text"].startswith("reader inadequate for accuracy: oracle 0.250 < 0.50 on 4 answerable question(s) "
                                "given exactly their evidence: accuracy cannot compare memory systems with this "
                                "reader (retrieval recall can); a capable model behind LLM_BASE_URL would")
    # keyword (0.25) sits level with it; with this reader accuracy places nothing between the controls.
    assert c["controls/order"]["status"] == "SKIP" and "inadequate" in c["controls/order"]["summary"]
    assert "reader: reader inadequate for accuracy: oracle 0.250 < 0.50" in capsys.readouterr().out


def test_thresholds_come_from_the_checks_section_of_the_config(tmp_path):
    systems = {**GOOD, "oracle": system("oracle", {"q0", "q2", "q3", "q4", "q5"})}
    code, c, out = checked(tmp_path, systems, checks={"oracle_min": {"temporal": 0.5}, "reader_min": 0.8})
    r = reader(out)
    assert code == 0 and r["types_below"] == [] and r["verdict"] == "inadequate" and r["limit"] == 0.8
    assert {t: x["limit"] for t, x in r["by_type"].items()} == {"abstention": 0.8, "single_hop": 0.8, "temporal": 0.5}


def test_a_system_above_the_oracle_is_flagged_for_an_evidence_audit(tmp_path):
    systems = {**GOOD, "oracle": system("oracle", {"q2", "q3", "q4", "q5"}),
               "keyword": system("keyword", {"q0", "q1", "q3", "q4"}, context_tokens=900)}
    _, c, _ = checked(tmp_path, systems, checks={"reader_min": 0.0})
    order = c["controls/order"]
    assert order["status"] == "WARN"
    assert order["items"][0]["qids"] == ["q0", "q1"]  # right for keyword, wrong for the oracle
    assert "audit the evidence labels" in order["items"][0]["text"]


def test_an_absent_control_is_skipped_with_a_reason_never_passed(tmp_path, capsys):
    code, c, out = checked(tmp_path, {"keyword": GOOD["keyword"]})
    assert code == 0
    for name in ("none", "order"):
        assert c[f"controls/{name}"]["status"] == "SKIP"
    r = reader(out)
    assert r["verdict"] is None and "no `oracle` control among --runs" in r["text"]
    assert "SKIP  controls/none: no run of the `none` control" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------
# Contract and budget
# ---------------------------------------------------------------------------------------------

def test_an_over_budget_record_fails_naming_file_line_and_qid(tmp_path, capsys):
    kw = system("keyword", {"q0"}, context_tokens=900)
    kw[3] = {**kw[3], "context_tokens": 1201}
    code, c, _ = checked(tmp_path, {**GOOD, "keyword": kw})
    budget = c["budget/keyword"]
    assert code == 4 and budget["status"] == "FAIL"
    assert budget["numbers"]["max_tokens"] == 1201 and budget["numbers"]["over_budget"] == 1
    # mean (5 * 900 + 1201) / 6 = 950.17 tokens
    assert budget["numbers"]["mean_tokens"] == pytest.approx((5 * 900 + 1201) / 6)
    assert f"{tmp_path / 'keyword.jsonl'}:4: q3 used 1201 tokens, budget 1200" in capsys.readouterr().out


def test_a_real_system_using_little_of_the_budget_is_a_warning(tmp_path):
    _, c, _ = checked(tmp_path, {**GOOD, "keyword": system("keyword", {"q0"}, context_tokens=300)})
    assert c["budget/keyword"]["status"] == "WARN" and c["budget/keyword"]["numbers"]["mean_use"] == 0.25
    assert c["budget/none"]["status"] == "PASS"  # a control is empty by design


def test_the_budget_check_writes_the_mean_context_tokens_and_k_limited_share_as_score_does(tmp_path, capsys):
    # 10 and 11 tokens in turn: a mean of 10.5, which score.py writes as 11 (whole tokens, half
    # up); a format of check.py's own (round half to even) wrote 10. Two of six records are
    # k-limited: 0.333 in both outputs.
    kw = [{**r, "context_tokens": 10 + i % 2, "k_limited": i < 2}
          for i, r in enumerate(system("keyword", {"q0"}))]
    runs, verdicts, cfg = write_comparison(tmp_path, {**GOOD, "keyword": kw})
    out = tmp_path / "checks.json"
    run_cli(check.main, ["--runs", *runs, "--verdicts", verdicts, "--config", cfg, "--out", str(out)])
    budget = {c["id"]: c for c in json.loads(out.read_text())["checks"]}["budget/keyword"]
    assert budget["status"] == "WARN" and budget["summary"].startswith(f"{runs[2]}: mean 11 tokens (1% of the budget)")
    assert "top_k bounded the context of 2 of 6 records (k-limited share 0.333:" in budget["summary"]
    capsys.readouterr()
    scores = tmp_path / "scores.json"
    assert run_cli(score.main, ["--runs", *runs, "--verdicts", verdicts, "--config", cfg, "--baseline", "keyword",
                                "--resamples", "20", "--json", str(scores)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("keyword (baseline) |"))
    assert row.split(" | ")[-3] == "11"  # ctx tokens
    s = next(x for x in json.loads(scores.read_text())["systems"] if x["backend"] == "keyword")
    assert (s["mean_context_tokens"], s["k_limited_share"]) == (budget["numbers"]["mean_tokens"],
                                                                 budget["numbers"]["k_limited_share"])


def sweep(name: str, correct: set, tokens: dict, **fields) -> list[dict]:
    """One system over the budgets of a sweep: budget -> context_tokens of each record."""
    return [r for budget, t in tokens.items()
            for r in system(name, correct, context_token_budget=budget, context_tokens=t, **fields)]


def test_a_sweep_checks_the_budget_use_at_each_budget_and_names_the_k_limited_share(tmp_path, capsys):
    # 90%, 80% and 25% of 500, 2000 and 8000: 65% on average, which passed; the largest budget
    # alone is a quarter used, every hit that k let through having fit (k_limited).
    budgets = {500: 450, 2000: 1600, 8000: 2000}
    kw = sweep("keyword", {"q0"}, budgets)
    kw = [{**r, "k_limited": r["context_token_budget"] == 8000 and r["qid"] != "q5"} for r in kw]
    systems = {"none": sweep("none", {"q2", "q5"}, {b: 0 for b in budgets}),
               "oracle": sweep("oracle", {f"q{i}" for i in range(6)}, budgets), "keyword": kw}
    code, c, _ = checked(tmp_path, systems)
    assert code == 0 and "budget/keyword" not in c
    assert c["budget/keyword@500"]["status"] == c["budget/keyword@2000"]["status"] == "PASS"
    big = c["budget/keyword@8000"]
    assert big["status"] == "WARN" and big["numbers"]["mean_use"] == 0.25
    assert big["numbers"]["k_limited"] == 5 and big["numbers"]["k_limited_share"] == pytest.approx(5 / 6)
    assert "top_k bounded the context of 5 of 6 records (k-limited share 0.833:" in big["summary"]
    assert "WARN  budget/keyword@8000:" in capsys.readouterr().out
    # Without k_limited records the warning says k was not the limit.
    systems["keyword"] = [{**r, "k_limited": False} for r in kw]
    _, c, _ = checked(tmp_path, systems)
    assert "no record was k_limited" in c["budget/keyword@8000"]["summary"]


def test_systems_answered_by_different_served_models_are_a_warning_per_budget(tmp_path, capsys):
    code, c, _ = checked(tmp_path, GOOD)
    assert c["contract/served_model"]["status"] == "PASS" and "one served model: m-served: 18 answers" in \
        c["contract/served_model"]["summary"]
    # keyword's answers all came from model A, full_context's all from B, at one budget of two.
    budgets = {1200: 900, 8000: 2000}
    systems = {"none": sweep("none", {"q2", "q5"}, {b: 0 for b in budgets}),
               "keyword": sweep("keyword", {"q0"}, budgets, served_model="A"),
               "full_context": [{**r, "served_model": "B" if r["context_token_budget"] == 8000 else "A"}
                                for r in sweep("full_context", {"q0"}, budgets)]}
    systems["none"] = [{**r, "served_model": "A"} for r in systems["none"]]
    code, c, _ = checked(tmp_path, systems)
    assert code == 0 and c["contract/served_model@1200"]["status"] == "PASS"
    w = c["contract/served_model@8000"]
    assert w["status"] == "WARN"
    assert w["numbers"]["models"] == {"A": {"keyword": 6, "none": 6}, "B": {"full_context": 6}}
    assert "2 served models answered this comparison at budget 8000: A: 12 answers (keyword 6, none 6); " \
           "B: 6 answers (full_context 6)" in w["summary"]
    assert "WARN  contract/served_model@8000" in capsys.readouterr().out


def test_a_mixed_prompt_sha_is_a_contract_fail_with_the_comparison_refusal_not_exit_2(tmp_path, capsys):
    kw = system("keyword", {"q0"}, context_tokens=900, prompt_sha256="e" * 64)
    code, c, _ = checked(tmp_path, {**GOOD, "keyword": kw})
    assert code == 4
    contract = c["contract/comparison"]
    assert contract["status"] == "FAIL" and "field 'prompt_sha256' differs" in contract["summary"]
    assert "not one comparison" in contract["summary"]
    assert c["controls/order"]["status"] == "SKIP"  # no comparison to place systems in
    assert c["budget/keyword"]["status"] == "PASS"   # per-file checks still run
    assert "FAIL  contract/comparison" in capsys.readouterr().out


def test_a_partial_file_is_refused_unless_allow_partial_and_then_the_common_questions_are_checked(tmp_path, capsys):
    code, c, _ = checked(tmp_path, {**GOOD, "keyword": GOOD["keyword"][:4]})
    assert code == 2 and c == {}
    assert "keyword.jsonl: backend 'keyword' (repeat 0, budget 1200) holds 4 of the dataset's 6 questions; 2 missing " \
           "(first: 'q4')" in capsys.readouterr().err
    code, c, _ = checked(tmp_path, {**GOOD, "keyword": GOOD["keyword"][:4]}, "--allow-partial")
    assert code == 0 and c["contract/comparison"]["status"] == "WARN"
    assert c["contract/comparison"]["numbers"]["scored_questions"] == 4 and "--allow-partial" in \
        c["contract/comparison"]["summary"]
    assert c["controls/none"]["status"] == "PASS"
    assert c["controls/order"]["numbers"]["systems"] == {"keyword": pytest.approx(1 / 3)}  # q0 of q0, q1, q3


def test_a_verdict_that_graded_another_answer_is_refused(tmp_path, capsys):
    runs, verdicts, cfg = write_comparison(tmp_path, GOOD)
    recs = records(runs[2])
    recs[0]["answer"] = "changed after judging"
    write_jsonl(tmp_path / "keyword.jsonl", recs)
    out = tmp_path / "checks.json"
    assert run_cli(check.main, ["--runs", *runs, "--verdicts", verdicts, "--config", cfg, "--out", str(out)]) == 2
    assert "verdicts.jsonl:13: the verdict of 'keyword' question 'q0' graded another answer than its run record " \
           "holds now" in capsys.readouterr().err
    assert not out.exists()


# ---------------------------------------------------------------------------------------------
# What the controls were given, and a system above the oracle
# ---------------------------------------------------------------------------------------------

def test_a_none_given_the_evidence_or_an_oracle_given_other_turns_fails(tmp_path, capsys):
    code, c, _ = checked(tmp_path, GOOD)
    assert c["controls/none_context"]["status"] == c["controls/oracle_context"]["status"] == "PASS"
    assert c["controls/oracle_context"]["numbers"] == {"records": 6, "mismatched": 0, "failed": 0}
    none = [{**r, "context_ids": r["evidence"], "retrieved_ids": r["evidence"]} for r in GOOD["none"]]
    oracle = [{**r, "context_ids": ["c1-t9", *r["evidence"]]} if r["qid"] == "q3" else r for r in GOOD["oracle"]]
    code, c, path = checked(tmp_path, {**GOOD, "none": none, "oracle": oracle})
    assert code == 4 and c["controls/none_context"]["status"] == "FAIL"
    assert [i["qid"] for i in c["controls/none_context"]["items"]] == ["q0", "q1", "q3", "q4"]
    assert c["controls/oracle_context"]["status"] == "FAIL"
    assert c["controls/oracle_context"]["items"][0]["text"] == (f"{tmp_path / 'oracle.jsonl'}:4: q3: context "
                                                                f"['c1-t9', 'c1-t1'], evidence ['c1-t1']")
    assert "FAIL  controls/none_context: 4 of 6 none record(s) were not given an empty context" in capsys.readouterr().out


def test_a_system_above_the_oracle_on_a_type_by_a_separating_interval_fails_unless_the_config_says_why(tmp_path):
    # Ten cases of one single_hop and one temporal question: the oracle misses every single_hop
    # one, keyword answers them all: keyword minus oracle on single_hop is +1 in every cluster, so
    # the interval is [+1, +1] and excludes 0.
    def ten(name, right):
        return [run_record(name, f"q{i}{t[0]}", f"c{i}", "yes" if t in right else "no", [f"c{i}-t1"], [f"c{i}-t1"],
                           type=t, context_tokens=900) for i in range(10) for t in ("single_hop", "temporal")]
    systems = {"oracle": ten("oracle", {"temporal"}), "keyword": ten("keyword", {"single_hop", "temporal"})}
    code, c, _ = checked(tmp_path, systems, checks={"oracle_min": {"default": 0.0}})
    above = c["controls/above_oracle"]
    assert code == 4 and above["status"] == "FAIL" and "single_hop (keyword)" in above["summary"]
    assert [(i["system"], i["type"], i["ci_low"]) for i in above["items"]] == [("keyword", "single_hop", 1.0)]
    code, c, _ = checked(tmp_path, systems, checks={"oracle_min": {"default": 0.0},
                                                    "above_oracle": {"keyword": "its store holds the golds by design"}})
    assert code == 0 and c["controls/above_oracle"]["status"] == "WARN"
    assert "allowed by checks.above_oracle: its store holds the golds by design" in c["controls/above_oracle"]["summary"]


# ---------------------------------------------------------------------------------------------
# Judge health
# ---------------------------------------------------------------------------------------------

def judged(tmp_path, unparseable: dict, change=lambda vs: vs, n: int = 20) -> dict:
    """Three systems of n answers each, all graded by the LLM judge, the first k answers of each
    system (k from `unparseable`) unparseable and the verdicts then passed through `change`;
    check.py's results by id."""
    systems = {name: [run_record(name, f"q{i}", f"c{i}", "yes", [], []) for i in range(n)]
               for name in ("alpha", "beta", "gamma")}
    runs, verdicts, cfg = write_comparison(tmp_path, systems)
    vs = [verdict_for(r, "unparseable" if int(r["qid"][1:]) < unparseable.get(r["backend"], 0) else "correct",
                      by="llm") for path in runs for r in records(path)]
    write_jsonl(tmp_path / "verdicts.jsonl", change(vs))
    out = tmp_path / "checks.json"
    assert run_cli(check.main, ["--runs", *runs, "--verdicts", verdicts, "--config", cfg, "--out", str(out)]) == 0
    return {x["id"]: x for x in json.loads(out.read_text())["checks"]}


def test_a_system_with_clearly_more_unparseable_verdicts_is_a_warning(tmp_path):
    u = judged(tmp_path, {"alpha": 8})["judge/unparseable"]
    assert u["status"] == "WARN" and u["numbers"]["flagged"] == ["alpha"]
    # alpha 8 of 20 against 0 of 40: with 8 unparseable among 60, the chance that all 8 fall in
    # alpha's 20 is C(52, 12) / C(60, 20).
    assert u["numbers"]["by_system"]["alpha"]["p_value"] == pytest.approx(math.comb(52, 12) / math.comb(60, 20))


def test_unparseable_verdicts_spread_evenly_pass(tmp_path):
    u = judged(tmp_path, {"alpha": 2, "beta": 2, "gamma": 1})["judge/unparseable"]
    assert u["status"] == "PASS" and "alpha 2/20, beta 2/20, gamma 1/20" in u["summary"]


def test_rules_and_judge_disagreeing_where_both_decided_is_a_warning_naming_the_answer(tmp_path):
    def change(vs: list) -> list:
        vs = [{**v, "rules_only_verdict": "correct"} for v in vs]
        vs[3] = {**vs[3], "verdict": "incorrect"}  # alpha q3: the rules said correct, the judge incorrect
        vs[4] = {**vs[4], "verdict": "unparseable"}  # the judge decided nothing: not a disagreement
        return vs
    d = judged(tmp_path, {}, change)["judge/disagreement"]
    assert d["status"] == "WARN" and [(i["system"], i["qid"]) for i in d["items"]] == [("alpha", "q3")]
    assert d["numbers"]["by_system"]["alpha"] == {"both_decided": 19, "disagree": 1, "rate": pytest.approx(1 / 19)}


def test_rules_only_grading_skips_the_judge_checks(tmp_path):
    _, c, _ = checked(tmp_path, GOOD)
    assert c["judge/unparseable"]["status"] == c["judge/disagreement"]["status"] == "SKIP"
    assert "rules-only" in c["judge/unparseable"]["summary"]


# ---------------------------------------------------------------------------------------------
# Real runs on the tiny dataset: determinism, indexing lag, leakage
# ---------------------------------------------------------------------------------------------

def run_system(cfg: str, backend: str, out, *extra: str) -> str:
    assert run_cli(run.main, ["--config", cfg, "--backend", backend, "--out", str(out), *extra]) == 0
    return str(out)


@pytest.fixture
def tiny_runs(tmp_path, fake_llm):
    """none, oracle and keyword run on the tiny dataset against the fake endpoint, judged; a
    config whose thresholds do not get in the way of the checks tested here (the fake oracle
    echoes a turn, and the tiny histories fill a tenth of the budget)."""
    cfg = write_config(tmp_path, checks={"reader_min": 0.0, "none_max": {"default": 1.0},
                                         "budget_use_min": 0.0})
    runs = [run_system(cfg, b, tmp_path / "runs" / f"{b}.jsonl") for b in ("none", "oracle", "keyword")]
    verdicts = str(tmp_path / "results" / "verdicts.jsonl")
    assert run_cli(judge.main, ["--config", cfg, "--runs", *runs, "--out", verdicts]) == 0
    return cfg, runs, verdicts


def check_tiny(tmp_path, tiny_runs, *extra: str) -> tuple[int, dict]:
    cfg, runs, verdicts = tiny_runs
    out = tmp_path / "results" / "checks.json"
    code = run_cli(check.main, ["--runs", *runs, "--verdicts", verdicts, "--config", cfg, "--out", str(out), *extra])
    return code, {c["id"]: c for c in json.loads(out.read_text())["checks"]}


def test_real_runs_pass_every_check_that_can_run(tmp_path, tiny_runs, capsys):
    cfg, runs, _ = tiny_runs
    rerun = run_system(cfg, "keyword", tmp_path / "runs-check" / "keyword-2.jsonl", "--retrieval-only")
    code, c = check_tiny(tmp_path, tiny_runs, "--rerun", rerun)
    assert code == 0
    assert c["determinism/keyword"]["status"] == "PASS" and c["determinism/keyword"]["numbers"]["compared"] == 6
    assert c["leakage/keyword"]["status"] == "PASS" and c["leakage/keyword"]["numbers"]["records_checked"] == 6
    assert "leakage/none" not in c and "leakage/oracle" not in c  # the harness builds the controls' contexts
    assert c["provenance/keyword"]["status"] == "PASS" and c["provenance/keyword"]["numbers"]["provenance"] == "verified"
    assert "provenance/none" not in c and "provenance/oracle" not in c
    assert c["lag"]["status"] == "SKIP" and "--extra-wait-s" in c["lag"]["summary"]
    printed = capsys.readouterr().out.splitlines()
    data = json.loads((tmp_path / "results" / "checks.json").read_text())
    # One line per check, in the JSON's order, with the JSON's status, and the totals last.
    status_lines = [line for line in printed if line[:4] in check.STATUSES]
    assert [line.split()[:2] for line in status_lines] == [[x["status"], x["id"] + ":"] for x in data["checks"]]
    assert data["status"] == "PASS" and printed[-2] == "result: PASS (13 PASS, 0 WARN, 0 FAIL, 3 SKIP)"
    assert printed[-1] == f"reader: {data['reader']['text']}"
    assert set(data["inputs"]["runs"]) == set(runs) and data["thresholds"]["reader_min"] == 0.0


def test_a_nondeterministic_keyword_rerun_fails(tmp_path, tiny_runs):
    cfg, _, _ = tiny_runs
    rerun = tmp_path / "runs-check" / "keyword-2.jsonl"
    recs = records(run_system(cfg, "keyword", rerun, "--retrieval-only"))
    recs[1]["retrieved_ids"] = list(reversed(recs[1]["retrieved_ids"]))  # same ids, another order
    write_jsonl(rerun, recs)
    code, c = check_tiny(tmp_path, tiny_runs, "--rerun", str(rerun))
    d = c["determinism/keyword"]
    assert code == 4 and d["status"] == "FAIL"
    assert d["numbers"]["differ"] == 1 and d["numbers"]["rate"] == pytest.approx(1 / 6)
    assert [i["qid"] for i in d["items"]] == [recs[1]["qid"]]


@pytest.mark.parametrize("declared", [False, True])
def test_retrieval_noise_is_a_warning_with_its_rate_unless_the_backend_declares_itself_deterministic(
        tmp_path, tiny_runs, declared):
    cfg, runs, verdicts = tiny_runs
    rerun = tmp_path / "runs-check" / "keyword-2.jsonl"
    recs = records(run_system(cfg, "keyword", rerun, "--retrieval-only"))
    recs[0]["retrieved_ids"] = recs[0]["retrieved_ids"][1:]
    write_jsonl(rerun, recs)
    # keyword declares itself deterministic (run.py then reuses its searches across repeats), and
    # its records say so: that alone binds it, even outside checks.deterministic_backends.
    assert all(r["deterministic"] for r in records(runs[2]))
    if not declared:
        write_jsonl(tmp_path / "runs" / "keyword.jsonl", [{**r, "deterministic": False} for r in records(runs[2])])
    relaxed = write_config(tmp_path / "runs-check", checks={"deterministic_backends": [],
                                                             "oracle_min": {"default": 0.0}})
    out = tmp_path / "checks.json"
    code = run_cli(check.main, ["--runs", *runs, "--verdicts", verdicts, "--config", relaxed, "--out", str(out),
                                "--rerun", str(rerun)])
    d = {x["id"]: x for x in json.loads(out.read_text())["checks"]}["determinism/keyword"]
    assert d["numbers"]["rate"] == pytest.approx(1 / 6) and d["numbers"]["declares_deterministic"] is declared
    if declared:
        assert code == 4 and d["status"] == "FAIL" and "it declares itself deterministic" in d["summary"]
    else:
        assert code == 0 and d["status"] == "WARN" and "noise rate" in d["summary"]


@pytest.mark.parametrize("model_free", [False, True])
def test_a_backend_that_leaks_across_namespaces_fails_the_leakage_check(tmp_path, fake_llm, monkeypatch, capsys,
                                                                        model_free):
    # A store that searches every namespace and empties none on reset: the second case's search
    # finds the first case's turns. The records look like any other run's; only their provenance
    # tells, and the check reads it, model-free runs included.
    svc = MemoryService(index_delay_s=0.0, token="svc-token", leaky=True).start()
    monkeypatch.setenv("MEMORY_API_KEY", "svc-token")
    try:
        cfg = write_config(tmp_path, workers=1, backends={"http": {"base_url": svc.url, "token_env": "MEMORY_API_KEY",
                                                                   "poll_interval_s": 0.05}})
        runs = [run_system(cfg, b, tmp_path / "runs" / f"{b}.jsonl", *(["--retrieval-only"] if model_free else []))
                for b in ("keyword", "http")]
    finally:
        svc.stop()
    verdicts = []
    if not model_free:
        verdicts = ["--verdicts", str(tmp_path / "verdicts.jsonl")]
        assert run_cli(judge.main, ["--config", cfg, "--runs", *runs, "--out", verdicts[1]]) == 0
    out = tmp_path / "checks.json"
    code = run_cli(check.main, ["--runs", *runs, *verdicts, "--config", cfg, "--out", str(out)])
    c = {x["id"]: x for x in json.loads(out.read_text())["checks"]}
    leak = c["leakage/http"]
    assert code == 4 and leak["status"] == "FAIL"
    first, second = (case["case_id"] for case in load_dataset(TINY))
    # The first case was searched when nothing else was stored; every question of the second
    # that found a turn of the first is named, with those turns and their case.
    assert leak["items"] and {i["case_id"] for i in leak["items"]} == {second}
    assert all(i["their_cases"] == [first] and all(t.startswith(first) for t in i["foreign_ids"])
               for i in leak["items"])
    assert f"(case {second}, repeat 0): " in capsys.readouterr().out
    # keyword keeps its cases apart: the same check passes it, having read every hit.
    assert c["leakage/keyword"]["status"] == "PASS" and c["leakage/keyword"]["numbers"]["hits_checked"] > 0


def test_the_leakage_check_warns_when_cases_share_turn_ids(tmp_path):
    # Two cases that both have a turn "t1" (LoCoMo's dia_ids repeat across conversations): a hit
    # naming t1 cannot be traced to one of them, and the check says so instead of passing.
    recs = [run_record("A", "q1", "c1", "yes", ["t1"], ["t1"]), run_record("A", "q2", "c2", "yes", ["t1"], ["t1"])]
    turns = {"c1": {"t0", "t1"}, "c2": {"t0", "t1"}}
    r = check.check_leakage("A.jsonl", list(enumerate(recs, 1)), turns)
    assert r["status"] == "WARN" and r["numbers"]["hits_on_shared_ids"] == 2 and "could not be told apart" in r["summary"]
    r = check.check_leakage("A.jsonl", list(enumerate(recs, 1)), {"c1": {"t1"}, "c2": {"t2"}})
    assert r["status"] == "FAIL" and r["items"][0]["foreign_ids"] == ["t1"] and r["items"][0]["their_cases"] == ["c1"]


@pytest.fixture
def memory_service(monkeypatch):
    """The asynchronous memory service: added items are searchable only 0.6 s later."""
    svc = MemoryService(index_delay_s=0.6, token="svc-token").start()
    monkeypatch.setenv("MEMORY_API_KEY", "svc-token")
    yield svc
    svc.stop()


@pytest.mark.parametrize("flush, status", [("delay", "FAIL"), ("status", "PASS")])
def test_a_lagging_index_is_caught_by_a_rerun_after_an_extra_wait(tmp_path, fake_llm, memory_service, flush, status):
    # flush "delay" with 0 s returns at once, before the service has indexed anything; flush
    # "status" polls until the service says it is ready.
    http = {"base_url": memory_service.url, "token_env": "MEMORY_API_KEY", "poll_interval_s": 0.05,
            "flush": flush, **({"flush_delay_s": 0} if flush == "delay" else {})}
    cfg = write_config(tmp_path, backends={"http": http})
    main = run_system(cfg, "http", tmp_path / "runs" / "http.jsonl", "--retrieval-only")
    lag = run_system(cfg, "http", tmp_path / "runs-check" / "http-wait.jsonl", "--retrieval-only",
                     "--extra-wait-s", "1")
    out = tmp_path / "checks.json"
    run_cli(check.main, ["--runs", main, "--config", cfg, "--out", str(out), "--lag", lag])  # no verdicts: model-free
    c = {x["id"]: x for x in json.loads(out.read_text())["checks"]}["lag/http"]
    assert c["status"] == status
    if status == "FAIL":
        assert "flush does not wait" in c["summary"] and c["numbers"]["differ"] == 6
        assert c["numbers"]["recall_any_main"] == 0.0 and c["numbers"]["recall_any_after_wait"] > 0


def test_model_free_runs_need_no_verdicts_and_skip_what_needs_answers(tmp_path, fake_llm, capsys):
    cfg = write_config(tmp_path)
    runs = [run_system(cfg, b, tmp_path / "runs" / f"{b}.jsonl", "--retrieval-only") for b in ("none", "oracle", "keyword")]
    out = tmp_path / "checks.json"
    # A verdicts file, even judge.py's own for these runs (it grades nothing), changes nothing.
    verdicts = str(tmp_path / "verdicts.jsonl")
    assert run_cli(judge.main, ["--config", cfg, "--runs", *runs, "--out", verdicts]) == 0
    for extra in ([], ["--verdicts", verdicts]):
        assert run_cli(check.main, ["--runs", *runs, "--config", cfg, "--out", str(out), *extra]) == 0
        c = {x["id"]: x for x in json.loads(out.read_text())["checks"]}
        assert {x["status"] for x in c.values()} <= {"PASS", "WARN", "SKIP"}
        assert c["contract/comparison"]["status"] == "PASS"
        assert c["controls/oracle_context"]["status"] == "PASS"  # what the controls were given needs no answer
        assert c["controls/order"]["status"] == "SKIP" and "retrieval-only" in c["controls/order"]["summary"]
        assert reader(str(out))["verdict"] is None and "retrieval-only" in reader(str(out))["text"]
        assert c["leakage/keyword"]["status"] == "PASS"
    # Runs that answered cannot be checked without their verdicts: exit 2, saying so.
    answered = run_system(cfg, "none", tmp_path / "answered" / "none.jsonl")
    assert run_cli(check.main, ["--runs", answered, "--config", cfg, "--out", str(tmp_path / "c2.json")]) == 2
    assert "the run of 'none' holds answers to grade (retrieval_only is false): pass --verdicts" in \
        capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# Bad input: exit 2, naming what is wrong
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("checks, named", [
    ({"oracle_minimum": 0.8}, "checks.oracle_minimum"),
    ({"oracle_min": {"trivia": 0.8}}, "checks.oracle_min.trivia"),
    ({"none_max": {"default": 1.5}}, "checks.none_max.default"),
    ({"none_max": 0.1}, "checks.none_max"),
    ({"deterministic_backends": "keyword"}, "checks.deterministic_backends"),
    ({"unparseable_min": 0}, "checks.unparseable_min"),
])
def test_a_bad_checks_setting_is_refused_naming_it(tmp_path, checks, named, capsys):
    code, _, _ = checked(tmp_path, GOOD, checks=checks)
    assert code == 2 and f"'{named}'" in capsys.readouterr().err


def test_bad_arguments_exit_2(tmp_path, tiny_runs, capsys):
    cfg, runs, verdicts = tiny_runs
    base = ["--runs", *runs, "--verdicts", verdicts, "--out", str(tmp_path / "c.json")]
    # without --config or --manifest, config.yaml's dataset, which these runs were not made from
    assert run_cli(check.main, base) == 2
    assert f"{runs[0]}:1: made from the dataset with sha256" in capsys.readouterr().err
    # a --runs file given as its own rerun would compare a run with itself
    assert run_cli(check.main, [*base, "--config", cfg, "--rerun", runs[2]]) == 2
    assert "a rerun must be a second run" in capsys.readouterr().err
    # a lag rerun made without an extra wait
    plain = run_system(cfg, "keyword", tmp_path / "runs-check" / "keyword-2.jsonl", "--retrieval-only")
    assert run_cli(check.main, [*base, "--config", cfg, "--lag", plain]) == 2
    assert "--extra-wait-s" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "c.json")


def test_a_manifest_names_the_dataset(tmp_path, tiny_runs):
    import manifest
    cfg, runs, verdicts = tiny_runs
    assert run_cli(manifest.main, [cfg, "--backends", "none", "oracle", "keyword", "--out-dir", str(tmp_path)]) == 0
    out = tmp_path / "c.json"
    m = str(next(tmp_path.glob("manifest-*.json")))
    code = run_cli(check.main, ["--runs", *runs, "--verdicts", verdicts, "--manifest", m, "--out", str(out)])
    data = json.loads(out.read_text())
    # without --config the default thresholds hold: the fake endpoint's none, which echoes nothing
    # but declines, stays under none_max, and the tiny histories fill less than budget_use_min
    assert code == 0 and data["status"] == "WARN"
    assert {c["id"]: c["status"] for c in data["checks"]}["leakage/keyword"] == "PASS"
    assert data["thresholds"] == CHECK_DEFAULTS


def test_a_rerun_of_other_backend_code_is_refused_as_another_retrieval(tmp_path, tiny_runs, capsys):
    cfg, runs, verdicts = tiny_runs
    rerun = tmp_path / "runs-check" / "keyword-2.jsonl"
    recs = records(run_system(cfg, "keyword", rerun, "--retrieval-only"))
    write_jsonl(rerun, [{**r, "backend_code_sha256": "0" * 64} for r in recs])
    code = run_cli(check.main, ["--runs", *runs, "--verdicts", verdicts, "--config", cfg,
                                "--out", str(tmp_path / "checks.json"), "--rerun", str(rerun)])
    assert code == 2 and "field 'backend_code_sha256'" in capsys.readouterr().err


def test_docs_state_every_check_limit_with_its_default():
    text = open(os.path.join(ROOT, "docs", "checks.md"), encoding="utf-8").read()
    table = text.split("## The limits, and why", 1)[1].split("\n## ", 1)[0]
    rows = {line.split("|")[1].strip(): line for line in table.splitlines() if line.startswith("| `")}
    for key, value in CHECK_DEFAULTS.items():
        row = next(line for names, line in rows.items() if f"`{key}`" in names)
        if isinstance(value, dict) and "default" in value:
            assert all(f"{limit:.2f}" in row for limit in value.values()), (key, row)
            assert all(f"`{qtype}`" in row for qtype in value if qtype != "default"), (key, row)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            assert str(value) in row, (key, row)
        elif isinstance(value, list):
            assert all(f"{v}" in row for v in value), (key, row)
