"""make bench lets check.py's FAIL (exit 4) through, since the report shows it, and stops on any
other failure of check.py: a crash (an exception, exit 1) or input it cannot read (exit 2). The
Makefile's own `retrieval` and `answers` recipes run as written, by make, in a folder where every
stage is a stand-in script that records that it ran, and check.py ends each way in turn."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

STAGES = ("manifest.py", "run.py", "judge.py", "score.py", "artifacts.py", "report.py")
RECORD = ("import os, sys\n"
          "with open(os.environ['STAGES_RAN'], 'a', encoding='utf-8') as fh:\n"
          "    fh.write(os.path.basename(sys.argv[0]) + '\\n')\n")
ENDINGS = {
    "crash": "raise RuntimeError('a bug in check.py')\n",  # Python's own exit 1 and traceback
    "bad_input": "sys.exit(2)\n",
    "fail": "sys.exit(4)\n",
    "pass": "sys.exit(0)\n",
}
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def make(tmp_path, target: str, ending: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    """`make TARGET` on a copy of the Makefile beside stand-in stages; (make's result, the stages
    that ran, in order)."""
    shutil.copy(os.path.join(ROOT, "Makefile"), tmp_path / "Makefile")
    for name in STAGES:
        (tmp_path / name).write_text(RECORD, encoding="utf-8")
    (tmp_path / "check.py").write_text(RECORD + ENDINGS[ending], encoding="utf-8")
    (tmp_path / "stages.py").write_text("", encoding="utf-8")  # the stage lines: not under test here
    (tmp_path / "config.yaml").write_text("run_id: t\n", encoding="utf-8")
    # The set-up stamps `retrieval` needs, each newer than what it is made from, so make builds none.
    for i, name in enumerate(("requirements.txt", "requirements-plots.txt", "backends/requirements-dense.txt",
                              "backends/requirements-llamaindex.txt", ".venv/.core", ".venv/.plots", ".venv/.free")):
        path = tmp_path / name
        path.parent.mkdir(exist_ok=True)
        path.write_text("", encoding="utf-8")
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
    ran = tmp_path / "ran.txt"
    env = {**os.environ, "STAGES_RAN": str(ran)}
    env.pop("MAKEFLAGS", None)
    result = subprocess.run(["make", "--no-print-directory", target, f"PY={sys.executable}", "RUN_ID=t"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    return result, ran.read_text(encoding="utf-8").split() if ran.exists() else []


@pytest.mark.parametrize("target", ["retrieval", "answers"])
@pytest.mark.parametrize("ending", ["crash", "bad_input"])
def test_a_crash_or_bad_input_in_check_py_stops_the_recipe(tmp_path, target, ending):
    result, ran = make(tmp_path, target, ending)
    assert result.returncode != 0, result.stdout + result.stderr
    assert ran[-1] == "check.py" and "score.py" not in ran and "report.py" not in ran
    if ending == "crash":
        assert "RuntimeError: a bug in check.py" in result.stderr


@pytest.mark.parametrize("target", ["retrieval", "answers"])
@pytest.mark.parametrize("ending", ["fail", "pass"])
def test_a_fail_of_the_checks_is_let_through_to_the_report(tmp_path, target, ending):
    result, ran = make(tmp_path, target, ending)
    assert result.returncode == 0, result.stdout + result.stderr
    after = ["check.py", "score.py", *(["artifacts.py"] if target == "retrieval" else []), "report.py"]
    assert ran[ran.index("check.py"):] == after


def test_check_py_states_its_exit_codes_in_its_help_and_docs():
    import check
    from cli import EXIT_CHECK_FAILED
    assert EXIT_CHECK_FAILED == 4
    assert "4 a check FAILed" in check.__doc__ and "1 an unexpected\nerror in check.py" in check.__doc__
    text = open(os.path.join(ROOT, "docs", "checks.md"), encoding="utf-8").read()
    assert "**4** a check FAILed" in text and "**1** an unexpected error in check.py" in text
    for doc in ("README.md", os.path.join("docs", "checks.md"), "Makefile", "report_provenance.py"):
        body = open(os.path.join(ROOT, doc), encoding="utf-8").read()
        assert "-eq 4 ]" in body and "-eq 1 ]" not in body, doc

