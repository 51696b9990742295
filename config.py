"""config.yaml: every key it may hold, its types, ranges and defaults (CONFIG_KEYS), and
load_config, which refuses an unknown key, a wrong type or a value out of range before anything
runs; and the thresholds of check.py's checks (CHECK_DEFAULTS), which the `checks:` section
replaces key by key (check_settings)."""
from __future__ import annotations

import difflib
import os
import re
from typing import Any

import yaml

from answer_prompts import NAMED_PROMPTS, looks_like_a_name
from cli import InputError
from contract import QUESTION_TYPES

ROOT = os.path.dirname(os.path.abspath(__file__))


def results_dir(run_id: str) -> str:
    """Where a comparison's results go unless told otherwise: results/RUN_ID/, one folder per
    config run_id, so that a second comparison does not overwrite the first."""
    return os.path.join(ROOT, "results", run_id)


# Every key config.yaml may hold: (accepted types, required). An unknown key is an error, so a
# typo cannot silently fall back to a default.
CONFIG_KEYS: dict[str, tuple[tuple, bool]] = {
    "run_id": ((str,), True),
    "dataset": ((str,), True),
    "seed": ((int,), True),
    "top_k": ((int,), True),
    "context_token_budget": ((int,), True),
    "flush_timeout_s": ((int, float), True),
    "answer_model": ((str,), True),
    "answer_max_tokens": ((int,), True),
    "answer_prompt": ((str,), True),
    "judge_model": ((str, type(None)), True),
    "judge_max_tokens": ((int,), False),
    "workers": ((int,), False),
    "tokenizer": ((str,), False),
    "request_timeout_s": ((int, float), False),
    "max_retries": ((int,), False),
    "retry_backoff_s": ((int, float), False),
    "max_error_rate": ((int, float), False),
    "cache_dir": ((str,), False),
    "repeats": ((int,), False),
    "time_aware_search": ((bool,), False),
    "answer_sampling": ((dict,), False),
    "judge_sampling": ((dict,), False),
    "backends": ((dict,), False),
    "checks": ((dict,), False),
    "price_table": ((str, type(None)), False),
    "max_cost": ((int, float, type(None)), False),
}
CONFIG_DEFAULTS = {
    "judge_max_tokens": 60, "workers": 4, "tokenizer": "approx", "request_timeout_s": 120,
    "max_retries": 5, "retry_backoff_s": 1.0, "max_error_rate": 0.0,
    "cache_dir": ".cache/llm", "repeats": 1, "time_aware_search": False, "answer_sampling": {},
    "judge_sampling": {}, "backends": {}, "checks": {},
    # null: the shipped table, data/prices.yaml (prices.DEFAULT_TABLE); null max_cost: no cap.
    "price_table": None, "max_cost": None,
}
# Values out of these ranges would be accepted by the type check and fail later, mid-run, or
# silently do something else (a negative backoff sleeps not at all, a zero timeout fails every call).
# A run id names folders (runs/RUN_ID, results/RUN_ID) and reaches the shell through the Makefile,
# so it is a plain name: no path separator, no leading dot (no `..`), no space, quote or `$`.
RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
CONFIG_RANGES: dict[str, tuple[Any, str]] = {
    "run_id": ((lambda v: RUN_ID_PATTERN.fullmatch(v) is not None),
               "a plain name (letters, digits, '.', '_' and '-', starting with a letter or digit, at most 100 "
               "characters): it names the run's folders and reaches the shell"),
    **{k: ((lambda v: v >= 1), "at least 1") for k in
       ("top_k", "context_token_budget", "answer_max_tokens", "workers", "judge_max_tokens", "repeats")},
    **{k: ((lambda v: v > 0), "greater than 0") for k in ("request_timeout_s", "flush_timeout_s")},
    **{k: ((lambda v: v >= 0), "0 or more") for k in ("max_retries", "retry_backoff_s")},
    "max_error_rate": ((lambda v: 0 <= v <= 1), "between 0 and 1"),
    "max_cost": ((lambda v: v is None or v > 0), "greater than 0 (USD), or null for no cap"),
}
PROMPT_FIELDS = ("{asked_at}", "{context}", "{question}")
# How a request to the answer model, or to the judge, states its limits (llm.sampling_params):
# the token limit's name (reasoning models take max_completion_tokens), the temperature (null:
# not sent) and whether the config seed is sent (reasoning models refuse both). These defaults
# are what every request always carried.
SAMPLING_DEFAULTS = {"max_tokens_param": "max_tokens", "temperature": 0.0, "send_seed": True}
MAX_TOKENS_PARAMS = ("max_tokens", "max_completion_tokens")


def kind_name(kind: type | tuple) -> str:
    """A type, or a tuple of types, as an error names it ("a string or null")."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {str: "a string", list: "a list", dict: "an object", int: "an integer",
             float: "a number", bool: "a boolean", type(None): "null"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def did_you_mean(word: str, choices) -> str:
    """"; did you mean 'X'?" for the closest of choices to a misspelt name, or "" when none is
    close (difflib's ratio of at least 0.6, its default)."""
    by_lower = {c.lower(): c for c in choices}  # BM25 is close to bm25
    close = difflib.get_close_matches(word.lower(), list(by_lower), n=1)
    return f"; did you mean {by_lower[close[0]]!r}?" if close else ""


class _StrictLoader(yaml.SafeLoader):
    """YAML as yaml.safe_load reads it, but a key twice in one mapping is an error: safe_load
    keeps the last and says nothing, so a setting written twice loses one without a word."""


def _mapping_once(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: set = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            twice = key in seen
        except TypeError:
            continue  # an unhashable key: construct_mapping says so
        if twice:
            raise yaml.constructor.ConstructorError(None, None, f"key {key!r} appears twice in one mapping",
                                                    key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_once)


def load_config(path: str) -> dict:
    """Read config.yaml, reject unknown keys and wrong types, fill defaults.
    Relative paths (dataset, cache_dir) are resolved against the config's folder."""
    try:
        with open(path, encoding="utf-8") as fh:
            raw = yaml.load(fh, Loader=_StrictLoader)  # a SafeLoader: builds no Python objects
    except OSError as e:
        raise InputError(f"{path}: cannot open: {e.strerror}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        raise InputError(f"{path}{line}: invalid YAML: {getattr(e, 'problem', e)}") from None
    if not isinstance(raw, dict):
        raise InputError(f"{path}: expected a mapping of keys at the top level")
    for key, value in raw.items():
        if key not in CONFIG_KEYS:
            raise InputError(f"{path}: unknown key '{key}'{did_you_mean(key, CONFIG_KEYS)}; known keys: "
                             f"{', '.join(CONFIG_KEYS)}")
        kinds, _ = CONFIG_KEYS[key]
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            raise InputError(f"{path}: key '{key}' must be {kind_name(kinds)}, got {type(value).__name__}")
    for key, (_, required) in CONFIG_KEYS.items():
        if required and key not in raw:
            raise InputError(f"{path}: missing required key '{key}'")
    cfg = {**CONFIG_DEFAULTS, **raw}
    for key, (ok, expected) in CONFIG_RANGES.items():
        if not ok(cfg[key]):
            got = repr(cfg[key]) if isinstance(cfg[key], str) else cfg[key]  # repr: no raw escape reaches a terminal
            raise InputError(f"{path}: key '{key}' must be {expected}, got {got}")
    cfg["answer_prompt_name"], cfg["answer_prompt"] = _answer_prompt(path, cfg["answer_prompt"])
    for key in ("answer_sampling", "judge_sampling"):
        cfg[key] = _sampling(path, key, cfg[key])
    for name, section in cfg["backends"].items():
        if not isinstance(section, dict):
            raise InputError(f"{path}: key 'backends.{name}' must be a mapping")
    base = os.path.dirname(os.path.abspath(path))
    for key in ("dataset", "cache_dir", "price_table"):
        if cfg[key] is not None and not os.path.isabs(cfg[key]):
            cfg[key] = os.path.normpath(os.path.join(base, cfg[key]))
    if cfg["price_table"] is None:
        cfg["price_table"] = os.path.join(ROOT, "data", "prices.yaml")  # prices.DEFAULT_TABLE
    if not os.path.isfile(cfg["dataset"]):
        raise InputError(f"{path}: key 'dataset' names {raw['dataset']!r}, which is not a file ({cfg['dataset']}"
                         + ("; a relative path is read from the config's folder" if not os.path.isabs(raw["dataset"])
                            else "") + "): set dataset: in the config to the dataset's path")
    cfg["config_path"] = os.path.abspath(path)
    return cfg


def _answer_prompt(path: str, value: str) -> tuple[str | None, str]:
    """(name, template) of config.yaml's answer_prompt: a benchmark's own prompt by its name
    (answer_prompts.NAMED_PROMPTS; the template is its upstream text with the fields named), or
    (None, the text as written), which must hold every field of PROMPT_FIELDS and no other."""
    if value in NAMED_PROMPTS:
        return value, NAMED_PROMPTS[value].template
    if looks_like_a_name(value):
        raise InputError(f"{path}: key 'answer_prompt' names no known prompt: {value!r}"
                         f"{did_you_mean(value, NAMED_PROMPTS)}; named prompts: {', '.join(NAMED_PROMPTS)}; "
                         f"or write the prompt out with the fields {', '.join(PROMPT_FIELDS)}")
    for name in PROMPT_FIELDS:
        if name not in value:
            raise InputError(f"{path}: key 'answer_prompt' must contain the field {name}")
    try:
        value.format(asked_at="", context="", question="")
    except (KeyError, IndexError, ValueError) as e:
        raise InputError(f"{path}: key 'answer_prompt' has a stray brace field ({e}); "
                         f"write literal braces as {{{{ and }}}}") from None
    return None, value


def _sampling(path: str, key: str, section: dict) -> dict:
    """A sampling section of the config with its defaults filled; a wrong key or value is an
    InputError naming it."""
    for name, value in section.items():
        where = f"{path}: key '{key}.{name}'"
        if name not in SAMPLING_DEFAULTS:
            raise InputError(f"{path}: unknown key '{key}.{name}'; known keys: {', '.join(SAMPLING_DEFAULTS)}")
        if name == "max_tokens_param" and value not in MAX_TOKENS_PARAMS:
            raise InputError(f"{where} must be one of {', '.join(MAX_TOKENS_PARAMS)}, got {value!r}")
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if name == "temperature" and value is not None and not (number and 0 <= value <= 2):
            raise InputError(f"{where} must be a number from 0 to 2, or null (not sent), got {value!r}")
        if name == "send_seed" and not isinstance(value, bool):
            raise InputError(f"{where} must be true or false, got {value!r}")
    return {**SAMPLING_DEFAULTS, **section}


# ---------------------------------------------------------------------------------------------
# The checks' thresholds (the `checks:` section, read by check.py and the data generators)
# ---------------------------------------------------------------------------------------------

# Thresholds of the checks; config.yaml's `checks:` replaces them key by key. A per-type map
# given there replaces the whole map (what the config shows is what applies): the types it does
# not name take its `default`, or the built-in default when it gives none.
CHECK_DEFAULTS = {
    # `none` above 0.10 on factual questions means golds that can be guessed. Preference
    # and open-domain golds come from a handful of plausible options (TOML, YAML or JSON; world
    # knowledge), so chance alone reaches further there.
    "none_max": {"default": 0.10, "preference": 0.20, "open_domain": 0.20},
    # Given the evidence, the oracle should be right on every type. Temporal and multi-hop questions
    # need date arithmetic or two turns combined after the evidence is given, which is the
    # answer model's limit; 0.70 still catches a prompt that cannot do it.
    "oracle_min": {"default": 0.80, "temporal": 0.70, "multi_hop": 0.70},
    # The reader's adequacy, apart from the instrument's checks: given exactly the evidence, an
    # answer model must get at least half the answerable questions right before its accuracy can
    # compare memory systems. Below half, most of what any system retrieves is lost in reading,
    # so a difference in accuracy says more about the reader than about memory; recall, which
    # needs no reader, still compares them.
    "reader_min": 0.50,
    # A system that uses half the budget or less did not compete at that budget: say so.
    "budget_use_min": 0.50,
    # Backends whose retrieval must be byte-for-byte repeatable (else it is noise); the controls
    # always are, and so is every system whose records say it declares itself deterministic.
    "deterministic_backends": ["keyword"],
    # "Clearly more" unparseable verdicts (the judge fails on one system): at least this many, and a
    # one-sided Fisher exact test against the other systems pooled below this p. 0.01 because
    # every system is tested against the rest, several tests at once.
    "unparseable_min": 3,
    "unparseable_p": 0.01,
    # A system (its backend name) that may score above the oracle, and why (e.g. it is given
    # world knowledge the evidence lacks by design): its separated types are a WARN, not a FAIL.
    "above_oracle": {},
    # The most turns one hit may name (check.py's provenance check). A hit is one turn, a fact
    # drawn from a few, or a chunk of a few consecutive turns; one that names more claims more
    # than a context line can hold (ten typical turns of the bundled set fill most of a 270-token
    # budget), and every turn it names counts toward recall.
    "provenance_max_sources": 10,
}


def check_settings(raw: dict, where: str) -> dict:
    """The effective thresholds: config.yaml's `checks:` over CHECK_DEFAULTS, each value checked
    and a bad one named as `checks.KEY` (InputError)."""
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in CHECK_DEFAULTS.items()}
    for key, value in raw.items():
        name = f"checks.{key}"
        if key not in CHECK_DEFAULTS:
            raise InputError(f"{where}: unknown key '{name}'; known: {', '.join(CHECK_DEFAULTS)}")
        if key in ("none_max", "oracle_min"):
            if not isinstance(value, dict):
                raise InputError(f"{where}: key '{name}' must be a mapping of question type (or default) "
                                 f"to an accuracy between 0 and 1")
            out[key] = {"default": CHECK_DEFAULTS[key]["default"]}
            for qtype, limit in value.items():
                if qtype != "default" and qtype not in QUESTION_TYPES:
                    raise InputError(f"{where}: key '{name}.{qtype}': unknown question type; expected default "
                                     f"or one of {', '.join(QUESTION_TYPES)}")
                out[key][qtype] = _share(limit, f"{name}.{qtype}", where)
        elif key == "above_oracle":
            if not isinstance(value, dict) or not all(isinstance(w, str) and w.strip() for w in value.values()):
                raise InputError(f"{where}: key '{name}' must map a backend name to the reason it may score above "
                                 f"the oracle")
            out[key] = dict(value)
        elif key == "deterministic_backends":
            if not isinstance(value, list) or not all(isinstance(b, str) for b in value):
                raise InputError(f"{where}: key '{name}' must be a list of backend names")
            out[key] = list(value)
        elif key in ("unparseable_min", "provenance_max_sources"):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{where}: key '{name}' must be an integer of at least 1, got {value!r}")
            out[key] = value
        else:
            out[key] = _share(value, name, where)
            if key == "unparseable_p" and not 0 < value < 1:
                raise InputError(f"{where}: key '{name}' must be between 0 and 1 (exclusive), got {value!r}")
    return out


def _share(value: object, name: str, where: str) -> float:
    """A threshold that is a share: a number from 0 to 1, else an InputError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise InputError(f"{where}: key '{name}' must be a number between 0 and 1, got {value!r}")
    return float(value)


def limit_for(settings: dict, key: str, qtype: str) -> float:
    """A per-type threshold: the type's own, else the map's default."""
    return settings[key].get(qtype, settings[key]["default"])  # a type not named takes the default
