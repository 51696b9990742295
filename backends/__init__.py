"""Systems under test. Each backend is one module in this folder, named as the backend, with a
`create(section, config)` function that returns an object satisfying contract.MemoryBackend.

`section` is the backend's section of config.yaml (`backends: {NAME: {...}}`, empty when absent);
`config` is what the harness passes every backend (HARNESS_KEYS: the pinned answer model and
the client settings, for backends that call the model themselves), never the dataset or another
section: a backend cannot read the golds. A module also has `settings(section) -> dict`, which
checks its section (keys, types, values) and fills defaults without starting anything:
`python -m backends check-config config.yaml` calls it.
A section may name another module with `adapter:` so that one adapter serves several presets
(for example `chroma_http: {adapter: http, base_url: ...}`).
"""
from __future__ import annotations

import ast
import hashlib
import importlib
import os
import re

from cli import InputError
from config import did_you_mean
from contract import CONTROL_NAMES, MemoryBackend
from fileio import loads, sha256_file

_NAME = re.compile(r"[a-z][a-z0-9_]*")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# The keys of the config a backend is given besides its own section: the model a backend that
# calls one must use (the pinned answer model) and what llm.LLMClient reads. Not the dataset's
# path, not the other backends' sections, not the checks.
HARNESS_KEYS = ("answer_model", "answer_sampling", "seed", "request_timeout_s", "max_retries", "retry_backoff_s",
                "cache_dir")


def available() -> list[str]:
    """Backend names that have a module in this folder."""
    here = os.path.dirname(__file__)
    return sorted(f[:-3] for f in os.listdir(here)
                  if f.endswith(".py") and not f.startswith("_") and _NAME.fullmatch(f[:-3]))


def names(config: dict) -> list[str]:
    """Every name --backend takes with this config: the controls, the modules of this folder and
    the config's named presets (a section with an adapter, such as bm25_recency)."""
    presets = [n for n in config["backends"] if n not in CONTROL_NAMES and n not in available()]
    return list(CONTROL_NAMES) + available() + presets


def _module(name: str, config: dict):
    """The module behind backend `name` (its section may name an `adapter`) and its settings."""
    settings = dict(config["backends"].get(name, {}))  # a backend may have no section
    module_name = settings.pop("adapter", name)
    if not isinstance(module_name, str) or not _NAME.fullmatch(module_name) or module_name not in available():
        if module_name != name:  # a preset's adapter names a module
            raise InputError(f"unknown backend module {module_name!r} in backends.{name}.adapter"
                             f"{did_you_mean(str(module_name), available())}; choose one of: {', '.join(available())}")
        choices = names(config)
        raise InputError(f"unknown backend {name!r}{did_you_mean(name, choices)}; choose one of: {', '.join(choices)}")
    return importlib.import_module(f"backends.{module_name}"), module_name, settings


def _in_section(e: InputError, name: str, module_name: str) -> InputError:
    """The adapter names keys after itself; say which section of config.yaml holds them."""
    if module_name == name:
        return e
    return InputError(f"{e} (in the section backends.{name}, which uses adapter {module_name})")


def check_section(name: str, config: dict) -> dict:
    """Validate backend `name`'s section of config.yaml without starting the system (each module's
    settings(): keys, types, values); returns the settings with defaults filled."""
    module, module_name, settings = _module(name, config)
    if not callable(getattr(module, "settings", None)):  # the one function check-config needs
        raise InputError(f"backends/{module_name}.py has no function settings(section) -> dict, which checks its "
                         f"config section and fills defaults without starting anything (backends/README.md)")
    try:
        return module.settings(settings)
    except InputError as e:
        raise _in_section(e, name, module_name) from None


def load_backend(name: str, config: dict) -> MemoryBackend:
    """Create the backend called `name`, configured from config['backends'][name] and given
    only the HARNESS_KEYS of the rest of the config (a config from config.load_config, which
    fills every one of them)."""
    module, module_name, settings = _module(name, config)
    harness = {k: config[k] for k in HARNESS_KEYS}
    try:
        return module.create(settings, harness)
    except InputError as e:
        raise _in_section(e, name, module_name) from None
    except Exception as e:
        # A system that cannot start (a server down, a model missing) fails every question the
        # same way: one line and exit 2, before any model call, not a traceback.
        raise InputError(f"backend {name!r} could not start: {type(e).__name__}: {e}") from None


def code_sha256(name: str, config: dict) -> str:
    """The identity of backend `name`'s code: sha256 over its module, every module of this folder
    it imports (directly or through another, found in the source, so a helper such as _embed.py
    or keyword.py's tokenizer counts), and the files its module lists in CODE_FILES (paths from
    the repository root: data or prompts it reads). run.py records it in every record and
    refuses to resume a file written by other code: an edit without a version bump must not
    reuse answers the edited code would not give."""
    module, module_name, _ = _module(name, config)
    files = {os.path.join(HERE, f"{m}.py") for m in _imported_modules(module_name)}
    files |= {os.path.join(ROOT, f) for f in getattr(module, "CODE_FILES", ())}  # optional declaration
    lines = []
    for path in sorted(files):
        try:
            lines.append(f"{os.path.relpath(path, ROOT)}\0{sha256_file(path)}\n")
        except OSError as e:
            raise InputError(f"backend {name!r}: cannot read {path} ({e.strerror}), which it declares "
                             f"in CODE_FILES") from None
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def _imported_modules(module_name: str) -> set[str]:
    """module_name and every module of this folder it imports, transitively (static imports,
    those inside functions included)."""
    seen: set[str] = set()
    todo = [module_name]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        with open(os.path.join(HERE, f"{name}.py"), encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                todo += [a.name.split(".")[1] for a in node.names if a.name.startswith("backends.")]
            elif isinstance(node, ast.ImportFrom):
                todo += _modules_named(node)
    return seen


def _modules_named(node: ast.ImportFrom) -> list[str]:
    """The modules of this folder a `from ... import ...` names: x in `from backends.x import
    ...` and `from .x import ...`; each name that is a file here in `from backends import ...`
    and `from . import ...`."""
    if node.level == 0 and node.module and node.module.startswith("backends."):
        return [node.module.split(".")[1]]
    if node.level == 1 and node.module:
        return [node.module.split(".")[0]]
    if (node.level == 0 and node.module == "backends") or (node.level == 1 and not node.module):
        return [a.name for a in node.names if os.path.exists(os.path.join(HERE, f"{a.name}.py"))]
    return []


def require(package: str, backend: str):
    """Import an optional dependency lazily; a missing one is one clear line naming the file."""
    try:
        return importlib.import_module(package)
    except ImportError as e:
        raise InputError(f"backend {backend!r} needs {package!r} ({e.msg}); install it with: "
                         f"pip install -r backends/requirements-{backend}.txt") from None


def check_settings(settings: dict, allowed: dict, backend: str) -> dict:
    """Validate a backend's config section: unknown keys and wrong types name the key.
    `allowed` maps key -> (types, default); the result has every default filled in."""
    for key, value in settings.items():
        if key not in allowed:
            raise InputError(f"config: unknown key 'backends.{backend}.{key}'{did_you_mean(key, allowed)}; "
                             f"known keys: {', '.join(allowed) or '(none)'}")
        kinds = allowed[key][0]
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            raise InputError(f"config: key 'backends.{backend}.{key}' has the wrong type "
                             f"({type(value).__name__})")
    return {key: settings.get(key, default) for key, (_, default) in allowed.items()}


def store_name(prefix: str, namespace: str, length: int = 32) -> str:
    """A name for a namespace's store that every store accepts (collections, banks, group ids,
    datasets allow few characters, and some a short name): the prefix, then the first `length`
    hex digits of the namespace's sha256, so that any namespace maps to one valid, distinct name."""
    return prefix + hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:length]


def dig(obj, dotted: str):
    """obj['a']['b'] for 'a.b' ('' is obj itself); None when any step is missing."""
    for part in dotted.split(".") if dotted else ():
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


def json_object(text: str, what: str) -> dict:
    """The JSON object of a model's reply (a wrapping ``` fence removed); anything else raises,
    naming what the reply was to (what), so a write fails instead of storing nothing."""
    body = text.strip()
    if body.startswith("```"):
        body = re.sub(r"^```[a-zA-Z0-9_-]*[ \t]*\r?\n?", "", body)
        body = re.sub(r"\r?\n?```[ \t]*$", "", body).strip()
    try:
        value = loads(body)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise RuntimeError(f"{what} is not a JSON object: {text[:200]!r}")
    return value


def extractor_client(config: dict, mode: str, workers: int = 4, note: str = ""):
    """The llm.LLMClient through which an LLM mode's system calls the pinned answer model; without
    an endpoint, the InputError says that mode (e.g. "'cognee' with graph: true") needs one."""
    from llm import LLMClient
    try:
        return LLMClient(config, workers=workers)
    except InputError as e:
        raise InputError(f"backend {mode} calls the answer model on every write{note}: {e}") from None
