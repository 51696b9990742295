"""How the code is laid out, checked: no stage imports another stage, the shared contract modules
import nothing from backends/, backends/ import no top-level script, a backend is given its own config
section and the harness keys only, and answerability has one definition."""
from __future__ import annotations

import ast
import os
import re

import backends
import backends.keyword
from backends import HARNESS_KEYS, load_backend
from config import load_config
from conftest import ROOT, write_config

# The stage scripts (one verb each) and the other top-level scripts; the rest of the root's
STAGES = {"manifest", "run", "judge", "check", "score", "report", "merge", "audit", "compare", "artifacts", "panel",
          "sweep"}
SCRIPTS = STAGES | {"serve", "bundle"}


def imports(path: str) -> set[str]:
    """The top-level modules a file imports."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            out.add(node.module.split(".")[0])
    return out


def test_no_stage_imports_another_stage():
    for stage in sorted(STAGES):
        assert not imports(os.path.join(ROOT, f"{stage}.py")) & (STAGES - {stage}), stage


def test_no_shared_module_imports_a_script():
    # report.py's parts (report_*.py) and the shared modules are imported by scripts, never the
    # reverse, so that running one stage never loads another.
    for name in sorted(f for f in os.listdir(ROOT) if f.endswith(".py") and f[:-3] not in SCRIPTS):
        assert not imports(os.path.join(ROOT, name)) & SCRIPTS, name


# The modules that define the contract, its files and its config: backends build on them.
CONTRACT_MODULES = ("contract", "cli", "fileio", "dataset", "formats", "config")


def test_the_contract_modules_import_nothing_from_backends_and_backends_import_no_script():
    for module in CONTRACT_MODULES:
        assert "backends" not in imports(os.path.join(ROOT, f"{module}.py")), module
    folder = os.path.join(ROOT, "backends")
    for name in sorted(f for f in os.listdir(folder) if f.endswith(".py")):
        assert not imports(os.path.join(folder, name)) & SCRIPTS, name


def test_the_data_generators_and_importers_import_no_script():
    folder = os.path.join(ROOT, "data")
    for name in sorted(f for f in os.listdir(folder) if f.endswith(".py")):
        assert not imports(os.path.join(folder, name)) & SCRIPTS, name


def test_a_backend_gets_its_own_section_and_the_harness_keys_never_the_dataset(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(backends.keyword, "create", lambda section, config: seen.append((section, config)))
    cfg = load_config(write_config(tmp_path, backends={"keyword": {"k1": 1}, "hash": {"dim": 8}}))
    load_backend("keyword", cfg)
    section, config = seen[0]
    assert section == {"k1": 1} and set(config) == set(HARNESS_KEYS)
    assert cfg["dataset"] not in repr(config) and "backends" not in config


def test_answerability_has_one_definition():
    # contract.is_answerable decides it for every number and check; rules.py may say whether
    # a gold declines, for its rubric. No other module of the harness defines answerability or
    # reads the types that decide it.
    pattern = re.compile(r"def is_\w*answerable\(|UNANSWERABLE_TYPES")
    found = set()
    for folder in ("", "backends"):
        for name in os.listdir(os.path.join(ROOT, folder)):
            if name.endswith(".py"):
                with open(os.path.join(ROOT, folder, name), encoding="utf-8") as fh:
                    if pattern.search(fh.read()):
                        found.add(os.path.join(folder, name))
    assert found <= {"contract.py", "rules.py"}, found


# Files and functions a newcomer can hold: no module of the harness (the root, backends/, data/)
# over 900 lines, no function over 80.
MAX_FILE_LINES, MAX_FUNCTION_LINES = 900, 80
LONG_FILES: set[str] = set()
LONG_FUNCTIONS: set[tuple[str, str]] = set()


def test_no_module_is_over_900_lines_and_no_function_over_80():
    too_long = set()
    for folder in ("", "backends", "data"):
        for name in sorted(os.listdir(os.path.join(ROOT, folder))):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
                text = fh.read()
            if text.count("\n") > MAX_FILE_LINES and path not in LONG_FILES:
                too_long.add(path)
            for node in ast.walk(ast.parse(text)):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES and (path, node.name) not in LONG_FUNCTIONS:
                    too_long.add(f"{path}: {node.name}")
    assert not too_long, too_long
