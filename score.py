"""Score the systems: accuracy per system and per question type, retrieval recall apart from
answer accuracy, and each system's paired difference to a baseline with a 95% cluster-bootstrap
interval that resamples cases (seed guide, section 7).

Usage:
  python score.py --runs runs/*.jsonl --verdicts results/verdicts.jsonl --baseline keyword
  python score.py --runs runs/*.jsonl --verdicts results/verdicts.jsonl --baseline keyword \\
      --json results/scores.json --markdown results/report.md --manifest results/manifest-RUN.json
"""
from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import Counter, defaultdict

from grading import RULES_SHA256
from interface import (BUDGET_FIELD, CONTROL_NAMES, EXIT_OK, VERDICT_IDENTITY_FIELDS, InputError,
                       load_comparison, read_jsonl, record_key, run_cli, verdict_identity, write_atomic,
                       write_json_atomic)

# Thresholds for the plain-words control checks of the report (seed guide, section 9.1).
NONE_FACTUAL_MAX = 0.10   # `none` above this on factual questions: golds may be guessable
ORACLE_MIN = 0.80         # `oracle` below this: the answer model or grader limits every score


def mean(xs: list) -> float | None:
    """Arithmetic mean; None for an empty list (not measurable, never NaN)."""
    return sum(xs) / len(xs) if xs else None


def percentile(sorted_xs: list[float], q: float) -> float:
    """The q-quantile of a sorted list by the nearest-rank method (no interpolation)."""
    return sorted_xs[min(len(sorted_xs) - 1, max(0, math.ceil(q * len(sorted_xs)) - 1))]


def cluster_bootstrap(diff_by_cluster: dict, resamples: int, seed: int) -> tuple[float, float, float]:
    """Point estimate (mean over questions) and a 95% percentile interval from resampling whole
    clusters with replacement: questions of one case, and cases cut from one conversation, are
    not independent (seed guide, section 7). A cluster is a case unless the dataset says more."""
    clusters = sorted(diff_by_cluster)
    point = mean([d for c in clusters for d in diff_by_cluster[c]])
    sums = {c: (sum(diff_by_cluster[c]), len(diff_by_cluster[c])) for c in clusters}
    rng = random.Random(seed)
    stats = []
    for _ in range(resamples):
        total = count = 0
        for _ in clusters:
            s, n = sums[clusters[rng.randrange(len(clusters))]]
            total += s
            count += n
        stats.append(total / count)
    stats.sort()
    return point, percentile(stats, 0.025), percentile(stats, 0.975)


def system_label(rec: dict, several_budgets: bool) -> str:
    """One row per system, repeat and budget: repeats and budgets are rows of their own."""
    label = rec["backend"] if rec["repeat"] == 0 else f"{rec['backend']}#r{rec['repeat']}"
    return f"{label}@{rec[BUDGET_FIELD]}" if several_budgets else label


def load_verdicts(path: str) -> dict:
    """Verdicts keyed by interface.record_key, with their line; two for one answer is an error."""
    out: dict = {}
    for lineno, v in read_jsonl(path):
        missing = [f for f in ("backend", "repeat", BUDGET_FIELD, "qid", "verdict", "by", "judge_error")
                   + VERDICT_IDENTITY_FIELDS if f not in v]
        if missing:
            raise InputError(f"{path}:{lineno}: not a verdict of this judge.py (no field '{missing[0]}'); "
                             f"rerun judge.py")
        key = record_key(v)
        if key in out:
            raise InputError(f"{path}:{lineno}: a second verdict for {v['backend']!r} question {v['qid']!r} "
                             f"(the first is line {out[key][0]}); rerun judge.py, which keeps one per answer")
        out[key] = (lineno, v)
    return out


def pair_verdicts(records: list[dict], verdicts: dict, path: str) -> list[tuple[dict, dict]]:
    """Each run record with its verdict, refusing a verdict that does not belong to exactly
    this record under one grader: graded against another gold, answer or annotation, by another
    rule set than this code's, or by a mix of judges."""
    used = {tuple(verdicts[record_key(r)][1][f] for f in VERDICT_IDENTITY_FIELDS[1:])
            for r in records if record_key(r) in verdicts}
    if len(used) > 1:
        raise InputError(f"{path}: the verdicts of these runs come from {len(used)} different graders "
                         f"(rule sets or judge models: {sorted(map(str, used))}); grade them together: "
                         f"rerun judge.py on all of them")
    pairs = []
    for r in records:
        found = verdicts.get(record_key(r))  # a missing verdict is reported, not defaulted
        if found is None:
            raise InputError(f"{path}: no verdict for {r['backend']!r} question {r['qid']!r}; "
                             f"run judge.py on these runs first")
        lineno, v = found
        grader = dict(zip(VERDICT_IDENTITY_FIELDS[1:], (v[f] for f in VERDICT_IDENTITY_FIELDS[1:])))
        if v["rules_sha256"] != RULES_SHA256:
            raise InputError(f"{path}:{lineno}: graded by another rule set (rules_sha256 "
                             f"{v['rules_sha256'][:12]}, this code's is {RULES_SHA256[:12]}); rerun judge.py")
        if v["inputs_sha256"] != verdict_identity(r, grader)["inputs_sha256"]:
            raise InputError(f"{path}:{lineno}: the verdict of {r['backend']!r} question {r['qid']!r} graded "
                             f"another question, gold, annotation or answer than its run record holds now; "
                             f"rerun judge.py")
        pairs.append((r, v))
    return pairs


def score_system(rows: list[tuple[dict, dict]]) -> dict:
    """Every number of one system's row, from its (run record, verdict) pairs."""
    ok, layers, by_type = [], defaultdict(int), defaultdict(list)
    unparseable = errors = 0
    recs = [r for r, _ in rows]
    for r, v in rows:
        correct = v["verdict"] == "correct"
        ok.append(correct)
        by_type[r["type"]].append(correct)
        layers[v["by"]] += 1
        unparseable += v["verdict"] == "unparseable"
        errors += r["error"] is not None or v["judge_error"] is not None
    with_evidence = [r for r in recs if r["evidence"]]
    measured = [r for r in with_evidence if r["retrieved_ids"] is not None and r["context_ids"] is not None]
    # Why recall is missing matters: a failed question retrieved nothing to measure, while a
    # hit without source ids came back but cannot be traced to stored turns.
    failed = sum(1 for r in with_evidence if r["error"] is not None)
    unknown = len(with_evidence) - len(measured) - failed
    why = "; ".join(([f"{failed} failed"] if failed else []) +
                    ([f"{unknown} returned hits without provenance (source ids)"] if unknown else []))
    recall_note = None
    if not with_evidence:
        recall_note = "no question has gold evidence"
    elif not measured:
        recall_note = f"not measurable: of {len(with_evidence)} questions with evidence, {why}"
    elif len(measured) < len(with_evidence):
        recall_note = f"measured on {len(measured)} of {len(with_evidence)} questions ({why})"
    first_error = next((r["error"] for r in recs if r["error"] is not None),
                       next((v["judge_error"] for _, v in rows if v["judge_error"] is not None), None))
    tokens = [r["context_tokens"] for r in recs if r["context_tokens"] is not None]
    search = sorted(r["search_ms"] for r in recs if r.get("search_ms") is not None)  # absent for controls
    first = recs[0]
    return {
        "backend": first["backend"], "backend_version": first["backend_version"], "repeat": first["repeat"],
        "internal_model": first.get("internal_model"), "flush_note": first.get("flush_note"),
        "n": len(recs), "correct": sum(ok), "accuracy": mean(ok),
        "recall_any_at_k": mean([bool(set(r["retrieved_ids"]) & set(r["evidence"])) for r in measured]),
        "recall_all_in_context": mean([set(r["evidence"]) <= set(r["context_ids"]) for r in measured]),
        "recall_n": len(measured), "recall_note": recall_note,
        "unparseable": unparseable, "errors": errors, "first_error": first_error,
        "mean_context_tokens": mean(tokens),
        "search_ms_p50": percentile(search, 0.5) if search else None,
        "search_ms_p95": percentile(search, 0.95) if search else None,
        "by_type": {t: {"n": len(v), "accuracy": mean(v)} for t, v in sorted(by_type.items())},
        "decided_by": dict(sorted(layers.items())),
    }


def fmt(x: float | None, signed: bool = False) -> str:
    """Numbers for people: 3 decimals, n/a for not measurable."""
    if x is None:
        return "n/a"
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def render_text(scores: dict) -> str:
    """The readable stdout table."""
    out = ["system | n | accuracy | recall_any@k | recall_all(ctx) | unparseable | errors | ctx tokens"]
    for s in scores["systems"]:
        out.append(f"{s['label']} | {s['n']} | {fmt(s['accuracy'])} | {fmt(s['recall_any_at_k'])} | "
                   f"{fmt(s['recall_all_in_context'])} | {s['unparseable']} | {s['errors']} | "
                   f"{fmt(s['mean_context_tokens'])}")
    out.append("\naccuracy by question type (n)")
    for s in scores["systems"]:
        types = ", ".join(f"{t}={fmt(v['accuracy'])}({v['n']})" for t, v in s["by_type"].items())
        out.append(f"{s['label']}: {types}")
    out.append(f"\npaired difference vs {scores['baseline']} "
               f"(cluster bootstrap over cases, {scores['resamples']} resamples, 95% CI)")
    for d in scores["differences"]:
        out.append(f"{d['system']}: {fmt(d['difference'], True)}  [{fmt(d['ci_low'], True)}, "
                   f"{fmt(d['ci_high'], True)}]  over {d['questions']} questions in {d['cases']} cases "
                   f"({d['clusters']} clusters)")
    for s in scores["systems"]:
        if s["recall_note"]:
            out.append(f"note: {s['label']}: recall {s['recall_note']}")
    for w in scores["warnings"]:
        out.append(f"warning: {w}")
    return "\n".join(out)


def factual_accuracy(system: dict) -> float | None:
    """Accuracy over the questions whose gold is a fact (not abstention or adversarial)."""
    factual = [v for t, v in system["by_type"].items() if t not in ("abstention", "adversarial")]
    n = sum(v["n"] for v in factual)
    return sum(v["accuracy"] * v["n"] for v in factual) / n if n else None


def findings(scores: dict) -> list[str]:
    """Plain-words checks of the instrument itself, from the controls (seed guide, 9.1)."""
    by = {s["label"]: s for s in scores["systems"]}
    notes = []
    if "none" in by:
        acc = factual_accuracy(by["none"])
        for s in scores["systems"]:
            own = factual_accuracy(s)
            if s["label"] not in CONTROL_NAMES and acc is not None and own is not None and own < acc:
                notes.append(f"`{s['label']}` answers fewer factual questions ({own:.1%}) than the `none` "
                             f"control ({acc:.1%}): its context misleads the answer model.")
        if acc is not None and acc > NONE_FACTUAL_MAX:
            notes.append(f"The `none` control (no memory at all) answers {acc:.1%} of factual questions "
                         f"correctly: some gold answers can be guessed without memory. Treat those "
                         f"questions with suspicion.")
        elif acc is not None:
            notes.append(f"The `none` control answers {acc:.1%} of factual questions correctly: the gold "
                         f"answers are not guessable, as they should be.")
    if "oracle" in by:
        acc = by["oracle"]["accuracy"]
        if acc is not None and acc < ORACLE_MIN:
            notes.append(f"The `oracle` control, given exactly the gold evidence, reaches only {acc:.1%}. "
                         f"That is the ceiling of this answer model and grader on this dataset, not a "
                         f"property of any memory system: read every system's accuracy against it, and "
                         f"prefer the retrieval recall columns, which do not depend on the answer model.")
        else:
            notes.append(f"The `oracle` control reaches {acc:.1%}: the answer model and grader can answer "
                         f"when given the right evidence.")
        for s in scores["systems"]:
            if s["label"] not in CONTROL_NAMES and s["accuracy"] is not None and acc is not None \
                    and s["accuracy"] > acc:
                notes.append(f"`{s['label']}` scores above the oracle: audit the evidence labels of the "
                             f"questions it gets right and the oracle does not.")
    for s in scores["systems"]:
        if s["recall_note"]:
            notes.append(f"`{s['label']}`: retrieval recall {s['recall_note']}.")
        if s["internal_model"]:
            notes.append(f"`{s['label']}` calls a model of its own during ingestion or search: "
                         f"{s['internal_model']}.")
        if s["flush_note"]:
            notes.append(f"`{s['label']}`: {s['flush_note']}")
        if s["errors"]:
            notes.append(f"`{s['label']}`: {s['errors']} of {s['n']} questions failed (run or judge errors), "
                         f"counted as incorrect; the first: {s['first_error']}")
    return notes


def render_markdown(scores: dict, manifest: dict | None) -> str:
    """results/report.md: the table, the per-type table, the differences and what they mean."""
    lines = ["# memory-bench report", ""]
    if manifest:
        lines += [f"- run: `{manifest['run_id']}` at {manifest['created_utc']}, git `{manifest['git_commit']}`"
                  f"{' (dirty tree)' if manifest['git_dirty'] else ''}",
                  f"- dataset: `{manifest['dataset']}` sha256 `{manifest['dataset_sha256'][:16]}…`",
                  f"- answer model: `{manifest['answer_model']}`; judge model: "
                  f"{'`' + manifest['judge_model'] + '`' if manifest['judge_model'] else 'none (rules only)'}",
                  f"- top_k {manifest['top_k']}, context budget {manifest['context_token_budget']} tokens "
                  f"({manifest['tokenizer']})"]
        served = manifest["served_model_info"]
        if served:
            lines.append(f"- served locally by {served['server']} {served['server_version']} as "
                         f"`{served['served_model']}`, from `{served['model_file']}` ({served['model_package']}, "
                         f"sha256 `{served['model_sha256'][:16]}…`)"
                         + (f", converted to `{served['served_file']}` (sha256 `{served['served_sha256'][:16]}…`)"
                            if served.get("served_file") else ""))
        lines.append("")
    lines += [f"Grading: {scores['grading']}", "",
              "| system | n | accuracy | recall_any@k | recall_all (context) | unparseable | errors | mean context tokens | search p95 ms |",
              "|---|---|---|---|---|---|---|---|---|"]
    for s in scores["systems"]:
        lines.append(f"| {s['label']} | {s['n']} | {fmt(s['accuracy'])} | {fmt(s['recall_any_at_k'])} | "
                     f"{fmt(s['recall_all_in_context'])} | {s['unparseable']} | {s['errors']} | "
                     f"{fmt(s['mean_context_tokens'])} | {fmt(s['search_ms_p95'])} |")
    types = sorted({t for s in scores["systems"] for t in s["by_type"]})
    lines += ["", "Accuracy by question type (n):", "",
              "| system | " + " | ".join(types) + " |", "|---|" + "---|" * len(types)]
    for s in scores["systems"]:
        cells = [f"{fmt(s['by_type'][t]['accuracy'])} ({s['by_type'][t]['n']})" if t in s["by_type"] else ""
                 for t in types]
        lines.append(f"| {s['label']} | " + " | ".join(cells) + " |")
    lines += ["", f"Paired difference in accuracy against `{scores['baseline']}`, 95% cluster-bootstrap "
              f"interval over cases ({scores['resamples']} resamples). An interval that contains 0 means "
              f"this dataset does not separate the two systems.", "",
              "| system | difference | 95% CI | questions | cases |", "|---|---|---|---|---|"]
    for d in scores["differences"]:
        lines.append(f"| {d['system']} | {fmt(d['difference'], True)} | [{fmt(d['ci_low'], True)}, "
                     f"{fmt(d['ci_high'], True)}] | {d['questions']} | {d['cases']} |")
    if scores["warnings"]:
        lines += ["", "## Warnings", ""] + [f"- {w}" for w in scores["warnings"]]
    lines += ["", "## What the controls say", ""] + [f"- {n}" for n in findings(scores)]
    return "\n".join(lines) + "\n"


def grading_summary(systems: list[dict]) -> str:
    """Which grading decided the verdicts, in words."""
    layers = defaultdict(int)
    for s in systems:
        for k, v in s["decided_by"].items():
            layers[k] += v
    parts = ", ".join(f"{k} {v}" for k, v in sorted(layers.items()))
    if layers.get("llm"):
        return f"deterministic layers, then an LLM judge for the rest (verdicts by layer: {parts})."
    return (f"deterministic layers only, no LLM judge (verdicts by layer: {parts}). Answers that say the "
            f"right thing in other words than the gold are counted incorrect, so accuracy is a lower bound.")


def served_model_warnings(by_system: dict) -> list[str]:
    """A provider that swapped models mid-run shows as more than one served model in one run."""
    out = []
    for label, rows in sorted(by_system.items()):
        served = Counter(r["served_model"] for r, _ in rows if r["served_model"] is not None)
        if len(served) > 1:
            models = ", ".join(f"{m} ({n} answers)" for m, n in served.most_common())
            out.append(f"`{label}` was answered by more than one served model: {models}; the endpoint "
                       f"changed models during the run, so its answers do not come from one model.")
    return out


def partial_notes(comparison) -> list[str]:
    """What --allow-partial left out, and why, in words."""
    if not comparison.left_out:
        return []
    notes = [f"Partial comparison (--allow-partial): every system is scored on the {comparison.questions} "
             f"questions all of them answered."]
    for lo in comparison.left_out:
        notes.append(f"`{lo['backend']}` ({lo['file']}) holds no record of {lo['missing']} question(s) the others "
                     f"answered (first: {lo['qids'][0]}); those questions are left out for every system.")
    return notes


def read_manifest(path: str, comparison, allow_partial: bool) -> dict:
    """The manifest the report cites, checked against the runs: the same dataset, and every
    question of it answered (a run on part of the dataset is partial like a partial file)."""
    try:
        with open(path, encoding="utf-8") as fh:
            manifest = json.load(fh)
        sha, total = manifest["dataset_sha256"], manifest["dataset_counts"]["questions"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise InputError(f"{path}: not a readable manifest ({type(e).__name__}: {e})") from None
    runs_sha = comparison.records[0]["dataset_sha256"]
    if sha != runs_sha:
        raise InputError(f"{path}: describes dataset sha256 {sha[:12]}, the run files were made from "
                         f"{runs_sha[:12]}; write the manifest of this run (manifest.py) or pass the right one")
    per_budget = comparison.questions / len({r[BUDGET_FIELD] for r in comparison.records})
    if per_budget < total and not allow_partial:
        raise InputError(f"{path}: the dataset has {total} questions and the run files hold {per_budget:.0f} of "
                         f"them; finish the runs, or pass --allow-partial")
    return manifest


def main(argv: list[str] | None = None) -> int:
    """Print the score table; optionally write it as JSON and as a markdown report."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", nargs="+", required=True)
    ap.add_argument("--verdicts", required=True)
    ap.add_argument("--baseline", required=True, help="the system every other is compared with")
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--allow-partial", action="store_true",
                    help="score every system on the questions all of them answered, instead of refusing")
    ap.add_argument("--json", help="write the numbers as JSON here")
    ap.add_argument("--markdown", help="write a markdown report here")
    ap.add_argument("--manifest", help="a manifest-RUN.json to cite in the markdown report")
    a = ap.parse_args(argv)
    if a.resamples < 1:
        raise InputError("--resamples must be at least 1")

    comparison = load_comparison(a.runs, a.allow_partial)
    manifest = read_manifest(a.manifest, comparison, a.allow_partial) if a.manifest else None
    pairs = pair_verdicts(comparison.records, load_verdicts(a.verdicts), a.verdicts)
    several_budgets = len({r[BUDGET_FIELD] for r, _ in pairs}) > 1
    by_system: dict = defaultdict(list)  # label -> [(run record, its verdict)]
    for r, v in pairs:
        by_system[system_label(r, several_budgets)].append((r, v))
    if a.baseline not in by_system:
        raise InputError(f"--baseline {a.baseline!r} is not among the systems: {', '.join(sorted(by_system))}")

    systems = [{"label": label, **score_system(rows)} for label, rows in sorted(by_system.items())]
    base = {r["qid"]: v["verdict"] == "correct" for r, v in by_system[a.baseline]}
    differences = []
    for label, rows in sorted(by_system.items()):
        if label == a.baseline:
            continue
        diff: dict = defaultdict(list)
        for r, v in rows:
            if r["qid"] in base:
                diff[r["cluster"]].append(int(v["verdict"] == "correct") - int(base[r["qid"]]))
        if not diff:
            continue
        point, lo, hi = cluster_bootstrap(diff, a.resamples, a.seed)
        if len(diff) < 2:
            # Resampling one cluster always draws that cluster: the interval would have zero
            # width, which reads as certainty. It is not measurable, so it is null.
            lo = hi = None
        differences.append({"system": label, "baseline": a.baseline, "difference": point, "ci_low": lo,
                            "ci_high": hi, "questions": sum(len(v) for v in diff.values()),
                            "clusters": len(diff),
                            "cases": len({r["case_id"] for r, _ in rows if r["qid"] in base})})
    scores = {"baseline": a.baseline, "resamples": a.resamples, "seed": a.seed,
              "grading": grading_summary(systems), "questions": comparison.questions,
              "left_out": comparison.left_out, "warnings": served_model_warnings(by_system) + partial_notes(comparison),
              "systems": systems, "differences": differences}

    # Files first, then stdout: `score.py ... | head` closes the pipe early, and that must not
    # cost the report.
    if a.json:
        write_json_atomic(a.json, scores)
    if a.markdown:
        write_atomic(a.markdown, render_markdown(scores, manifest))
    print(render_text(scores))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
