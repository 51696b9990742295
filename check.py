"""Check the instrument before reading any comparison (a harness that is not verified measures
itself, not the systems): every check prints one line, PASS, WARN, FAIL or SKIP with the numbers
behind it, and the same goes to results/$RUN/checks.json for score.py and the report. Exit 4 on any
FAIL.

The run files are held against the dataset (--config, or --manifest) and their verdicts as
score.py holds them: an empty run file, runs that lack some of the dataset's questions (unless
their --limit, --shard or --sample, or --allow-partial, says so), a dataset changed since the runs or the
verdicts, and verdicts that do not belong to these records are refused (exit 2). The numbers
the checks judge are metrics.py's, as score.py computes them (every figure over all repeats).

Checks, in order:
  contract     the run files hold the fairness contract's fields equal (formats.contract_problems:
               model, prompt, top_k, budget, ...); per budget, one served model answered every
               system (WARN naming each model, its answers and systems)
  budget       per system and budget (a sweep's budgets apart): context_tokens never above
               context_token_budget (FAIL naming the file:line and qid), mean and max use; WARN
               when a real system uses less than checks.budget_use_min of the budget on average
               (say so in the report), with the share of records k_limited (k, not the budget,
               bounded the context)
  controls     what the controls were given: `none` an empty context, `oracle` exactly the gold
               evidence in order (FAIL naming the file:line otherwise); `none` at most
               checks.none_max on the answerable questions of every type (else its golds can be
               guessed: the questions are listed); every real system between the two on
               answerable questions (above the oracle: audit the evidence labels; a SKIP when the
               reader is inadequate, below); no real system above the oracle on an answerable type
               by a paired interval that excludes 0 (FAIL naming the type: a system cannot know
               more than the evidence unless it leaks), unless checks.above_oracle says why it may
  determinism  --rerun FILE, a second run of a backend (run.py --retrieval-only is enough): the
               share of questions whose retrieved ids differ, which must be 0 for the controls,
               checks.deterministic_backends and every system whose records say it declares
               itself deterministic (FAIL), and is a noise rate for others (WARN)
  lag          --lag FILE, a rerun made with run.py --extra-wait-s S: retrieved ids must not
               change; if they do, flush does not wait until the index is ready (FAIL)
  leakage      every retrieved id names a turn of the question's own case: a store that
               ignores its namespace or its reset returns another case's turns (FAIL naming the
               file:line, the ids and the case they belong to); model-free runs too; WARN when
               the run's cases share turn ids (such a hit cannot be told apart); controls skipped
  provenance   every hit the answer model read could have come from the turns it names: at most
               checks.provenance_max_sources of them, each sharing a content word with it (FAIL
               naming the file:line, the question and the turns; WARN for a system whose internal
               model rewrites its turns); hits the budget cut are held to the bound only, in
               aggregate (the record keeps neither their text nor which named which id). Its
               numbers say `provenance` per system: verified (every hit read is its one turn as
               stored), plausible (the ids are the system's claim, and pass) or unearned
  judge        unparseable verdicts per system, WARN when one system has clearly more (at least
               checks.unparseable_min and a one-sided Fisher exact test against all other
               systems pooled below checks.unparseable_p); rules and LLM judge disagreeing
               where both decided (WARN: a rule decides only what is beyond doubt)
A check that cannot run (its control, rerun or judge is absent) is a SKIP that says why, never
a PASS. Thresholds come from the `checks:` section of config.yaml (defaults: config.CHECK_DEFAULTS).

Apart from the checks, the reader's verdict (printed last, `reader` in checks.json): whether the
answer model can compare memory systems by accuracy at all, from the `oracle` control given
exactly the evidence: adequate at or above checks.reader_min of the answerable questions,
inadequate below, with the types below checks.oracle_min and its wrong answers. A reader that
cannot read is a limit of the run, not a fault of the instrument: the verdict never sets the
status or the exit code, and the report leads with retrieval when it is inadequate.

Exit codes: 0 every check PASS, WARN or SKIP; 4 a check FAILed (checks.json is written, and the
report shows it: a script that goes on after a FAIL accepts 4 and nothing else, `|| [ $? -eq 4 ]`);
2 bad input (runs, verdicts or config the checks cannot read; nothing written); 1 an unexpected
error in check.py itself, never a verdict on the instrument; 130 on Ctrl-C.

Usage:
  RUN=$(python -c "import yaml; print(yaml.safe_load(open('config.yaml'))['run_id'])")   # config.yaml's run_id
  python check.py --runs runs/$RUN/*.jsonl --verdicts results/$RUN/verdicts.jsonl --manifest results/$RUN/manifest-$RUN.json
  python check.py --runs runs/$RUN/*.jsonl --verdicts results/$RUN/verdicts.jsonl --config config.yaml \\
      --rerun runs-check/keyword-2.jsonl --lag runs-check/keyword-wait.jsonl --out results/$RUN/checks.json
  python check.py --runs runs/$RUN/model-free/*.jsonl --config config.yaml --out results/$RUN/model-free/checks.json
"""
from __future__ import annotations

import argparse
import os
import sys
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timezone

from cli import EXIT_CHECK_FAILED, EXIT_OK, InputError, run_cli
from config import check_settings, limit_for, load_config, results_dir
from contract import CONTROL_NAMES, is_answerable
from dataset import dataset_from, iter_cases
from fileio import output_path, sha256_file, write_json_atomic
from formats import (BUDGET_FIELD, CHECKS_FORMAT, VERDICT_IDENTITY_FIELDS, contract_problems, coverage,
                     read_run_files, served_model_counts)
from metrics import Scoring, cost_metrics, k_limited_metrics, pair_verdicts, recall_metrics, system_label
from provenance import case_sources, tally
from stats import fisher_greater, mean
from wording import interval_text, rate, whole

STATUSES = ("PASS", "WARN", "FAIL", "SKIP")
DETAIL_LINES = 5  # detail lines printed under a check; all of them are in the JSON


# ---------------------------------------------------------------------------------------------
# Input
# ---------------------------------------------------------------------------------------------

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
    return next((s for s in ("FAIL", "WARN", "PASS") if s in statuses), "SKIP")


# ---------------------------------------------------------------------------------------------
# Contract and budget
# ---------------------------------------------------------------------------------------------

def check_contract(paths: list[str], problems: list[str], comparison) -> dict:
    """The fairness contract's fields are equal across the run files (the coverage of the
    dataset was checked on reading: a run lacking questions is refused, or, with
    --allow-partial, said here)."""
    c = comparison.coverage
    numbers = {"files": len(paths), "questions": comparison.questions, **c}
    if problems:
        return result("contract", "comparison", "FAIL", "these run files are not one comparison (the fairness "
                      "contract holds these constant; rerun the odd files with one config): " + " | ".join(problems),
                      numbers)
    text = (f"{len(paths)} file(s), {c['scored_questions']} of the dataset's {c['dataset_questions']} questions: one "
            f"comparison (same dataset, answer model, prompt, top_k, tokenizer, seed and budget)")
    if c["partial"]:
        items = [{"text": f"{lo['file']}: {lo['backend']} lacks {lo['missing']} question(s) (first {lo['qids'][0]})",
                  **lo} for lo in comparison.left_out]
        return result("contract", "comparison", "WARN", text + "; --allow-partial left out the questions some "
                      "system lacks", numbers, items)
    return result("contract", "comparison", "PASS", text, numbers)


def check_served_models(records: list[dict]) -> list[dict]:
    """Per budget (one comparison each), the answers of every system came from one served model:
    the contract holds the answer model constant, and an endpoint that routed keyword to one
    model and full_context to another would compare models, not memories. A WARN naming each
    model, its answers and the systems it served; a SKIP when no answer names one."""
    served = served_model_counts(records)
    budgets = sorted({r[BUDGET_FIELD] for r in records})
    out = []
    for budget in budgets:
        subject = f"served_model@{budget}" if len(budgets) > 1 else "served_model"
        models: dict = defaultdict(dict)  # model -> backend -> answers
        for backend, counts in served.get(budget, {}).items():  # a budget with no answer has no entry
            for model, n in counts.items():
                models[model][backend] = n
        counts = {m: dict(sorted(by.items())) for m, by in sorted(models.items())}
        numbers = {"budget": budget, "models": counts}
        if not models:
            out.append(result("contract", subject, "SKIP", "no record names a served model (retrieval-only runs, or "
                              "every answer call failed)", numbers))
            continue
        text = "; ".join(f"{m}: {sum(by.values())} answers (" + ", ".join(f"{b} {n}" for b, n in by.items()) + ")"
                         for m, by in counts.items())
        if len(models) > 1:
            items = [{"text": f"{m}: {sum(by.values())} answers of " + ", ".join(f"{b} ({n})" for b, n in by.items()),
                      "served_model": m, "answers": by} for m, by in counts.items()]
            out.append(result("contract", subject, "WARN", f"{len(models)} served models answered this comparison"
                              + (f" at budget {budget}" if len(budgets) > 1 else "") + f": {text}; the answer model "
                              f"was not the same for every system: rerun them against one served model", numbers, items))
        else:
            out.append(result("contract", subject, "PASS", f"one served model: {text}", numbers))
    return out


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
    # The mean context tokens and the k-limited share are figures score.py and the report show
    # too: taken from metrics.py and written by wording.py's formatters, so the three outputs agree.
    recs = [r for _, r in rows]
    k = k_limited_metrics(recs)
    limited = sum(r["k_limited"] is True for r in recs)
    numbers = {"file": path, "budget": budget, "records": len(rows), "measured": len(used), "over_budget": len(over),
               "mean_tokens": cost_metrics(recs)["mean_context_tokens"], "max_tokens": max(tokens) if tokens else None,
               "mean_use": mean(shares), "max_use": max(shares) if shares else None,
               "k_limited": limited, "k_limited_share": k["k_limited_share"]}
    if not used:
        return result("budget", subject, "SKIP", f"{path}: no record at budget {budget} has context_tokens (every "
                      f"question failed)", numbers)
    text = (f"{path}: mean {whole(numbers['mean_tokens'])} tokens ({numbers['mean_use']:.0%} of the budget), max "
            f"{numbers['max_tokens']} (budget {budget}) over {len(used)} records")
    if over:
        return result("budget", subject, "FAIL", f"{len(over)} record(s) over the budget; " + text, numbers, over)
    if backend not in CONTROL_NAMES and numbers["mean_use"] < settings["budget_use_min"]:
        why = (f"top_k bounded the context of {limited} of {k['k_limited_n']} records (k-limited share "
               f"{rate(k['k_limited_share'])}: every hit returned fit), so this budget measures k, not the budget"
               if limited else "no record was k_limited: the histories or the hits are short")
        return result("budget", subject, "WARN", text + f": below {settings['budget_use_min']:.0%} on average; "
                      f"{why}; state it in the report", numbers)
    return result("budget", subject, "PASS", text, numbers)


# ---------------------------------------------------------------------------------------------
# Controls: none low, oracle high, every system between
# ---------------------------------------------------------------------------------------------

def check_control_contexts(by_file: dict) -> list[dict]:
    """What the controls were given, record by record: `none` an empty context, `oracle`
    exactly the gold evidence, in order. A control whose context holds anything else (the
    evidence for `none`, other turns or the evidence cut by the budget for `oracle`) brackets
    nothing."""
    out = []
    for name, want, what in (("none", lambda r: [], "an empty context"),
                             ("oracle", lambda r: r["evidence"], "exactly the gold evidence, in order")):
        files = {path: rows for path, rows in by_file.items() if rows[0][1]["backend"] == name}
        if not files:
            continue
        bad, checked, failed = [], 0, 0
        for path, rows in files.items():
            for lineno, r in rows:
                if r["error"] is not None:
                    failed += 1
                    continue
                checked += 1
                if r["context_ids"] != want(r):
                    cut = (name == "oracle" and r["retrieved_ids"] == r["evidence"] and r["context_ids"] is not None
                           and r["context_ids"] == r["evidence"][:len(r["context_ids"])])
                    bad.append({"text": f"{path}:{lineno}: {r['qid']}: context {r['context_ids']}, evidence "
                                        f"{r['evidence']}" + (" (the budget cut the evidence)" if cut else ""),
                                "file": path, "line": lineno, "qid": r["qid"], "context_ids": r["context_ids"],
                                "evidence": r["evidence"]})
        numbers = {"records": checked, "mismatched": len(bad), "failed": failed}
        if bad:
            out.append(result("controls", f"{name}_context", "FAIL", f"{len(bad)} of {checked} {name} record(s) were "
                              f"not given {what}: the control does not bracket the harness", numbers, bad))
        else:
            out.append(result("controls", f"{name}_context", "PASS" if checked else "SKIP",
                              f"{checked} {name} record(s) given {what}" if checked else
                              f"every {name} record failed", numbers))
    return out


def answer_item(r: dict, v: dict) -> dict:
    """A question and its answer, as a finding."""
    return {"text": f"{r['type']} {r['qid']}: {r['question']!r} gold {r['gold_answer']!r}, answered {r['answer']!r}"
                    + (f" (repeat {r['repeat']})" if r["repeat"] else ""),
            "qid": r["qid"], "repeat": r["repeat"], "type": r["type"], "question": r["question"],
            "gold_answer": r["gold_answer"], "answer": r["answer"], "by": v["by"]}


def type_line(types: dict, limits: dict, word: str) -> str:
    """Accuracy per type with its n and limit."""
    return ", ".join(f"{t} {rate(x['accuracy'])} (n={x['n']}, {word} {limits[t]:.2f})" for t, x in types.items())


def check_none(label: str, system: dict, pairs: list, settings: dict) -> dict:
    """`none` low on the answerable questions of every type; the questions it gets right are
    guessable. A type's unanswerable questions are left out: declining them needs no memory."""
    types = {t: {"n": x["answerable_n"], "accuracy": x["answerable_accuracy"]} for t, x in system["by_type"].items()
             if x["answerable_n"]}
    limits = {t: limit_for(settings, "none_max", t) for t in types}
    high = [t for t, x in types.items() if x["accuracy"] > limits[t]]
    guessed = [answer_item(r, v) for r, v in pairs if v["verdict"] == "correct" and is_answerable(r)]
    numbers = {"by_type": types, "limits": limits, "guessable": len(guessed)}
    if not types:
        return result("controls", label, "SKIP", "no answerable question to check", numbers)
    if high:
        over = type_line({t: types[t] for t in high}, limits, "limit")
        return result("controls", label, "FAIL", f"above its limit on {over}; {len(guessed)} answerable question(s) "
                      f"answered with no memory: their golds can be guessed, rewrite them with arbitrary specifics",
                      numbers, guessed)
    tail = f"; {len(guessed)} answered with no memory, listed" if guessed else ""
    return result("controls", label, "PASS", type_line(types, limits, "max") + tail, numbers, guessed)


def oracle_types(system: dict, settings: dict) -> dict:
    """The oracle's accuracy per type over all of the type's questions (given exactly the
    evidence, none for an unanswerable one, it must answer or decline), with its limit."""
    return {t: {"n": x["n"], "accuracy": x["accuracy"], "limit": limit_for(settings, "oracle_min", t)}
            for t, x in system["by_type"].items()}


def reader_verdict(scoring: Scoring | None, pairs: dict | None, why: str | None, settings: dict) -> dict:
    """Whether this reader can compare memory systems by accuracy: the `oracle` control, given
    exactly the evidence, answers at least checks.reader_min of the answerable questions (every
    oracle row, its lowest quoted). This is a verdict on the answer model, not on the
    instrument: a reader that cannot read makes every system's accuracy the reader's, while the
    harness may be sound, so it never fails the checks. Types where the oracle stays below
    checks.oracle_min are listed (there accuracy says little about memory), with its wrong
    answers. `verdict` is None when no oracle answered (a model-free comparison, no oracle run)."""
    limit = settings["reader_min"]
    base = {"verdict": None, "limit": limit, "oracle": None, "oracle_accuracy": None, "oracle_n": None,
            "none_accuracy": None, "by_type": {}, "types_below": [], "wrong": []}
    if scoring is None:
        return {**base, "text": f"no verdict on the reader: {why}"}
    oracles = sorted((label for label, s in scoring.systems.items() if s["backend"] == "oracle"
                      and s["accuracy"] is not None), key=lambda label: scoring.systems[label]["accuracy"])
    if not oracles:
        return {**base, "text": "no verdict on the reader: no `oracle` control among --runs (run.py --backend "
                                "oracle), so nothing says how often it answers given exactly the evidence"}
    label = oracles[0]
    oracle = scoring.systems[label]
    none = scoring.row_of("none", scoring.budget_of[label])
    types = oracle_types(oracle, settings)
    below = [t for t, x in types.items() if x["accuracy"] is not None and x["accuracy"] < x["limit"]]
    wrong = [answer_item(r, v) for r, v in sorted(pairs[label], key=lambda p: (p[0]["type"], p[0]["qid"], p[0]["repeat"]))
             if v["verdict"] != "correct"]
    acc = oracle["accuracy"]
    adequate = acc >= limit
    text = (f"reader {'adequate' if adequate else 'inadequate'} for accuracy: oracle {rate(acc)} "
            f"{'>=' if adequate else '<'} {limit:.2f} on {oracle['accuracy_n']} answerable question(s) given exactly "
            f"their evidence")
    text += ("" if adequate else ": accuracy cannot compare memory systems with this reader (retrieval recall "
                                 "can); a capable model behind LLM_BASE_URL would")
    if below:
        text += "; below checks.oracle_min on " + ", ".join(
            f"{t} {rate(types[t]['accuracy'])} (n={types[t]['n']}, min {types[t]['limit']:.2f})" for t in below)
    return {**base, "verdict": "adequate" if adequate else "inadequate", "oracle": label, "oracle_accuracy": acc,
            "oracle_n": oracle["accuracy_n"],
            "none_accuracy": scoring.systems[none]["accuracy"] if none is not None else None,
            "by_type": types, "types_below": below, "wrong": wrong, "text": text}


def check_order(scoring: Scoring, budget: int, pairs: dict, sweep: bool, reader: dict) -> dict:
    """Every real system between none and oracle on answerable questions; one above the oracle
    is flagged for an evidence audit with the questions it alone got right. With a reader the
    verdict finds inadequate, a SKIP: its accuracy places nothing between the controls."""
    at = f"@{budget}" if sweep else ""
    none, oracle = scoring.row_of("none", budget), scoring.row_of("oracle", budget)
    if none is None or oracle is None:
        absent = " and no ".join(n for n, label in (("none", none), ("oracle", oracle)) if label is None)
        return result("controls", f"order{at}", "SKIP", f"no {absent} run: real systems are not placed between the "
                      f"controls")
    lo, hi = scoring.systems[none]["accuracy"], scoring.systems[oracle]["accuracy"]
    if reader["verdict"] == "inadequate":
        return result("controls", f"order{at}", "SKIP", f"the reader is inadequate for accuracy (oracle {rate(hi)}, "
                      f"reader_min {reader['limit']:.2f}): its accuracy places no system between the controls",
                      {"none": lo, "oracle": hi})
    oracle_right = {(r["qid"], r["repeat"]) for r, v in pairs[oracle] if v["verdict"] == "correct"}
    numbers, items = {"none": lo, "oracle": hi, "systems": {}}, []
    for label in sorted(scoring.labels(budget)):
        s = scoring.systems[label]
        if s["backend"] in CONTROL_NAMES or s["accuracy"] is None:
            continue
        numbers["systems"][label] = a = s["accuracy"]
        if lo is not None and a < lo:
            items.append({"text": f"{label} {rate(a)} is below none {rate(lo)}: its context misleads the answer "
                                  f"model, or the harness has a bug", "system": label, "accuracy": a})
        if hi is not None and a > hi:
            qids = sorted({r["qid"] for r, v in pairs[label] if v["verdict"] == "correct" and is_answerable(r)
                           and (r["qid"], r["repeat"]) not in oracle_right})
            items.append({"text": f"{label} {rate(a)} is above oracle {rate(hi)}: audit the evidence labels of "
                                  f"{len(qids)} question(s) it gets right and the oracle does not: {', '.join(qids)}",
                          "system": label, "accuracy": a, "qids": qids})
    if not numbers["systems"]:
        return result("controls", f"order{at}", "SKIP", "no real system among the runs, only controls", numbers)
    text = (f"answerable accuracy: none {rate(lo)}, oracle {rate(hi)}; "
            + ", ".join(f"{k} {rate(a)}" for k, a in numbers["systems"].items()))
    if items:
        return result("controls", f"order{at}", "WARN", text, numbers, items)
    return result("controls", f"order{at}", "PASS", text + ": every system between the controls", numbers)


def check_above_oracle(scoring: Scoring, budget: int, sweep: bool, settings: dict) -> dict | None:
    """No real system above the oracle on an answerable type by a paired interval that excludes
    0: given exactly the evidence, the oracle knows all a system can, unless the system leaks
    (its store holds the golds) or checks.above_oracle says why it may."""
    at = f"@{budget}" if sweep else ""
    oracle = scoring.row_of("oracle", budget)
    if oracle is None:
        return None
    items, allowed = [], []
    for label in sorted(scoring.labels(budget)):
        s = scoring.systems[label]
        if s["backend"] in CONTROL_NAMES:
            continue
        for t, x in s["by_type"].items():
            d = scoring.paired(label, oracle, f"type:{t}") if x["answerable_n"] else None
            if d is None or d["ci_low"] is None or d["ci_low"] <= 0:
                continue
            why = settings["above_oracle"].get(s["backend"])  # a system the config does not name may not
            item = {"text": f"{label} is above the oracle on {t} by {interval_text(d)}"
                            + (f": allowed by checks.above_oracle: {why}" if why else ""),
                    "system": label, "type": t, **d}
            (allowed if why else items).append(item)
    numbers = {"oracle": oracle, "above": [i["system"] + " " + i["type"] for i in items + allowed]}
    if items:
        return result("controls", f"above_oracle{at}", "FAIL", "a system scores above the oracle on "
                      + ", ".join(f"{i['type']} ({i['system']})" for i in items) + " by an interval that excludes 0: a "
                      "system cannot know more than the evidence unless it leaks; check its store for golds and "
                      "questions, or say why it may in config.yaml checks.above_oracle", numbers, items + allowed)
    if allowed:
        return result("controls", f"above_oracle{at}", "WARN", "above the oracle, as config.yaml checks.above_oracle "
                      "allows: " + "; ".join(i["text"] for i in allowed), numbers, allowed)
    return result("controls", f"above_oracle{at}", "PASS", "no system scores above the oracle on any answerable type "
                  "by an interval that excludes 0", numbers)


def check_controls(scoring: Scoring | None, pairs: list | None, why: str | None, settings: dict,
                   reader: dict) -> list[dict]:
    """The control checks on the answers, or SKIPs that say why they could not run. The
    oracle's accuracy is the reader's verdict (reader_verdict), not one of them."""
    if scoring is None:
        return [result("controls", name, "SKIP", why) for name in ("none", "order")]
    sweep, by_label = len(scoring.budgets) > 1, pairs_by_row(pairs)
    out = []
    labels = sorted(label for label, s in scoring.systems.items() if s["backend"] == "none")
    if not labels:
        out.append(result("controls", "none", "SKIP", "no run of the `none` control among --runs: run.py --backend "
                          "none; without it the harness is not checked"))
    out += [check_none(label, scoring.systems[label], by_label[label], settings) for label in labels]
    for budget in scoring.budgets:
        out.append(check_order(scoring, budget, by_label, sweep, reader))
        above = check_above_oracle(scoring, budget, sweep, settings)
        if above:
            out.append(above)
    return out


# ---------------------------------------------------------------------------------------------
# Reruns: determinism (9.2) and indexing lag (9.4)
# ---------------------------------------------------------------------------------------------

# What retrieved ids depend on: two runs that differ in one of these are not the same retrieval.
SAME_RETRIEVAL = ("backend_version", "backend_code_sha256", "dataset_sha256", "top_k")


def match_rerun(path: str, main: dict, run_paths: set, dataset) -> tuple[str, list[tuple[dict, dict]], dict]:
    """A rerun file's records, each with the main run's record of the same backend, repeat and
    question: (backend, [(main, rerun)], counts of what could not be compared)."""
    if os.path.realpath(path) in run_paths:
        raise InputError(f"{path}: is one of the --runs files; a rerun must be a second run, in its own file")
    rows = read_run_files([path], dataset)
    backends = {r["backend"] for _, _, r in rows}
    if len(backends) > 1:
        raise InputError(f"{path}: holds {len(backends)} backends ({', '.join(sorted(backends))}); one rerun per file")
    backend = backends.pop()
    pairs, unmatched, failed = [], 0, 0
    for _, lineno, r in rows:
        m = main.get((backend, r["repeat"], r["qid"]))  # a question the main run lacks is counted
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


def check_rerun(path: str, main: dict, run_paths: set, dataset, settings: dict) -> tuple[dict, str, float | None]:
    """The share of questions a second run retrieved differently; (result, backend, rate)."""
    backend, pairs, counts = match_rerun(path, main, run_paths, dataset)
    diffs, unmeasured = differ(pairs)
    compared = len(pairs) - unmeasured
    noise = len(diffs) / compared if compared else None
    # A system that declares itself deterministic has its searches reused across repeats by
    # run.py, so its repeats are only honest if its reruns are identical: held to it like the
    # configured list.
    declared = any(m["deterministic"] for m, _ in pairs)
    must = backend in CONTROL_NAMES or backend in settings["deterministic_backends"] or declared
    numbers = {"file": path, "compared": compared, "differ": len(diffs), "rate": noise, "must_be_identical": must,
               "declares_deterministic": declared, "not_measurable": unmeasured, **counts}
    if compared == 0:
        return (result("determinism", backend, "SKIP", f"{path}: nothing to compare ({unmeasured} without provenance, "
                       f"{counts['failed']} failed in a run)", numbers), backend, None)
    text = f"{path}: retrieved ids differ on {len(diffs)} of {compared} questions ({noise:.1%})"
    if counts["failed"] or counts["unmatched"]:
        text += f"; not compared: {counts['failed']} failed in a run, {counts['unmatched']} not in the main run"
    if diffs and must:
        why = (" (it declares itself deterministic, so run.py reused its searches across repeats)"
               if declared and backend not in CONTROL_NAMES else "")
        return (result("determinism", backend, "FAIL", text + f"; {backend} must retrieve identically every time"
                       + why, numbers, diffs), backend, noise)
    if diffs:
        return (result("determinism", backend, "WARN", text + ": its noise rate, report it", numbers, diffs),
                backend, noise)
    return result("determinism", backend, "PASS", text, numbers), backend, noise


def check_lag(path: str, main: dict, run_paths: set, dataset, noise: dict) -> dict:
    """A rerun after an extra wait must retrieve what the main run did: if waiting longer
    changes the ids, flush returned before the index was ready."""
    backend, pairs, counts = match_rerun(path, main, run_paths, dataset)
    waits = sorted({r["extra_wait_s"] for _, r in pairs})
    if not pairs:
        return result("lag", backend, "SKIP", f"{path}: every question failed in one of the runs", counts)
    if min(waits) <= 0 or any(m["extra_wait_s"] >= r["extra_wait_s"] for m, r in pairs):
        raise InputError(f"{path}: not a lag rerun: its extra_wait_s ({waits}) must be above the main run's; "
                         f"make it with run.py --extra-wait-s S")
    diffs, unmeasured = differ(pairs)
    compared = len(pairs) - unmeasured
    before = recall_metrics([m for m, _ in pairs])["recall_any_at_k"]
    after = recall_metrics([r for _, r in pairs])["recall_any_at_k"]
    numbers = {"file": path, "extra_wait_s": waits, "compared": compared, "differ": len(diffs),
               "recall_any_main": before, "recall_any_after_wait": after, "not_measurable": unmeasured,
               "rerun_noise_rate": noise.get(backend), **counts}  # a backend without a --rerun has no rate
    if compared == 0:
        return result("lag", backend, "SKIP", f"{path}: no provenance to compare", numbers)
    text = (f"{path}: after {', '.join(f'{w:g}' for w in waits)} s more, retrieved ids differ on {len(diffs)} of "
            f"{compared} questions; recall_any@k {rate(before)} -> {rate(after)}")
    if diffs:
        if numbers["rerun_noise_rate"]:
            text += f" (its rerun noise rate is {numbers['rerun_noise_rate']:.1%}: compare)"
        return result("lag", backend, "FAIL", text + f": flush does not wait until {backend}'s index is ready, so "
                      f"its results understate it", numbers, diffs)
    return result("lag", backend, "PASS", text, numbers)


# ---------------------------------------------------------------------------------------------
# Leakage
# ---------------------------------------------------------------------------------------------

def check_leakage(path: str, rows: list[tuple[int, dict]], turns: dict) -> dict | None:
    """Every hit a run file's system returned names turns of the question's own case: a store
    that ignores its namespace, or keeps a case after its reset, returns another case's turns,
    and a question answered from them has read what its own history never said. None for a
    control (the harness builds its context, check_control_contexts holds it). `turns`: case_id
    -> the turn ids of that case.

    Provenance is checked by id, so a hit from another case under an id its own case also uses
    cannot be told apart: when the run's cases share turn ids, how many hits name such an id is
    a warning with the count."""
    backend = rows[0][1]["backend"]
    if backend in CONTROL_NAMES:
        return None
    owners: dict = defaultdict(set)  # turn id -> the run's cases that hold it
    for case_id, ids in turns.items():
        for t in ids:
            owners[t].add(case_id)
    bad, checked, untraced, hits, ambiguous = [], 0, 0, 0, 0
    for lineno, r in rows:
        if r["retrieved_ids"] is None:  # no provenance, or the question failed
            untraced += 1
            continue
        checked += 1
        own = turns[r["case_id"]]
        hits += len(r["retrieved_ids"])
        ambiguous += sum(len(owners[t]) > 1 for t in r["retrieved_ids"] if t in own)
        foreign = list(dict.fromkeys(t for t in r["retrieved_ids"] if t not in own))
        if foreign:
            cases = sorted({c for t in foreign for c in owners.get(t, ())})
            bad.append({"text": f"{path}:{lineno}: {r['qid']} (case {r['case_id']}, repeat {r['repeat']}): "
                                f"{len(foreign)} retrieved id(s) not of its case: {', '.join(foreign[:5])}"
                                + (f" (turns of {', '.join(cases)})" if cases else " (turns of no case of the run)"),
                        "file": path, "line": lineno, "qid": r["qid"], "case_id": r["case_id"], "repeat": r["repeat"],
                        "foreign_ids": foreign, "their_cases": cases})
    numbers = {"file": path, "records_checked": checked, "hits_checked": hits, "records_leaking": len(bad),
               "no_provenance": untraced, "hits_on_shared_ids": ambiguous}
    if bad:
        return result("leakage", backend, "FAIL", f"{path}: {len(bad)} of {checked} question(s) retrieved turns "
                      f"of another case: {backend} does not keep its namespaces apart (or keeps a case after its "
                      f"reset)", numbers, bad)
    if not checked:
        return result("leakage", backend, "SKIP", f"{path}: no record carries provenance (source ids), so no hit "
                      f"can be traced to its case", numbers)
    text = f"{path}: all {hits} hit(s) of {checked} question(s) name turns of their own case"
    text += f"; {untraced} record(s) without provenance were not checked" if untraced else ""
    if ambiguous:
        return result("leakage", backend, "WARN", text + f"; {ambiguous} of them name an id that another case of "
                      f"the run uses too (the dataset's turn ids repeat across cases), so a hit from that other "
                      f"case could not be told apart", numbers)
    return result("leakage", backend, "PASS", text, numbers)


def case_turns(cases: Iterable[dict]) -> dict:
    """case_id -> the set of its turn ids."""
    return {case["case_id"]: {t["turn_id"] for s in case["sessions"] for t in s["turns"]} for case in cases}


def check_provenance(path: str, rows: list[tuple[int, dict]], cases: dict, settings: dict) -> dict | None:
    """Every hit the answer model read could have come from the turns it names (provenance.py's
    rules: at most checks.provenance_max_sources turns, each sharing a content word with it).
    `cases`: case_sources of the run's cases. None for a control. A FAIL for a system that
    stores turns as they are (its records name no internal model); a WARN for one whose
    internal model rewrites them (its facts are the model's words, and a fact that shares none
    with its turn may be the extractor's error, not a false claim)."""
    backend = rows[0][1]["backend"]
    if backend in CONTROL_NAMES:
        return None
    bound = settings["provenance_max_sources"]
    numbers, bad = tally(path, rows, cases, bound)
    checked, hits_read, unread = numbers["records_checked"], numbers["hits_read"], numbers["hits_cut_unread"]
    if not checked:
        return result("provenance", backend, "SKIP", f"{path}: no record carries provenance (source ids), so no "
                      f"claim can be held to the turns it names", numbers)
    if not bad and not hits_read and not unread:
        return result("provenance", backend, "SKIP", f"{path}: no search of {checked} question(s) returned a hit, so "
                      f"no claim can be held to the turns it names", numbers)
    if bad:
        why = (f"{path}: {len(bad)} of {checked} question(s) have hits whose named turns cannot have produced them "
               f"(more than {bound} turns per hit, or no word in common with a turn named): recall counts those "
               f"turns as retrieved")
        rewrites = numbers["internal_model"]
        if rewrites:
            return result("provenance", backend, "WARN", why + f"; {backend}'s hits are its internal model's "
                          f"({rewrites}) rewriting, so a fact sharing no word with its turn may be the extractor's "
                          f"error: its provenance is its own claim, read these hits", numbers, bad)
        return result("provenance", backend, "FAIL", why + f"; {backend}'s ids are not earned by its hits: a store "
                      f"must return what it stored under the ids it was given (for hits that are long chunks, raise "
                      f"checks.provenance_max_sources and say why)", numbers, bad)
    text = (f"{path}: all {hits_read} hit(s) read in {checked} question(s) name at most {bound} turn(s) each and "
            f"share a word with every turn they name; {numbers['hits_verbatim']} are the stored text of their one "
            f"turn")
    text += f"; {unread} hit(s) cut by the budget held to the bound only (their text is not recorded)" if unread else ""
    untraced = numbers["no_provenance"]
    text += f"; {untraced} record(s) without provenance were not checked" if untraced else ""
    return result("provenance", backend, "PASS", text, numbers)


# ---------------------------------------------------------------------------------------------
# Judge health
# ---------------------------------------------------------------------------------------------

def pairs_by_row(pairs: list[tuple[dict, dict]]) -> dict:
    """The (record, verdict) pairs per system row (repeats together), rows in label order."""
    sweep = len({r[BUDGET_FIELD] for r, _ in pairs}) > 1
    out: dict = defaultdict(list)
    for r, v in sorted(pairs, key=lambda p: system_label(p[0], sweep)):
        out[system_label(r, sweep)].append((r, v))
    return out


def check_unparseable(pairs: list[tuple[dict, dict]], settings: dict) -> dict:
    """Unparseable verdicts and failed judge calls per system; WARN on a system with clearly
    more unparseable verdicts than the others pooled."""
    counts = {}
    for label, rows in pairs_by_row(pairs).items():
        judged = [v for _, v in rows if v["by"] == "llm"]
        counts[label] = {"judged": len(judged), "unparseable": sum(v["verdict"] == "unparseable" for v in judged),
                         "judge_errors": sum(v["judge_error"] is not None for v in judged)}
    if sum(c["judged"] for c in counts.values()) == 0:
        return result("judge", "unparseable", "SKIP", "no verdict came from an LLM judge (rules-only grading)",
                      {"by_system": counts})
    flagged = []
    for label, c in counts.items():
        rest_u = sum(x["unparseable"] for k, x in counts.items() if k != label)
        rest_n = sum(x["judged"] for k, x in counts.items() if k != label)
        if c["unparseable"] >= settings["unparseable_min"] and rest_n:
            c["p_value"] = p = fisher_greater(c["unparseable"], c["judged"], rest_u, rest_n)
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
    counts, items = {}, []
    for label, rows in pairs_by_row(pairs).items():
        both = [(r, v) for r, v in rows if v["by"] == "llm" and v["rules_only_verdict"] is not None
                and v["verdict"] in ("correct", "incorrect")]
        off = [(r, v) for r, v in both if v["verdict"] != v["rules_only_verdict"]]
        counts[label] = {"both_decided": len(both), "disagree": len(off),
                         "rate": len(off) / len(both) if both else None}
        items += [{"text": f"{label} {r['qid']}: rules {v['rules_only_verdict']}, judge {v['verdict']}: "
                           f"gold {r['gold_answer']!r}, answer {r['answer']!r}", "system": label, "qid": r["qid"],
                   "rules_only_verdict": v["rules_only_verdict"], "verdict": v["verdict"]} for r, v in off]
    if not any(v["by"] == "llm" for _, v in pairs):
        return result("judge", "disagreement", "SKIP", "no verdict came from an LLM judge (rules-only grading)",
                      {"by_system": counts})
    if sum(c["both_decided"] for c in counts.values()) == 0:
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


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", nargs="+", required=True, help="the run files of the comparison (runs/$RUN/*.jsonl)")
    ap.add_argument("--verdicts", help="results/$RUN/verdicts.jsonl from judge.py (not needed when every run is "
                                       "retrieval-only)")
    ap.add_argument("--config", default="config.yaml", help="the `checks:` thresholds, and the dataset unless "
                                                            "--manifest names it (default config.yaml)")
    ap.add_argument("--manifest", help="results/$RUN/manifest-$RUN.json: names the dataset the runs were made from")
    ap.add_argument("--allow-partial", action="store_true",
                    help="check the questions every system holds, instead of refusing runs that lack some")
    ap.add_argument("--rerun", nargs="+", default=[], help="second runs of a backend (determinism), one per file")
    ap.add_argument("--lag", nargs="+", default=[], help="reruns made with run.py --extra-wait-s S (indexing lag)")
    ap.add_argument("--out", help="the results as JSON (default results/RUN_ID/checks.json, the config's run_id)")
    return ap.parse_args(argv)


def graded_pairs(problems: list, comparison, verdicts: str | None) -> tuple[list | None, str | None]:
    """(record, verdict) pairs of the comparison's graded records, or None and why the judge
    checks cannot run."""
    if problems:
        return None, "the run files are not one comparison (see contract/comparison)"
    if all(r["retrieval_only"] for r in comparison.records):
        return None, "every run is retrieval-only (run.py --retrieval-only): no answer to grade"
    return [(r, v) for r, v in pair_verdicts(comparison.records, verdicts) if v is not None], None


def run_checks(a: argparse.Namespace, rows: list, dataset, comparison, problems: list, pairs: list | None,
               why: str | None, settings: dict) -> tuple[list[dict], dict]:
    """Every check's result, in the order they are shown, and the reader's verdict."""
    scoring = Scoring(pairs) if pairs else None
    reader = reader_verdict(scoring, pairs_by_row(pairs) if pairs else None,
                            why if pairs is None else "no answer was graded", settings)
    by_file: dict = defaultdict(list)
    for path, lineno, rec in rows:
        by_file[path].append((lineno, rec))

    # 1. The contract: one comparison.
    results = [check_contract(a.runs, problems, comparison)] + check_served_models(comparison.records)
    for path, file_rows in by_file.items():
        budgets = sorted({r[BUDGET_FIELD] for _, r in file_rows})
        results += [check_budget(path, [(n, r) for n, r in file_rows if r[BUDGET_FIELD] == b], len(budgets) > 1,
                                 settings) for b in budgets]
    # 2. The controls bracket the harness: what they were given, and what they answered.
    results += check_control_contexts(by_file)
    results += check_controls(scoring, pairs, why, settings, reader)
    # 3. Retrieval repeats itself, and waits for the index.
    main_by_key = {(r["backend"], r["repeat"], r["qid"]): r for _, _, r in rows}
    run_paths = {os.path.realpath(p) for p in a.runs}
    noise = {}
    for path in a.rerun:
        r, backend, noise[backend] = check_rerun(path, main_by_key, run_paths, dataset, settings)
        results.append(r)
    if not a.rerun:
        results.append(result("determinism", None, "SKIP", "no --rerun given: run a backend twice (run.py "
                              "--retrieval-only into runs-check/) to measure it"))
    results += [check_lag(path, main_by_key, run_paths, dataset, noise) for path in a.lag]
    if not a.lag:
        results.append(result("lag", None, "SKIP", "no --lag given: rerun a backend with run.py --extra-wait-s 30 "
                              "to rule out indexing lag"))
    # 4. Each case's search found its own turns only, and each hit could have come from the
    # turns it names. The cases of the runs, read again from the file dataset_from validated.
    cases = list(iter_cases(dataset.path, {rec["case_id"] for _, _, rec in rows}))
    turns, sources = case_turns(cases), case_sources(cases)
    results += [r for path, file_rows in by_file.items() if (r := check_leakage(path, file_rows, turns))]
    results += [r for path, file_rows in by_file.items() if (r := check_provenance(path, file_rows, sources, settings))]
    # 5. The judge.
    if pairs is None:
        results += [result("judge", name, "SKIP", why) for name in ("unparseable", "disagreement")]
    else:
        results += [check_unparseable(pairs, settings), check_disagreement(pairs)]
    return results, reader


def checks_summary(a: argparse.Namespace, results: list[dict], reader: dict, dataset, comparison,
                   pairs: list | None, settings: dict) -> dict:
    """What checks.json holds: the results, the reader's verdict apart from them (it never
    sets the status), their inputs and the thresholds."""
    return {
        "format": CHECKS_FORMAT,
        "status": worst([r["status"] for r in results]),
        "counts": {s: sum(r["status"] == s for r in results) for s in STATUSES},
        "created_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "dataset_sha256": dataset.sha256,
        "coverage": comparison.coverage,
        "grader": {f: pairs[0][1][f] for f in VERDICT_IDENTITY_FIELDS[1:]} if pairs else None,
        "inputs": {"runs": {p: sha256_file(p) for p in a.runs},
                   "verdicts": {a.verdicts: sha256_file(a.verdicts)} if a.verdicts else {},
                   "manifest": a.manifest, "config": a.config,
                   "rerun": {p: sha256_file(p) for p in a.rerun}, "lag": {p: sha256_file(p) for p in a.lag}},
        "thresholds": settings,
        "checks": results,
        "reader": reader,
    }


def main(argv: list[str] | None = None) -> int:
    """Run every check; exit 4 when one FAILs."""
    a = parse_args(argv)
    cfg = load_config(a.config)
    settings = check_settings(cfg["checks"], a.config)
    out = output_path(a.out or os.path.join(results_dir(cfg["run_id"]), "checks.json"), "--out")
    dataset = dataset_from(a.config if not a.manifest else None, a.manifest)
    rows = read_run_files(a.runs, dataset)
    problems = contract_problems(rows)
    comparison = coverage(rows, dataset, a.allow_partial)
    pairs, why = graded_pairs(problems, comparison, a.verdicts)
    results, reader = run_checks(a, rows, dataset, comparison, problems, pairs, why, settings)
    summary = checks_summary(a, results, reader, dataset, comparison, pairs, settings)
    # The file first, then stdout: `check.py ... | head` must not cost the results.
    write_json_atomic(out, summary)
    print(render(results, out))
    print(f"reader: {reader['text']}")
    return EXIT_CHECK_FAILED if summary["status"] == "FAIL" else EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
