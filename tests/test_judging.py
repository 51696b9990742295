"""judge.py's verdict record under the current rules: the judge's optional one-sentence reason is
kept (`judge_reason`, null when it gave none or no judge decided), and verdicts made by other
rules are refused, with the fix."""
from __future__ import annotations

import json

import judge
import score
from cli import run_cli
from records import read_records, run_record, verdict_for, write_comparison, write_jsonl

# The hash of a rule set this code no longer has: verdicts that carry it were made by other rules.
RULES_BEFORE = "d8f576e0aeb21b13637b7c9e364043c050a649a7eaef25a5be307691ce889099"


def judged(tmp_path, recs: list[dict]) -> dict:
    runs, _, cfg = write_comparison(tmp_path, {"keyword": recs}, judge_model="fake-judge", workers=1)
    out = tmp_path / "judged.jsonl"
    assert run_cli(judge.main, ["--config", cfg, "--runs", *runs, "--out", str(out)]) == 0
    return {v["qid"]: v for v in map(json.loads, out.read_text().splitlines())}


def test_the_verdict_keeps_the_judges_reason_and_null_without_one(tmp_path, fake_llm):
    recs = [run_record("keyword", "q1", "c1", "Postgres 14", [], [], gold_answer="Postgres 16"),
            run_record("keyword", "q2", "c2", "Postgres 16", [], [], gold_answer="Postgres 16")]
    fake_llm.script = [{"content": json.dumps({"verdict": "incorrect", "reason": "It names Postgres 14, not 16."})}]
    verdicts = judged(tmp_path, recs)
    assert verdicts["q1"]["by"] == "llm" and verdicts["q1"]["verdict"] == "incorrect"
    assert verdicts["q1"]["judge_reason"] == "It names Postgres 14, not 16."
    assert verdicts["q2"]["by"] == "exact" and verdicts["q2"]["judge_reason"] is None


def test_a_judge_reply_without_a_reason_is_still_a_verdict(tmp_path, fake_llm):
    fake_llm.judge_always = "correct"  # {"verdict": "correct"}, no reason
    verdicts = judged(tmp_path, [run_record("keyword", "q1", "c1", "It is probably 16", [], [], gold_answer="16")])
    assert verdicts["q1"]["verdict"] == "correct" and verdicts["q1"]["judge_reason"] is None


def test_score_refuses_verdicts_made_before_these_rules_and_says_to_regrade(tmp_path, capsys):
    runs, verdicts, cfg = write_comparison(tmp_path, {"keyword": [run_record("keyword", "q1", "c1", "yes", [], [])]})
    old = verdict_for(read_records(runs[0])[0], "correct", grader={"rules_sha256": RULES_BEFORE, "judge_model": None,
                                                                   "judge_prompt_sha256": None})
    write_jsonl(tmp_path / "verdicts.jsonl", [old])
    assert run_cli(score.main, ["--config", cfg, "--runs", *runs, "--verdicts", verdicts, "--baseline", "keyword"]) == 2
    err = capsys.readouterr().err
    assert "another rule set" in err and RULES_BEFORE[:12] in err and "rerun judge.py" in err


def test_judge_refuses_to_resume_a_verdicts_file_without_reasons(tmp_path, capsys):
    runs, _, cfg = write_comparison(tmp_path, {"keyword": [run_record("keyword", "q1", "c1", "yes", [], [])]})
    verdict = verdict_for(read_records(runs[0])[0], "correct")
    out = write_jsonl(tmp_path / "verdicts.jsonl", [{k: v for k, v in verdict.items() if k != "judge_reason"}])
    assert run_cli(judge.main, ["--config", cfg, "--runs", *runs, "--out", out]) == 2
    err = capsys.readouterr().err
    assert "verdicts.jsonl:1" in err and "judge_reason" in err and "--fresh" in err
