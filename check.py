"""Check the instrument before reading any comparison (seed guide, section 9; seed 001's
checklist): every check prints one line, PASS, WARN, FAIL or SKIP with the numbers behind it,
and the same goes to results/checks.json for score.py and the report. Exit 1 on any FAIL.

Checks, in order:
  contract     the run files are one comparison (interface.load_comparison: same model, prompt,
               top_k, budget, questions), and the verdicts belong to exactly these records
               (retrieval-only records have no answer and need none: --verdicts is required
               only when a run answered); per budget, one served model answered every system
               (WARN naming each model, its answers and systems)
  budget       per system and budget (a sweep's budgets apart): context_tokens never above
               context_token_budget (FAIL naming the file:line and qid), mean and max use; WARN
               when a real system uses less than checks.budget_use_min of the budget on average
               (say so in the report), with the share of records k_limited (k, not the budget,
               bounded the context)
  controls     `none` at most checks.none_max on every answerable type (else its golds can be
               guessed: the questions are listed); `oracle` at least checks.oracle_min on every
               type (its wrong answers listed by type); every real system between the two on
               answerable questions (above the oracle: audit the evidence labels)
  determinism  --rerun FILE, a second run of a backend (run.py --retrieval-only is enough): the
               share of questions whose retrieved ids differ, which must be 0 for the controls,
               checks.deterministic_backends and every system whose records say it declares
               itself deterministic (FAIL), and is a noise rate for others (WARN)
  lag          --lag FILE, a rerun made with run.py --extra-wait-s S: retrieved ids must not
               change; if they do, flush does not wait until the index is ready (FAIL)
  leakage      every record's added_sha256 equals the hash of its case's own turns
               (interface.items_sha256 of session_items): nothing else, no question and no gold,
               was passed to add (FAIL naming the case); controls add nothing and are skipped
  judge        unparseable verdicts per system, WARN when one system has clearly more (at least
               checks.unparseable_min and a one-sided Fisher exact test against all other
               systems pooled below checks.unparseable_p); rules and LLM judge disagreeing
               where both decided (WARN: a rule decides only what is beyond doubt)
A check that cannot run (its control, rerun or judge is absent) is a SKIP that says why, never
a PASS. Thresholds come from the `checks:` section of config.yaml (defaults: CHECK_DEFAULTS).

Usage:
  python check.py --runs runs/*.jsonl --verdicts results/verdicts.jsonl --manifest results/manifest-RUN.json
  python check.py --runs runs/*.jsonl --verdicts results/verdicts.jsonl --config config.yaml \\
      --rerun runs-check/keyword-2.jsonl --lag runs-check/keyword-wait.jsonl --out results/checks.json
  python check.py --runs runs/model-free/*.jsonl --config config.yaml --out results/model-free/checks.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from datetime import datetime, timezone

from grading import RULES_SHA256, fisher_greater
from interface import (BUDGET_FIELD, CONTROL_NAMES, EXIT_OK, QUESTION_TYPES, VERDICT_IDENTITY_FIELDS,
                       InputError, is_answerable, items_sha256, load_comparison, load_config, load_dataset,
                       match_verdicts, read_jsonl, read_verdicts, run_cli, served_model_counts, session_items,
                       sha256_file, write_json_atomic)

ROOT = os.path.dirname(os.path.abspath(__file__))
# A check failed: the issue asks for exit 1, and keeps 2 for input the checks cannot read.
EXIT_CHECK_FAILED = 1

# Thresholds of the checks; config.yaml's `checks:` replaces them key by key. A per-type map
# given there replaces the whole map (what the config shows is what applies): the types it does
# not name take its `default`, or the built-in default when it gives none.
CHECK_DEFAULTS = {
    # Seed guide 9.1 and score.py: `none` above 0.10 on factual questions means guessable golds.
    # Preference and open-domain golds come from a handful of plausible options (TOML, YAML or
    # JSON; world knowledge), so chance alone reaches further there.
    "none_max": {"default": 0.10, "preference": 0.20, "open_domain": 0.20},
    # Seed guide 9.1 and score.py: the oracle should be high on every type. Temporal and
    # multi-hop questions need date arithmetic or two turns combined after the evidence is
    # given, which is the answer model's limit; 0.70 still catches a prompt that cannot do it.
    "oracle_min": {"default": 0.80, "temporal": 0.70, "multi_hop": 0.70},
    # Seed 001's checklist (item 2): a system that uses half the budget or less is to be stated.
    "budget_use_min": 0.50,
    # Backends whose retrieval must be byte-for-byte repeatable (seed guide 9.2); the controls
    # always are, and so is every system whose records say it declares itself deterministic.
    "deterministic_backends": ["keyword"],
    # "Clearly more" unparseable verdicts (seed guide, section 6): at least this many, and a
    # one-sided Fisher exact test against the other systems pooled below this p. 0.01 because
    # every system is tested against the rest, several tests at once.
    "unparseable_min": 3,
    "unparseable_p": 0.01,
}
STATUSES = ("PASS", "WARN", "FAIL", "SKIP")
DETAIL_LINES = 5  # detail lines printed under a check; all of them are in the JSON
# Fields a verdicts line must have to be checked against its run record.

# ---------------------------------------------------------------------------------------------
# Input
# ---------------------------------------------------------------------------------------------

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
        elif key == "deterministic_backends":
            if not isinstance(value, list) or not all(isinstance(b, str) for b in value):
                raise InputError(f"{where}: key '{name}' must be a list of backend names")
            out[key] = list(value)
        elif key == "unparseable_min":
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


def need(rec: dict, fields: tuple, where: str) -> None:
    """Refuse a record without a field a check reads, naming path:line and the field."""
    for f in fields:
        if f not in rec:
            raise InputError(f"{where}: no field '{f}' (a file run.py did not write, or an older one: "
                             f"rerun it with --fresh)")


def read_runs(paths: list[str], fields: tuple) -> list[tuple[str, int, dict]]:
    """(path, line, record) of every line of these run files, each with the fields read here."""
    out = []
    for path in paths:
        for lineno, rec in read_jsonl(path):
            need(rec, fields, f"{path}:{lineno}")
            out.append((path, lineno, rec))
    return out


def dataset_for(manifest_path: str | None, cfg: dict | None) -> tuple[list[dict], str]:
    """The dataset the runs were made from: the manifest's (checked against its sha256), else the
    config's; returns (cases, sha256)."""
    if manifest_path:
        try:
            with open(manifest_path, encoding="utf-8") as fh:
                manifest = json.load(fh)
            rel, sha = manifest["dataset"], manifest["dataset_sha256"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise InputError(f"{manifest_path}: not a readable manifest ({type(e).__name__}: {e})") from None
        # manifest.py writes the dataset path relative to the repository root.
        path = rel if os.path.isabs(rel) else os.path.join(ROOT, rel)
        if not os.path.exists(path):
            raise InputError(f"{manifest_path}: field 'dataset' names {rel}, which does not exist here")
        if sha256_file(path) != sha:
            raise InputError(f"{manifest_path}: field 'dataset_sha256' is {sha[:12]}, but {rel} now hashes to "
                             f"{sha256_file(path)[:12]}: the dataset changed since the manifest was written")
        return load_dataset(path), sha
    return load_dataset(cfg["dataset"]), sha256_file(cfg["dataset"])


# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------

def result(check: str, subject: str | None, status: str, summary: str, numbers: dict | None = None,
           items: list | None = None) -> dict:
    """One check's outcome: `items` are its findings, each a dict with a human `text`."""
    assert status in STATUSES
    return {"id": f"{check}/{subject}" if subject else check, "check": check, "subject": subject,
            "status": status, "summary": summary, "numbers": numbers or {}, "items": items or []}


def worst(statuses: list[str]) -> str:
    """FAIL over WARN over PASS; SKIP alone when nothing ran."""
    for s in ("FAIL", "WARN", "PASS"):
        if s in statuses:
            return s
    return "SKIP"


def acc(flags: list[bool]) -> float | None:
    """Share of True; None when there is nothing to count (never NaN)."""
    return sum(flags) / len(flags) if flags else None


def mean(xs: list) -> float | None:
    """Arithmetic mean; None for an empty list."""
    return sum(xs) / len(xs) if xs else None


def fmt(x: float | None) -> str:
    """Numbers for people: 3 decimals, n/a when not measurable."""
    return "n/a" if x is None else f"{x:.3f}"


# ---------------------------------------------------------------------------------------------
# Contract and budget
# ---------------------------------------------------------------------------------------------

def check_comparison(paths: list[str]) -> tuple[dict, list | None, str | None]:
    """load_comparison's verdict on the run files, as a check; returns (result, the records the
    other checks use or None, why they have none). A partial set is a FAIL whose common
    questions the other checks still read."""
    try:
        comp = load_comparison(paths)
        n = len({r["backend"] for r in comp.records})
        return (result("contract", "comparison", "PASS",
                       f"{len(paths)} file(s), {n} system(s), {comp.questions} questions each: one comparison "
                       f"(same dataset, answer model, prompt, top_k, tokenizer, seed and budget)",
                       {"files": len(paths), "systems": n, "questions": comp.questions}),
                comp.records, None)
    except InputError as e:
        refusal = str(e)
    try:
        comp = load_comparison(paths, allow_partial=True)
    except InputError:
        return (result("contract", "comparison", "FAIL", refusal, {"files": len(paths)}), None,
                "the run files are not one comparison (see contract/comparison)")
    items = [{"text": f"{lo['file']}: {lo['backend']} lacks {lo['missing']} question(s) (first {lo['qids'][0]})",
              **lo} for lo in comp.left_out]
    return (result("contract", "comparison", "FAIL", refusal, {"files": len(paths), "questions": comp.questions},
                   items), comp.records, None)


def check_verdicts(records: list[dict], verdicts: dict, path: str | None) -> tuple[dict, list | None, str | None]:
    """The verdicts belong to exactly these records under one grader and this code's rules
    (what score.py refuses); returns (result, [(record, verdict)] or None, why there are none).
    A retrieval-only record has no answer and judge.py writes it no verdict (as score.py's
    pair_verdicts, it is left out): a model-free comparison has nothing to grade."""
    records = [r for r in records if not r["retrieval_only"]]
    if not records:
        why = "every run is retrieval-only (run.py --retrieval-only): no answer to grade"
        return result("contract", "verdicts", "SKIP", why), None, why
    m = match_verdicts(records, verdicts, RULES_SHA256)
    stale = [{"text": f"{path}:{lineno}: {r['backend']} {r['qid']}: graded another question, gold, annotation or "
                      f"answer than its run record holds", "line": lineno, "backend": r["backend"], "qid": r["qid"]}
             for lineno, r in m.stale]
    problems = []
    if m.missing:
        problems.append(f"{len(m.missing)} record(s) have no verdict (first: {m.missing[0]['backend']} "
                        f"{m.missing[0]['qid']}); run judge.py on these runs")
    if stale:
        problems.append(f"{len(stale)} verdict(s) graded something else than the record holds now; rerun judge.py")
    if len(m.graders) > 1:
        problems.append(f"the verdicts come from {len(m.graders)} different graders; grade all runs together")
    if m.other_rules:
        problems.append(f"verdicts graded by another rule set ({', '.join(m.other_rules)}; this code's is "
                        f"{RULES_SHA256[:12]}); rerun judge.py")
    numbers = {"records": len(records), "verdicts": len(m.pairs), "missing": len(m.missing), "stale": len(stale),
               "graders": len(m.graders)}
    items = [{"text": f"{r['backend']} {r['qid']}: no verdict", "backend": r["backend"], "qid": r["qid"]}
             for r in m.missing] + stale
    if problems:
        return (result("contract", "verdicts", "FAIL", "; ".join(problems), numbers, items), None,
                "the verdicts do not belong to these runs (see contract/verdicts)")
    return (result("contract", "verdicts", "PASS", f"{len(m.pairs)} verdicts, one per record, graded by one grader "
                   f"with this code's rules", numbers), m.pairs, None)


def check_served_models(run_rows: list[tuple[str, int, dict]]) -> list[dict]:
    """Per budget (one comparison each), the answers of every system file came from one served
    model: the contract holds the answer model constant, and an endpoint that routed keyword to
    one model and full_context to another would compare models, not memories. A WARN naming
    each model, its answers and the systems it served; a SKIP when no answer names one."""
    served = served_model_counts(r for _, _, r in run_rows)
    budgets = sorted({r[BUDGET_FIELD] for _, _, r in run_rows})
    out = []
    for budget in budgets:
        subject = f"served_model@{budget}" if len(budgets) > 1 else "served_model"
        models: dict = defaultdict(dict)  # model -> backend -> answers
        for backend, counts in served.get(budget, {}).items():
            for model, n in counts.items():
                models[model][backend] = n
        counts = {m: dict(sorted(by.items())) for m, by in sorted(models.items())}
        numbers = {"budget": budget, "models": counts}
        if not models:
            out.append(result("contract", subject, "SKIP", "no record names a served model (retrieval-only runs, or "
                              "every answer call failed)", numbers))
            continue
        text = "; ".join(f"{m}: {sum(by.values())} answers ("
                         + ", ".join(f"{b} {n}" for b, n in by.items()) + ")" for m, by in counts.items())
        if len(models) > 1:
            items = [{"text": f"{m}: {sum(by.values())} answers of " + ", ".join(f"{b} ({n})" for b, n in by.items()),
                      "served_model": m, "answers": by} for m, by in counts.items()]
            out.append(result("contract", subject, "WARN", f"{len(models)} served models answered this comparison"
                              + (f" at budget {budget}" if len(budgets) > 1 else "") + f": {text}; the answer model "
                              f"was not the same for every system: rerun them against one served model", numbers, items))
        else:
            out.append(result("contract", subject, "PASS", f"one served model: {text}", numbers))
    return out


def check_budgets(path: str, rows: list[tuple[int, dict]], settings: dict) -> list[dict]:
    """One run file's context use, one result per budget: a sweep is one comparison per budget
    (issue 12), and a mean over its budgets passed a file whose largest budget was 23% used."""
    budgets = sorted({r[BUDGET_FIELD] for _, r in rows})
    return [check_budget(path, [(n, r) for n, r in rows if r[BUDGET_FIELD] == b], len(budgets) > 1, settings)
            for b in budgets]


def check_budget(path: str, rows: list[tuple[int, dict]], sweep: bool, settings: dict) -> dict:
    """One run file's context use at one budget: never over it, with mean and max use, and how
    often k rather than the budget bounded the context (k_limited)."""
    backend, budget = rows[0][1]["backend"], rows[0][1][BUDGET_FIELD]
    subject = f"{backend}@{budget}" if sweep else backend
    used = [(lineno, r) for lineno, r in rows if r["context_tokens"] is not None]
    over = [{"text": f"{path}:{lineno}: {r['qid']} used {r['context_tokens']} tokens, budget "
                     f"{r[BUDGET_FIELD]}", "file": path, "line": lineno, "qid": r["qid"],
             "context_tokens": r["context_tokens"], "budget": r[BUDGET_FIELD]}
            for lineno, r in used if r["context_tokens"] > r[BUDGET_FIELD]]
    shares = [r["context_tokens"] / budget for _, r in used]
    tokens = [r["context_tokens"] for _, r in used]
    # k_limited is absent from the files of an older run.py: then it is unknown, not 0.
    known = any("k_limited" in r for _, r in used)
    limited = sum(r.get("k_limited") is True for _, r in used) if known else None
    numbers = {"file": path, "budget": budget, "records": len(rows), "measured": len(used), "over_budget": len(over),
               "mean_tokens": mean(tokens), "max_tokens": max(tokens) if tokens else None,
               "mean_use": mean(shares), "max_use": max(shares) if shares else None,
               "k_limited": limited, "k_limited_share": limited / len(used) if used and known else None}
    if not used:
        return result("budget", subject, "SKIP", f"{path}: no record at budget {budget} has context_tokens (every "
                      f"question failed)", numbers)
    text = (f"{path}: mean {numbers['mean_tokens']:.0f} tokens ({numbers['mean_use']:.0%} of the budget), max "
            f"{numbers['max_tokens']} (budget {budget}) over {len(used)} records")
    if over:
        return result("budget", subject, "FAIL", f"{len(over)} record(s) over the budget; " + text, numbers, over)
    if backend not in CONTROL_NAMES and numbers["mean_use"] < settings["budget_use_min"]:
        why = (f"top_k bounded the context of {limited} of {len(used)} records ({numbers['k_limited_share']:.0%} "
               f"k_limited: every hit returned fit), so this budget measures k, not the budget"
               if limited else "no record was k_limited: the histories or the hits are short" if known
               else "the records do not say whether k bounded the context (written by an older run.py)")
        return result("budget", subject, "WARN", text + f": below {settings['budget_use_min']:.0%} on average; "
                      f"{why}; state it in the report", numbers)
    return result("budget", subject, "PASS", text, numbers)


# ---------------------------------------------------------------------------------------------
# Controls (seed guide 9.1)
# ---------------------------------------------------------------------------------------------

def system_labels(pairs: list[tuple[dict, dict]]) -> dict:
    """(record, verdict) pairs per system: its backend, with the budget when several are compared
    (repeats are pooled: the same system asked again)."""
    several = len({r[BUDGET_FIELD] for r, _ in pairs}) > 1
    out: dict = defaultdict(list)
    for r, v in pairs:
        out[f"{r['backend']}@{r[BUDGET_FIELD]}" if several else r["backend"]].append((r, v))
    return out


def by_type(rows: list[tuple[dict, dict]]) -> dict:
    """Accuracy and n per question type, from (record, verdict) pairs."""
    groups: dict = defaultdict(list)
    for r, v in rows:
        groups[r["type"]].append(v["verdict"] == "correct")
    return {t: {"n": len(flags), "accuracy": acc(flags)} for t, flags in sorted(groups.items())}


def limit_for(settings: dict, key: str, qtype: str) -> float:
    """A per-type threshold: the type's own, else the map's default."""
    return settings[key].get(qtype, settings[key]["default"])  # a type not named takes the default


def answer_item(r: dict, v: dict) -> dict:
    """A question and its answer, as a finding."""
    return {"text": f"{r['type']} {r['qid']}: {r['question']!r} gold {r['gold_answer']!r}, answered {r['answer']!r}",
            "qid": r["qid"], "type": r["type"], "question": r["question"], "gold_answer": r["gold_answer"],
            "answer": r["answer"], "by": v["by"]}


def check_none(label: str, rows: list[tuple[dict, dict]], settings: dict) -> dict:
    """`none` low on every answerable type; the questions it gets right are guessable."""
    answerable = [(r, v) for r, v in rows if is_answerable(r)]
    types = by_type(answerable)
    high = {t: x for t, x in types.items() if x["accuracy"] > limit_for(settings, "none_max", t)}
    guessed = [answer_item(r, v) for r, v in answerable if v["verdict"] == "correct"]
    per_type = ", ".join(f"{t} {fmt(x['accuracy'])} (n={x['n']}, max {limit_for(settings, 'none_max', t):.2f})"
                         for t, x in types.items())
    numbers = {"by_type": types, "limits": {t: limit_for(settings, "none_max", t) for t in types},
               "guessable": len(guessed)}
    if not answerable:
        return result("controls", label, "SKIP", "no answerable question to check", numbers)
    if high:
        return result("controls", label, "FAIL", f"above its limit on {split(high, types, settings, 'none_max')}; "
                      f"{len(guessed)} answerable question(s) answered with no memory: their golds can be guessed, "
                      f"rewrite them with arbitrary specifics", numbers, guessed)
    tail = f"; {len(guessed)} answered with no memory, listed" if guessed else ""
    return result("controls", label, "PASS", per_type + tail, numbers, guessed)


def split(off: dict, types: dict, settings: dict, key: str) -> str:
    """The types beyond their limit with their numbers, then the others."""
    bad = ", ".join(f"{t} {fmt(x['accuracy'])} (n={x['n']}, limit {limit_for(settings, key, t):.2f})"
                    for t, x in off.items())
    rest = ", ".join(f"{t} {fmt(x['accuracy'])} (n={x['n']})" for t, x in types.items() if t not in off)
    return bad + (f"; within it: {rest}" if rest else "")


def check_oracle(label: str, rows: list[tuple[dict, dict]], settings: dict) -> dict:
    """`oracle` high on every type; its wrong answers listed by type."""
    types = by_type(rows)
    low = {t: x for t, x in types.items() if x["accuracy"] < limit_for(settings, "oracle_min", t)}
    wrong = [answer_item(r, v) for r, v in sorted(rows, key=lambda p: (p[0]["type"], p[0]["qid"]))
             if v["verdict"] != "correct"]
    per_type = ", ".join(f"{t} {fmt(x['accuracy'])} (n={x['n']}, min {limit_for(settings, 'oracle_min', t):.2f})"
                         for t, x in types.items())
    wrong_by_type = {t: sum(1 for w in wrong if w["type"] == t) for t in types}
    numbers = {"by_type": types, "limits": {t: limit_for(settings, "oracle_min", t) for t in types},
               "wrong_by_type": wrong_by_type}
    if low:
        return result("controls", label, "FAIL", f"below its limit on {split(low, types, settings, 'oracle_min')}. "
                      f"Given exactly the evidence, the answer model, prompt or grader fails (or the evidence "
                      f"lists are incomplete): read its {len(wrong)} wrong answers", numbers, wrong)
    return result("controls", label, "PASS", per_type, numbers, wrong)


def check_order(systems: dict, none: str, oracle: str) -> dict:
    """Every real system between none and oracle on answerable questions; one above the oracle
    is flagged for an evidence audit with the questions it alone got right."""
    def answerable(label: str) -> dict:
        return {r["qid"]: v["verdict"] == "correct" for r, v in systems[label] if is_answerable(r)}
    lo, hi = answerable(none), answerable(oracle)
    lo_acc, hi_acc = acc(list(lo.values())), acc(list(hi.values()))
    numbers = {"none": lo_acc, "oracle": hi_acc, "systems": {}}
    items, below, above = [], [], []
    for label in sorted(systems):
        if label.split("@")[0] in CONTROL_NAMES:
            continue
        own = answerable(label)
        a = acc(list(own.values()))
        numbers["systems"][label] = a
        if a is None:
            continue
        if lo_acc is not None and a < lo_acc:
            below.append(label)
            items.append({"text": f"{label} {fmt(a)} is below none {fmt(lo_acc)}: its context misleads the answer "
                                  f"model, or the harness has a bug", "system": label, "accuracy": a})
        if hi_acc is not None and a > hi_acc:
            above.append(label)
            qids = sorted(q for q, ok in own.items() if ok and not hi.get(q, False))
            items.append({"text": f"{label} {fmt(a)} is above oracle {fmt(hi_acc)}: audit the evidence labels of "
                                  f"{len(qids)} question(s) it gets right and the oracle does not: {', '.join(qids)}",
                          "system": label, "accuracy": a, "qids": qids})
    if not numbers["systems"]:
        return result("controls", "order", "SKIP", "no real system among the runs, only controls", numbers)
    text = (f"answerable accuracy: none {fmt(lo_acc)}, oracle {fmt(hi_acc)}; "
            + ", ".join(f"{k} {fmt(a)}" for k, a in numbers["systems"].items()))
    if below or above:
        return result("controls", "order", "WARN", text, numbers, items)
    return result("controls", "order", "PASS", text + ": every system between the controls", numbers)


def check_controls(pairs: list[tuple[dict, dict]] | None, why: str | None, settings: dict) -> list[dict]:
    """The three control checks, or SKIPs that say why they could not run."""
    if pairs is None:
        return [result("controls", name, "SKIP", why) for name in ("none", "oracle", "order")]
    systems = system_labels(pairs)
    out = []
    for name, fn in (("none", check_none), ("oracle", check_oracle)):
        labels = [k for k in systems if k.split("@")[0] == name]
        if not labels:
            out.append(result("controls", name, "SKIP", f"no run of the `{name}` control among --runs: "
                              f"run.py --backend {name}; without it the harness is not checked"))
        out += [fn(label, systems[label], settings) for label in sorted(labels)]
    budgets = sorted({k.split("@")[1] for k in systems if "@" in k}) or [None]
    for b in budgets:
        none, oracle = ("none", "oracle") if b is None else (f"none@{b}", f"oracle@{b}")
        absent = [n for n in (none, oracle) if n not in systems]
        if absent:
            out.append(result("controls", "order" if b is None else f"order@{b}", "SKIP",
                              f"no {' and no '.join(absent)} run: real systems are not placed between the controls"))
            continue
        sub = {k: v for k, v in systems.items() if b is None or k.endswith(f"@{b}")}
        r = check_order(sub, none, oracle)
        if b is not None:
            r["id"], r["subject"] = f"controls/order@{b}", f"order@{b}"
        out.append(r)
    return out


# ---------------------------------------------------------------------------------------------
# Reruns: determinism (9.2) and indexing lag (9.4)
# ---------------------------------------------------------------------------------------------

RERUN_FIELDS = ("backend", "backend_version", "repeat", "qid", "evidence", "retrieved_ids", "error",
                "dataset_sha256", "top_k", "extra_wait_s")
# What retrieved ids depend on: two runs that differ in one of these are not the same retrieval.
SAME_RETRIEVAL = ("backend_version", "dataset_sha256", "top_k")


def match_rerun(path: str, main: dict, run_paths: set) -> tuple[str, list[tuple[dict, dict]], dict]:
    """A rerun file's records, each with the main run's record of the same backend, repeat and
    question: (backend, [(main, rerun)], counts of what could not be compared)."""
    if os.path.realpath(path) in run_paths:
        raise InputError(f"{path}: is one of the --runs files; a rerun must be a second run, in its own file")
    rows = read_runs([path], RERUN_FIELDS)
    if not rows:
        raise InputError(f"{path}: holds no records")
    backends = {r["backend"] for _, _, r in rows}
    if len(backends) > 1:
        raise InputError(f"{path}: holds {len(backends)} backends ({', '.join(sorted(backends))}); one rerun per file")
    backend = backends.pop()
    pairs, unmatched, failed = [], 0, 0
    for _, lineno, r in rows:
        m = main.get((backend, r["repeat"], r["qid"]))
        if m is None:
            unmatched += 1
            continue
        for f in SAME_RETRIEVAL:
            if m[f] != r[f]:
                raise InputError(f"{path}:{lineno}: field '{f}' is {r[f]!r}, the main run of {backend} has "
                                 f"{m[f]!r}; a rerun must repeat the same retrieval")
        if m["error"] is not None or r["error"] is not None:
            failed += 1
            continue
        pairs.append((m, r))
    if not pairs and not failed:
        raise InputError(f"{path}: no record matches a question of backend {backend!r} in --runs "
                         f"(same backend, repeat and qid); pass the main run of {backend} in --runs")
    return backend, pairs, {"unmatched": unmatched, "failed": failed}


def differ(pairs: list[tuple[dict, dict]]) -> tuple[list[dict], int]:
    """Questions whose retrieved ids (in rank order) differ between the two runs, and how many
    could not be compared because a run has no provenance (retrieved_ids null)."""
    out, unmeasured = [], 0
    for m, r in pairs:
        if m["retrieved_ids"] is None or r["retrieved_ids"] is None:
            unmeasured += 1
        elif m["retrieved_ids"] != r["retrieved_ids"]:
            out.append({"text": f"{m['qid']}: {m['retrieved_ids'][:5]} then {r['retrieved_ids'][:5]}",
                        "qid": m["qid"], "repeat": m["repeat"], "main": m["retrieved_ids"],
                        "rerun": r["retrieved_ids"]})
    return out, unmeasured


def recall_any(recs: list[dict]) -> float | None:
    """Share of questions with evidence whose retrieved ids include any of it."""
    measured = [r for r in recs if r["evidence"] and r["retrieved_ids"] is not None]
    return acc([bool(set(r["retrieved_ids"]) & set(r["evidence"])) for r in measured])


def check_rerun(path: str, main: dict, run_paths: set, settings: dict) -> tuple[dict, str, float | None]:
    """The share of questions a second run retrieved differently; (result, backend, rate)."""
    backend, pairs, counts = match_rerun(path, main, run_paths)
    diffs, unmeasured = differ(pairs)
    compared = len(pairs) - unmeasured
    rate = len(diffs) / compared if compared else None
    # A system that declares itself deterministic has its searches reused across repeats by
    # run.py, so its repeats are only honest if its reruns are identical: held to it like the
    # configured list.
    declared = any(m.get("deterministic") for m, _ in pairs)  # absent in files of an older run.py
    must = backend in CONTROL_NAMES or backend in settings["deterministic_backends"] or declared
    numbers = {"file": path, "compared": compared, "differ": len(diffs), "rate": rate, "must_be_identical": must,
               "declares_deterministic": declared, "not_measurable": unmeasured, **counts}
    if compared == 0:
        return (result("determinism", backend, "SKIP", f"{path}: nothing to compare ({unmeasured} without provenance, "
                       f"{counts['failed']} failed in a run)", numbers), backend, None)
    text = f"{path}: retrieved ids differ on {len(diffs)} of {compared} questions ({rate:.1%})"
    if counts["failed"] or counts["unmatched"]:
        text += f"; not compared: {counts['failed']} failed in a run, {counts['unmatched']} not in the main run"
    if diffs and must:
        why = (" (it declares itself deterministic, so run.py reused its searches across repeats)"
               if declared and backend not in CONTROL_NAMES else "")
        return (result("determinism", backend, "FAIL", text + f"; {backend} must retrieve identically every time"
                       + why, numbers, diffs), backend, rate)
    if diffs:
        return (result("determinism", backend, "WARN", text + ": its noise rate, report it", numbers, diffs),
                backend, rate)
    return result("determinism", backend, "PASS", text, numbers), backend, rate


def check_lag(path: str, main: dict, run_paths: set, noise: dict) -> dict:
    """A rerun after an extra wait must retrieve what the main run did: if waiting longer
    changes the ids, flush returned before the index was ready."""
    backend, pairs, counts = match_rerun(path, main, run_paths)
    waits = sorted({r["extra_wait_s"] for _, r in pairs})
    if not pairs:
        return result("lag", backend, "SKIP", f"{path}: every question failed in one of the runs", counts)
    if min(waits) <= 0 or any(m["extra_wait_s"] >= r["extra_wait_s"] for m, r in pairs):
        raise InputError(f"{path}: not a lag rerun: its extra_wait_s ({waits}) must be above the main run's; "
                         f"make it with run.py --extra-wait-s S")
    diffs, unmeasured = differ(pairs)
    compared = len(pairs) - unmeasured
    before, after = recall_any([m for m, _ in pairs]), recall_any([r for _, r in pairs])
    numbers = {"file": path, "extra_wait_s": waits, "compared": compared, "differ": len(diffs),
               "recall_any_main": before, "recall_any_after_wait": after, "not_measurable": unmeasured,
               "rerun_noise_rate": noise.get(backend), **counts}
    if compared == 0:
        return result("lag", backend, "SKIP", f"{path}: no provenance to compare", numbers)
    text = (f"{path}: after {', '.join(f'{w:g}' for w in waits)} s more, retrieved ids differ on {len(diffs)} of "
            f"{compared} questions; recall_any@k {fmt(before)} -> {fmt(after)}")
    if diffs:
        if noise.get(backend):
            text += f" (its rerun noise rate is {noise[backend]:.1%}: compare)"
        return result("lag", backend, "FAIL", text + f": flush does not wait until {backend}'s index is ready, so "
                      f"its results understate it", numbers, diffs)
    return result("lag", backend, "PASS", text, numbers)


# ---------------------------------------------------------------------------------------------
# Leakage
# ---------------------------------------------------------------------------------------------

def check_leakage(path: str, rows: list[tuple[int, dict]], cases: dict, dataset_sha: str) -> dict | None:
    """What one run file's system was given to add equals its cases' own turns, case by case;
    None for a control (it adds nothing)."""
    backend = rows[0][1]["backend"]
    if backend in CONTROL_NAMES:  # run.py never loads a backend by a control's name
        return None
    other = sorted({r["dataset_sha256"][:12] for _, r in rows if r["dataset_sha256"] != dataset_sha})
    if other:
        return result("leakage", backend, "SKIP", f"{path}: made from another dataset ({', '.join(other)}) than "
                      f"the one given ({dataset_sha[:12]}); see contract/comparison", {"file": path})
    bad, seen, unchecked, failed = [], set(), 0, 0
    for lineno, r in rows:
        if r["added_sha256"] is None:
            failed += r["error"] is not None    # ingestion failed: nothing was added
            unchecked += r["error"] is None     # not recorded: cannot be checked
            continue
        ingest = (r["repeat"], r["case_id"])
        if ingest in seen:
            continue
        seen.add(ingest)
        want_sha, want_n = cases[r["case_id"]]
        if (r["added_sha256"], r["added_items"]) != (want_sha, want_n):
            bad.append({"text": f"{path}:{lineno}: case {r['case_id']} (repeat {r['repeat']}): {r['added_items']} "
                                f"item(s) added, hash {r['added_sha256'][:12]}; its {want_n} turns hash to "
                                f"{want_sha[:12]}: something else than the case's turns was passed to add",
                        "file": path, "line": lineno, "case_id": r["case_id"], "repeat": r["repeat"],
                        "added_items": r["added_items"], "added_sha256": r["added_sha256"],
                        "expected_items": want_n, "expected_sha256": want_sha})
    numbers = {"file": path, "ingestions": len(seen), "mismatched": len(bad), "not_recorded": unchecked,
               "ingest_failed": failed}
    if bad:
        return result("leakage", backend, "FAIL", f"{path}: {len(bad)} of {len(seen)} ingestion(s) added something "
                      f"else than the case's turns (a question or gold passed to add?)", numbers, bad)
    if unchecked:
        return result("leakage", backend, "WARN", f"{path}: {unchecked} record(s) carry no added_sha256 and were not "
                      f"checked; {len(seen)} ingestion(s) added exactly their case's turns", numbers)
    if not seen:
        return result("leakage", backend, "SKIP", f"{path}: no ingestion to check ({failed} failed)", numbers)
    return result("leakage", backend, "PASS", f"{path}: {len(seen)} ingestion(s) added exactly their case's turns, "
                  f"in order", numbers)


def case_hashes(cases: list[dict]) -> dict:
    """case_id -> (items_sha256 of its turns as run.py adds them, how many)."""
    out = {}
    for case in cases:
        items = [it for s in case["sessions"] for it in session_items(s)]
        out[case["case_id"]] = (items_sha256(items), len(items))
    return out


# ---------------------------------------------------------------------------------------------
# Judge health (seed guide, section 6)
# ---------------------------------------------------------------------------------------------

def check_unparseable(pairs: list[tuple[dict, dict]], settings: dict) -> dict:
    """Unparseable verdicts and failed judge calls per system; WARN on a system with clearly
    more unparseable verdicts than the others pooled."""
    systems = system_labels(pairs)
    counts = {}
    for label, rows in sorted(systems.items()):
        judged = [v for _, v in rows if v["by"] == "llm"]
        counts[label] = {"judged": len(judged), "unparseable": sum(v["verdict"] == "unparseable" for v in judged),
                         "judge_errors": sum(v["judge_error"] is not None for v in judged)}
    total_judged = sum(c["judged"] for c in counts.values())
    if total_judged == 0:
        return result("judge", "unparseable", "SKIP", "no verdict came from an LLM judge (rules-only grading)",
                      {"by_system": counts})
    flagged = []
    for label, c in counts.items():
        rest_u = sum(x["unparseable"] for k, x in counts.items() if k != label)
        rest_n = sum(x["judged"] for k, x in counts.items() if k != label)
        if c["unparseable"] >= settings["unparseable_min"] and rest_n:
            p = fisher_greater(c["unparseable"], c["judged"], rest_u, rest_n)
            c["p_value"] = p
            if p < settings["unparseable_p"]:
                flagged.append({"text": f"{label}: {c['unparseable']} of {c['judged']} unparseable against "
                                        f"{rest_u} of {rest_n} for the others (one-sided Fisher p={p:.2g}): read "
                                        f"its answers by hand", "system": label, "p_value": p, **c})
    text = ", ".join(f"{k} {c['unparseable']}/{c['judged']}" for k, c in counts.items())
    errors = sum(c["judge_errors"] for c in counts.values())
    numbers = {"by_system": counts, "flagged": [f["system"] for f in flagged], "judge_errors": errors}
    tail = f"; {errors} judge call(s) failed: rerun judge.py" if errors else ""
    if flagged:
        return result("judge", "unparseable", "WARN", f"one system has clearly more unparseable verdicts: {text}{tail}",
                      numbers, flagged)
    return result("judge", "unparseable", "WARN" if errors else "PASS",
                  f"unparseable per system (of the answers the judge graded): {text}{tail}", numbers)


def check_disagreement(pairs: list[tuple[dict, dict]]) -> dict:
    """Where a rule and the LLM judge both decided an answer, they should agree: a rule decides
    only what is beyond doubt, so a disagreement is a judge error or a rule bug to read."""
    systems = system_labels(pairs)
    counts, items = {}, []
    for label, rows in sorted(systems.items()):
        both = [(r, v) for r, v in rows if v["by"] == "llm" and v["rules_only_verdict"] is not None
                and v["verdict"] in ("correct", "incorrect")]
        off = [(r, v) for r, v in both if v["verdict"] != v["rules_only_verdict"]]
        counts[label] = {"both_decided": len(both), "disagree": len(off), "rate": acc([True] * len(off) +
                                                                                       [False] * (len(both) - len(off)))}
        items += [{"text": f"{label} {r['qid']}: rules {v['rules_only_verdict']}, judge {v['verdict']}: "
                           f"gold {r['gold_answer']!r}, answer {r['answer']!r}", "system": label, "qid": r["qid"],
                   "rules_only_verdict": v["rules_only_verdict"], "verdict": v["verdict"]} for r, v in off]
    if not any(v["by"] == "llm" for _, v in pairs):
        return result("judge", "disagreement", "SKIP", "no verdict came from an LLM judge (rules-only grading)",
                      {"by_system": counts})
    both = sum(c["both_decided"] for c in counts.values())
    if both == 0:
        return result("judge", "disagreement", "SKIP", "no answer was decided by both a rule and the LLM judge",
                      {"by_system": counts})
    text = ", ".join(f"{k} {c['disagree']}/{c['both_decided']}" for k, c in counts.items())
    if items:
        return result("judge", "disagreement", "WARN", f"rules and judge disagree where both decided: {text}; read them",
                      {"by_system": counts}, items)
    return result("judge", "disagreement", "PASS", f"rules and judge agree wherever both decided: {text}",
                  {"by_system": counts})


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------

def render(results: list[dict], out: str | None) -> str:
    """One line per check, and up to DETAIL_LINES of its findings under it."""
    lines = []
    for r in results:
        lines.append(f"{r['status']:<4}  {r['id']}: {r['summary']}")
        shown = r["items"][:DETAIL_LINES]
        lines += [f"        - {i['text']}" for i in shown]
        if len(r["items"]) > len(shown):
            lines.append(f"        ... and {len(r['items']) - len(shown)} more in {out or 'the JSON (--out)'}")
    counts = {s: sum(r["status"] == s for r in results) for s in STATUSES}
    lines.append(f"result: {worst([r['status'] for r in results])} ("
                 + ", ".join(f"{n} {s}" for s, n in counts.items()) + ")")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run every check; exit 1 when one FAILs."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", nargs="+", required=True, help="the run files of the comparison (runs/*.jsonl)")
    ap.add_argument("--verdicts", help="results/verdicts.jsonl from judge.py (not needed when every run is "
                                       "retrieval-only)")
    ap.add_argument("--manifest", help="results/manifest-RUN.json: names the dataset the runs were made from")
    ap.add_argument("--config", help="config.yaml: the `checks:` thresholds (and the dataset, without --manifest)")
    ap.add_argument("--rerun", nargs="+", default=[], help="second runs of a backend (determinism), one per file")
    ap.add_argument("--lag", nargs="+", default=[], help="reruns made with run.py --extra-wait-s S (indexing lag)")
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "checks.json"), help="the results as JSON")
    a = ap.parse_args(argv)
    if not a.manifest and not a.config:
        raise InputError("pass --manifest (or --config): the leakage check needs the dataset the runs were made from")

    cfg = load_config(a.config) if a.config else None
    settings = check_settings(cfg["checks"], a.config) if cfg else check_settings({}, "defaults")
    cases, dataset_sha = dataset_for(a.manifest, cfg)
    run_rows = read_runs(a.runs, ("backend", "backend_version", "repeat", "qid", "case_id", "dataset_sha256",
                                  "context_tokens", BUDGET_FIELD, "added_sha256", "added_items", "error",
                                  "retrieval_only", "served_model")
                         + RERUN_FIELDS)
    answered = next((path for path, _, r in run_rows if not r["retrieval_only"]), None)
    if answered and not a.verdicts:
        raise InputError(f"{answered}: holds answers to grade (retrieval_only is false): pass --verdicts "
                         f"results/verdicts.jsonl from judge.py")
    verdicts = read_verdicts(a.verdicts) if a.verdicts else {}

    results = []
    # 1. The contract: one comparison, and verdicts that belong to it.
    comparison, records, why = check_comparison(a.runs)
    results.append(comparison)
    pairs = None
    if records is not None:
        verdict_check, pairs, why = check_verdicts(records, verdicts, a.verdicts)
        results.append(verdict_check)
    results += check_served_models(run_rows)
    by_file: dict = defaultdict(list)
    for path, lineno, rec in run_rows:
        by_file[path].append((lineno, rec))
    results += [r for path, rows in by_file.items() if rows for r in check_budgets(path, rows, settings)]
    # 2. The controls bracket the harness.
    results += check_controls(pairs, why, settings)
    # 3. Retrieval repeats itself, and waits for the index.
    main_by_key = {(r["backend"], r["repeat"], r["qid"]): r for _, _, r in run_rows}
    run_paths = {os.path.realpath(p) for p in a.runs}
    noise = {}
    for path in a.rerun:
        r, backend, rate = check_rerun(path, main_by_key, run_paths, settings)
        results.append(r)
        noise[backend] = rate
    if not a.rerun:
        results.append(result("determinism", None, "SKIP", "no --rerun given: run a backend twice (run.py "
                              "--retrieval-only into runs-check/) to measure it"))
    results += [check_lag(path, main_by_key, run_paths, noise) for path in a.lag]
    if not a.lag:
        results.append(result("lag", None, "SKIP", "no --lag given: rerun a backend with run.py --extra-wait-s 30 "
                              "to rule out indexing lag"))
    # 4. Nothing but the turns was stored.
    hashes = case_hashes(cases)
    for path, rows in by_file.items():
        unknown = sorted({r["case_id"] for _, r in rows} - set(hashes))
        if unknown and all(r["dataset_sha256"] == dataset_sha for _, r in rows):
            raise InputError(f"{path}: case {unknown[0]!r} is not in the dataset")
        leak = check_leakage(path, rows, hashes, dataset_sha) if rows else None
        if leak:
            results.append(leak)
    # 5. The judge.
    if pairs is None:
        results += [result("judge", name, "SKIP", why) for name in ("unparseable", "disagreement")]
    else:
        results += [check_unparseable(pairs, settings), check_disagreement(pairs)]

    grader = None
    if pairs:
        v = pairs[0][1]
        grader = {f: v[f] for f in VERDICT_IDENTITY_FIELDS[1:]}
    summary = {
        "status": worst([r["status"] for r in results]),
        "counts": {s: sum(r["status"] == s for r in results) for s in STATUSES},
        "created_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "dataset_sha256": dataset_sha,
        "grader": grader,
        "inputs": {"runs": {p: sha256_file(p) for p in a.runs},
                   "verdicts": {a.verdicts: sha256_file(a.verdicts)} if a.verdicts else {},
                   "manifest": a.manifest, "config": a.config,
                   "rerun": {p: sha256_file(p) for p in a.rerun}, "lag": {p: sha256_file(p) for p in a.lag}},
        "thresholds": settings,
        "checks": results,
    }
    # The file first, then stdout: `check.py ... | head` must not cost the results.
    write_json_atomic(a.out, summary)
    print(render(results, a.out))
    return EXIT_CHECK_FAILED if summary["status"] == "FAIL" else EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
