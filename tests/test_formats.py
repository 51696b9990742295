"""Every record says its format (run/3, verdict/1, checks/1; scores/2 in test_report.py), and a
reader refuses another version, or a record without one, naming path:line, the version found,
the version it reads and the fix, instead of growing a branch for what an older writer lacked."""
from __future__ import annotations

import json

import pytest

import check
import judge
import score
from interface import RUN_FORMAT, VERDICT_FORMAT, run_cli
from records import read_records, run_record, write_comparison


def comparison(tmp_path) -> tuple[list[str], str, str]:
    """One keyword run of two questions, graded: (run paths, verdicts path, config)."""
    return write_comparison(tmp_path, {"keyword": [run_record("keyword", "q1", "c1", "yes", ["t1"], ["t1"]),
                                                   run_record("keyword", "q2", "c2", "no", ["t2"], ["t2"])]})


def stage(name: str, cfg: str, runs: list[str], verdicts: str, tmp_path) -> int:
    """judge.py, score.py or check.py on the comparison; its exit code."""
    if name == "judge":
        return run_cli(judge.main, ["--config", cfg, "--runs", *runs, "--out", str(tmp_path / "v2.jsonl")])
    if name == "score":
        return run_cli(score.main, ["--config", cfg, "--runs", *runs, "--verdicts", verdicts, "--baseline", "keyword",
                                    "--resamples", "20"])
    return run_cli(check.main, ["--config", cfg, "--runs", *runs, "--verdicts", verdicts,
                                "--out", str(tmp_path / "checks.json")])


def rewrite_second_line(path: str, change) -> None:
    """Apply change() to the second record of a JSONL file (the first stays of this format)."""
    rows = read_records(path)
    rows[1] = change(rows[1])
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)


@pytest.mark.parametrize("name", ["judge", "score", "check"])
@pytest.mark.parametrize("change, message", [
    (lambda r: {**r, "format": "run/1"},
     f"a run record of format 'run/1'; this code reads format {RUN_FORMAT!r} only: rerun run.py with --fresh"),
    (lambda r: {k: v for k, v in r.items() if k != "format"},
     f"no field 'format' (every run record of format {RUN_FORMAT!r} has one): rerun run.py with --fresh"),
])
def test_a_run_record_of_another_format_is_refused_naming_path_line_and_the_fix(tmp_path, capsys, name, change,
                                                                                message):
    runs, verdicts, cfg = comparison(tmp_path)
    rewrite_second_line(runs[0], change)
    assert stage(name, cfg, runs, verdicts, tmp_path) == 2
    assert f"{runs[0]}:2: {message}" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["score", "check"])
def test_a_verdict_of_another_format_is_refused_naming_path_line_and_the_fix(tmp_path, capsys, name):
    runs, verdicts, cfg = comparison(tmp_path)
    rewrite_second_line(verdicts, lambda v: {**v, "format": "verdict/0"})
    assert stage(name, cfg, runs, verdicts, tmp_path) == 2
    assert (f"{verdicts}:2: a verdict record of format 'verdict/0'; this code reads format {VERDICT_FORMAT!r} "
            f"only: rerun judge.py with --fresh") in capsys.readouterr().err


def test_judge_refuses_to_resume_verdicts_of_another_format(tmp_path, capsys):
    runs, verdicts, cfg = comparison(tmp_path)
    rewrite_second_line(verdicts, lambda v: {k: x for k, x in v.items() if k != "format"})
    assert run_cli(judge.main, ["--config", cfg, "--runs", *runs, "--out", verdicts]) == 2
    assert (f"{verdicts}:2: no field 'format' (every verdict record of format {VERDICT_FORMAT!r} has one): use "
            f"--fresh to regrade everything") in capsys.readouterr().err


def test_checks_of_another_format_are_refused_by_score(tmp_path, capsys):
    runs, verdicts, cfg = comparison(tmp_path)
    checks = tmp_path / "checks.json"
    assert stage("check", cfg, runs, verdicts, tmp_path) in (0, 1)  # no controls: SKIPs, and maybe a FAIL
    summary = json.loads(checks.read_text())
    argv = ["--config", cfg, "--runs", *runs, "--verdicts", verdicts, "--baseline", "keyword", "--resamples", "20",
            "--checks", str(checks)]
    assert run_cli(score.main, argv) == 0  # this format is read
    capsys.readouterr()
    checks.write_text(json.dumps({**summary, "format": "checks/0"}))
    assert run_cli(score.main, argv) == 2
    assert f"{checks}: a checks record of format 'checks/0'; this code reads format 'checks/1' only: rerun check.py" \
        in capsys.readouterr().err
