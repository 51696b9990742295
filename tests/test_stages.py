"""stages.py, make bench's "stage N of M" line: the count, the time spent, and the rest
estimated from the steps of each kind already timed, never from a kind not yet measured; and the
Makefile's plans agree with the steps its recipes announce."""
from __future__ import annotations

import os
import re

import pytest

import stages
from cli import InputError
from conftest import ROOT


def test_the_rest_is_estimated_from_the_kinds_timed_and_names_those_not_yet_measured():
    state = stages.new_state(["manifest", "run", "run", "run", "judge"], now=0.0)
    state, line = stages.stage_line(state, "manifest", "manifest.py", now=0.0)
    assert line == "== stage 1 of 5: manifest.py; 0 s spent; the rest is estimated once steps are timed"
    state, line = stages.stage_line(state, "run", "run.py keyword", now=2.0)
    assert line == "== stage 2 of 5: run.py keyword; 2 s spent; to go: judge, run, not yet measured"
    state, line = stages.stage_line(state, "run", "run.py bm25", now=62.0)  # keyword's run took 60 s
    assert line == ("== stage 3 of 5: run.py bm25; 1 min 02 s spent; about 2 min 00 s to go, and judge, not yet "
                    "measured")
    state, line = stages.stage_line(state, "run", "run.py hash", now=162.0)  # bm25's took 100 s: mean 80 s
    assert line.endswith("2 min 42 s spent; about 1 min 20 s to go, and judge, not yet measured")
    state, line = stages.stage_line(state, "judge", "judge.py", now=232.0)
    assert line == "== stage 5 of 5: judge.py; 3 min 52 s spent; to go: judge, not yet measured"


def test_a_step_the_plan_does_not_hold_is_refused_naming_both():
    state = stages.new_state(["manifest", "run"], now=0.0)
    with pytest.raises(InputError, match=r"step 1 is a 'run' step \(run.py x\), but the plan has 'manifest' there"):
        stages.stage_line(state, "run", "run.py x", now=0.0)
    state, _ = stages.stage_line(state, "manifest", "m", now=0.0)
    state, _ = stages.stage_line(state, "run", "r", now=1.0)
    with pytest.raises(InputError, match="beyond the plan of 2 steps"):
        stages.stage_line(state, "run", "r", now=2.0)


def test_the_cli_begins_counts_and_ends(tmp_path, capsys):
    state = str(tmp_path / "stages.json")
    assert stages.main(["--state", state, "begin", "manifest", "run"]) == 0
    assert stages.main(["--state", state, "stage", "manifest", "manifest.py"]) == 0
    assert stages.main(["--state", state, "stage", "run", "run.py keyword"]) == 0
    assert stages.main(["--state", state, "end"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("== stage 1 of 2: manifest.py") and err[1].startswith("== stage 2 of 2: run.py keyword")
    assert err[2].startswith("== 2 of 2 stages done in ") and not os.path.exists(state)


def kinds(recipe: str) -> list[str]:
    """The kinds a recipe announces, a loop's once."""
    return re.findall(r"\$\(STAGES\) stage ([\w-]+)", recipe)


def plan(text: str, name: str) -> list[str]:
    """A plan variable of the Makefile, a $(foreach ...) as one kind."""
    value = re.search(rf"^{name} = (.*)$", text, re.M).group(1)
    return re.sub(r"\$\(foreach \w+,\$\(\w+\),([\w-]+)\)", r"\1", value).split()


def test_the_makefiles_plans_are_the_steps_its_recipes_announce():
    with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as fh:
        text = fh.read()
    recipes = {m.group(1): m.group(2) for m in re.finditer(r"^(\w+):[^\n]*\n((?:\t[^\n]*\n)+)", text, re.M)}
    assert kinds(recipes["retrieval"]) == plan(text, "RETRIEVAL_PLAN")
    assert kinds(recipes["answers"]) == plan(text, "ANSWERS_PLAN")
    assert kinds(recipes["bench"]) == ["setup"]
    assert "$(RETRIEVAL_PLAN) $(if $(LLM_BASE_URL),,setup) $(ANSWERS_PLAN)" in recipes["bench"]
