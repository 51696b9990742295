"""Score the systems: the metrics vector of each system, per question type and per budget, and
each system's paired difference to a baseline with a 95% cluster-bootstrap interval that
resamples clusters of questions (questions of one case are not independent).

Every number is defined in metrics.py (accuracy with abstention apart, exact match and token
F1, retrieval and keyword recall, staleness, contradiction, write precision, gap closed, where
each wrong answer came from, cost and latency, repeats and the noise floor, the minimum
detectable difference); this script holds the run files against the dataset, pairs them with
their verdicts, writes scores.json and prints the same numbers. A metric that cannot be
measured is null, with the reason beside it, never 0.

Usage:
  RUN=$(python -c "import yaml; print(yaml.safe_load(open('config.yaml'))['run_id'])")   # config.yaml's run_id
  python score.py --runs runs/$RUN/*.jsonl --verdicts results/$RUN/verdicts.jsonl --baseline keyword
  python score.py --runs runs/$RUN/*.jsonl --verdicts results/$RUN/verdicts.jsonl --baseline keyword \\
      --json results/$RUN/scores.json --manifest results/$RUN/manifest-$RUN.json
  python score.py ... --csv results/$RUN/csv   # every table as CSV (systems, by_type, differences, ...)
  python report.py --scores results/$RUN/scores.json ...   # the report, from these numbers
  jq -c '.questions[] | select(.cause == "reader_miss")' results/$RUN/scores.json
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from collections import defaultdict

import csvexport
from cli import EXIT_OK, InputError, run_cli
from contract import CONTROL_NAMES
from dataset import dataset_from
from fileio import output_path, sha256_file, write_json_atomic
from formats import (CONTRACT_FIELDS, SCORES_FORMAT, check_manifest_describes, load_comparison, read_audit_json,
                     read_calibration_json, read_checks, read_manifest, served_model_counts)
from config import load_config
from metrics import Scoring, pair_verdicts, retrieval_differences
from prices import COST_BASIS, DEFAULT_TABLE, frontier, load_prices, usd
from stats import RESAMPLES, SEED
from wording import (calibration_text, control_lines, coverage_reasons, disclosures, interval_text, mdd_text,
                     noise_floor_legend, noise_floor_text, rate, reading, separated_text, whole)


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------

def resolve_baseline(name: str, systems: list[dict], budgets: list[int]) -> str:
    """The display name of the baseline, given it or the short --backend name (run records carry
    both: `backend` is what the system calls itself, with any internal model; `backend_id` is
    what run.py was asked for); it must be a row at every budget."""
    names = {s["backend"] for s in systems}
    matches = {s["backend"] for s in systems if name in (s["backend"], s["backend_id"])}
    if len(matches) != 1:
        raise InputError(f"--baseline {name!r} is not among the systems: {', '.join(sorted(names))}")
    baseline = matches.pop()
    absent = [b for b in budgets if not any(s["backend"] == baseline and s["budget"] == b for s in systems)]
    if absent:
        raise InputError(f"--baseline {name!r} has no run at budget {absent[0]}; it must be run at every budget")
    return baseline


def checks_summary(path: str, run_sha256: list[str], verdicts_sha256: list[str]) -> dict:
    """check.py's verdict on the instrument, refused if it checked other run files or other
    verdicts than these (given by their sha256)."""
    checks = read_checks(path, run_sha256, verdicts_sha256)
    return {"file": path, "status": checks["status"], "counts": checks["counts"],
            "not_passed": [{"id": c["id"], "status": c["status"], "summary": c["summary"]}
                           for c in checks["checks"] if c["status"] != "PASS"],
            "controls": [{"id": c["id"], "status": c["status"], "summary": c["summary"]}
                         for c in checks["checks"] if c["check"] == "controls"],
            # check.py's verdict on the reader, apart from the checks (it never sets their status)
            "reader": {k: checks["reader"][k] for k in ("verdict", "text", "oracle_accuracy", "oracle_n", "limit")}}


def read_calibration(path: str, pairs: list) -> dict:
    """The grader's error rates on its tuning set and its held-out set (`heldout`, null when
    judge.py --calibrate graded none), shown only for the grader that graded these verdicts
    (rules, judge model and prompts alike)."""
    fields = ("grader", "calibration_set", "grading", "overall", "by_kind", "kappa", "judge_failures", "heldout")
    cal = read_calibration_json(path, fields)
    graders = {tuple(sorted((k, v[k]) for k in ("rules_sha256", "judge_model", "judge_prompt_sha256")))
               for _, v in pairs if v is not None}
    if graders and graders != {tuple(sorted(cal["grader"].items()))}:
        raise InputError(f"{path}: calibrates another grader than the one that graded these verdicts (rules or "
                         f"judge model differ); run judge.py --calibrate with this run's config")
    return {"file": path, **{k: cal[k] for k in fields}}


def read_audit(path: str) -> dict:
    """The human audit of the judge (audit.py join)."""
    fields = ("sampled", "labelled", "complete", "overall", "by_system", "flagged", "flag_rule", "key")
    audit = read_audit_json(path, fields)
    return {"file": path, **{k: audit[k] for k in fields}}


# ---------------------------------------------------------------------------------------------
# The comparison as a whole: the grading, the served models, what the runs cover
# ---------------------------------------------------------------------------------------------

def grading_summary(systems: list[dict]) -> str:
    """Which grading decided the verdicts, in words."""
    layers: dict = defaultdict(int)
    for s in systems:
        for k, v in s["decided_by"].items():
            layers[k] += v
    parts = ", ".join(f"{k} {v}" for k, v in sorted(layers.items()))
    if not layers:
        return "nothing graded: retrieval-only runs (no answers)."
    if layers.get("llm"):  # a layer that decided nothing is absent
        return f"deterministic layers, then an LLM judge for the rest (verdicts by layer: {parts})."
    return (f"deterministic layers only, no LLM judge (verdicts by layer: {parts}). Answers that say the "
            f"right thing in other words than the gold are counted incorrect, so accuracy is a lower bound.")


def served_models(records: list[dict]) -> dict:
    """Per budget, per system, how many answers each served model gave (repeats together):
    {budget: {backend: {served_model: answers}}}."""
    return {str(b): {backend: dict(models.most_common()) for backend, models in sorted(by.items())}
            for b, by in sorted(served_model_counts(records).items())}


def served_model_warnings(served: dict) -> list[str]:
    """One warning per budget whose answers came from more than one served model, naming every
    system's models and counts: a provider that swapped models mid-run, or systems answered by
    different models (each one consistent on its own, so no single system shows it)."""
    out = []
    for budget, by in served.items():
        models = {m for counts in by.values() for m in counts}
        if len(models) < 2:
            continue
        at = f" at budget {budget}" if len(served) > 1 else ""
        each = "; ".join(f"`{backend}` " + ", ".join(f"{m} ({n} answers)" for m, n in counts.items())
                         for backend, counts in by.items())
        out.append(f"The comparison{at} was answered by more than one served model ({', '.join(sorted(models))}): "
                   f"{each}. The answer model was not held constant, so differences between these systems are not "
                   f"differences of memory alone.")
    return out


def coverage_notes(comparison) -> list[str]:
    """What part of the dataset these runs cover when it is not all of it, and why: a --limit or
    --shard the runs recorded, or what --allow-partial left out."""
    c = comparison.coverage
    notes = []
    if c["scored_questions"] < c["dataset_questions"]:
        why = coverage_reasons(c)
        notes.append(f"These runs are scored on {c['scored_questions']} of the dataset's {c['dataset_questions']} "
                     f"questions ({', '.join(why)}): the numbers are not comparable to a run on the whole dataset.")
    for lo in comparison.left_out:
        notes.append(f"`{lo['backend']}` ({lo['file']}, repeat {lo['repeat']}) holds no record of {lo['missing']} "
                     f"of its {lo['planned']} questions (first: {lo['qids'][0]}); with --allow-partial those "
                     f"questions are left out for every system.")
    return notes


# ---------------------------------------------------------------------------------------------
# Publishable or not: what a reader of the numbers must know before quoting them
# ---------------------------------------------------------------------------------------------

# A model id that names its release date (gpt-4o-2024-08-06, claude-3-5-sonnet-20241022): the
# provider serves that model and no later one under the id. An id without one (gpt-4o) is moved
# to newer models over time, so the same run may not be repeated.
DATED_ID = re.compile(r"(?<!\d)20\d\d-?(0[1-9]|1[0-2])-?(0[1-9]|[12]\d|3[01])(?!\d)")
# What the manifest must hold for the verdict (besides the dataset check_manifest_describes reads).
PUBLICATION_MANIFEST_FIELDS = ("git_commit", "git_dirty", "judge_model", "served_model_info")


def pinned(model: str, manifest: dict | None) -> bool:
    """Whether a served model id names one model for good: a dated id, or the embedded server's
    model, whose file the manifest pins by its sha256."""
    info = (manifest or {}).get("served_model_info") or {}
    return bool(DATED_ID.search(model)) or (model == info.get("served_model") and bool(info.get("served_sha256")))


def publication(scores: dict, manifest: dict | None) -> dict:
    """Whether these scores may be published, and each reason they may not: a run is
    publishable only from a clean checkout (the manifest says so), on the whole of a dataset
    that is not a development split, with every served model pinned, its grader calibrated
    (answered runs) and every instrument check PASSed. Development runs are for the
    researcher's own loop; the reasons say what would make one publishable."""
    why = []
    if manifest is None:
        why.append("no manifest (score.py --manifest): the code's commit and state are not recorded")
    elif manifest["git_dirty"] is None:
        why.append("the code was not a git checkout: its commit is not recorded")
    elif manifest["git_dirty"]:
        why.append(f"the working tree had uncommitted changes when the manifest was written (on commit "
                   f"{(manifest['git_commit'] or '')[:12]})")
    name = os.path.basename(scores["inputs"]["dataset"])
    if name.startswith("dev"):
        why.append(f"the dataset {name} is a development split, for tuning prompts and settings")
    c = scores["coverage"]
    if c["scored_questions"] < c["dataset_questions"]:
        why.append(f"only {c['scored_questions']} of the dataset's {c['dataset_questions']} questions were scored: "
                   f"{', '.join(coverage_reasons(c))}")
    if not scores["contract"]["retrieval_only"]:
        served = sorted({m for by in scores["served_models"].values() for counts in by.values() for m in counts})
        loose = [m for m in served if not pinned(m, manifest)]
        if loose:
            why.append(f"served model {', '.join(loose)} is not pinned to a dated id (or a file by its checksum): the "
                       f"provider may serve another model under it later")
        judge = (manifest or {}).get("judge_model")
        if judge and not DATED_ID.search(judge):
            why.append(f"judge_model {judge} is not pinned to a dated id")
        if scores["calibration"] is None:
            why.append("the grader was not calibrated (score.py --calibration: judge.py --calibrate's figures)")
    if scores["checks"] is None:
        why.append("no instrument checks (score.py --checks: check.py's verdicts)")
    elif scores["checks"]["status"] != "PASS":
        why.append(f"the instrument checks did not all PASS ({scores['checks']['status']})")
    return {"publishable": not why, "reasons": why}


def publication_line(scores: dict) -> list[str]:
    """The first line of a development run's tables: it is one, and why."""
    p = scores["publication"]
    return [] if p["publishable"] else [f"DEVELOPMENT RUN, not for publication: {'; '.join(p['reasons'])}.\n"]


# ---------------------------------------------------------------------------------------------
# stdout: the numbers of scores.json, written as the report writes them
# ---------------------------------------------------------------------------------------------

MAIN_COLUMNS = (("accuracy", "accuracy"), ("abstention", "abstention_accuracy"), ("gap closed", "gap_closed"),
                ("EM", "exact_match"), ("F1", "token_f1"), ("recall_any@k", "recall_any_at_k"),
                ("recall_all ctx", "recall_all_in_context"), ("recall_all@k", "recall_all_at_k"),
                ("NDCG@k", "ndcg_at_k"), ("R@k", "evidence_recall_at_k"), ("kw recall@k", "keyword_recall_at_k"),
                ("staleness", "staleness"), ("contradiction", "contradiction"), ("write prec", "write_precision"))


def role(s: dict, scores: dict) -> str:
    """A row's name with its role: the baseline and the controls are marked."""
    if s["backend"] == scores["baseline"]:
        return f"{s['label']} (baseline)"
    return f"{s['label']} (control)" if s["backend"] in CONTROL_NAMES else s["label"]


def na(text: str, value, note: str | None) -> str:
    """A formatted value, or n/a with the reason it is not measured."""
    return text if value is not None else f"n/a ({note or 'not measured'})"


def cost_line(s: dict) -> str:
    """One system's tokens, calls, ingest and search latency, each null with its reason."""
    u = s["internal_usage"]
    internal = (f"{u['calls']} calls ({u['cached']} cached), {whole(u['prompt_tokens'])} prompt + "
                f"{whole(u['completion_tokens'])} completion tokens" if u else f"n/a ({s['internal_usage_note']})")
    if s["prompt_tokens"] is None and s["completion_tokens"] is None:
        usage = f"answer tokens n/a ({s['usage_note']})"
    else:
        usage = (f"prompt tokens {whole(s['prompt_tokens'])}, completion tokens {whole(s['completion_tokens'])} "
                 f"(per question: {whole(s['mean_prompt_tokens'])} prompt, {whole(s['mean_completion_tokens'])} "
                 f"completion)" + (f" [{s['usage_note']}]" if s["usage_note"] else ""))
    ing, fl = s["ingest_s"], s["flush_s"]
    ingest = (f"ingest {rate(ing['mean'])} s/case (p50 {rate(ing['p50'])}, max {rate(ing['max'])}), flush "
              f"{rate(fl['mean'])} s (max {rate(fl['max'])})" if ing else f"ingest n/a ({s['ingest_s_note']})")
    store = na(whole(s["store_items_mean"]), s["store_items_mean"], s["store_items_note"])
    search = (f"search p50 {rate(s['search_ms_p50'])} / p95 {rate(s['search_ms_p95'])} / max "
              f"{rate(s['search_ms_max'])} ms at {store} items per namespace (max {whole(s['store_items_max'])}), "
              f"{na(rate(s['search_contended_share']), s['search_contended_share'], s['search_contended_note'])} of "
              f"searches while answer calls were in flight"
              + ("; on the accuracy-latency frontier" if s["latency_frontier"] else "")
              if s["search_ms_p95"] is not None else f"search n/a ({s['search_ms_note']})")
    return (f"context tokens {na(whole(s['mean_context_tokens']), s['mean_context_tokens'], s['context_tokens_note'])} "
            f"mean, {whole(s['total_context_tokens'])} total; {usage}; answer calls {s['answer_calls']} "
            f"({s['answer_calls_cached']} cached, {s['answer_requests']} requests sent); internal model {internal}; "
            f"{ingest}; {search}")


def dollar_line(s: dict) -> str:
    """One system's dollar cost: per question, of ingestion, per correct answer, each n/a with
    its reason."""
    text = (f"{usd(s['cost_per_question_usd'])} per question, ingestion {usd(s['cost_ingestion_usd'])}, "
            f"{usd(s['cost_per_correct_usd'])} per correct answer (answer calls {usd(s['cost_answer_usd'])}, judge "
            f"calls {usd(s['cost_judge_usd'])}, total {usd(s['cost_total_usd'])})")
    text += "; on the accuracy-cost frontier" if s["cost_frontier"] else ""
    return text + (f" [{s['cost_note']}]" if s["cost_note"] else "")


def on_frontier(systems: list[dict]) -> list[dict]:
    """The system rows, each with cost_frontier and latency_frontier: whether it is on its
    budget's frontier of accuracy against cost per question, and against search p95
    (prices.frontier; None for a control or a row without both figures)."""
    cost = frontier(systems, CONTROL_NAMES, "cost_per_question_usd")
    latency = frontier(systems, CONTROL_NAMES, "search_ms_p95")
    return [{**s, "cost_frontier": cost[s["label"]], "latency_frontier": latency[s["label"]]} for s in systems]


def price_table_path(a: argparse.Namespace) -> str:
    """The price table: --prices, else the price_table of --config when that file exists, else
    the shipped one; scores.json names the one used (file, date, sha256)."""
    if a.prices:
        return a.prices
    return load_config(a.config)["price_table"] if os.path.isfile(a.config) else DEFAULT_TABLE


def repeat_line(s: dict) -> str:
    """Accuracy per repeat, its mean and spread, and the noise floor; or why there is none."""
    rep = s["repeat_accuracy"]
    if rep is None:
        return f"{s['repeats']} repeat: n/a ({s['noise_floor_note']})"
    return (f"{s['repeats']} repeats: accuracy {', '.join(rate(a) for a in rep['per_repeat'])}; mean "
            f"{rate(rep['mean'])}, sd {rate(rep['sd'])}, min {rate(rep['min'])}, max {rate(rep['max'])}; noise floor "
            f"(repeat 1 vs 0) {noise_floor_text(s)}")


def render_text(scores: dict) -> str:
    """The readable stdout tables: every number of the JSON's system rows, in the JSON's order
    (controls, the baseline, the systems), the baseline and the controls marked."""
    systems = scores["systems"]
    out = publication_line(scores) + coverage_banner(scores)
    out.append("system | n | " + " | ".join(name for name, _ in MAIN_COLUMNS)
               + " | ctx tokens | search p95 ms | errors")
    for s in systems:
        out.append(f"{role(s, scores)} | {s['n']} | " + " | ".join(rate(s[key]) for _, key in MAIN_COLUMNS)
                   + f" | {whole(s['mean_context_tokens'])} | {rate(s['search_ms_p95'])} | {s['errors']}")
    out.append("\naccuracy by question type (questions), over all repeats")
    for s in systems:
        types = ", ".join(f"{t}={rate(v['accuracy'])}({v['n']})" for t, v in s["by_type"].items())
        out.append(f"{role(s, scores)}: {types or 'not graded'}")
    if len(scores["budgets"]) > 1:
        out.append("\nbudget curve: accuracy / recall_all in context / k-limited share (k, not the budget, bounded "
                   "the context)")
        for backend in dict.fromkeys(s["backend"] for s in systems):
            points = [f"{s['budget']}: {rate(s['accuracy'])} / {rate(s['recall_all_in_context'])} / "
                      f"{rate(s['k_limited_share'])}" for s in systems if s["backend"] == backend]
            out.append(f"{backend}: " + ", ".join(points))
    out.append("\nwhere the wrong answers came from (records, over all repeats)")
    for s in systems:
        causes = ", ".join(f"{c} {n}" for c, n in s["failure_causes"].items() if n)
        out.append(f"{role(s, scores)}: {causes or 'none'}")
    out.append("\ncost and latency (over all repeats)")
    out += [f"{role(s, scores)}: {cost_line(s)}" for s in systems]
    p = scores["prices"]
    out.append(f"\ndollar cost (price table {p['file']} dated {p['date']}; {p['basis']})")
    out += [f"{role(s, scores)}: {dollar_line(s)}" for s in systems]
    out.append("\nrepeats and the noise floor (accuracy on answerable questions)")
    out.append(f"noise floor: {noise_floor_legend(systems)}")
    out += [f"{role(s, scores)}: {repeat_line(s)}" for s in systems]
    out.append(f"\npaired difference vs {scores['baseline']} on answerable questions (cluster bootstrap, "
               f"{scores['resamples']} resamples, 95% CI); abstention apart; the controls are not compared")
    for d in scores["differences"]:
        out.append(f"{d['system']}: {interval_text(d)} ({reading(d)}) over {d['questions']} questions in "
                   f"{d['clusters']} clusters; abstention {interval_text(d['abstention'])}; minimum detectable "
                   f"{rate(d['minimum_detectable_difference'])}")
        out.append("  by type: " + ", ".join(f"{t} {interval_text(x)}" for t, x in d["by_type"].items()))
    for budget, m in scores["minimum_detectable_difference"].items():
        out.append(f"minimum detectable difference at budget {budget}: {mdd_text(m)}")
    if scores["retrieval_differences"]:
        out.append(f"\npaired difference in retrieval vs {scores['baseline']} (questions with gold evidence and "
                   f"provenance in both; cluster bootstrap, 95% CI; needs no answer)")
    for d in scores["retrieval_differences"]:
        out.append(f"{d['system']}: {d['metric']} {interval_text(d)} ({separated_text(d)}) over {d['questions']} "
                   f"questions in {d['clusters']} clusters; minimum detectable {rate(d['minimum_detectable_difference'])}"
                   + (f"; {d['note']}" if d["note"] else ""))
    for s in systems:
        for key in ("accuracy_note", "recall_note", "keyword_recall_note", "staleness_note", "contradiction_note",
                    "write_precision_note", "gap_closed_note", "k_limited_note"):
            if s[key]:
                out.append(f"note: {s['label']}: {key.removesuffix('_note')}: {s[key]}")
    cal = scores["calibration"]
    if cal:
        g = cal["grader"]
        out.append(f"\njudge calibration of this grader ({cal['grading']}; rules {g['rules_sha256'][:12]}, judge "
                   f"{g['judge_model'] or 'none'}), 95% Wilson intervals: {calibration_text(cal)}")
    out += [f"warning: {w}" for w in scores["warnings"] + disclosures(systems)]
    out.append("\nwhat the controls say")
    out += [f"- {n}" for n in control_findings(scores)]
    return "\n".join(out)


def coverage_banner(scores: dict) -> list[str]:
    """The first line when the runs cover part of the dataset only."""
    c = scores["coverage"]
    if c["scored_questions"] == c["dataset_questions"]:
        return []
    return [f"PARTIAL: {c['scored_questions']} of the dataset's {c['dataset_questions']} questions scored "
            f"(see the warnings)\n"]


def control_findings(scores: dict) -> list[str]:
    """What the controls say: check.py's verdicts on them with --checks; without, their numbers
    (wording.control_lines) and no verdict of this script's own."""
    checks = scores["checks"]
    if checks is None:
        return control_lines(scores)
    lines = [f"check.py {c['id']}: {c['status']}: {c['summary']}" for c in checks["controls"]]
    others = [c for c in checks["not_passed"] if c not in checks["controls"]]
    if checks["status"] in ("FAIL", "WARN"):
        lines.append(f"check.py: {checks['status']} ({', '.join(f'{n} {k}' for k, n in checks['counts'].items() if n)})"
                     + (": " + "; ".join(f"{c['status']} {c['id']}: {c['summary']}" for c in others) if others else
                        "; the control checks are quoted above"))
    return lines + [f"check.py's verdict on the reader: {checks['reader']['text']}"]


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    """Print the score tables; optionally write them as JSON (the input of report.py)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", nargs="+", required=True)
    ap.add_argument("--verdicts", help="results/$RUN/verdicts.jsonl (not needed for retrieval-only runs)")
    ap.add_argument("--baseline", required=True, help="the system every other is compared with (its --backend "
                                                      "name or its display name)")
    ap.add_argument("--config", default="config.yaml", help="names the dataset the runs are held against "
                                                            "(default config.yaml), unless --manifest is given, and "
                                                            "the price table, unless --prices is given")
    ap.add_argument("--manifest", help="a manifest-RUN.json: the dataset the runs are held against")
    ap.add_argument("--dataset", help="with --manifest: where its dataset is now, when it moved (checked by sha256)")
    ap.add_argument("--resamples", type=int, default=RESAMPLES)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--allow-partial", action="store_true",
                    help="score every system on the questions all of them hold, instead of refusing runs that lack "
                         "some of the dataset's questions")
    ap.add_argument("--json", help="write the numbers as JSON here (report.py turns them into the report)")
    ap.add_argument("--csv", metavar="DIR", help="write every table as a CSV file into DIR (systems.csv, by_type.csv, "
                                                 "differences.csv, ...; csvexport.py)")
    ap.add_argument("--checks", help="results/$RUN/checks.json of these runs (check.py), shown with the scores")
    ap.add_argument("--calibration", help="results/$RUN/calibration.json of the grader that graded these runs "
                                          "(judge.py --calibrate)")
    ap.add_argument("--audit", help="results/$RUN/audit.json (audit.py join): judge-human agreement")
    ap.add_argument("--prices", help="the price table (default: --config's price_table, else data/prices.yaml)")
    a = ap.parse_args(argv)
    if a.resamples < 1:
        raise InputError("--resamples must be at least 1")
    if a.json:
        output_path(a.json, "--json")
    if a.csv and os.path.exists(a.csv) and not os.path.isdir(a.csv):
        raise InputError(f"--csv {a.csv}: is not a folder; name a folder for the CSV files")

    # 1. The comparison: the run files held against the dataset, and their verdicts.
    if a.dataset and not a.manifest:
        raise InputError("--dataset is where a manifest's dataset moved to: give --manifest with it")
    dataset = dataset_from(a.config, a.manifest, a.dataset)
    comparison = load_comparison(a.runs, dataset, a.allow_partial)
    manifest = None
    if a.manifest:
        check_manifest_describes(a.manifest, comparison.records)
        manifest = read_manifest(a.manifest, PUBLICATION_MANIFEST_FIELDS)
    pairs = pair_verdicts(comparison.records, a.verdicts)
    # 2. Every number, through metrics.py.
    prices = load_prices(price_table_path(a))
    scoring = Scoring(pairs, a.resamples, a.seed, prices)
    baseline = resolve_baseline(a.baseline, list(scoring.systems.values()), scoring.budgets)
    served = served_models(comparison.records)
    first = comparison.records[0]
    run_sha256 = {p: sha256_file(p) for p in a.runs}
    verdicts_sha256 = {a.verdicts: sha256_file(a.verdicts)} if a.verdicts else {}
    numbers = scoring.scores(baseline)
    numbers["systems"] = on_frontier(numbers["systems"])
    questions = numbers.pop("questions")
    numbers["retrieval_differences"] = retrieval_differences(comparison.records, baseline, a.resamples, a.seed)
    scores = {"format": SCORES_FORMAT, "baseline": baseline, **numbers,
              "grading": grading_summary(list(scoring.systems.values())),
              "contract": {f: first[f] for f in CONTRACT_FIELDS},
              "coverage": comparison.coverage, "questions_scored": comparison.questions,
              "left_out": comparison.left_out, "served_models": served,
              "prices": {**prices.describe(), "basis": COST_BASIS},
              "warnings": served_model_warnings(served) + coverage_notes(comparison),
              "inputs": {"dataset": dataset.path, "dataset_sha256": dataset.sha256,
                         "runs": run_sha256,
                         "verdicts": verdicts_sha256,
                         "manifest": a.manifest, "config": None if a.manifest else a.config},
              "checks": checks_summary(a.checks, list(run_sha256.values()), list(verdicts_sha256.values()))
              if a.checks else None,
              "calibration": read_calibration(a.calibration, pairs) if a.calibration else None,
              "audit": read_audit(a.audit) if a.audit else None}
    scores["publication"] = publication(scores, manifest)
    scores["questions"] = questions
    # Files first, then stdout: `score.py ... | head` closes the pipe early, and that must not
    # cost the report.
    if a.json:
        write_json_atomic(a.json, scores)
    if a.csv:
        csvexport.write_tables(a.csv, scores)
    print(render_text(scores))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
