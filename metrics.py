"""Every metric of a comparison, defined once: what happened to each question, the metrics vector
of each system, the accuracy statistics of each budget, gap closed, the paired differences, the
noise floor and the minimum detectable difference, and the grader's error rates. Their intervals
come from stats.py and their words from wording.py. score.py computes through this module and
writes scores.json; check.py computes its verdicts through it; report.py reads scores.json.

The rule for repeats (run.py --repeat N): every figure of a system is over all its repeats,
each repeat's record of a question counting once (accuracy is the mean over repeats of each
repeat's accuracy; counts such as failure causes and errors add up over repeats); the
accuracy of each repeat is shown beside it, with the noise floor. A paired difference is taken
question by question between the systems' means over their repeats. With one repeat each, all
of this is the plain figure of that run.

Answerability is contract.is_answerable's, and nothing here defines it again.
"""
from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from functools import lru_cache

import numpy as np

from cli import InputError
from contract import CONTROL_NAMES, is_answerable, kind_of, no_evidence_reason
from formats import BUDGET_FIELD, match_verdicts, read_verdicts
from normalization import exact_match, locomo_category, token_f1
from prices import PriceTable, dollar_cost_metrics
from rules import RULES_SHA256, states_value
from stats import (ClusterBootstrap, RESAMPLES, SEED, Z95, cohen_kappa, interval, mean, minimum_detectable,
                   paired_summary, percentile, separated, wilson_interval)
from wording import MDD_FORMULA, NOISE_FLOOR_FORMULA, NOISE_FLOOR_METHOD, NO_SPREAD, WITHHELD, row_order

# Where a wrong answer came from, checked in this order (the first that applies), and what each
# means in the report's words.
FAILURE_CAUSES = {
    "error": "the run or the judge call failed",
    "unparseable": "the judge's output was not a verdict",
    "judge_disagreement": "the rules and the LLM judge decide differently",
    "unmeasurable": "no provenance, or no gold evidence, to tell where it went wrong",
    "retrieval_miss": "at least one evidence turn was never retrieved (whatever became of the others)",
    "budget_miss": "every evidence turn was retrieved, and at least one was cut by the token budget",
    "reader_miss": "every evidence turn in the context, and still wrong (for an unanswerable question: answered "
                   "instead of declining)",
}
ALL = "all"  # the repeat key of a system's figures over all its repeats


# ---------------------------------------------------------------------------------------------
# One question: its verdict, and what happened to it
# ---------------------------------------------------------------------------------------------

def pair_verdicts(records: list[dict], path: str | None) -> list[tuple[dict, dict | None]]:
    """Each run record with its verdict from the verdicts file at `path` (None for a
    retrieval-only record, which has no answer to grade), refusing verdicts that do not belong
    to exactly these records under one grader: a missing verdict, one graded on another dataset
    or against another gold, answer or annotation, by another rule set than this code's, or by a
    mix of judges (InputError)."""
    graded = [r for r in records if not r["retrieval_only"]]
    if graded and path is None:
        raise InputError(f"the run of {graded[0]['backend']!r} holds answers to grade (retrieval_only is false): "
                         f"pass --verdicts results/verdicts.jsonl from judge.py")
    m = match_verdicts(graded, read_verdicts(path) if path else {}, RULES_SHA256)
    m.refuse(path, "rerun judge.py on these runs")
    return [(r, None) for r in records if r["retrieval_only"]] + m.pairs


def failure_cause(rec: dict, v: dict | None) -> str | None:
    """Where a wrong answer came from, one cause per question (None for a right answer or an
    ungraded one), the first that applies: the run or judge failed (error); the judge's output
    was unparseable; the rules and the LLM judge would decide differently (judge_disagreement);
    no provenance, or no gold evidence, to tell (unmeasurable); at least one evidence turn was
    never retrieved (retrieval_miss, whatever became of the others); every evidence turn was
    retrieved but at least one was cut by the budget (budget_miss); every evidence turn in the
    context and still wrong (reader_miss; for an unanswerable question, any wrong answer: the
    reader answered instead of declining).

    A partition: a turn that search never found is a retrieval failure that no budget could
    repair, so it takes precedence over a turn the budget cut."""
    if v is None or v["verdict"] == "correct":
        return None
    if rec["error"] is not None or v["judge_error"] is not None:
        return "error"
    if v["verdict"] == "unparseable":
        return "unparseable"
    if v["by"] == "llm" and v["rules_only_verdict"] not in (None, v["verdict"]):
        return "judge_disagreement"
    if not rec["evidence"]:
        return "reader_miss" if not is_answerable(rec) else "unmeasurable"
    if rec["context_ids"] is None or rec["retrieved_ids"] is None:
        return "unmeasurable"
    evidence = set(rec["evidence"])
    if not evidence.issubset(rec["retrieved_ids"]):
        return "retrieval_miss"
    if not evidence.issubset(rec["context_ids"]):
        return "budget_miss"
    return "reader_miss"


def question_outcome(rec: dict, row: dict) -> tuple[str, bool | None]:
    """What one question counts as in every table, for a view that shows it (the explorer
    decides nothing): the word for its answer, "correct", "error" (the run or the judge call
    failed: counted incorrect, cause error), "unparseable", "incorrect", or "not graded" (no
    verdict: a retrieval-only record); and whether it counts as right (True), wrong (False) or
    neither (None), by accuracy's `correct` for a record that answered, and for a retrieval-only
    one by recall in context's (every evidence turn in the context; None where recall is not
    measured)."""
    if row["correct"] is None:
        word = "not graded"
    elif row["correct"]:
        word = "correct"
    else:
        word = row["cause"] if row["cause"] in ("error", "unparseable") else "incorrect"
    if not rec["retrieval_only"]:
        return word, row["correct"]
    return word, evidence_found(rec)[1] if retrieval_measurable(rec) else None


@lru_cache(maxsize=1 << 16)
def _answer_overlap(gold: str, answer: str, category: int | None) -> tuple[bool, float]:
    """Exact match and token F1 of an answer, by normalization.py's functions, once per distinct
    (gold, answer, category): the systems and repeats of a question often give one answer."""
    return exact_match(gold, answer, category), token_f1(gold, answer, category)


def question_row(rec: dict, v: dict | None, label: str) -> dict:
    """The per-question facts every metric is computed from (and scores.json's `questions`)."""
    answer, evidence, answerable = rec["answer"], rec["evidence"], is_answerable(rec)
    row = {"system": label, "qid": rec["qid"], "case_id": rec["case_id"], "cluster": rec["cluster"],
           "type": rec["type"], "budget": rec[BUDGET_FIELD], "repeat": rec["repeat"],
           "answerable": answerable, "verdict": v["verdict"] if v else None, "by": v["by"] if v else None,
           "correct": (v["verdict"] == "correct") if v else None, "cause": failure_cause(rec, v),
           "rules_only_verdict": v["rules_only_verdict"] if v and v["by"] == "llm" else None,
           "judge_error": v["judge_error"] if v else None,
           "exact_match": None, "token_f1": None, "contradicts": None,
           # How much of the evidence search found and the budget kept: the counts behind the
           # cause, so `jq` can tell a partial retrieval_miss from a total one.
           "evidence_n": len(evidence), "evidence_retrieved": None, "evidence_in_context": None,
           "evidence_note": no_evidence_reason(rec) if not evidence and answerable else None}
    if retrieval_measurable(rec):
        wanted = set(evidence)
        row["evidence_retrieved"] = len(wanted.intersection(rec["retrieved_ids"]))
        row["evidence_in_context"] = len(wanted.intersection(rec["context_ids"]))
    if v is not None:
        if answer is None:
            row["exact_match"], row["token_f1"] = False, 0.0
        else:
            row["exact_match"], row["token_f1"] = _answer_overlap(rec["gold_answer"], answer, locomo_category(rec))
        outdated = rec["meta"].get("outdated_answers") or []  # an optional annotation
        if outdated and answer is not None:
            # Stating a replaced value as the answer; naming it beside the current one is history.
            row["contradicts"] = (any(states_value(answer, o) for o in outdated)
                                  and not states_value(answer, rec["gold_answer"]))
    return row


# ---------------------------------------------------------------------------------------------
# One system: the metrics vector, over all its repeats
# ---------------------------------------------------------------------------------------------

def share(flags: list, why_empty: str) -> tuple[float | None, str | None]:
    """The share of true flags, or (None, why) when there is nothing to measure."""
    return (mean([bool(f) for f in flags]), None) if flags else (None, why_empty)


def evidence_found(rec: dict) -> tuple[bool, bool]:
    """One question's recall, for a record with gold evidence and provenance: whether some
    evidence turn was retrieved (recall_any@k) and whether every one reached the context
    (recall_all in context)."""
    evidence = set(rec["evidence"])
    return not evidence.isdisjoint(rec["retrieved_ids"]), evidence.issubset(rec["context_ids"])


def answer_evidence(rec: dict) -> list[str]:
    """The question's answer-bearing turns (meta.answer_evidence: the evidence turns that state
    the answer, not the bridge turns that only lead to it); empty when the dataset marks none."""
    return list(rec["meta"].get("answer_evidence") or [])  # an optional annotation


def answer_found(rec: dict) -> tuple[bool, bool]:
    """One question's answer-bearing recall, for a record with marked answer-bearing turns and
    provenance: whether some answer-bearing turn was retrieved (@k) and whether some reached the
    context. A bridge turn alone counts as found in recall_any@k, and not here."""
    answer = set(answer_evidence(rec))
    return not answer.isdisjoint(rec["retrieved_ids"]), not answer.isdisjoint(rec["context_ids"])


def retrieval_measurable(rec: dict) -> bool:
    """Whether a record's retrieval can be measured: it has gold evidence, and provenance (the
    stored turns its hits and its context came from)."""
    return bool(rec["evidence"]) and rec["retrieved_ids"] is not None and rec["context_ids"] is not None


def recall_metrics(recs: list[dict]) -> dict:
    """Retrieval recall from provenance, and keyword recall (needs none), with reasons."""
    with_evidence = [r for r in recs if r["evidence"]]
    measured = [r for r in with_evidence if retrieval_measurable(r)]
    # Why recall is missing matters: a failed question retrieved nothing to measure, while a
    # hit without source ids came back but cannot be traced to stored turns.
    failed = sum(1 for r in with_evidence if r["error"] is not None)
    unknown = len(with_evidence) - len(measured) - failed
    why = "; ".join(([f"{failed} failed"] if failed else []) +
                    ([f"{unknown} returned hits without provenance (source ids)"] if unknown else []))
    unlabelled = sum(1 for r in recs if not r["evidence"] and is_answerable(r))
    notes = []
    if not with_evidence:
        notes.append("no question has gold evidence")
    elif not measured:
        notes.append(f"not measurable: of {len(with_evidence)} questions with evidence, {why}")
    elif len(measured) < len(with_evidence):
        notes.append(f"measured on {len(measured)} of {len(with_evidence)} questions with evidence ({why})")
    if unlabelled and with_evidence:
        notes.append(f"{unlabelled} answerable question record(s) name no gold evidence (meta.no_evidence): graded "
                     f"for accuracy, left out of recall")
    keyworded = [r for r in recs if r["keyword_ranks"] is not None]
    kw_note = None if keyworded else ("no question has keywords (meta.keywords)" if not any(
        r["meta"].get("keywords") for r in recs) else "every question with keywords failed")  # optional annotation
    found = [evidence_found(r) for r in measured]
    answered = [answer_found(r) for r in measured if answer_evidence(r)]
    if not measured:
        answer_note = "no question's retrieval is measured"
    elif not answered:
        answer_note = ("the dataset marks no answer-bearing turns (meta.answer_evidence), so a bridge turn cannot be "
                       "told from the turn that holds the answer")
    elif len(answered) < len(measured):
        answer_note = (f"measured on the {len(answered)} of {len(measured)} questions that mark answer-bearing turns "
                       f"(meta.answer_evidence)")
    else:
        answer_note = None
    return {
        "recall_any_at_k": mean([any_ for any_, _ in found]),
        "recall_all_in_context": mean([all_ for _, all_ in found]),
        "recall_n": len(measured), "recall_note": "; ".join(notes) or None,
        "answer_recall_at_k": mean([any_ for any_, _ in answered]),
        "answer_recall_in_context": mean([in_ctx for _, in_ctx in answered]),
        "answer_recall_n": len(answered), "answer_recall_note": answer_note,
        "keyword_recall_at_k": mean([bool(r["keyword_ranks"]) for r in keyworded]),
        "keyword_recall_in_context": mean([any(k <= r["hits_kept"] for k in r["keyword_ranks"]) for r in keyworded]),
        "keyword_recall_n": len(keyworded), "keyword_recall_note": kw_note,
    }


def turn_ranking(rec: dict) -> list[str]:
    """The turns a record's hits name, in rank order, each once (at the first hit that names it):
    the ranking of stored turns the rank metrics read. A hit that carries several turns ranks them
    at consecutive places, in its own order."""
    return list(dict.fromkeys(rec["retrieved_ids"]))


def dcg(relevances: list[int], k: int) -> float:
    """Discounted cumulative gain at k as LongMemEval computes it (src/retrieval/eval_utils.py of
    xiaowu0162/LongMemEval, commit 9e0b455): the first place counts 1, place i >= 2 counts
    1 / log2(i)."""
    top = relevances[:k]
    return float(top[0] + sum(r / math.log2(i) for i, r in enumerate(top[1:], 2))) if top else 0.0


def rank_scores(rec: dict, k: int) -> tuple[float, float, float]:
    """One record's recall_all@k, NDCG@k (LongMemEval's evaluate_retrieval: every evidence turn
    among the first k ranked turns; DCG of the ranking over that of the evidence ranked first) and
    LoCoMo's R@k (the share of the question's evidence among the first k: task_eval/evaluation.py
    of snap-research/locomo, commit 9228632). The record must have evidence and provenance."""
    top = turn_ranking(rec)[:k]
    evidence = set(rec["evidence"])
    ideal = dcg([1] * len(evidence), k)
    return (float(evidence <= set(top)), dcg([int(t in evidence) for t in top], k) / ideal,
            sum(e in top for e in rec["evidence"]) / len(rec["evidence"]))


def rank_metrics(recs: list[dict]) -> dict:
    """recall_all@k, NDCG@k and the evidence share at k (LoCoMo's R@k) over the questions that
    recall_metrics measures (gold evidence and provenance), at the k the runs searched with (the
    contract's top_k)."""
    measured = [r for r in recs if retrieval_measurable(r)]
    scores = [rank_scores(r, r["top_k"]) for r in measured]
    return {"rank_k": recs[0]["top_k"], "recall_all_at_k": mean([x[0] for x in scores]),
            "ndcg_at_k": mean([x[1] for x in scores]), "evidence_recall_at_k": mean([x[2] for x in scores])}


def staleness_metrics(recs: list[dict]) -> dict:
    """Of the items placed in context for annotated questions, the share superseded by a newer
    stored item (meta.superseded_evidence); needs provenance."""
    annotated = [r for r in recs if r["meta"].get("superseded_evidence")]  # an optional annotation
    traced = [r for r in annotated if r["context_ids"] is not None]
    stale = sum(len(set(r["context_ids"]) & set(r["meta"]["superseded_evidence"])) for r in traced)
    items = sum(len(r["context_ids"]) for r in traced)
    if not annotated:
        note = "the dataset marks no superseded evidence (meta.superseded_evidence)"
    elif not traced:
        note = "needs provenance: no annotated question's context has source ids"
    elif not items:
        note = "no item reached the context of an annotated question"
    elif len(traced) < len(annotated):
        note = f"measured on {len(traced)} of {len(annotated)} annotated questions (the rest lack provenance)"
    else:
        note = None
    return {"staleness": stale / items if items else None, "staleness_note": note, "staleness_n": len(traced)}


def contradiction_metrics(rows: list[dict]) -> dict:
    """Of the answered questions with meta.outdated_answers, the share whose answer states a
    replaced value (question_row decides each, with the grader's normalization)."""
    contradiction, note = share([x["contradicts"] for x in rows if x["contradicts"] is not None],
                                "no answered question has outdated values (meta.outdated_answers)"
                                if any(x["correct"] is not None for x in rows) else
                                "no answers were graded (retrieval-only run)")
    return {"contradiction": contradiction, "contradiction_note": note}


def write_precision_metrics(recs: list[dict], rows: list[dict]) -> dict:
    """Of the items stored, the share that ever reached a context that produced a correct
    answer. Items are counted per case and repeat (ids are unique within a case only), so this
    is a property of the whole run, not of a question type."""
    stored = sum({(r["case_id"], r["repeat"]): r["added_items"] or 0 for r in recs}.values())
    graded = [(r, x) for r, x in zip(recs, rows) if x["correct"] is not None]
    note = None
    if not stored:
        wp, note = None, "the system stored nothing (a control, or every ingestion failed)"
    elif not graded:
        wp, note = None, "no answers were graded (retrieval-only run)"
    elif any(x["correct"] and r["context_ids"] is None for r, x in graded):
        wp, note = None, "needs provenance: a correct answer's context has no source ids"
    else:
        useful = {(r["case_id"], r["repeat"], i) for r, x in graded if x["correct"] for i in r["context_ids"]}
        wp = len(useful) / stored
    return {"write_precision": wp, "write_precision_note": note, "stored_items": stored}


def answer_metrics(rows: list[dict]) -> dict:
    """Judged accuracy, exact match and token F1 of some question rows: on answerable questions
    (the headline), on unanswerable ones apart, and on both; the mean over repeats of each
    repeat's figure, which with every repeat holding the same questions is the mean over all
    rows."""
    graded = [x for x in rows if x["correct"] is not None]
    ans = [x for x in graded if x["answerable"]]
    una = [x for x in graded if not x["answerable"]]
    return {
        "accuracy": mean([x["correct"] for x in ans]), "accuracy_n": len(ans),
        "abstention_accuracy": mean([x["correct"] for x in una]), "abstention_n": len(una),
        "accuracy_all": mean([x["correct"] for x in graded]),
        "accuracy_note": None if graded else "not measured: a retrieval-only run (no answers)",
        # EM and F1 on the same questions as the headline accuracy: an abstention gold ("I don't
        # know") would otherwise credit the `none` control with exact matches it got by declining.
        "exact_match": mean([x["exact_match"] for x in ans]), "token_f1": mean([x["token_f1"] for x in ans]),
        "abstention_exact_match": mean([x["exact_match"] for x in una]),
        "abstention_token_f1": mean([x["token_f1"] for x in una]),
    }


def type_metrics(recs: list[dict], rows: list[dict]) -> dict:
    """Per question type, the same functions on the type's questions: accuracy, EM and F1 (on
    all of the type: an unanswerable type is its own abstention score), accuracy on the type's
    answerable questions alone, retrieval and keyword recall, staleness and contradiction, and
    how many of its records are answerable (a type none of whose questions is answerable is
    shown apart). Write precision is per stored item, not per type.

    A type may mix answerable questions with unanswerable ones (an importer's meta.abstention),
    so the `none` control's limit reads answerable_accuracy: declining an unanswerable question
    is right with no memory, and counting it would let guessable golds pass or good ones fail."""
    groups: dict = defaultdict(list)
    for r, x in zip(recs, rows):
        groups[x["type"]].append((r, x))
    out = {}
    for t, items in sorted(groups.items()):
        trecs, trows = [r for r, _ in items], [x for _, x in items]
        graded = [x for x in trows if x["correct"] is not None]
        out[t] = {"n": len({x["qid"] for x in trows}),
                  "answerable_n": len({x["qid"] for x in trows if x["answerable"]}),
                  "accuracy": mean([x["correct"] for x in graded]),
                  "accuracy_note": None if graded else "not measured: a retrieval-only run (no answers)",
                  "answerable_accuracy": mean([x["correct"] for x in graded if x["answerable"]]),
                  "exact_match": mean([x["exact_match"] for x in graded]),
                  "token_f1": mean([x["token_f1"] for x in graded]),
                  **recall_metrics(trecs), **rank_metrics(trecs), **staleness_metrics(trecs),
                  **contradiction_metrics(trows)}
    return out


def kind_metrics(recs: list[dict]) -> dict:
    """Per kind (kind_of: meta.kind, else the type), the retrieval recalls, answer-bearing recall
    included, by the same function on the kind's questions, and how many questions it has."""
    groups: dict = defaultdict(list)
    for r in recs:
        groups[kind_of(r)].append(r)
    return {kind: {"n": len({r["qid"] for r in krecs}), **recall_metrics(krecs)}
            for kind, krecs in sorted(groups.items())}


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
    internal = {k: sum(u[k] for u in per_case.values())
                for k in ("calls", "cached", "prompt_tokens", "completion_tokens", "prompt_tokens_missing",
                          "completion_tokens_missing")} if per_case else None
    if internal is None:
        internal_note = ("the system calls no model of its own" if not any(r["internal_model"] for r in recs) else
                         "not counted: the backend calls a model but exposes no llm_client to count its calls through")
    elif internal["prompt_tokens_missing"] or internal["completion_tokens_missing"]:
        internal_note = (f"token counts are of the calls that reported usage: {internal['prompt_tokens_missing']} of "
                         f"{internal['calls']} internal calls gave no prompt token count, "
                         f"{internal['completion_tokens_missing']} no completion token count")
    else:
        internal_note = None
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

    def stat(xs: list) -> dict | None:
        return {"mean": mean(xs), "p50": percentile(sorted(xs), 0.5), "max": max(xs)} if xs else None
    # Controls are computed by run.py itself: nothing is stored, flushed or searched.
    control = all(r["backend"] in CONTROL_NAMES for r in recs)
    ingest_note = None if cases else ("a control stores nothing" if control else
                                      "no ingestion was timed (every case failed)")
    search_note = None if ms else ("a control searches nothing" if control else
                                   "no search was timed (every question failed)")
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
    """The share of records whose context was bounded by k, not by the budget: the search
    returned exactly top_k hits and the budget cut none (run.py's `k_limited`). High at a large
    budget, it says the budget curve is flat because k ran out, not because the ranker is good."""
    flags = [r["k_limited"] for r in recs if r["k_limited"] is not None]
    if not flags:
        note = f"k_limited is null on all {len(recs)} records (no search was made: failed questions)"
    elif len(flags) < len(recs):
        note = f"measured on {len(flags)} of {len(recs)} records (the rest failed before a search)"
    else:
        note = None
    return {"k_limited_share": mean([bool(f) for f in flags]), "k_limited_n": len(flags), "k_limited_note": note}


def score_system(recs: list[dict], rows: list[dict]) -> dict:
    """Every number of one system's row from its run records and their question rows (in the
    same order), over all its repeats."""
    first = recs[0]
    graded = [x for x in rows if x["correct"] is not None]
    causes = Counter(x["cause"] for x in graded if x["cause"] is not None)
    errors = [r["error"] or x["judge_error"] for r, x in zip(recs, rows)
              if r["error"] is not None or x["judge_error"] is not None]
    return {
        "backend": first["backend"], "backend_id": first["backend_id"], "backend_version": first["backend_version"],
        "budget": first[BUDGET_FIELD], "internal_model": first["internal_model"], "flush_note": first["flush_note"],
        "time_aware": first["time_aware"], "extra_wait_s": first["extra_wait_s"],
        "retrieval_only": first["retrieval_only"],
        "n": len({x["qid"] for x in rows}), "records": len(rows), "cases": len({x["case_id"] for x in rows}),
        "graded": len(graded), "correct": sum(x["correct"] for x in graded),
        **answer_metrics(rows),
        "failure_causes": {c: causes[c] for c in FAILURE_CAUSES},
        "unparseable": sum(1 for x in graded if x["verdict"] == "unparseable"),
        "decided_by": dict(sorted(Counter(x["by"] for x in graded).items())),
        "by_type": type_metrics(recs, rows), "by_kind": kind_metrics(recs), **recall_metrics(recs),
        **rank_metrics(recs),
        "searched": sum(1 for r in recs if r["error"] is None),
        "hits_without_provenance": sum(1 for r in recs if r["error"] is None and r["retrieved_ids"] is None),
        **staleness_metrics(recs), **contradiction_metrics(rows), **write_precision_metrics(recs, rows),
        **cost_metrics(recs), **latency_metrics(recs), **k_limited_metrics(recs),
        "errors": len(errors), "first_error": errors[0] if errors else None,
    }


# ---------------------------------------------------------------------------------------------
# One budget: every accuracy statistic from one pass over the paired cluster bootstrap
# ---------------------------------------------------------------------------------------------

def selections(row: dict) -> tuple[str, str]:
    """The two selections of questions a row counts in: answerable or unanswerable, and its type."""
    return ("answerable" if row["answerable"] else "unanswerable"), f"type:{row['type']}"


class BudgetStats:
    """Every bootstrap statistic of one budget from one pass over its resamples: per cluster, the
    correct answers of each system over all its repeats on each selection of questions
    (answerable, unanswerable, each type), those of its repeats 0 and 1 on answerable questions
    (the noise floor), and the number of questions in each selection, totalled in every
    resample by a single matrix product. Within a budget every system and repeat holds the same
    questions (formats.load_comparison), so a paired difference is a difference of totals."""

    def __init__(self, rows: dict, resamples: int, seed: int) -> None:
        """rows: {label: {repeat: [question row]}} of one budget."""
        self.repeats = {label: len(reps) for label, reps in rows.items()}
        self.counts: dict | None = None  # selection -> Counter(cluster: questions)
        self.hits: dict = {}    # ((label, repeat or ALL), selection) -> Counter(cluster: correct answers)
        for label, reps in rows.items():
            for rep, xs in reps.items():
                counts: dict = defaultdict(Counter)
                for x in xs:
                    if x["correct"] is None:
                        continue
                    for sel in selections(x):
                        counts[sel][x["cluster"]] += 1
                        if x["correct"]:
                            self.hits.setdefault(((label, ALL), sel), Counter())[x["cluster"]] += 1
                            if len(reps) > 1 and rep in (0, 1) and sel == "answerable":
                                self.hits.setdefault(((label, rep), sel), Counter())[x["cluster"]] += 1
                if self.counts is None:
                    self.counts = dict(counts)
                elif counts != self.counts:
                    raise RuntimeError(f"{label} repeat {rep} graded other questions")  # a contract bug
        clusters = sorted({x["cluster"] for reps in rows.values() for xs in reps.values() for x in xs})
        self.boot = ClusterBootstrap(clusters, resamples, seed)
        self.index: dict = {}
        columns = []
        for key, per_cluster in list(self.counts.items()) + list(self.hits.items()):
            self.index[key] = len(columns)
            columns.append(self.boot.column(per_cluster))
        self.t = self.boot.totals(np.column_stack(columns)) if columns else None

    def accuracy(self, key: tuple, sel: str) -> tuple[float | None, np.ndarray | None]:
        """The accuracy of (label, repeat or ALL) on a selection: its point and its value in
        every resample (NaN where the resample drew no question of the selection)."""
        n = sum(self.counts[sel].values()) if sel in self.counts else 0
        if not n:
            return None, None
        r = 1 if key[1] != ALL else self.repeats[key[0]]
        den = self.t[:, self.index[sel]] * r
        hits = self.t[:, self.index[(key, sel)]] if (key, sel) in self.index else np.zeros(len(den))
        with np.errstate(divide="ignore", invalid="ignore"):
            return sum(self.hits.get((key, sel), {}).values()) / (n * r), np.where(den > 0, hits / den, np.nan)

    def paired(self, a: tuple, b: tuple, sel: str) -> dict | None:
        """A's accuracy minus B's on the selection, question by question (paired_summary), with
        the questions and clusters it rests on. None when no question of the selection was
        graded."""
        pa, ta = self.accuracy(a, sel)
        pb, tb = self.accuracy(b, sel)
        if pa is None:
            return None
        return {**paired_summary(pa - pb, ta - tb, len(self.counts[sel])),
                "questions": sum(self.counts[sel].values()), "clusters": len(self.counts[sel])}

    def gap_closed(self, label: str, none: str, oracle: str) -> dict:
        """(system - none) / (oracle - none) on answerable questions, over all repeats, with its
        interval: how much of the distance from no memory to perfect evidence a system covers,
        which reads the same for a strong or a weak answer model."""
        (s, ts), (z, tz), (o, to) = (self.accuracy((k, ALL), "answerable") for k in (label, none, oracle))
        if s is None:
            return {"gap_closed": None, "gap_closed_ci": None, "gap_closed_note": "no answerable question was graded"}
        if o - z <= 0:
            return {"gap_closed": None, "gap_closed_ci": None,
                    "gap_closed_note": "not defined: the oracle control does not score above none"}
        with np.errstate(divide="ignore", invalid="ignore"):
            lo, hi = interval(np.where(to > tz, (ts - tz) / (to - tz), np.nan))
        return {"gap_closed": (s - z) / (o - z), "gap_closed_ci": None if lo is None else [lo, hi],
                "gap_closed_note": None}


# ---------------------------------------------------------------------------------------------
# Between systems: the noise floor, paired differences, the minimum detectable difference
# ---------------------------------------------------------------------------------------------

def system_label(rec: dict, several_budgets: bool) -> str:
    """One row per system and budget: a budget sweep's budgets are rows of their own; repeats
    are folded into their system's row."""
    return f"{rec['backend']}@{rec[BUDGET_FIELD]}" if several_budgets else rec["backend"]


def repeat_standard_error(system: dict) -> float | None:
    """The run-to-run standard error of a system's accuracy over all its repeats: the spread of
    its R repeats' accuracies over sqrt(R), the standard error of a mean of R draws. None with
    fewer than two graded repeats (nothing to spread)."""
    rep = system["repeat_accuracy"]
    if rep is None or rep["sd"] is None:
        return None
    return rep["sd"] / math.sqrt(sum(a is not None for a in rep["per_repeat"]))


def difference_noise_floor(a: dict, b: dict) -> float | None:
    """How large a difference between two systems' means over their repeats run-to-run
    variation alone makes, at 95%: z_0.975 x the square root of the sum of their squared
    repeat_standard_error, over the systems run more than once (a single run's variation is
    unmeasured, so it adds nothing); None when neither was."""
    errors = [e for e in (repeat_standard_error(a), repeat_standard_error(b)) if e is not None]
    return Z95 * math.sqrt(sum(e * e for e in errors)) if errors else None


class Scoring:
    """Every number of one comparison, from its (run record, verdict or None) pairs: the
    question rows, each system's metrics vector (over all its repeats), and one BudgetStats
    per budget for the intervals. score.py writes them; check.py reads its verdicts off them."""

    def __init__(self, pairs: list[tuple[dict, dict | None]], resamples: int = RESAMPLES, seed: int = SEED,
                 prices: PriceTable | None = None) -> None:
        """prices: the table pricing each system's calls; None leaves the dollar cost out."""
        self.resamples, self.seed = resamples, seed
        self.budgets = sorted({r[BUDGET_FIELD] for r, _ in pairs})
        several = len(self.budgets) > 1
        grouped: dict = defaultdict(lambda: defaultdict(list))  # label -> repeat -> [(rec, row)]
        for r, v in pairs:
            label = system_label(r, several)
            grouped[label][r["repeat"]].append((r, question_row(r, v, label)))
        self.budget_of = {label: reps[min(reps)][0][0][BUDGET_FIELD] for label, reps in grouped.items()}
        self.stats = {b: BudgetStats({label: {rep: [x for _, x in items] for rep, items in reps.items()}
                                      for label, reps in grouped.items() if self.budget_of[label] == b},
                                     resamples, seed) for b in self.budgets}
        self.questions = [x for reps in grouped.values() for rep in sorted(reps) for _, x in reps[rep]]
        self.systems = {}
        for label, reps in grouped.items():
            items = [item for rep in sorted(reps) for item in reps[rep]]
            self.systems[label] = {"label": label, **score_system([r for r, _ in items], [x for _, x in items]),
                                   **self.repeat_metrics(label, {rep: [x for _, x in xs] for rep, xs in reps.items()})}
        if prices is not None:
            for label, s in self.systems.items():
                items = [(r, v) for r, v in pairs if system_label(r, several) == label]
                s.update(dollar_cost_metrics(items, s["correct"], prices))
        for label, s in self.systems.items():
            s.update(self.gap_closed(label))
            s.update(self.accuracy_interval(label))

    def labels(self, budget: int) -> list[str]:
        """The system rows of one budget."""
        return [label for label in self.systems if self.budget_of[label] == budget]

    def row_of(self, backend: str, budget: int) -> str | None:
        """The label of a system's row at a budget (a control, the baseline), or None when it was
        not run."""
        return next((label for label in self.labels(budget) if self.systems[label]["backend"] == backend), None)

    def paired(self, a: str, b: str, sel: str = "answerable") -> dict | None:
        """System a minus system b (labels of one budget) over all their repeats."""
        return self.stats[self.budget_of[a]].paired((a, ALL), (b, ALL), sel)

    def repeat_metrics(self, label: str, rows_by_repeat: dict) -> dict:
        """Accuracy per repeat, its mean and spread, and the noise floor: repeat 1 against repeat
        0 of the same system, paired over questions, with its interval."""
        accs = {r: answer_metrics(rows)["accuracy"] for r, rows in sorted(rows_by_repeat.items())}
        how = {"noise_floor_method": NOISE_FLOOR_METHOD, "noise_floor_formula": NOISE_FLOOR_FORMULA}
        if len(accs) < 2:
            return {"repeats": len(accs), "repeat_accuracy": None, "noise_floor": None, **how,
                    "noise_floor_note": "a single repeat: run with --repeat 2 or more to measure the noise floor"}
        values = [a for a in accs.values() if a is not None]
        floor = self.stats[self.budget_of[label]].paired((label, 1), (label, 0), "answerable")
        return {"repeats": len(accs), "repeat_accuracy": {
                    "per_repeat": list(accs.values()), "mean": mean(values),
                    "sd": statistics.stdev(values) if len(values) > 1 else None,
                    "min": min(values) if values else None, "max": max(values) if values else None},
                "noise_floor": floor, **how, "noise_floor_note": None if floor else "no graded answers to compare"}

    def gap_closed(self, label: str) -> dict:
        """Gap closed between the none and oracle controls of the label's budget."""
        budget = self.budget_of[label]
        none, oracle = self.row_of("none", budget), self.row_of("oracle", budget)
        if none is None or oracle is None:
            return {"gap_closed": None, "gap_closed_ci": None,
                    "gap_closed_note": "needs both the none and oracle controls in the comparison"}
        return self.stats[budget].gap_closed(label, none, oracle)

    def accuracy_interval(self, label: str) -> dict:
        """The 95% cluster-bootstrap interval of a system's accuracy on answerable questions, over
        all its repeats: from the resamples every other interval of its budget is drawn from;
        none from a single cluster (resampling one cluster always draws it)."""
        stats = self.stats[self.budget_of[label]]
        point, resampled = stats.accuracy((label, ALL), "answerable")
        if point is None or len(stats.counts["answerable"]) < 2:
            return {"accuracy_ci": None}
        lo, hi = interval(resampled)
        return {"accuracy_ci": None if lo is None else [lo, hi]}

    def differences(self, baseline: str) -> list[dict]:
        """Each system (not a control) against the baseline, budget by budget: the headline over
        answerable questions, per question type, and abstention (unanswerable questions) on its
        own; whether the interval separates them, whether the difference is no larger than the
        pair's noise floor (difference_noise_floor: a note beside the interval, which alone
        decides "separated"), and the minimum detectable difference of the pair."""
        out = []
        for budget in self.budgets:
            base = self.row_of(baseline, budget)
            stats = self.stats[budget]
            types = sorted({sel[5:] for sel in stats.counts if sel.startswith("type:")})
            for s in row_order([self.systems[x] for x in self.labels(budget)], baseline):
                if s["backend"] in CONTROL_NAMES or s["backend"] == baseline or s["graded"] == 0:
                    continue
                d = self.paired(s["label"], base)
                floor = difference_noise_floor(self.systems[base], s)
                out.append({"system": s["label"], "baseline": base, "budget": budget,
                            **(d or {"difference": None, "ci_low": None, "ci_high": None, "standard_error": None,
                                     "questions": 0, "clusters": 0}),
                            "cases": s["cases"],
                            "separated": None if d is None else separated(d),
                            "minimum_detectable_difference": minimum_detectable(d),
                            "abstention": self.paired(s["label"], base, "unanswerable"),
                            "by_type": {t: self.paired(s["label"], base, f"type:{t}") for t in types},
                            "noise_floor": floor,
                            "within_noise_floor": None if floor is None or d is None else
                            abs(d["difference"]) <= floor})
        return out

    def minimum_detectable_difference(self, differences: list[dict], baseline: str) -> dict:
        """Per budget, the minimum detectable difference of the comparison: the largest over the
        systems compared with the baseline (each difference carries its own); with no system
        but the controls beside the baseline, the largest over the controls, said so."""
        out = {}
        for budget in self.budgets:
            paired = [d for d in differences if d["budget"] == budget]
            formula, note = MDD_FORMULA, None
            if not paired:
                base = self.row_of(baseline, budget)
                paired = [d for d in (self.paired(label, base) for label in self.labels(budget)
                                      if label != base and self.systems[label]["graded"]) if d is not None]
                formula = MDD_FORMULA.replace("over the systems compared", "over the controls (no other system is "
                                                                           "compared)")
            measured = [v for v in map(minimum_detectable, paired) if v is not None]
            if not measured:
                note = "needs at least two clusters of graded answerable questions" if paired else \
                    "no system is compared with the baseline"
                if any(d["clusters"] > 1 and d["ci_low"] is None for d in paired):
                    note = WITHHELD
                if any(d["standard_error"] == 0 for d in paired):
                    note = NO_SPREAD
                if all(self.systems[x]["graded"] == 0 for x in self.labels(budget)):
                    note = "no answer was graded (a retrieval-only run)"
            out[str(budget)] = {"value": max(measured) if measured else None, "method": "paired_bootstrap_se",
                                "formula": formula, "note": note}
        return out

    def scores(self, baseline: str) -> dict:
        """The numbers of scores.json: the system rows in reading order, the differences to the
        baseline, the minimum detectable difference and the per-question rows."""
        differences = self.differences(baseline)
        return {"budgets": self.budgets, "resamples": self.resamples, "seed": self.seed,
                "systems": row_order(list(self.systems.values()), baseline), "differences": differences,
                "minimum_detectable_difference": self.minimum_detectable_difference(differences, baseline),
                "questions": self.questions}


# ---------------------------------------------------------------------------------------------
# Between systems: paired differences in retrieval, which need no answer
# ---------------------------------------------------------------------------------------------

# The retrieval metrics compared with the baseline, question by question: some evidence turn
# among the k retrieved (recall_any@k, the figure that tells keyword matching from semantic search
# on the bundled data), every evidence turn in the context (what the answer model could read),
# every evidence turn among the first k ranked turns, and NDCG@k.
RETRIEVAL_DIFFERENCE_METRICS = ("recall_any_at_k", "recall_all_in_context", "recall_all_at_k", "ndcg_at_k")


def retrieval_values(rec: dict) -> dict | None:
    """A record's value of each compared retrieval metric, or None when it cannot be measured
    (no gold evidence, or no provenance: the same questions recall_metrics leaves out)."""
    if not retrieval_measurable(rec):
        return None
    all_at_k, ndcg, _ = rank_scores(rec, rec["top_k"])
    any_at_k, all_in_context = evidence_found(rec)
    return {"recall_any_at_k": float(any_at_k), "recall_all_in_context": float(all_in_context),
            "recall_all_at_k": all_at_k, "ndcg_at_k": ndcg}


def retrieval_differences(records: list[dict], baseline: str, resamples: int = RESAMPLES,
                          seed: int = SEED) -> list[dict]:
    """Each system (not a control) minus the baseline (its display name) on each retrieval metric,
    per budget, question by question on the questions both measure (a system's value of a
    question is its mean over repeats), with the 95% cluster-bootstrap interval, its standard
    error, whether it separates the two and the minimum detectable difference. Needs no answer,
    so the model-free pass compares too."""
    several = len({r[BUDGET_FIELD] for r in records}) > 1
    values: dict = defaultdict(lambda: defaultdict(list))  # label -> qid -> [values of each repeat]
    backend_of, budget_of, cluster_of = {}, {}, {}
    for r in records:
        label = system_label(r, several)
        backend_of[label], budget_of[label], cluster_of[r["qid"]] = r["backend"], r[BUDGET_FIELD], r["cluster"]
        v = retrieval_values(r)
        if v is not None:
            values[label][r["qid"]].append(v)
    means = {label: {q: {m: mean([v[m] for v in vs]) for m in RETRIEVAL_DIFFERENCE_METRICS} for q, vs in by_q.items()}
             for label, by_q in values.items()}
    out = []
    for budget in sorted(set(budget_of.values())):
        labels = sorted(label for label in budget_of if budget_of[label] == budget)
        base = next((label for label in labels if backend_of[label] == baseline), None)
        compared = [label for label in labels if backend_of[label] not in CONTROL_NAMES and label != base]
        if base is None or not compared:
            continue
        common = {label: sorted(set(means.get(label, {})) & set(means.get(base, {}))) for label in compared}
        boot = ClusterBootstrap(sorted({cluster_of[q] for qs in common.values() for q in qs}), resamples, seed)
        columns, index = [], {}
        for label in compared:
            n: Counter = Counter(cluster_of[q] for q in common[label])
            index[(label, None)] = len(columns)
            columns.append(boot.column(n))
            for m in RETRIEVAL_DIFFERENCE_METRICS:
                d: Counter = Counter()
                for q in common[label]:
                    d[cluster_of[q]] += means[label][q][m] - means[base][q][m]
                index[(label, m)] = len(columns)
                columns.append(boot.column(d))
        # Sums of fractions (NDCG, means over repeats): float64, where BudgetStats adds whole numbers.
        totals = (np.vstack([block.astype(np.float64) @ np.column_stack(columns) for block in boot.counts()])
                  if boot.clusters else None)
        for label in compared:
            qs = common[label]
            clusters = len({cluster_of[q] for q in qs})
            for m in RETRIEVAL_DIFFERENCE_METRICS:
                entry = {"system": label, "baseline": base, "budget": budget, "metric": m, "difference": None,
                         "ci_low": None, "ci_high": None, "standard_error": None, "questions": len(qs),
                         "clusters": clusters, "separated": None, "minimum_detectable_difference": None,
                         "note": None}
                if not qs:
                    entry["note"] = ("no question with gold evidence has provenance in both this system's and the "
                                     "baseline's records")
                    out.append(entry)
                    continue
                with np.errstate(divide="ignore", invalid="ignore"):
                    n_t = totals[:, index[(label, None)]]
                    resampled = np.where(n_t > 0, totals[:, index[(label, m)]] / n_t, np.nan)
                entry.update(paired_summary(sum(means[label][q][m] - means[base][q][m] for q in qs) / len(qs),
                                            resampled, clusters))
                entry["separated"], entry["minimum_detectable_difference"] = separated(entry), minimum_detectable(entry)
                if clusters < 2:
                    entry["note"] = "a single cluster: no interval"
                elif entry["ci_low"] is None:
                    entry["note"] = WITHHELD
                out.append(entry)
    return out


# ---------------------------------------------------------------------------------------------
# The grader's calibration: error rates with Wilson intervals, agreement
# ---------------------------------------------------------------------------------------------

def _rates(pairs: list[tuple[str, str]]) -> dict:
    wrong = [verdict for label, verdict in pairs if label == "incorrect"]
    right = [verdict for label, verdict in pairs if label == "correct"]
    false_accepts = sum(v == "correct" for v in wrong)
    false_rejects = sum(v != "correct" for v in right)
    return {"n": len(pairs), "known_wrong": len(wrong), "known_right": len(right),
            "false_accepts": false_accepts, "false_rejects": false_rejects,
            "false_accept_rate": false_accepts / len(wrong) if wrong else None,
            "false_reject_rate": false_rejects / len(right) if right else None,
            "false_accept_ci95": wilson_interval(false_accepts, len(wrong)),
            "false_reject_ci95": wilson_interval(false_rejects, len(right))}


def calibration_rates(items: list[dict], verdicts: list[str]) -> dict:
    """A grader's false-accept and false-reject rates on labelled items, overall and per kind,
    and Cohen's kappa between labels and verdicts: the one count of a grader's errors. An
    `unparseable` verdict counts as incorrect, as in the scores (judge.py --calibrate passes a
    failed or unparseable judge call as the verdict opposite its label, the worst case, so
    none reaches here from it). A rate with nothing to count is None."""
    if len(verdicts) != len(items):
        raise ValueError(f"{len(verdicts)} verdicts for {len(items)} items")
    for v in verdicts:
        if v not in ("correct", "incorrect", "unparseable"):
            raise ValueError(f"a verdict must be correct, incorrect or unparseable, got {v!r}")
    pairs = [(item["label"], "correct" if v == "correct" else "incorrect") for item, v in zip(items, verdicts)]
    kinds = sorted({item["kind"] for item in items})
    return {"overall": _rates(pairs),
            "by_kind": {k: _rates([p for item, p in zip(items, pairs) if item["kind"] == k]) for k in kinds},
            "kappa": cohen_kappa(pairs)}
