"""Score the systems: the metrics vector of each system, per question type and per budget, and
each system's paired difference to a baseline with a 95% cluster-bootstrap interval that
resamples clusters of questions (seed guide, section 7; "Metrics That Actually Matter").

Per system (and budget): judged accuracy on answerable questions, with abstention apart;
normalized exact match and token F1 (no judge needed); retrieval recall from provenance, and
keyword recall for every system; staleness, contradiction and write precision from the
dataset's annotations; gap closed between the none and oracle controls; where each wrong answer
came from; tokens, calls and cost; ingest, flush and search latency at the store size measured;
and, with repeats, the spread and the noise floor. A metric that cannot be measured is null,
with the reason beside it, never 0.

Usage:
  python score.py --runs runs/*.jsonl --verdicts results/verdicts.jsonl --baseline keyword
  python score.py --runs runs/*.jsonl --verdicts results/verdicts.jsonl --baseline keyword \\
      --json results/scores.json --manifest results/manifest-RUN.json
  python report.py --scores results/scores.json ...   # the report, from these numbers
  jq -c '.questions[] | select(.cause == "reader_miss")' results/scores.json
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import Counter, defaultdict

import numpy as np

from grading import RULES_SHA256, exact_match, locomo_category, states_value, token_f1
from interface import (BUDGET_FIELD, CONTROL_NAMES, EXIT_OK, UNANSWERABLE_TYPES, InputError, is_answerable,
                       load_comparison, match_verdicts, read_json, read_verdicts, run_cli, served_model_counts,
                       sha256_file, write_json_atomic)

# Where a wrong answer came from, checked in this order (the first that applies).
FAILURE_CAUSES = ("error", "unparseable", "judge_disagreement", "unmeasurable", "retrieval_miss", "budget_miss",
                  "reader_miss")
# Resamples drawn at once: bounds the memory of the bootstrap (block x clusters counts).
BOOTSTRAP_BLOCK = 1000
KEEP_COUNTS_MAX = 25_000_000  # resamples x clusters kept in memory as float32 counts (100 MB)
Z95 = 1.959964


# ---------------------------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------------------------

def mean(xs: list) -> float | None:
    """Arithmetic mean; None for an empty list (not measurable, never NaN)."""
    return sum(xs) / len(xs) if xs else None


def percentile(sorted_xs, q: float) -> float:
    """The q-quantile of a sorted sequence by the nearest-rank method (no interpolation)."""
    return float(sorted_xs[min(len(sorted_xs) - 1, max(0, math.ceil(q * len(sorted_xs)) - 1))])


class ClusterBootstrap:
    """Resamples of whole clusters with replacement, shared by every statistic of one budget
    (common random numbers: each interval is drawn from the same resamples). Questions of one
    case, and cases cut from one conversation, are not independent (seed guide, section 7).

    A resample is a vector of counts, how often each cluster was drawn; a statistic's total in
    every resample is then one matrix product, so thousands of resamples cost milliseconds per
    statistic instead of a Python loop per draw."""

    def __init__(self, clusters: list, resamples: int, seed: int) -> None:
        self.clusters = sorted(clusters)
        self.index = {c: i for i, c in enumerate(self.clusters)}
        self.resamples, self.seed = resamples, seed
        # Drawing the counts costs more than using them: keep them when they fit in memory
        # (10,000 resamples of 2,000 clusters: 80 MB), else draw them again for each use.
        self._kept = [] if resamples * len(self.clusters) <= KEEP_COUNTS_MAX else None

    def counts(self):
        """Blocks of resamples as cluster-count matrices (block x clusters), the same every call."""
        if self._kept:
            yield from self._kept
            return
        n = len(self.clusters)
        for start in range(0, self.resamples, BOOTSTRAP_BLOCK):
            rows = min(BOOTSTRAP_BLOCK, self.resamples - start)
            rng = np.random.default_rng([self.seed, start])
            draws = rng.integers(0, n, size=(rows, n))
            flat = (np.arange(rows)[:, None] * n + draws).ravel()
            block = np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(np.float32)
            if self._kept is not None:
                self._kept.append(block)
            yield block

    def totals(self, columns: np.ndarray) -> np.ndarray:
        """Per-cluster sums (clusters x statistics) -> their totals in each resample
        (resamples x statistics). Every column here holds whole numbers (questions, correct
        answers, their differences), and float32 adds whole numbers exactly below 2^24; a
        resample's total is at most clusters x the largest cluster value, and when that bound
        is not below 2^24 the sums are taken in float64 instead."""
        if len(columns) and np.abs(columns).max() * len(self.clusters) >= 2 ** 24:
            return np.vstack([block.astype(np.float64) @ columns for block in self.counts()])
        return np.vstack([block @ columns.astype(np.float32) for block in self.counts()]).astype(np.float64)

    def column(self, per_cluster: dict) -> np.ndarray:
        """A {cluster: value} mapping as a column over this bootstrap's clusters (0 elsewhere)."""
        col = np.zeros(len(self.clusters))
        for c, v in per_cluster.items():
            col[self.index[c]] = v
        return col


def interval(values: np.ndarray) -> tuple[float | None, float | None]:
    """The 95% percentile interval of a statistic's resampled values (NaN = undefined in that
    resample, dropped); None when more than 5% are undefined."""
    ok = np.sort(values[~np.isnan(values)])
    if len(ok) < 0.95 * len(values) or not len(ok):
        return None, None
    return percentile(ok, 0.025), percentile(ok, 0.975)


def cluster_bootstrap(diff_by_cluster: dict, resamples: int, seed: int) -> tuple[float, float | None, float | None]:
    """One paired difference on its own (BudgetStats computes a run's many together, on the same
    resamples): point estimate (mean over questions) and a 95% interval,
    resampling whole clusters; the interval is None from a single cluster, since resampling
    one cluster always draws it and a zero width would read as certainty."""
    point = mean([d for ds in diff_by_cluster.values() for d in ds])
    boot = ClusterBootstrap(list(diff_by_cluster), resamples, seed)
    t = boot.totals(np.column_stack([boot.column({c: sum(ds) for c, ds in diff_by_cluster.items()}),
                                     boot.column({c: len(ds) for c, ds in diff_by_cluster.items()})]))
    with np.errstate(divide="ignore", invalid="ignore"):
        lo, hi = interval(np.where(t[:, 1] > 0, t[:, 0] / t[:, 1], np.nan))
    if len(diff_by_cluster) < 2:
        lo = hi = None
    return point, lo, hi


# ---------------------------------------------------------------------------------------------
# Files: verdicts paired with their run records
# ---------------------------------------------------------------------------------------------

def system_label(rec: dict, several_budgets: bool) -> str:
    """One row per system and budget: a budget sweep's budgets are rows of their own; repeats
    are folded into their system's row (the spread and noise floor)."""
    return f"{rec['backend']}@{rec[BUDGET_FIELD]}" if several_budgets else rec["backend"]


def pair_verdicts(records: list[dict], verdicts: dict, path: str | None) -> list[tuple[dict, dict | None]]:
    """Each run record with its verdict (None for a retrieval-only record, which has no answer
    to grade), refusing verdicts that do not belong to exactly these records under one grader:
    a missing verdict, one graded against another gold, answer or annotation, by another rule
    set than this code's, or by a mix of judges."""
    graded = [r for r in records if not r["retrieval_only"]]
    if graded and path is None:
        raise InputError("--verdicts is required for run files with answers (run judge.py first)")
    m = match_verdicts(graded, verdicts, RULES_SHA256)
    m.refuse(path, "rerun judge.py on these runs")
    return [(r, None) for r in records if r["retrieval_only"]] + m.pairs


# ---------------------------------------------------------------------------------------------
# One question: what happened to it
# ---------------------------------------------------------------------------------------------

def failure_cause(rec: dict, v: dict | None) -> str | None:
    """Where a wrong answer came from, one cause per question (None for a right answer or an
    ungraded one), the first that applies: the run or judge failed (error); the judge's output
    was unparseable; the rules and the LLM judge would decide differently (judge_disagreement);
    no provenance to tell (unmeasurable); at least one evidence turn was never retrieved
    (retrieval_miss, whatever became of the others); every evidence turn was retrieved but at
    least one was cut by the budget (budget_miss); every evidence turn in the context and still
    wrong (reader_miss; for a question without evidence, an unanswerable one, any wrong answer:
    the reader answered instead of declining).

    A partition, precise where the issue's words ("no evidence turn in the context") leave a
    multi-evidence question open: a turn that search never found is a retrieval failure that no
    budget could repair, so it takes precedence over a turn the budget cut."""
    if v is None or v["verdict"] == "correct":
        return None
    if rec["error"] is not None or v["judge_error"] is not None:
        return "error"
    if v["verdict"] == "unparseable":
        return "unparseable"
    if v["by"] == "llm" and v["rules_only_verdict"] not in (None, v["verdict"]):
        return "judge_disagreement"
    if not rec["evidence"]:
        return "reader_miss"
    if rec["context_ids"] is None or rec["retrieved_ids"] is None:
        return "unmeasurable"
    if set(rec["evidence"]) - set(rec["retrieved_ids"]):
        return "retrieval_miss"
    if set(rec["evidence"]) - set(rec["context_ids"]):
        return "budget_miss"
    return "reader_miss"


def question_row(rec: dict, v: dict | None) -> dict:
    """The per-question facts every metric is computed from (and the JSON's `questions` list)."""
    answer = rec["answer"]
    meta = rec["meta"] or {}  # meta is optional in the dataset contract; run.py writes {} then
    row = {"system": None, "qid": rec["qid"], "case_id": rec["case_id"], "cluster": rec["cluster"],
           "type": rec["type"], "budget": rec[BUDGET_FIELD], "repeat": rec["repeat"],
           "answerable": is_answerable(rec), "verdict": v["verdict"] if v else None, "by": v["by"] if v else None,
           "correct": (v["verdict"] == "correct") if v else None, "cause": failure_cause(rec, v),
           "exact_match": None, "token_f1": None, "contradicts": None,
           # How much of the evidence search found and the budget kept: the counts behind the
           # cause, so `jq` can tell a partial retrieval_miss from a total one.
           "evidence_n": len(rec["evidence"]), "evidence_retrieved": None, "evidence_in_context": None}
    if rec["retrieved_ids"] is not None and rec["context_ids"] is not None:
        row["evidence_retrieved"] = len(set(rec["evidence"]) & set(rec["retrieved_ids"]))
        row["evidence_in_context"] = len(set(rec["evidence"]) & set(rec["context_ids"]))
    if v is not None:
        row["exact_match"] = answer is not None and exact_match(rec["gold_answer"], answer, locomo_category(rec))
        row["token_f1"] = token_f1(rec["gold_answer"], answer, locomo_category(rec)) if answer is not None else 0.0
        outdated = meta.get("outdated_answers") or []
        if outdated and answer is not None:
            # Stating a replaced value as the answer; naming it beside the current one is history.
            row["contradicts"] = (any(states_value(answer, o) for o in outdated)
                                  and not states_value(answer, rec["gold_answer"]))
    return row


# ---------------------------------------------------------------------------------------------
# One system: the metrics vector
# ---------------------------------------------------------------------------------------------

def share(flags: list, why_empty: str) -> tuple[float | None, str | None]:
    """The share of true flags, or (None, why) when there is nothing to measure."""
    return (mean([bool(f) for f in flags]), None) if flags else (None, why_empty)


def recall_metrics(recs: list[dict]) -> dict:
    """Retrieval recall from provenance, and keyword recall (needs none), with reasons."""
    with_evidence = [r for r in recs if r["evidence"]]
    measured = [r for r in with_evidence if r["retrieved_ids"] is not None and r["context_ids"] is not None]
    # Why recall is missing matters: a failed question retrieved nothing to measure, while a
    # hit without source ids came back but cannot be traced to stored turns.
    failed = sum(1 for r in with_evidence if r["error"] is not None)
    unknown = len(with_evidence) - len(measured) - failed
    why = "; ".join(([f"{failed} failed"] if failed else []) +
                    ([f"{unknown} returned hits without provenance (source ids)"] if unknown else []))
    note = None
    if not with_evidence:
        note = "no question has gold evidence"
    elif not measured:
        note = f"not measurable: of {len(with_evidence)} questions with evidence, {why}"
    elif len(measured) < len(with_evidence):
        note = f"measured on {len(measured)} of {len(with_evidence)} questions ({why})"
    keyworded = [r for r in recs if r["keyword_ranks"] is not None]
    kw_note = None if keyworded else ("no question has keywords (meta.keywords)" if not any(
        (r["meta"] or {}).get("keywords") for r in recs) else "every question with keywords failed")
    return {
        "recall_any_at_k": mean([bool(set(r["retrieved_ids"]) & set(r["evidence"])) for r in measured]),
        "recall_all_in_context": mean([set(r["evidence"]) <= set(r["context_ids"]) for r in measured]),
        "recall_n": len(measured), "recall_note": note,
        "keyword_recall_at_k": mean([bool(r["keyword_ranks"]) for r in keyworded]),
        "keyword_recall_in_context": mean([any(k <= r["hits_kept"] for k in r["keyword_ranks"]) for r in keyworded]),
        "keyword_recall_n": len(keyworded), "keyword_recall_note": kw_note,
    }


def staleness_metrics(recs: list[dict]) -> dict:
    """Of the items placed in context for annotated questions, the share superseded by a newer
    stored item (meta.superseded_evidence); needs provenance."""
    annotated = [r for r in recs if (r["meta"] or {}).get("superseded_evidence")]
    traced = [r for r in annotated if r["context_ids"] is not None]
    stale = sum(len(set(r["context_ids"]) & set(r["meta"]["superseded_evidence"])) for r in traced)
    items = sum(len(r["context_ids"]) for r in traced)
    staleness = stale / items if items else None
    if not annotated:
        stale_note = "the dataset marks no superseded evidence (meta.superseded_evidence)"
    elif not traced:
        stale_note = "needs provenance: no annotated question's context has source ids"
    elif not items:
        stale_note = "no item reached the context of an annotated question"
    elif len(traced) < len(annotated):
        stale_note = f"measured on {len(traced)} of {len(annotated)} annotated questions (the rest lack provenance)"
    else:
        stale_note = None
    return {"staleness": staleness, "staleness_note": stale_note, "staleness_n": len(traced)}


def contradiction_metrics(rows: list[dict]) -> dict:
    """Of the answered questions with meta.outdated_answers, the share whose answer states a
    replaced value (question_row decides each, with the grader's normalization)."""
    contradiction, note = share([x["contradicts"] for x in rows if x["contradicts"] is not None],
                                "no answered question has outdated values (meta.outdated_answers)"
                                if not any(x["verdict"] is None for x in rows) else
                                "no answers were graded (retrieval-only run)")
    return {"contradiction": contradiction, "contradiction_note": note}


def write_precision_metrics(recs: list[dict], rows: list[dict]) -> dict:
    """Of the items stored, the share that ever reached a context that produced a correct
    answer. Items are counted per case (ids are unique within a case only), so this is a
    property of the whole run, not of a question type."""
    stored = sum({(r["case_id"], r["repeat"]): r["added_items"] or 0 for r in recs}.values())
    graded = [(r, x) for r, x in zip(recs, rows) if x["correct"] is not None]
    wp_note = None
    if not stored:
        wp, wp_note = None, "the system stored nothing (a control, or every ingestion failed)"
    elif not graded:
        wp, wp_note = None, "no answers were graded (retrieval-only run)"
    elif any(x["correct"] and r["context_ids"] is None for r, x in graded):
        wp, wp_note = None, "needs provenance: a correct answer's context has no source ids"
    else:
        useful = {(r["case_id"], r["repeat"], i) for r, x in graded if x["correct"] for i in r["context_ids"]}
        wp = len(useful) / stored
    return {"write_precision": wp, "write_precision_note": wp_note, "stored_items": stored}


def type_metrics(recs: list[dict], rows: list[dict]) -> dict:
    """Per question type, the same functions on the type's questions: accuracy, EM and F1 (on
    all of the type: an unanswerable type is its own abstention score), retrieval and keyword
    recall, staleness and contradiction. Write precision is per stored item, not per type."""
    groups: dict = defaultdict(list)
    for r, x in zip(recs, rows):
        groups[x["type"]].append((r, x))
    out = {}
    for t, items in sorted(groups.items()):
        trecs, trows = [r for r, _ in items], [x for _, x in items]
        graded = [x for x in trows if x["correct"] is not None]
        out[t] = {"n": len(trows), "accuracy": mean([x["correct"] for x in graded]),
                  "accuracy_note": None if graded else "not measured: a retrieval-only run (no answers)",
                  "exact_match": mean([x["exact_match"] for x in graded]),
                  "token_f1": mean([x["token_f1"] for x in graded]),
                  **recall_metrics(trecs), **staleness_metrics(trecs), **contradiction_metrics(trows)}
    return out


def usage_counts(asked: list[dict], field: str) -> tuple[list[int], int]:
    """The endpoint's token counts of one kind over the answer calls that reported one, and how
    many calls reported none (a missing count is not measured, never 0)."""
    counts = [r["usage"][field] for r in asked if r["usage"] is not None and r["usage"][field] is not None]
    return counts, len(asked) - len(counts)


def cost_metrics(recs: list[dict]) -> dict:
    """Tokens and calls: the context, the answer model's usage, and the system's own model."""
    asked = [r for r in recs if not r["retrieval_only"]]
    prompt, prompt_missing = usage_counts(asked, "prompt_tokens")
    completion, completion_missing = usage_counts(asked, "completion_tokens")
    failed = sum(1 for r in asked if r["error"] is not None)
    if not asked:
        usage_note = "no answer model was asked (retrieval-only run)"
    elif not prompt and not completion:
        usage_note = (f"the endpoint reported no token usage on any of the {len(asked)} answer calls"
                      + (f" ({failed} of them failed)" if failed else ""))
    elif prompt_missing or completion_missing:
        usage_note = (f"counted on the calls that reported usage: {prompt_missing} of {len(asked)} answer calls gave "
                      f"no prompt token count, {completion_missing} no completion token count"
                      + (f" ({failed} of the calls failed)" if failed else ""))
    else:
        usage_note = None
    per_case = {(r["case_id"], r["repeat"]): r["internal_usage"] for r in recs if r["internal_usage"] is not None}
    # *_missing: calls whose usage gave no such count (absent from files of an older run.py)
    internal = {k: sum(u.get(k, 0) for u in per_case.values())
                for k in ("calls", "cached", "prompt_tokens", "completion_tokens", "prompt_tokens_missing",
                          "completion_tokens_missing")} if per_case else None
    internal_note = None
    if internal and (internal["prompt_tokens_missing"] or internal["completion_tokens_missing"]):
        internal_note = (f"token counts are of the calls that reported usage: {internal['prompt_tokens_missing']} of "
                         f"{internal['calls']} internal calls gave no prompt token count, "
                         f"{internal['completion_tokens_missing']} no completion token count")
    if internal is None:
        internal_note = ("the system calls no model of its own" if not any(r["internal_model"] for r in recs) else
                         "not counted: the backend calls a model but exposes no llm_client to count its calls through")
    tokens = [r["context_tokens"] for r in recs if r["context_tokens"] is not None]
    return {
        "mean_context_tokens": mean(tokens), "total_context_tokens": sum(tokens) if tokens else None,
        "context_tokens_note": None if tokens else "no context was built (every question failed)",
        "answer_calls": len(asked), "answer_calls_cached": sum(1 for r in asked if r["cached"]),
        "answer_requests": sum(1 + r["retries"] for r in asked if not r["cached"]),
        "prompt_tokens": sum(prompt) if prompt else None, "prompt_tokens_missing": prompt_missing,
        "completion_tokens": sum(completion) if completion else None, "completion_tokens_missing": completion_missing,
        "mean_prompt_tokens": mean(prompt), "mean_completion_tokens": mean(completion),
        "usage_note": usage_note,
        "internal_usage": internal, "internal_usage_note": internal_note,
    }


def latency_metrics(recs: list[dict]) -> dict:
    """Ingest and flush seconds per case, search latency, and the store size they were measured
    at; whether answer calls were in flight (sharing the CPU with a local model) during search."""
    cases = {(r["case_id"], r["repeat"]): r for r in recs if r["ingest_s"] is not None}
    searches = {(r["qid"], r["repeat"]): r for r in recs if r["search_ms"] is not None}
    ms = sorted(r["search_ms"] for r in searches.values())
    sizes = [r["added_items"] for r in cases.values() if r["added_items"]]
    contended = [r["search_calls_in_flight"] > 0 for r in searches.values() if r["search_calls_in_flight"] is not None]
    stat = lambda xs: {"mean": mean(xs), "p50": percentile(sorted(xs), 0.5), "max": max(xs)} if xs else None
    # Controls are computed by run.py itself: nothing is stored, flushed or searched.
    control = all(r["backend"] in CONTROL_NAMES for r in recs)
    ingest_note = None if cases else ("a control stores nothing" if control else "no ingestion was timed (every "
                                                                                 "case failed)")
    search_note = None if ms else ("a control searches nothing" if control else "no search was timed (every "
                                                                               "question failed)")
    return {"ingest_s": stat([r["ingest_s"] for r in cases.values()]),
            "flush_s": stat([r["flush_s"] for r in cases.values()]), "ingest_s_note": ingest_note,
            "search_ms_p50": percentile(ms, 0.5) if ms else None,
            "search_ms_p95": percentile(ms, 0.95) if ms else None,
            "search_ms_max": ms[-1] if ms else None, "search_ms_note": search_note,
            "store_items_mean": mean(sizes), "store_items_max": max(sizes) if sizes else None,
            "store_items_note": None if sizes else (ingest_note or "every ingestion stored nothing"),
            "search_contended_share": mean(contended),
            "search_contended_note": None if contended else (search_note or "search_calls_in_flight not recorded")}


def k_limited_metrics(recs: list[dict]) -> dict:
    """The share of questions whose context was bounded by k, not by the budget: the search
    returned exactly top_k hits and the budget cut none (run.py's `k_limited`). High at a large
    budget, it says the budget curve is flat because k ran out, not because the ranker is good.
    Records written before run.py recorded the field do not have it: null, with that reason."""
    have = [r for r in recs if "k_limited" in r]  # an optional field: older run files lack it
    flags = [r["k_limited"] for r in have if r["k_limited"] is not None]
    if not have:
        note = "the run records carry no k_limited field (written before run.py recorded it)"
    elif not flags:
        note = f"k_limited is null on all {len(have)} records (no search was made: failed questions or a control)"
    elif len(flags) < len(recs):
        note = (f"measured on {len(flags)} of {len(recs)} questions (the rest carry no k_limited value: older "
                f"records, failed questions or a control)")
    else:
        note = None
    return {"k_limited_share": mean([bool(f) for f in flags]), "k_limited_n": len(flags), "k_limited_note": note}


def accuracy_metrics(rows: list[dict]) -> dict:
    """Judged accuracy on answerable questions (the headline), on unanswerable ones apart, and
    the judge-free exact match and token F1 split the same way (type_metrics has them per type)."""
    graded = [x for x in rows if x["correct"] is not None]
    ans = [x for x in graded if x["answerable"]]
    una = [x for x in graded if not x["answerable"]]
    causes = Counter(x["cause"] for x in graded if x["cause"] is not None)
    return {
        "n": len(rows), "graded": len(graded), "correct": sum(x["correct"] for x in graded),
        "accuracy": mean([x["correct"] for x in ans]), "accuracy_n": len(ans),
        "abstention_accuracy": mean([x["correct"] for x in una]), "abstention_n": len(una),
        "accuracy_all": mean([x["correct"] for x in graded]),
        "accuracy_note": None if graded else "not measured: a retrieval-only run (no answers)",
        # EM and F1 on the same questions as the headline accuracy: an abstention gold ("I don't
        # know") would otherwise credit the `none` control with exact matches it got by declining.
        "exact_match": mean([x["exact_match"] for x in ans]), "token_f1": mean([x["token_f1"] for x in ans]),
        "abstention_exact_match": mean([x["exact_match"] for x in una]),
        "abstention_token_f1": mean([x["token_f1"] for x in una]),
        "failure_causes": {c: causes[c] for c in FAILURE_CAUSES},
        "unparseable": sum(1 for x in graded if x["verdict"] == "unparseable"),
        "decided_by": dict(sorted(Counter(x["by"] for x in graded).items())),
    }


def score_system(pairs: list[tuple[dict, dict | None]], rows: list[dict] | None = None) -> dict:
    """Every number of one system's row, from its repeat-0 (run record, verdict) pairs and
    their question rows (computed here when not given)."""
    rows = rows if rows is not None else [question_row(r, v) for r, v in pairs]
    recs = [r for r, _ in pairs]
    first = recs[0]
    errors = sum(1 for r, v in pairs if r["error"] is not None or (v is not None and v["judge_error"] is not None))
    first_error = next((r["error"] for r in recs if r["error"] is not None),
                       next((v["judge_error"] for _, v in pairs if v is not None and v["judge_error"] is not None), None))
    return {
        "backend": first["backend"], "backend_version": first["backend_version"], "budget": first[BUDGET_FIELD],
        "internal_model": first["internal_model"], "flush_note": first["flush_note"],
        "time_aware": first["time_aware"], "retrieval_only": first["retrieval_only"],
        **accuracy_metrics(rows), "by_type": type_metrics(recs, rows), **recall_metrics(recs),
        **staleness_metrics(recs), **contradiction_metrics(rows), **write_precision_metrics(recs, rows),
        **cost_metrics(recs), **latency_metrics(recs), **k_limited_metrics(recs), "errors": errors,
        "first_error": first_error,
    }


# ---------------------------------------------------------------------------------------------
# Between systems: paired differences, gap closed, the noise floor, the detectable difference
# ---------------------------------------------------------------------------------------------

class BudgetStats:
    """Every bootstrap statistic of one budget from one pass over its resamples: per cluster, the
    correct answers of each system and repeat on each selection of questions (answerable,
    unanswerable, each type) and the number of questions in each selection, totalled in every
    resample by a single matrix product. Within a budget every system holds the same questions
    (interface.load_comparison), so a paired difference is a difference of totals."""

    def __init__(self, rows: dict, selections: dict, resamples: int, seed: int) -> None:
        self.boot = ClusterBootstrap(sorted({x["cluster"] for xs in rows.values() for x in xs}), resamples, seed)
        columns, self.hits, self.counts, self.index = [], {}, {}, {}
        for sel, keep in selections.items():
            graded = {key: [x for x in xs if x["correct"] is not None and keep(x)] for key, xs in rows.items()}
            counts = Counter(x["cluster"] for x in next(iter(graded.values())))
            if any(Counter(x["cluster"] for x in xs) != counts for xs in graded.values()):
                raise RuntimeError(f"systems graded different questions in selection {sel!r}")  # a contract bug
            self.counts[sel] = counts
            self.index[sel] = len(columns)
            columns.append(self.boot.column(counts))
            for key, xs in graded.items():
                self.hits[key, sel] = Counter(x["cluster"] for x in xs if x["correct"])
                self.index[key, sel] = len(columns)
                columns.append(self.boot.column(self.hits[key, sel]))
        self.t = self.boot.totals(np.column_stack(columns)) if columns else None

    def _t(self, key) -> np.ndarray:
        return self.t[:, self.index[key]]

    def paired(self, a, b, sel: str) -> dict | None:
        """A's accuracy minus B's on the selection, over the same questions: the point and the
        95% interval; no interval from a single cluster (resampling one cluster always draws it,
        and a zero width would read as certainty)."""
        n = sum(self.counts[sel].values())
        if not n:
            return None
        point = (sum(self.hits[a, sel].values()) - sum(self.hits[b, sel].values())) / n
        lo = hi = None
        if len(self.counts[sel]) > 1:
            with np.errstate(divide="ignore", invalid="ignore"):
                den = self._t(sel)
                lo, hi = interval(np.where(den > 0, (self._t((a, sel)) - self._t((b, sel))) / den, np.nan))
        return {"difference": point, "ci_low": lo, "ci_high": hi, "questions": n, "clusters": len(self.counts[sel])}

    def gap_closed(self, key, none, oracle) -> dict:
        """(system - none) / (oracle - none) on answerable questions, with its interval: how much
        of the distance from no memory to perfect evidence a system covers, which reads the same
        for a strong or a weak answer model."""
        n = sum(self.counts["answerable"].values())
        s, z, o = (sum(self.hits[k, "answerable"].values()) / n if n else None for k in (key, none, oracle))
        if not n:
            return {"gap_closed": None, "gap_closed_ci": None, "gap_closed_note": "no answerable question was graded"}
        if o - z <= 0:
            return {"gap_closed": None, "gap_closed_ci": None,
                    "gap_closed_note": "not defined: the oracle control does not score above none"}
        ts, tz, to = (self._t((k, "answerable")) for k in (key, none, oracle))
        with np.errstate(divide="ignore", invalid="ignore"):
            lo, hi = interval(np.where(to > tz, (ts - tz) / (to - tz), np.nan))
        return {"gap_closed": (s - z) / (o - z), "gap_closed_ci": None if lo is None else [lo, hi],
                "gap_closed_note": None}

    def minimum_detectable(self, label: str) -> dict:
        """The smallest accuracy difference this dataset could tell from zero (the issue's
        definition): the half-width of the paired 95% interval of a system against itself, here
        the baseline's repeat 1 against its repeat 0, (ci_high - ci_low) / 2. Without a repeat
        there is nothing to pair, and the value is an approximation, labelled as such: the
        half-width of a 95% interval for the difference of two independent systems each as
        variable over clusters as the baseline, z * sqrt(2) * the bootstrap SD of its accuracy.
        A paired design correlates the two, so the approximation errs on the wide side."""
        if ((label, 1), "answerable") in self.index:
            d = self.paired((label, 1), (label, 0), "answerable")
            if d is None or d["ci_low"] is None:
                return {"value": None, "method": "repeat_half_width", "formula": None,
                        "note": "needs at least two clusters of graded answerable questions"}
            same = d["difference"] == d["ci_low"] == d["ci_high"] == 0
            return {"value": (d["ci_high"] - d["ci_low"]) / 2, "method": "repeat_half_width",
                    "formula": f"half-width of the paired 95% cluster-bootstrap interval of {label} repeat 1 "
                               f"against its repeat 0 on answerable questions",
                    "note": ("the two repeats were graded alike on every answerable question (a deterministic "
                             "endpoint): this run shows no run-to-run noise; the intervals of the differences "
                             "between systems still carry the sampling of questions") if same else None}
        formula = (f"approximation without a repeat: 1.96 x sqrt(2) x the bootstrap SD of {label}'s accuracy on "
                   f"answerable questions (wide: it ignores the pairing); run --repeat 2 for the paired value")
        if len(self.counts["answerable"]) < 2:
            return {"value": None, "method": "sd_approximation", "formula": formula,
                    "note": "needs at least two clusters of graded answerable questions" if self.counts["answerable"]
                    else "no answerable question was graded (a retrieval-only run has no answers)"}
        den = self._t("answerable")
        acc = self._t(((label, 0), "answerable"))[den > 0] / den[den > 0]
        return {"value": float(Z95 * math.sqrt(2) * acc.std()), "method": "sd_approximation", "formula": formula,
                "note": None}


def repeat_metrics(stats: BudgetStats, label: str, rows_by_repeat: dict) -> dict:
    """Accuracy per repeat, its mean and spread, and the noise floor: repeat 1 against repeat 0,
    paired over questions, with its interval (seed guide, section 9.3)."""
    accs = {r: mean([x["correct"] for x in rows if x["correct"] is not None and x["answerable"]])
            for r, rows in sorted(rows_by_repeat.items())}
    if len(accs) < 2:
        return {"repeats": len(accs), "repeat_accuracy": None, "noise_floor": None,
                "noise_floor_note": "a single repeat: run with --repeat 2 or more to measure the noise floor"}
    values = [a for a in accs.values() if a is not None]
    floor = stats.paired((label, 1), (label, 0), "answerable")
    return {"repeats": len(accs), "repeat_accuracy": {
                "per_repeat": list(accs.values()), "mean": mean(values),
                "sd": statistics.stdev(values) if len(values) > 1 else None,
                "min": min(values) if values else None, "max": max(values) if values else None},
            "noise_floor": floor, "noise_floor_note": None if floor else "no graded answers to compare"}


def noise_half_width(system: dict) -> float | None:
    """How far from zero a repeat of this system wandered: the larger end of its interval."""
    floor = system["noise_floor"]
    if not floor or floor["ci_low"] is None:
        return None
    return max(abs(floor["ci_low"]), abs(floor["ci_high"]))


def differences(systems: dict, stats: BudgetStats, baseline: str, types: list[str]) -> list[dict]:
    """Each system against the baseline at one budget: the headline over answerable questions,
    per question type, and abstention (unanswerable questions) on its own; flagged when the
    difference is no larger than either system's noise floor."""
    out = []
    base = (baseline, 0)
    for label, system in systems.items():
        if label == baseline or system["graded"] == 0:
            continue
        own = (label, 0)
        d = stats.paired(own, base, "answerable")
        floors = [w for w in (noise_half_width(systems[baseline]), noise_half_width(system)) if w is not None]
        floor = max(floors) if floors else None
        out.append({"system": label, "baseline": baseline, "budget": system["budget"],
                    **(d or {"difference": None, "ci_low": None, "ci_high": None, "questions": 0, "clusters": 0}),
                    "cases": system["cases"],
                    "abstention": stats.paired(own, base, "unanswerable"),
                    "by_type": {t: stats.paired(own, base, f"type:{t}") for t in types},
                    "noise_floor": floor,
                    "within_noise_floor": None if floor is None or d is None else abs(d["difference"]) <= floor})
    return out


def comparisons(pairs: list[tuple[dict, dict | None]], baseline: str, resamples: int, seed: int
                ) -> tuple[list[dict], list[dict], list[dict], dict]:
    """The systems, the differences, the per-question rows and the minimum detectable
    difference of each budget, all from one set of cluster resamples per budget."""
    several = len({r[BUDGET_FIELD] for r, _ in pairs}) > 1
    by_label: dict = defaultdict(lambda: defaultdict(list))  # label -> repeat -> [(rec, verdict, row)]
    for r, v in pairs:
        row = {**question_row(r, v), "system": system_label(r, several)}
        by_label[row["system"]][r["repeat"]].append((r, v, row))
    systems, diffs, questions, mdd = [], [], [], {}
    for budget in sorted({r[BUDGET_FIELD] for r, _ in pairs}):
        labels = sorted(l for l, reps in by_label.items() if reps[min(reps)][0][0][BUDGET_FIELD] == budget)
        rows = {(l, rep): [row for _, _, row in items] for l in labels for rep, items in by_label[l].items()}
        types = sorted({x["type"] for xs in rows.values() for x in xs})
        selections = {"answerable": lambda x: x["answerable"], "unanswerable": lambda x: not x["answerable"],
                      **{f"type:{t}": (lambda x, t=t: x["type"] == t) for t in types}}
        stats = BudgetStats(rows, selections, resamples, seed)
        scored = {}
        for label in labels:
            reps = by_label[label]
            first = min(reps)
            scored[label] = {"label": label, **score_system([(r, v) for r, v, _ in reps[first]], rows[label, first]),
                             "cases": len({x["case_id"] for x in rows[label, first]}),
                             **repeat_metrics(stats, label, {rep: rows[label, rep] for rep in reps})}
            questions += [{k: x[k] for k in ("system", "qid", "case_id", "type", "budget", "repeat", "verdict",
                                            "by", "cause", "evidence_n", "evidence_retrieved",
                                            "evidence_in_context", "exact_match", "token_f1")}
                          for rep in reps for x in rows[label, rep]]
        none, oracle = (next((l for l in labels if scored[l]["backend"] == c), None) for c in ("none", "oracle"))
        for label in labels:
            scored[label].update(stats.gap_closed((label, 0), (none, 0), (oracle, 0)) if none and oracle else
                                 {"gap_closed": None, "gap_closed_ci": None,
                                  "gap_closed_note": "needs both the none and oracle controls in the comparison"})
        base_label = f"{baseline}@{budget}" if several else baseline
        if base_label not in scored:
            raise InputError(f"--baseline {baseline!r} is not among the systems at budget {budget}: "
                             f"{', '.join(sorted(s['backend'] for s in scored.values()))}")
        # Rows in the order people read them (controls, baseline, systems), in the JSON as on stdout.
        scored = {s["label"]: s for s in row_order(list(scored.values()), baseline)}
        diffs += differences(scored, stats, base_label, types)
        mdd[str(budget)] = stats.minimum_detectable(base_label)
        systems += list(scored.values())
    return systems, diffs, questions, mdd


# ---------------------------------------------------------------------------------------------
# Words and tables
# ---------------------------------------------------------------------------------------------

def fmt(x: float | None, signed: bool = False) -> str:
    """Numbers for people: 3 decimals, n/a for not measurable."""
    if x is None:
        return "n/a"
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def ci(d: dict | None) -> str:
    """A difference with its interval, in words."""
    if d is None:
        return "n/a"
    if d["ci_low"] is None:
        return f"{fmt(d['difference'], True)} [no interval]"
    return f"{fmt(d['difference'], True)} [{fmt(d['ci_low'], True)}, {fmt(d['ci_high'], True)}]"


MAIN_COLUMNS = (("accuracy", "accuracy"), ("abstention", "abstention_accuracy"), ("gap closed", "gap_closed"),
                ("EM", "exact_match"), ("F1", "token_f1"), ("recall_any@k", "recall_any_at_k"),
                ("recall_all ctx", "recall_all_in_context"), ("kw recall@k", "keyword_recall_at_k"),
                ("staleness", "staleness"), ("contradiction", "contradiction"), ("write prec", "write_precision"))


def whole(x: float | None) -> str:
    """Token counts for people: whole numbers (half up) with thousands separators; n/a for None."""
    return "n/a" if x is None else f"{math.floor(x + 0.5):,}"


def na(text: str, value, note: str | None) -> str:
    """A formatted value, or n/a with the reason it is not measured."""
    return text if value is not None else f"n/a ({note or 'not measured'})"


def role(s: dict, scores: dict) -> str:
    """A row's name with its role: the baseline and the controls are marked."""
    if s["backend"] == scores["baseline"]:
        return f"{s['label']} (baseline)"
    return f"{s['label']} (control)" if s["backend"] in CONTROL_NAMES else s["label"]


def row_order(systems: list[dict], baseline: str) -> list[dict]:
    """Per budget: the controls (none, oracle, full_context), then the baseline, then the other
    systems by name; report.py's order, which puts the others in the manifest's order."""
    def key(s: dict) -> tuple:
        control = s["backend"] in CONTROL_NAMES
        return (s["budget"], 0 if control else 1,
                CONTROL_NAMES.index(s["backend"]) if control else (0 if s["backend"] == baseline else 1), s["label"])
    return sorted(systems, key=key)


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
    ingest = (f"ingest {fmt(ing['mean'])} s/case (p50 {fmt(ing['p50'])}, max {fmt(ing['max'])}), flush "
              f"{fmt(fl['mean'])} s (max {fmt(fl['max'])})" if ing else f"ingest n/a ({s['ingest_s_note']})")
    search = (f"search p50 {fmt(s['search_ms_p50'])} / p95 {fmt(s['search_ms_p95'])} / max {fmt(s['search_ms_max'])} "
              f"ms at {na(whole(s['store_items_mean']), s['store_items_mean'], s['store_items_note'])} items per "
              f"namespace (max {whole(s['store_items_max'])}), "
              f"{na(fmt(s['search_contended_share']), s['search_contended_share'], s['search_contended_note'])} of "
              f"searches while answer calls were in flight"
              if s["search_ms_p95"] is not None else f"search n/a ({s['search_ms_note']})")
    return (f"context tokens {na(whole(s['mean_context_tokens']), s['mean_context_tokens'], s['context_tokens_note'])} "
            f"mean, {whole(s['total_context_tokens'])} total; {usage}; answer calls {s['answer_calls']} "
            f"({s['answer_calls_cached']} cached, {s['answer_requests']} requests sent); internal model {internal}; "
            f"{ingest}; {search}")


def repeat_line(s: dict) -> str:
    """Accuracy per repeat, its mean and spread, and the noise floor; or why there is none."""
    rep = s["repeat_accuracy"]
    if rep is None:
        return f"{s['repeats']} repeat: n/a ({s['noise_floor_note']})"
    return (f"{s['repeats']} repeats: accuracy {', '.join(fmt(a) for a in rep['per_repeat'])}; mean {fmt(rep['mean'])}, "
            f"sd {fmt(rep['sd'])}, min {fmt(rep['min'])}, max {fmt(rep['max'])}; noise floor (repeat 1 vs 0) "
            + (ci(s["noise_floor"]) if s["noise_floor"] else f"n/a ({s['noise_floor_note']})"))


def render_text(scores: dict) -> str:
    """The readable stdout tables: every number of the JSON's system rows, the baseline and the
    controls marked, controls first (report.py's order)."""
    systems = row_order(scores["systems"], scores["baseline"])
    out = ["system | n | " + " | ".join(name for name, _ in MAIN_COLUMNS) + " | ctx tokens | search p95 ms | errors"]
    for s in systems:
        out.append(f"{role(s, scores)} | {s['n']} | " + " | ".join(fmt(s[key]) for _, key in MAIN_COLUMNS)
                   + f" | {whole(s['mean_context_tokens'])} | {fmt(s['search_ms_p95'])} | {s['errors']}")
    out.append("\naccuracy by question type (n)")
    for s in systems:
        types = ", ".join(f"{t}={fmt(v['accuracy'])}({v['n']})" for t, v in s["by_type"].items())
        out.append(f"{role(s, scores)}: {types or 'not graded'}")
    if len(scores["budgets"]) > 1:
        out.append("\nbudget curve: accuracy / recall_all in context / k-limited share (k, not the budget, bounded "
                   "the context)")
        for backend in dict.fromkeys(s["backend"] for s in systems):
            points = [f"{s['budget']}: {fmt(s['accuracy'])} / {fmt(s['recall_all_in_context'])} / "
                      f"{fmt(s['k_limited_share'])}" for s in systems if s["backend"] == backend]
            out.append(f"{backend}: " + ", ".join(points))
        reasons: dict = defaultdict(list)
        for s in systems:
            if s["k_limited_note"]:
                reasons[s["k_limited_note"]].append(s["label"])
        out += [f"note: k-limited share: {why} ({', '.join(labels)})" for why, labels in reasons.items()]
    out.append("\nwhere the wrong answers came from")
    for s in systems:
        causes = ", ".join(f"{c} {n}" for c, n in s["failure_causes"].items() if n)
        out.append(f"{role(s, scores)}: {causes or 'none'}")
    out.append("\ncost and latency (repeat 0)")
    out += [f"{role(s, scores)}: {cost_line(s)}" for s in systems]
    out.append("\nrepeats and the noise floor (accuracy on answerable questions)")
    out += [f"{role(s, scores)}: {repeat_line(s)}" for s in systems]
    out.append(f"\npaired difference vs {scores['baseline']} on answerable questions (cluster bootstrap, "
               f"{scores['resamples']} resamples, 95% CI); abstention apart; the controls are not compared")
    for d in scores["differences"]:
        if d["system"] not in {s["label"] for s in systems if s["backend"] not in CONTROL_NAMES}:
            continue
        flag = "  (within the noise floor)" if d["within_noise_floor"] else ""
        out.append(f"{d['system']}: {ci(d)}  over {d['questions']} questions in {d['clusters']} clusters; "
                   f"abstention {ci(d['abstention'])}{flag}")
        out.append("  by type: " + ", ".join(f"{t} {ci(x)}" for t, x in d["by_type"].items()))
    for budget, m in scores["minimum_detectable_difference"].items():
        out.append(f"minimum detectable difference at budget {budget}: {fmt(m['value'])}"
                   + (f" ({m['note']})" if m["note"] else "") + (f"; {m['formula']}" if m["formula"] else ""))
    for s in systems:
        for key in ("accuracy_note", "recall_note", "keyword_recall_note", "staleness_note", "contradiction_note",
                    "write_precision_note", "gap_closed_note"):
            if s[key]:
                out.append(f"note: {s['label']}: {key.removesuffix('_note')}: {s[key]}")
    cal = scores["calibration"]
    if cal:
        o, g = cal["overall"], cal["grader"]
        out.append(f"\njudge calibration of this grader ({cal['grading']}; rules {g['rules_sha256'][:12]}, judge "
                   f"{g['judge_model'] or 'none'}) on {cal['calibration_set']}: false accept rate "
                   f"{fmt(o['false_accept_rate'])} ({o['false_accepts']} of {o['known_wrong']}), false reject rate "
                   f"{fmt(o['false_reject_rate'])} ({o['false_rejects']} of {o['known_right']}), kappa "
                   f"{fmt(cal['kappa'])}, n {o['n']}")
    for w in scores["warnings"]:
        out.append(f"warning: {w}")
    out.append("\nwhat the controls say")
    out += [f"- {n}" for n in findings(scores)]
    return "\n".join(out)


def findings(scores: dict) -> list[str]:
    """Plain-words checks of the instrument itself, from the controls (seed guide, 9.1), budget
    by budget; and every disclosure a reader needs (no provenance, internal models, failures).

    Whether `none` is low enough and `oracle` high enough is check.py's verdict alone, made per
    question type against config.yaml's `checks:` thresholds: with --checks its verdicts are
    quoted; without, the numbers are stated and no verdict is made up here (a second,
    pooled threshold in this script used to contradict check.py's per-type ones)."""
    notes = []
    checks = scores.get("checks")  # absent from hand-made score dicts
    if checks is not None:
        notes += [f"check.py {c['id']}: {c['status']}: {c['summary']}" for c in checks["controls"]]
    else:
        notes += control_numbers(scores)
    others = [c for c in checks["not_passed"] if c not in checks["controls"]] if checks else []
    if checks and checks["status"] in ("FAIL", "WARN"):
        notes.append(f"check.py: {checks['status']} ({', '.join(f'{n} {k}' for k, n in checks['counts'].items() if n)})"
                     + (": " + "; ".join(f"{c['status']} {c['id']}: {c['summary']}" for c in others) if others else
                        "; the control checks are quoted above"))
    for s in scores["systems"]:
        if s["recall_note"]:
            notes.append(f"`{s['label']}`: retrieval recall {s['recall_note']}.")
        if s["internal_model"]:
            notes.append(f"`{s['label']}` calls a model of its own during ingestion or search: "
                         f"{s['internal_model']}.")
        if s["flush_note"]:
            notes.append(f"`{s['label']}`: {s['flush_note']}")
        if s["time_aware"]:
            notes.append(f"`{s['label']}` searched with each question's date as \"now\" (time-aware search).")
        if s["errors"]:
            notes.append(f"`{s['label']}`: {s['errors']} of {s['n']} questions failed (run or judge errors), "
                         f"counted as incorrect; the first: {s['first_error']}")
    return notes


def control_numbers(scores: dict) -> list[str]:
    """Without check.py's results: what the controls scored, per answerable type, and where the
    systems fall between them, in numbers only; the verdict is check.py's."""
    notes = []
    for budget in scores["budgets"]:
        systems = [s for s in scores["systems"] if s["budget"] == budget]
        at = f" (budget {budget})" if len(scores["budgets"]) > 1 else ""
        by = {s["backend"]: s for s in systems}
        for name, what, key in (("none", "no memory at all", "none_max"),
                                ("oracle", "exactly the gold evidence", "oracle_min")):
            c = by.get(name)
            if c is None or c["accuracy"] is None:
                continue
            types = ", ".join(f"{t} {fmt(v['accuracy'])} (n={v['n']})" for t, v in c["by_type"].items()
                              if t not in UNANSWERABLE_TYPES and v["accuracy"] is not None)
            notes.append(f"The `{name}` control ({what}) answers {fmt(c['accuracy'])} of answerable questions{at}; "
                         f"per type: {types or 'none graded'}. Whether that is within its limits is check.py's "
                         f"verdict (config.yaml checks.{key}, per type): run check.py and pass --checks.")
        none, oracle = by.get("none"), by.get("oracle")
        for s in systems:
            if s["backend"] in CONTROL_NAMES or s["accuracy"] is None:
                continue
            if none and none["accuracy"] is not None and s["accuracy"] < none["accuracy"]:
                notes.append(f"`{s['label']}` answers fewer answerable questions ({fmt(s['accuracy'])}) than the "
                             f"`none` control ({fmt(none['accuracy'])}){at}: its context misleads the answer model.")
            if oracle and oracle["accuracy"] is not None and s["accuracy"] > oracle["accuracy"]:
                notes.append(f"`{s['label']}` scores above the oracle ({fmt(s['accuracy'])} against "
                             f"{fmt(oracle['accuracy'])}){at}: audit the evidence labels of the questions it gets "
                             f"right and the oracle does not.")
    return notes


def grading_summary(systems: list[dict]) -> str:
    """Which grading decided the verdicts, in words."""
    layers = defaultdict(int)
    for s in systems:
        for k, v in s["decided_by"].items():
            layers[k] += v
    parts = ", ".join(f"{k} {v}" for k, v in sorted(layers.items()))
    if not layers:
        return "nothing graded: retrieval-only runs (no answers)."
    if layers.get("llm"):
        return f"deterministic layers, then an LLM judge for the rest (verdicts by layer: {parts})."
    return (f"deterministic layers only, no LLM judge (verdicts by layer: {parts}). Answers that say the "
            f"right thing in other words than the gold are counted incorrect, so accuracy is a lower bound.")


# ---------------------------------------------------------------------------------------------
# The run as a whole: warnings, the manifest, the command line
# ---------------------------------------------------------------------------------------------

def served_models(pairs: list) -> dict:
    """Per budget, per system, how many answers each served model gave (repeats together):
    {budget: {backend: {served_model: answers}}}. A comparison holds the answer model constant,
    so more than one model in a budget, in one system or across systems, breaks it."""
    served = served_model_counts(r for r, _ in pairs)
    return {str(b): {backend: dict(models.most_common()) for backend, models in sorted(by.items())}
            for b, by in sorted(served.items())}


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


def partial_notes(comparison) -> list[str]:
    """What --allow-partial left out, and why, in words; and a run limited to its first cases."""
    notes = []
    limits = {r["limit"] for r in comparison.records if r["limit"] is not None}
    if limits:
        notes.append(f"These runs used --limit {', '.join(map(str, sorted(limits)))}: only the first cases of the "
                     f"dataset. The numbers are not comparable to a run on the whole dataset.")
    if comparison.left_out:
        notes.append(f"Partial comparison (--allow-partial): every system is scored on the {comparison.questions} "
                     f"questions all of them answered.")
        for lo in comparison.left_out:
            notes.append(f"`{lo['backend']}` ({lo['file']}) holds no record of {lo['missing']} question(s) the others "
                         f"answered (first: {lo['qids'][0]}); those questions are left out for every system.")
    return notes


def read_manifest(path: str, comparison, allow_partial: bool) -> dict:
    """The manifest of these runs, checked against them: the same dataset, and every question
    of it answered (a run on part of the dataset is partial like a partial file)."""
    manifest = read_json(path, "manifest of manifest.py", ("dataset_sha256", "dataset_counts"))
    sha, total = manifest["dataset_sha256"], manifest["dataset_counts"]["questions"]
    runs_sha = comparison.records[0]["dataset_sha256"]
    if sha != runs_sha:
        raise InputError(f"{path}: describes dataset sha256 {sha[:12]}, the run files were made from "
                         f"{runs_sha[:12]}; write the manifest of this run (manifest.py) or pass the right one")
    per_budget = comparison.questions / len({r[BUDGET_FIELD] for r in comparison.records})
    if per_budget < total and not allow_partial:
        raise InputError(f"{path}: the dataset has {total} questions and the run files hold {per_budget:.0f} of "
                         f"them; finish the runs, or pass --allow-partial")
    return manifest


def read_checks(path: str, runs: list[str]) -> dict:
    """check.py's verdict on the instrument, refused if it checked other run files than these."""
    checks = read_json(path, "checks.json of check.py")
    try:
        checked = set(checks["inputs"]["runs"].values())
        status, counts, results = checks["status"], checks["counts"], checks["checks"]
    except (KeyError, TypeError, AttributeError) as e:
        raise InputError(f"{path}: not a checks.json of check.py (missing {e})") from None
    if checked != {sha256_file(r) for r in runs}:
        raise InputError(f"{path}: checked other run files than --runs (their sha256 differ); rerun check.py "
                         f"on these runs")
    return {"file": path, "status": status, "counts": counts,
            "not_passed": [{"id": c["id"], "status": c["status"], "summary": c["summary"]}
                           for c in results if c["status"] != "PASS"],
            "controls": [{"id": c["id"], "status": c["status"], "summary": c["summary"]}
                         for c in results if c["check"] == "controls"]}


def read_calibration(path: str, pairs: list) -> dict:
    """The grader's error rates on the calibration set, shown only for the grader that graded
    these verdicts (rules, judge model and prompts alike)."""
    cal = read_json(path, "calibration.json of judge.py --calibrate")
    graders = {tuple(sorted((k, v[k]) for k in ("rules_sha256", "judge_model", "judge_prompt_sha256")))
               for _, v in pairs if v is not None}
    try:
        own = tuple(sorted(cal["grader"].items()))
        summary = {k: cal[k] for k in ("grader", "calibration_set", "grading", "overall", "by_kind", "kappa",
                                       "judge_failures")}
    except (KeyError, TypeError, AttributeError) as e:
        raise InputError(f"{path}: not a calibration.json of judge.py --calibrate (missing {e})") from None
    if graders and graders != {own}:
        raise InputError(f"{path}: calibrates another grader than the one that graded these verdicts (rules or "
                         f"judge model differ); run judge.py --calibrate with this run's config")
    return {"file": path, **summary}


def read_audit(path: str) -> dict:
    """The human audit of the judge (audit.py join)."""
    audit = read_json(path, "audit.json of audit.py join")
    try:
        return {"file": path, **{k: audit[k] for k in ("sampled", "labelled", "complete", "overall", "by_system",
                                                      "flagged", "flag_rule")}}
    except KeyError as e:
        raise InputError(f"{path}: not an audit.json of audit.py join (missing {e})") from None


def main(argv: list[str] | None = None) -> int:
    """Print the score tables; optionally write them as JSON (the input of report.py)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", nargs="+", required=True)
    ap.add_argument("--verdicts", help="results/verdicts.jsonl (not needed for retrieval-only runs)")
    ap.add_argument("--baseline", required=True, help="the system every other is compared with (its --backend "
                                                      "name or its display name)")
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--allow-partial", action="store_true",
                    help="score every system on the questions all of them answered, instead of refusing")
    ap.add_argument("--json", help="write the numbers as JSON here (report.py turns them into the report)")
    ap.add_argument("--manifest", help="a manifest-RUN.json to check the runs against and cite in the report")
    ap.add_argument("--checks", help="results/checks.json of these runs (check.py), shown with the scores")
    ap.add_argument("--calibration", help="results/calibration.json of the grader that graded these runs "
                                          "(judge.py --calibrate)")
    ap.add_argument("--audit", help="results/audit.json (audit.py join): judge-human agreement")
    a = ap.parse_args(argv)
    if a.resamples < 1:
        raise InputError("--resamples must be at least 1")

    comparison = load_comparison(a.runs, a.allow_partial)
    if a.manifest:
        read_manifest(a.manifest, comparison, a.allow_partial)
    verdicts = read_verdicts(a.verdicts) if a.verdicts else {}
    pairs = pair_verdicts(comparison.records, verdicts, a.verdicts)
    baseline = resolve_baseline(a.baseline, comparison.records)
    systems, diffs, questions, mdd = comparisons(pairs, baseline, a.resamples, a.seed)
    served = served_models(pairs)
    scores = {"baseline": baseline, "resamples": a.resamples, "seed": a.seed,
              "grading": grading_summary(systems), "budgets": sorted({s["budget"] for s in systems}),
              "questions_scored": comparison.questions, "left_out": comparison.left_out,
              "served_models": served, "warnings": served_model_warnings(served) + partial_notes(comparison),
              "systems": systems, "differences": diffs, "minimum_detectable_difference": mdd,
              "checks": read_checks(a.checks, a.runs) if a.checks else None,
              "calibration": read_calibration(a.calibration, pairs) if a.calibration else None,
              "audit": read_audit(a.audit) if a.audit else None,
              "questions": questions}

    # Files first, then stdout: `score.py ... | head` closes the pipe early, and that must not
    # cost the report.
    if a.json:
        write_json_atomic(a.json, scores)
    print(render_text(scores))
    return EXIT_OK


def resolve_baseline(name: str, records: list[dict]) -> str:
    """The display name of the baseline, given it or the short --backend name (run records carry
    both: `backend` is what the system calls itself, with any internal model; `backend_id` is
    what run.py was asked for)."""
    names = {r["backend"] for r in records}
    if name in names:
        return name
    matches = {r["backend"] for r in records if r["backend_id"] == name}
    if len(matches) == 1:
        return matches.pop()
    raise InputError(f"--baseline {name!r} is not among the systems: {', '.join(sorted(names))}")


if __name__ == "__main__":
    sys.exit(run_cli(main))
