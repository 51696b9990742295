"""score.py reads the instrument's own checks and the grader's calibration, and refuses those
made for other runs or another grader."""
from __future__ import annotations

import json

import check
import judge
import manifest
import run
import score
from cli import run_cli
from conftest import ROOT, write_config

SYSTEMS = ("none", "oracle", "keyword")


def pipeline(tmp_path, config) -> tuple[list[str], str, str]:
    runs = []
    for b in SYSTEMS:
        runs.append(str(tmp_path / f"{b}.jsonl"))
        assert run_cli(run.main, ["--config", config, "--backend", b, "--out", runs[-1]]) == 0
    verdicts = str(tmp_path / "verdicts.jsonl")
    assert run_cli(judge.main, ["--config", config, "--runs", *runs, "--out", verdicts]) == 0
    assert run_cli(manifest.main, [config, "--out-dir", str(tmp_path)]) == 0
    return runs, verdicts, str(next(tmp_path.glob("manifest-*.json")))


def test_checks_and_calibration_are_carried_into_the_scores(tmp_path, fake_llm, config, capsys):
    runs, verdicts, m = pipeline(tmp_path, config)
    checks = str(tmp_path / "checks.json")
    assert run_cli(check.main, ["--runs", *runs, "--verdicts", verdicts, "--manifest", m, "--config", config, "--out", checks]) in (0, 4)
    cal = str(tmp_path / "calibration.json")
    assert run_cli(judge.main, ["--config", config, "--calibrate", f"{ROOT}/data/calibration.jsonl",
                                "--out", cal]) == 0
    out = tmp_path / "scores.json"
    assert run_cli(score.main, ["--config", config, "--runs", *runs, "--verdicts", verdicts, "--baseline", "keyword", "--checks", checks,
                                "--calibration", cal, "--json", str(out), "--resamples", "20"]) == 0
    s = json.loads(out.read_text())
    assert s["checks"]["status"] == json.load(open(checks))["status"]
    assert s["calibration"]["overall"]["false_accepts"] == 0 and s["calibration"]["grading"] == "rules only"
    # The control verdicts are check.py's, quoted on stdout, not a second opinion with other thresholds.
    controls = [c for c in json.load(open(checks))["checks"] if c["check"] == "controls"]
    assert [c["id"] for c in s["checks"]["controls"]] == [c["id"] for c in controls]
    out = capsys.readouterr().out
    assert all(f"check.py {c['id']}: {c['status']}: {c['summary']}" in out for c in controls)


def test_checks_of_other_runs_and_calibration_of_another_grader_are_refused(tmp_path, fake_llm, config, capsys):
    runs, verdicts, m = pipeline(tmp_path, config)
    checks = str(tmp_path / "checks.json")
    assert run_cli(check.main, ["--runs", *runs, "--verdicts", verdicts, "--manifest", m, "--config", config, "--out", checks]) in (0, 4)
    (tmp_path / "judged").mkdir()
    judged = write_config(tmp_path / "judged", judge_model="fake-judge")
    cal = str(tmp_path / "calibration.json")
    assert run_cli(judge.main, ["--config", judged, "--calibrate", f"{ROOT}/data/calibration.jsonl",
                                "--out", cal]) == 0
    base = ["--config", config, "--runs", *runs, "--verdicts", verdicts, "--baseline", "keyword", "--resamples", "20"]
    capsys.readouterr()
    assert run_cli(score.main, base + ["--calibration", cal]) == 2
    assert "calibrates another grader" in capsys.readouterr().err
    with open(runs[0], "a", encoding="utf-8") as fh:
        fh.write("\n")  # the same records, another file: the checks no longer describe it
    assert run_cli(score.main, base + ["--checks", checks]) == 2
    assert "rerun check.py" in capsys.readouterr().err


def test_checks_of_verdicts_graded_again_since_are_refused_by_score_and_report(tmp_path, fake_llm, config, capsys):
    import report
    runs, verdicts, m = pipeline(tmp_path, config)
    checks = str(tmp_path / "checks.json")
    assert run_cli(check.main, ["--runs", *runs, "--verdicts", verdicts, "--manifest", m, "--config", config,
                                "--out", checks]) in (0, 4)
    scores = str(tmp_path / "scores.json")
    base = ["--config", config, "--runs", *runs, "--baseline", "keyword", "--resamples", "20", "--json", scores]
    assert run_cli(score.main, [*base, "--verdicts", verdicts, "--checks", checks]) == 0
    # The same verdicts in another order: another file by its sha256, as after judge.py grades again.
    lines = open(verdicts, encoding="utf-8").readlines()
    regraded = str(tmp_path / "regraded.jsonl")
    open(regraded, "w", encoding="utf-8").writelines(reversed(lines))
    capsys.readouterr()
    assert run_cli(score.main, [*base, "--verdicts", regraded, "--checks", checks]) == 2
    err = capsys.readouterr().err
    assert f"{checks}: checked other verdicts than these" in err and "rerun check.py" in err
    assert run_cli(score.main, [*base, "--verdicts", regraded]) == 0  # scores.json of the regraded verdicts
    report_args = ["--scores", scores, "--manifest", m, "--runs", *runs, "--verdicts", regraded,
                   "--out", str(tmp_path / "report.md")]
    assert run_cli(report.main, [*report_args, "--checks", checks]) == 2
    assert f"{checks}: checked other verdicts than these" in capsys.readouterr().err
    assert run_cli(report.main, report_args) == 0
