"""Adding a backend from the docs: the one-file template of backends/README.md passes
check-config with a section of its own, names its factory as the code calls it, and a module
without settings() is one line naming what is missing. (docs/systems.md's walk-through runs as a
runnable block in tests/test_docs.py, in a copy of the repository.)"""
from __future__ import annotations

import inspect
import os
import re
import sys
import types

import pytest

import backends
import backends.keyword
from cli import InputError
from config import load_config
from conftest import ROOT, write_config


def template() -> str:
    """The python block under "Writing an adapter in one file" in backends/README.md."""
    with open(os.path.join(ROOT, "backends", "README.md"), encoding="utf-8") as fh:
        section = fh.read().split("## Writing an adapter in one file", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_template_passes_check_config_and_names_its_factory_as_the_code_calls_it(tmp_path, monkeypatch):
    module = types.ModuleType("backends.mysys")
    exec(compile(template(), "backends/mysys.py", "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, "backends.mysys", module)
    monkeypatch.setattr(backends, "available", lambda: ["keyword", "mysys"])
    assert list(inspect.signature(module.create).parameters) == ["section", "config"]
    cfg = load_config(write_config(tmp_path, backends={"mysys": {"url": "http://127.0.0.1:9100"}}))
    assert backends.check_section("mysys", cfg) == {"url": "http://127.0.0.1:9100"}
    cfg = load_config(write_config(tmp_path, backends={"mysys": {"ur": "http://127.0.0.1:9100"}}))
    with pytest.raises(InputError, match=r"unknown key 'backends.mysys.ur'; did you mean 'url'\?"):
        backends.check_section("mysys", cfg)


def test_a_module_without_settings_is_one_line_naming_the_function(tmp_path, monkeypatch):
    monkeypatch.delattr(backends.keyword, "settings")
    cfg = load_config(write_config(tmp_path, backends={"keyword": {}}))
    with pytest.raises(InputError, match=r"backends/keyword.py has no function settings\(section\) -> dict"):
        backends.check_section("keyword", cfg)
