"""judge.py --calibrate: the configured grading, through judge.py's own layers, over the tuning
set and the held-out set; rates per kind and overall with Wilson intervals and kappa, per set,
named by the grader that produced them. A judge that accepts everything is exposed, a judge that
rejects everything lets no wrong answer through, a judge that fails counts as wrong, apart, and a
bad labelled file exits 2 naming path:line."""
from __future__ import annotations

import json
import os

import pytest

import judge
from cli import run_cli
from grading import load_calibration
from metrics import calibration_rates
from rules import RULES_SHA256, deterministic
from stats import wilson_interval
from wording import error_rate_text, rate
from conftest import ROOT, write_config
from labelled import rules_verdicts

CALIBRATION = os.path.join(ROOT, "data", "calibration.jsonl")
HELDOUT = os.path.join(ROOT, "data", "heldout.jsonl")


def calibrate(cfg: str, out, *extra: str) -> tuple[int, dict | None]:
    code = run_cli(judge.main, ["--config", cfg, "--calibrate", CALIBRATION, "--out", str(out), *extra])
    return code, json.loads(out.read_text()) if out.exists() else None


def small_heldout(tmp_path) -> str:
    """A second labelled set: every fifth tuning item under another id."""
    rows = [{**item, "id": f"h{i:03d}"} for i, item in enumerate(load_calibration(CALIBRATION)[::5])]
    path = tmp_path / "heldout.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_rules_only_calibration_reports_the_rules_rates_and_the_grader(tmp_path, capsys):
    code, report = calibrate(write_config(tmp_path), tmp_path / "calibration.json")
    assert code == 0
    items = load_calibration(CALIBRATION)
    expected = calibration_rates(items, rules_verdicts(items))
    assert expected["overall"]["false_accepts"] == 0
    assert {k: report[k] for k in ("overall", "by_kind", "kappa")} == expected
    assert report["grader"] == judge.grader_identity(None) == {"rules_sha256": RULES_SHA256, "judge_model": None,
                                                               "judge_prompt_sha256": None}
    assert report["grading"] == "rules only" and report["items"] == len(items)
    assert report["set"] == "tuning" and report["heldout"] is None
    lo, hi = report["overall"]["false_reject_ci95"]
    assert lo <= report["overall"]["false_reject_rate"] <= hi
    assert sum(report["decided_by"].values()) == len(items) and "llm" not in report["decided_by"]
    assert report["judge_failures"] == {"unparseable": 0, "judge_errors": 0, "ids": []}
    assert len(report["false_reject_ids"]) == expected["overall"]["false_rejects"]
    out = capsys.readouterr().out
    o = expected["overall"]
    # Written as score.py and the report write the same rates: wording.py's formatters.
    accepts = error_rate_text(o["false_accepts"], o["known_wrong"], o["false_accept_rate"], o["false_accept_ci95"])
    rejects = error_rate_text(o["false_rejects"], o["known_right"], o["false_reject_rate"], o["false_reject_ci95"])
    assert f"false accepts {accepts}, false rejects {rejects}, kappa {rate(expected['kappa'])};" in out
    kind, r = next((k, r) for k, r in expected["by_kind"].items() if r["known_wrong"])
    assert f"  {kind:<24} n={r['n']:<4} false accept {rate(r['false_accept_rate'])}\n" in out


def test_a_judge_that_says_correct_to_everything_is_exposed(tmp_path, fake_llm):
    fake_llm.judge_always = "correct"
    cfg = write_config(tmp_path, judge_model="yes-judge")
    code, report = calibrate(cfg, tmp_path / "calibration.json")
    assert code == 0
    items = load_calibration(CALIBRATION)
    # With a judge, the rules call correct only an answer equal to the gold; every other
    # known-wrong answer that is not a plain decline reaches the judge, which accepts it.
    to_judge = [i for i in items if deterministic(i, True) is None]
    wrong_to_judge = [i["id"] for i in to_judge if i["label"] == "incorrect"]
    assert wrong_to_judge and report["false_accept_ids"] == wrong_to_judge
    o = report["overall"]
    assert o["false_accepts"] == len(wrong_to_judge) and o["false_accept_rate"] > 0.5
    assert report["by_kind"]["hedge"]["false_accept_rate"] == 1.0
    assert report["decided_by"]["llm"] == len(to_judge)
    # The rates name this grader: score.py shows them only beside verdicts of the same judge.
    assert report["grader"] == judge.grader_identity("yes-judge")
    assert report["grader"]["judge_prompt_sha256"] is not None
    (tmp_path / "r").mkdir()
    assert calibrate(write_config(tmp_path / "r"), tmp_path / "rules.json", "--heldout", HELDOUT)[0] == 0
    rules = json.loads((tmp_path / "rules.json").read_text())
    assert rules["overall"]["false_accepts"] == rules["heldout"]["overall"]["false_accepts"] == 0


def test_unparseable_judge_output_counts_as_wrong_and_apart(tmp_path, fake_llm):
    fake_llm.judge_always = "maybe"  # valid JSON, not a verdict: unparseable
    code, report = calibrate(write_config(tmp_path, judge_model="vague-judge"), tmp_path / "calibration.json")
    assert code == 0
    judged = report["decided_by"]["llm"]
    o = report["overall"]
    # Every judged answer is counted as the grader being wrong, whatever its label.
    assert report["judge_failures"]["unparseable"] == len(report["judge_failures"]["ids"]) == judged
    assert set(report["judge_failures"]["ids"]) <= set(report["false_accept_ids"]) | set(report["false_reject_ids"])
    assert o["false_accepts"] + o["false_rejects"] >= judged


def test_failed_judge_calls_count_as_wrong_and_exit_3(tmp_path, fake_llm):
    fake_llm.script = [{"status": 500}] * 1000
    cfg = write_config(tmp_path, judge_model="down-judge", max_retries=0, workers=1)
    code, report = calibrate(cfg, tmp_path / "calibration.json")
    assert code == 3
    assert report["judge_failures"]["judge_errors"] == report["decided_by"]["llm"] > 0


def test_grading_runs_without_calibrate_still_needs_runs_and_out(tmp_path, capsys):
    cfg = write_config(tmp_path)
    with pytest.raises(SystemExit) as e:
        judge.main(["--config", cfg, "--out", str(tmp_path / "v.jsonl")])
    assert e.value.code == 2 and "--runs and --out are required" in capsys.readouterr().err


def test_a_bad_calibration_file_exits_2_naming_the_line(tmp_path, capsys):
    bad = tmp_path / "calibration.jsonl"
    bad.write_text('{"id": "c1"}\n', encoding="utf-8")
    assert run_cli(judge.main, ["--config", write_config(tmp_path), "--calibrate", str(bad),
                                "--out", str(tmp_path / "c.json")]) == 2
    assert f"{bad}:1: missing required field" in capsys.readouterr().err


def test_each_set_is_reported_apart_with_wilson_intervals(tmp_path, capsys):
    heldout = small_heldout(tmp_path)
    code, report = calibrate(write_config(tmp_path), tmp_path / "calibration.json", "--heldout", heldout)
    assert code == 0
    h = report["heldout"]
    held = load_calibration(heldout)
    assert h["set"] == "heldout" and h["calibration_set"] == heldout and h["items"] == len(held)
    assert {k: h[k] for k in ("overall", "by_kind", "kappa")} == \
        calibration_rates(held, rules_verdicts(held))
    assert h["overall"]["false_accept_ci95"] == wilson_interval(h["overall"]["false_accepts"], h["overall"]["known_wrong"])
    assert report["overall"]["n"] == len(load_calibration(CALIBRATION))  # the top level is the tuning set
    out = capsys.readouterr().out
    assert "tuning set" in out and "(tuned on)" in out and "heldout set" in out and "(never tuned on)" in out
    assert "95% CI" in out


def test_a_judge_that_says_incorrect_to_everything_accepts_no_wrong_answer_of_either_set(tmp_path, fake_llm):
    # Every known-wrong answer of the tuning and the held-out set reaches the judge or is
    # rejected by a rule: none is accepted by a rule the judge cannot overrule.
    fake_llm.judge_always = "incorrect"
    cfg = write_config(tmp_path, judge_model="no-judge", workers=2)
    code, report = calibrate(cfg, tmp_path / "calibration.json", "--heldout", HELDOUT)
    assert code == 0
    for r in (report, report["heldout"]):
        assert r["overall"]["false_accepts"] == 0 and r["false_accept_ids"] == []
        assert r["decided_by"]["llm"] > 0  # the judge was asked
        assert set(r["decided_by"]) <= {"exact", "declined", "llm"}


@pytest.mark.parametrize("which", ["--calibrate", "--heldout"])
@pytest.mark.parametrize("change, message", [
    (lambda row: {k: v for k, v in row.items() if k != "label"}, "missing required field 'label'"),
    (lambda row: {**row, "label": "right"}, "field 'label' is 'right'"),
    (lambda row: {**row, "id": "c0"}, "field 'id' 'c0' was already used on line 1"),
])
def test_a_bad_labelled_file_exits_2_naming_path_line(tmp_path, capsys, which, change, message):
    good = load_calibration(CALIBRATION)[:2]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**good[0], "id": "c0"}) + "\n" + json.dumps(change(good[1])) + "\n", encoding="utf-8")
    files = {"--calibrate": CALIBRATION, "--heldout": small_heldout(tmp_path), which: str(bad)}
    code = run_cli(judge.main, ["--config", write_config(tmp_path), "--calibrate", files["--calibrate"],
                                "--heldout", files["--heldout"], "--out", str(tmp_path / "c.json")])
    assert code == 2
    err = capsys.readouterr().err
    assert f"{bad}:2: " in err and message in err
    assert not (tmp_path / "c.json").exists()


def test_heldout_needs_calibrate(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        judge.main(["--config", write_config(tmp_path), "--heldout", CALIBRATION])
    assert e.value.code == 2 and "--heldout needs --calibrate" in capsys.readouterr().err
