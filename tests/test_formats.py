"""Every record says its format (run/4, verdict/2, checks/2, manifest/2, calibration/1, audit/1,
audit_key/1; scores/2 in test_report.py), and a reader refuses another version, or a record
without one, naming path:line, the version found, the version it reads and the fix, instead of
growing a branch for what an older writer lacked."""
from __future__ import annotations

import json
import os

import pytest

import check
import judge
import report
import score
from cli import run_cli
from conftest import ROOT
from formats import (AUDIT_FORMAT, AUDIT_KEY_FORMAT, CALIBRATION_FORMAT, MANIFEST_FORMAT, RUN_FORMAT, VERDICT_FORMAT,
                     read_audit_json, read_audit_key, read_calibration_json, read_manifest)
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


def verdict_stage(name: str, cfg: str, runs: list[str], verdicts: str, tmp_path) -> int:
    """A stage that reads the verdicts file: judge.py resuming it, score.py, check.py, merge.py
    or audit.py sample; its exit code."""
    import audit
    import merge
    if name == "judge":
        return run_cli(judge.main, ["--config", cfg, "--runs", *runs, "--out", verdicts])
    if name == "merge":
        return run_cli(merge.main, [verdicts, "--verdicts", "--runs", *runs, "--out", str(tmp_path / "merged.jsonl"),
                                    "--config", cfg])
    if name == "audit":
        return run_cli(audit.main, ["sample", "--verdicts", verdicts, "--n", "1",
                                    "--out-sheet", str(tmp_path / "s.csv")])
    return stage(name, cfg, runs, verdicts, tmp_path)


@pytest.mark.parametrize("name", ["judge", "score", "check", "merge", "audit"])
@pytest.mark.parametrize("change, message", [
    (lambda v: {**v, "format": "verdict/0"},
     f"a verdict record of format 'verdict/0'; this code reads format {VERDICT_FORMAT!r} only: rerun judge.py "
     f"with --fresh"),
    (lambda v: {k: x for k, x in v.items() if k != "format"},
     f"no field 'format' (every verdict record of format {VERDICT_FORMAT!r} has one): rerun judge.py with --fresh"),
    (lambda v: {k: x for k, x in v.items() if k != "case_id"},
     f"not a verdict of format {VERDICT_FORMAT!r} (no field 'case_id'); rerun judge.py with --fresh"),
])
def test_every_stage_refuses_the_same_faulty_verdict_the_same_way(tmp_path, capsys, name, change, message):
    # One function reads a verdict for all of them (formats.check_verdict): the same fault planted
    # in the file gets the same line, naming path:line, what is wrong and the fix, from each.
    runs, verdicts, cfg = comparison(tmp_path)
    rewrite_second_line(verdicts, change)
    assert verdict_stage(name, cfg, runs, verdicts, tmp_path) == 2
    assert f"{verdicts}:2: {message}" in capsys.readouterr().err


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
    assert f"{checks}: a checks record of format 'checks/0'; this code reads format 'checks/2' only: rerun check.py" \
        in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# The summaries beside the runs: the manifest, calibration.json, the audit key and audit.json
# ---------------------------------------------------------------------------------------------

def written_by_their_stages(tmp_path) -> dict:
    """A manifest (manifest.py), calibration.json (judge.py --calibrate, rules only), and an
    audit key and audit.json (audit.py sample, then join on the unlabelled sheet) of one
    comparison: {name: path} with the comparison's runs, verdicts and config."""
    import audit
    import manifest
    runs, verdicts, cfg = comparison(tmp_path)
    out = {"runs": runs, "verdicts": verdicts, "config": cfg}
    assert run_cli(manifest.main, [cfg, "--backends", "keyword", "--out-dir", str(tmp_path / "m")]) == 0
    out["manifest"] = str(next((tmp_path / "m").glob("manifest-*.json")))
    # The runs are written by hand: they carry the code and version the manifest recorded, as
    # run.py's records would, so that only the format under test differs.
    entry = next(b for b in read_manifest(out["manifest"])["backends"] if b["name"] == "keyword")
    for path in runs:
        rows = [{**r, "backend_code_sha256": entry["code_sha256"], "backend_version": entry["version"]}
                for r in read_records(path)]
        with open(path, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows)
    out["calibration"] = str(tmp_path / "calibration.json")
    assert run_cli(judge.main, ["--config", cfg, "--calibrate", os.path.join(ROOT, "data", "calibration.jsonl"),
                                "--out", out["calibration"]]) in (0, 3)
    out["sheet"], out["key"], out["audit"] = (str(tmp_path / n) for n in ("s.csv", "key.jsonl", "audit.json"))
    assert run_cli(audit.main, ["sample", "--verdicts", verdicts, "--n", "2", "--out-sheet", out["sheet"],
                                "--out-key", out["key"]]) == 0
    run_cli(audit.main, ["join", out["sheet"], out["key"], "--out", out["audit"]])  # unlabelled: incomplete
    return out


def test_each_summary_is_written_with_its_format_and_read_back(tmp_path):
    f = written_by_their_stages(tmp_path)
    assert json.load(open(f["manifest"]))["format"] == MANIFEST_FORMAT
    assert json.load(open(f["calibration"]))["format"] == CALIBRATION_FORMAT
    assert json.load(open(f["audit"]))["format"] == AUDIT_FORMAT
    assert {k["format"] for k in read_records(f["key"])} == {AUDIT_KEY_FORMAT}
    assert read_manifest(f["manifest"])["dataset_sha256"] and read_calibration_json(f["calibration"])["grader"]
    assert read_audit_json(f["audit"])["sampled"] == 2 and len(read_audit_key(f["key"])) == 2


@pytest.mark.parametrize("which, kind, fix", [
    ("manifest", "manifest", "rerun manifest.py with the runs' config"),
    ("calibration", "calibration", "rerun judge.py --calibrate"),
    ("audit", "audit", "rerun audit.py join on the labelled sheet and its key"),
])
def test_a_summary_of_another_format_is_refused_by_its_one_reader_with_the_fix(tmp_path, capsys, which, kind, fix):
    # score.py reads each of them; report.py reads the manifest, and the calibration and the audit
    # only as score.py put them into scores.json (a fault planted after scoring reaches no report).
    f = written_by_their_stages(tmp_path)
    scores = str(tmp_path / "scores.json")
    argv = ["--runs", *f["runs"], "--verdicts", f["verdicts"], "--baseline", "keyword", "--resamples", "20",
            "--manifest", f["manifest"], "--json", scores]
    extra = {"manifest": [], "calibration": ["--calibration", f["calibration"]], "audit": ["--audit", f["audit"]]}
    assert run_cli(score.main, argv) == 0  # this format is read (the grader is the rules' in both)
    report_argv = ["--scores", scores, "--manifest", f["manifest"], "--runs", *f["runs"], "--verdicts", f["verdicts"],
                   "--out", str(tmp_path / "report.md")]
    assert run_cli(report.main, report_argv) == 0
    summary = json.load(open(f[which]))
    with open(f[which], "w", encoding="utf-8") as fh:
        json.dump({**summary, "format": f"{kind}/0"}, fh)
    capsys.readouterr()
    expected = {"manifest": MANIFEST_FORMAT, "calibration": CALIBRATION_FORMAT, "audit": AUDIT_FORMAT}[which]
    message = f"{f[which]}: a {kind} record of format '{kind}/0'; this code reads format '{expected}' only: {fix}"
    assert run_cli(score.main, argv + extra[which]) == 2
    assert message in capsys.readouterr().err
    assert run_cli(report.main, report_argv) == (2 if which == "manifest" else 0)
    assert (message in capsys.readouterr().err) == (which == "manifest")


def test_an_audit_key_line_of_another_format_is_refused_naming_path_line(tmp_path, capsys):
    import audit
    f = written_by_their_stages(tmp_path)
    keys = read_records(f["key"])
    keys[1] = {k: v for k, v in keys[1].items() if k != "format"}
    with open(f["key"], "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(k) + "\n" for k in keys)
    capsys.readouterr()
    assert run_cli(audit.main, ["join", f["sheet"], f["key"], "--out", f["audit"]]) == 2
    assert (f"{f['key']}:2: no field 'format' (every audit_key record of format {AUDIT_KEY_FORMAT!r} has one): draw "
            f"a new sample with audit.py sample and label its sheet") in capsys.readouterr().err
