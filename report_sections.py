"""The report's sections on the results: the first screen (the answer at a glance and its
lines), every metric in one table, the fairness contract, the paired comparisons (accuracy, per
question type, retrieval), the controls, memory metrics per question type, the budget curve,
where the wrong answers came from, cost and latency, and repeats with the noise floor. Each
section is a list of document blocks (report_document.py) built from scores.json alone; every
number is written by wording.py.
"""
from __future__ import annotations

import urllib.parse

from blind import summary as artifacts_summary
from blind import table as artifacts_table
from contract import CONTROL_NAMES, QUESTION_TYPES
from metrics import FAILURE_CAUSES
from wording import (calibration_text, control_lines, coverage_reasons, disclosures, estimate_text,
                     interval_text, mdd_text, noise_floor_legend, rate, reading, separated_text,
                     type_difference_text, whole)
from report_document import Bullets, Code, Footnotes, Heading, Image, Lines, Link, Para, Strong, Table, segs, ticked

# Deviations listed one line each on the first screen; the rest are a link away.
DEVIATION_LINES = 4


# ---------------------------------------------------------------------------------------------
# Who is who: rows in score.py's order (controls, the baseline, the systems)
# ---------------------------------------------------------------------------------------------

def is_control(s: dict) -> bool:
    """A control validates the harness; it is not a memory system."""
    return s["backend"] in CONTROL_NAMES


def is_baseline(s: dict, scores: dict) -> bool:
    """The system every other is compared with (one row per budget)."""
    return s["backend"] == scores["baseline"]


def display(s: dict, scores: dict) -> list:
    """A row's name, with its role, and the config preset that ran it when that is not the name
    (dense_wordllama runs as `dense`: without it, two embedders would read alike)."""
    preset = f" (preset {s['backend_id']})" if s["backend_id"] != s["backend"] else ""
    if is_baseline(s, scores):
        return segs(Strong(s["label"]), f" (baseline){preset}")
    if is_control(s):
        return segs(s["label"], " (control)")
    return segs(s["label"] + preset)


def retrieval_only(scores: dict) -> bool:
    """No answer model was asked (run.py --retrieval-only; the contract holds it equal across files)."""
    return scores["contract"]["retrieval_only"]


def served_models(scores: dict) -> list[str]:
    """Every model the endpoint said answered, over all budgets and systems."""
    return sorted({m for by in scores["served_models"].values() for counts in by.values() for m in counts})


# ---------------------------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------------------------

def publication_note(scores: dict) -> list | None:
    """The first screen's word on a development run (score.py's publication verdict): it is not
    for publication, and each reason. A publishable run's first screen says nothing of it."""
    p = scores["publication"]
    if p["publishable"]:
        return None
    return segs(Strong("Development run, not for publication"), f": {'; '.join(p['reasons'])}.")


def coverage_line(scores: dict, model_free: dict | None = None) -> list | None:
    """How much of the dataset was scored, when it is not all of it (score.py's words are among
    the deviations too; this is the first screen's). With the model-free comparison leading
    (`model_free`), it says the part is the answered runs', beside the questions of the table above."""
    c = scores["coverage"]
    if c["scored_questions"] == c["dataset_questions"]:
        return None
    why = ", ".join(coverage_reasons(c, "--allow-partial left out the questions some system lacks"))
    if model_free is not None:
        return segs(Strong(f"Answered: {c['scored_questions']} of the dataset's {c['dataset_questions']} questions"),
                    " (", Link("details", "#contract"), f"): {why}. Their accuracy, below, is not comparable to a run "
                    f"on the whole dataset; the table above is of {model_free['coverage']['scored_questions']:,} "
                    f"questions.")
    return segs(Strong(f"Partial comparison: {c['scored_questions']} of the dataset's {c['dataset_questions']} "
                       f"questions"), " (", Link("details", "#contract"), f"): {why}. These numbers are not comparable "
                                                                           f"to a run on the whole dataset.")


def deviations(scores: dict, checks: dict | None) -> list:
    """Every deviation from the contract that is present, in score.py's words: its warnings (a
    served-model change, a --limit or partial run), each system's disclosures, then the checks
    that failed or warned."""
    found = [ticked(x) for x in scores["warnings"] + disclosures(scores["systems"])]
    if checks is not None:
        found += [segs(f"Check {c['status']}: ", Code(c["id"]), f": {c['summary']}") for c in checks["checks"]
                  if c["status"] in ("FAIL", "WARN")]
    return found


def questions_href(page: str = "", **view) -> str:
    """A link to the question list of report.html filtered as `view` says (its state in the URL:
    systems a and b by label, v the relation between them, type, cause, by, sort); of another
    report (`page`, a relative path) when the rows shown are that report's."""
    return page + "#questions?" + urllib.parse.urlencode({k: v for k, v in view.items() if v not in (None, "")})


def difference_cells(s: dict, scores: dict, d: dict | None, page: str = "") -> tuple:
    """A first-screen row's difference to the baseline, linked to the questions where the two
    differ (in `page`, the report whose rows these are), and whether its interval separates
    them; a word where there is no difference."""
    if is_baseline(s, scores) or is_control(s) or d is None:
        return ("baseline" if is_baseline(s, scores) else "control" if is_control(s) else "n/a"), "–"
    diff = segs(Link(interval_text(d), questions_href(page, a=s["label"], b=d["baseline"], v="differ")))
    return diff, separated_text(d) + ("; within the noise floor" if d.get("within_noise_floor") else "")


def glance_table(scores: dict, order: list[dict]) -> Table:
    """The answer, in one table that fits the page: per system its accuracy with its interval,
    its paired difference to the baseline with the interval and whether it separates them, the
    gap closed, the evidence in context and the tokens a question cost. The model-free report:
    retrieval, and the paired difference in it."""
    if retrieval_only(scores):
        return glance_table_model_free(scores, order)
    diffs = {d["system"]: d for d in scores["differences"]}
    rows = []
    for s in order:
        diff, separated = difference_cells(s, scores, diffs.get(s["label"]))
        tokens = ("n/a" if s["mean_prompt_tokens"] is None and s["mean_completion_tokens"] is None else
                  f"{whole(s['mean_prompt_tokens'])} + {whole(s['mean_completion_tokens'])}")
        rows.append([display(s, scores), estimate_text(s["accuracy"], s["accuracy_ci"]), diff, separated,
                     estimate_text(s["gap_closed"], s["gap_closed_ci"]), rate(s["recall_all_in_context"]), tokens])
    return Table(["system", "accuracy [95% CI]", "Δ vs baseline [95% CI]", "interval", "gap closed [95% CI]",
                  "recall in ctx", "tokens / question"],
                 rows, [row_class(s, scores) for s in order], [False, True, True, False, True, True, True], "compact")


def glance_table_model_free(scores: dict, order: list[dict], page: str = "") -> Table:
    """The model-free report's answer: all evidence in context, its paired difference to the
    baseline, the rank metrics at k, context size and search latency (its question links into
    `page` when these rows are another report's)."""
    diffs = {d["system"]: d for d in scores["retrieval_differences"] if d["metric"] == "recall_all_in_context"}
    rows = []
    for s in order:
        diff, separated = difference_cells(s, scores, diffs.get(s["label"]), page)
        rows.append([display(s, scores), rate(s["recall_all_in_context"]), diff, separated,
                     rate(s["answer_recall_in_context"]), rate(s["recall_all_at_k"]), rate(s["ndcg_at_k"]),
                     rate(s["evidence_recall_at_k"]), whole(s["mean_context_tokens"]), rate(s["search_ms_p95"])])
    k = order[0]["rank_k"]
    return Table(["system", "recall in ctx", "Δ recall in ctx vs baseline [95% CI]", "interval", "answer recall in ctx",
                  f"recall_all@{k}", f"NDCG@{k}", f"R@{k}", "ctx tokens", "search p95 ms"],
                 rows, [row_class(s, scores) for s in order],
                 [False, True, True, False, True, True, True, True, True, True], "compact")


def checks_line(scores: dict, checks: dict | None, model_free: dict | None = None) -> list:
    """The instrument's checks in one line: check.py's status over every check (the reader's
    verdict is not among them), its counts and what failed or warned; with the model-free
    comparison leading, its checks too (score.py copied their summary into its scores.json).
    Without checks.json of these runs, the controls' numbers and no verdict."""
    more = Link("details", "#checks")
    if checks is not None:
        said = ", ".join(f"{n} {st}" for st, n in checks["counts"].items() if n)
        bad = [c["id"] for c in checks["checks"] if c["status"] in ("FAIL", "WARN")]
        text = f": check.py on these runs, {said}" + (f"; {', '.join(bad)}" if bad else "")
        free = model_free["checks"] if model_free is not None else None
        if free is not None:
            text += (f"; on the model-free runs, {free['status']} ("
                     + ", ".join(f"{n} {st}" for st, n in free["counts"].items() if n) + ")")
        return segs(Strong(f"Instrument checks: {checks['status']}"), " (", more, f"){text}.")
    more = Link("details", "#controls")
    key, what = (("recall_all_in_context", "has every evidence turn in context on")
                 if retrieval_only(scores) else ("accuracy", "answers"))
    shown = [f"{s['label']} {what} {rate(s[key])}" for s in scores["systems"] if s["backend"] in ("none", "oracle")]
    if not shown:
        return segs(Strong("Controls"), " (", more, "): none in this comparison; nothing checks the instrument's "
                                                    "floor and ceiling.")
    return segs(Strong("Controls"), " (", more, f"): {'; '.join(shown)}; no verdict without check.py's --checks.")


def reader_of(checks: dict | None) -> dict | None:
    """check.py's verdict on the reader (checks.json's `reader`), when checks.json is given."""
    return checks["reader"] if checks is not None else None


def leads_with_retrieval(checks: dict | None, model_free: dict | None) -> bool:
    """Whether the first screen leads with the retrieval comparison: the reader's verdict says
    its accuracy cannot compare memory systems, and the model-free comparison of the same
    dataset and contract was given to lead with. Otherwise accuracy leads."""
    reader = reader_of(checks)
    return model_free is not None and reader is not None and reader["verdict"] == "inadequate"


def reader_line(scores: dict, manifest: dict, reader: dict | None = None) -> list | None:
    """What this run's reader lets accuracy show, written from this run's own figures: check.py's
    verdict on it (`reader`, with its oracle figure and limit) when given, else how often it
    answers given exactly the evidence (oracle) and given none; then which systems accuracy and
    recall in context each separate from the baseline. It claims nothing the figures do not: the
    gap closed is accuracy rescaled by the controls' span, so it separates what accuracy does."""
    if retrieval_only(scores):
        return None
    info = manifest["served_model_info"]
    title = [Strong("Embedded reader" if info is not None else "Reader"), " ",
             Code(info["served_model"] if info is not None else scores["contract"]["answer_model"])]
    if reader is not None and reader["verdict"] is not None:
        # An inadequate reader's accuracy separates nothing worth a sentence; the table that leads
        # then says what retrieval separates.
        return segs(*title, f": {reader['text']}." + (separation_text(scores) if reader["verdict"] == "adequate"
                                                          else ""))
    control = {name: [s for s in scores["systems"] if s["backend"] == name and s["accuracy"] is not None]
               for name in ("none", "oracle")}
    if not control["oracle"]:
        said = ": no oracle control here says how often it answers given exactly the evidence, so nothing bounds " \
               "what its accuracy can show."
    else:
        said = f": {', '.join(rate(s['accuracy']) for s in control['oracle'])} right given exactly the evidence (the " \
               "oracle control)"
        if len(control["oracle"]) == len(control["none"]) == 1:
            span = control["oracle"][0]["accuracy"] - control["none"][0]["accuracy"]
            said += f" and {rate(control['none'][0]['accuracy'])} with none, a span of {rate(span)} for memory " \
                    "systems to differ in."
            detectable = [m["value"] for m in scores["minimum_detectable_difference"].values() if m["value"] is not None]
            if len(detectable) == 1 and span < detectable[0]:
                said += " The span is smaller than the smallest difference this comparison detects with 80% power " \
                        f"(MDD {rate(detectable[0])}): accuracy cannot be expected to separate memory systems here."
        else:
            said += "."
    return segs(*title, said + separation_text(scores))


def separation_text(scores: dict) -> str:
    """Which systems accuracy and recall in context separate from the baseline (their paired
    95% intervals exclude 0), in one or two sentences; empty with no system beside the baseline."""
    accuracy = [d for d in scores["differences"] if d["difference"] is not None]
    recall = [d for d in scores["retrieval_differences"] if d["metric"] == "recall_all_in_context"
              and d["difference"] is not None]
    if not accuracy:
        return ""
    baseline = accuracy[0]["baseline"]
    in_accuracy = [d["system"] for d in accuracy if d["separated"]]
    in_recall = [d["system"] for d in recall if d["separated"]]

    def names(found: list[str]) -> str:
        return ", ".join(found) if found else "no system"
    text = f" Accuracy separates {names(in_accuracy)} from {baseline}"
    if recall:
        text += f"; recall in context separates {names(in_recall)}"
    hidden = [x for x in in_recall if x not in in_accuracy]
    if hidden:
        text += f", a difference in retrieval that accuracy does not show for {', '.join(hidden)}"
    return text + "."


def recall_line(scores: dict) -> list | None:
    """Each system's paired difference in recall in context to the baseline, in one line: with a
    small reader, where memory systems part."""
    found = [d for d in scores["retrieval_differences"] if d["metric"] == "recall_all_in_context"]
    if not found or retrieval_only(scores):
        return None  # the model-free table holds them
    said = "; ".join(f"{d['system']} {interval_text(d)} {separated_text(d)}" for d in found)
    return segs(Strong("Recall in context vs baseline"), " (", Link("details", "#paired-retrieval"), f"): {said}.")


def grader_line(scores: dict, calibration: dict | None) -> list | None:
    """The grader's error rates in one line, its held-out set beside the set its rules were tuned
    on, as score.py prints them (wording.calibration_text); None without a calibration or answers.
    score.py refuses a calibration of another grader than the one of the verdicts it scored."""
    if calibration is None or retrieval_only(scores):
        return None
    more = Link("details", "#judge")
    return segs(Strong("Grader"), " (", more, f"): {calibration['grading']}, 95% Wilson intervals: "
                                              f"{calibration_text(calibration)}.")


def artifacts_line(artifacts: dict | None, page: str = "") -> list | None:
    """The artifact audit's verdict in one line (artifacts.py), linked to its section (in
    `page`, the model-free report, when that holds it)."""
    if artifacts is None:
        return None
    return segs(Strong(f"Artifact audit: {artifacts['verdict']}"), " (", Link("details", page + "#artifacts"),
                f"): {artifacts_summary(artifacts)}")


def glance_section(scores: dict, order: list[dict], manifest: dict, checks: dict | None, grader: list | None,
                   model_free: dict | None = None, artifacts: dict | None = None,
                   model_free_page: str = "", stability: list | None = None) -> list:
    """The first screen: the answer table, then one line each for what the reader lets accuracy
    show, the grader's calibration (`grader`), the ranking's stability (`stability`), the artifact
    audit, the instrument's checks and every deviation (at most DEVIATION_LINES, the rest a link away).
    When the reader's verdict says accuracy cannot compare memory systems and the model-free
    comparison is given (`model_free`, its report at `model_free_page`), its retrieval table
    leads and the accuracy table of these runs follows the lines."""
    found = deviations(scores, checks)
    retrieval_leads = leads_with_retrieval(checks, model_free)
    # The audit's section is in the model-free report: an answered report links to it there.
    audit = (artifacts_line(artifacts) if retrieval_only(scores) else
             artifacts_line(artifacts, model_free_page) if model_free is not None else None)
    lines = [x for x in (publication_note(scores), coverage_line(scores, model_free if retrieval_leads else None),
                         reader_line(scores, manifest, reader_of(checks)),
                         recall_line(scores) if not retrieval_leads else None, grader, stability, audit) if x is not None]
    lines.append(checks_line(scores, checks, model_free if retrieval_leads else None))
    whole_lines = len(lines)
    lines += [segs(Strong("Deviation"), " (", Link("details", "#contract"), "): ", *d) for d in found[:DEVIATION_LINES]]
    if len(found) > DEVIATION_LINES:
        lines.append(segs(f"… and {len(found) - DEVIATION_LINES} more deviations: ",
                          Link("all of them", "#contract")))
    if not found:
        lines.append(segs("No deviation from the contract was recorded. ", Link("The contract", "#contract")))
    shown = Lines(lines, [whole_lines <= i < whole_lines + DEVIATION_LINES for i in range(len(lines))])
    if not retrieval_leads:
        return [Heading(2, "Results", "results"), glance_table(scores, order), Para(segs(glance_legend(scores))), shown]
    free = model_free["coverage"]
    return [Heading(2, "Results", "results"),
            Para(segs(Strong("Retrieval leads:"), " the reader cannot compare memory systems by accuracy (its verdict "
                      f"below), so the first table is the model-free comparison, {len(model_free['systems'])} system "
                      f"rows on {free['scored_questions']:,} questions (", Link("its report", model_free_page), "; ",
                      Link("recall per kind", model_free_page + "#kinds"), "); accuracy on the questions these runs "
                      "answered follows.")),
            glance_table_model_free(model_free, model_free["systems"], model_free_page),
            Para(segs(glance_legend(model_free))), shown,
            Heading(3, "Accuracy of the answered runs", "accuracy-glance"),
            glance_table(scores, order), Para(segs(glance_legend(scores)))]


def glance_legend(scores: dict) -> str:
    """What the first table's columns are, in one sentence."""
    if retrieval_only(scores):
        return ("recall in ctx: every evidence turn in the context; Δ: the system minus the baseline, question by "
                "question, with its 95% cluster-bootstrap interval; answer recall in ctx: a turn that states the "
                "answer, not only one that leads to it, in the context (per kind under Recall per kind); "
                "recall_all@k and NDCG@k as LongMemEval defines them, R@k as LoCoMo does (the share of a question's "
                "evidence), at the k the runs searched with.")
    return ("Accuracy on answerable questions; Δ: the system minus the baseline, question by question, with its 95% "
            "cluster-bootstrap interval (separated: it excludes 0); gap closed: (system − none) / (oracle − none); "
            "recall in ctx: every evidence turn in the context; tokens per question: prompt + completion, as the "
            "endpoint counted them.")


# What the harness's own token count is, where a budget or a context size stands in its units:
# the answer model's tokenizer counts the same text differently (its counts are the prompt tokens
# the endpoint reports, under Cost and latency).
TOKENIZER_NOTE = {"approx": (" (", Code("approx"), ": the harness's count, a token per 4 characters, the same for "
                             "every system; the answer model's own tokenizer counts the same text differently, "
                             "usually more: its counts are the prompt tokens under Cost and latency)")}


def contract_section(scores: dict, manifest: dict, checks: dict | None) -> list:
    """What was held constant, in plain words, and every deviation that is present."""
    first = scores["contract"]
    served = served_models(scores)
    budgets = scores["budgets"]
    counts = manifest["dataset_counts"]
    held = [
        segs("Dataset ", Code(manifest["dataset"]), f" (sha256 {manifest['dataset_sha256'][:16]}…): "
             f"{counts['cases']} cases, {counts['questions']} questions; every system gets the same turns, one add "
             f"per session in order, in a namespace reset per case."),
        segs("Reads: only search, with the raw question as the query, top_k ", Code(str(first["top_k"])),
             " for every system."),
        segs("Context: one builder, lines cut by rank at ",
             f"{', '.join(f'{b:,}' for b in budgets)} tokens" if len(budgets) > 1 else f"{budgets[0]:,} tokens",
             " counted by ", Code(first["tokenizer"]), ", never over", *TOKENIZER_NOTE.get(first["tokenizer"], ()),
             "."),
        segs("Answer model ", Code(first["answer_model"]),
             *((" (served as ", Code(served[0]), ")") if len(served) == 1 else ()),
             f", temperature 0, seed {first['seed']}, at most {first['answer_max_tokens']} tokens; one prompt, "
             f"sha256 ", Code(first["prompt_sha256"][:16]), "."),
        segs("Grading, blinded and shuffled across systems: ", scores["grading"]),
    ]
    if retrieval_only(scores):
        held[3] = segs("No answer model was asked: a retrieval-only run (run.py --retrieval-only).")
        held[4] = segs("Grading: nothing graded; accuracy is not measured.")
    elif len(served) > 1:
        # The model requested was the same, the model that answered was not: not held constant.
        held[3] = segs("Prompt and decoding: one prompt, sha256 ", Code(first["prompt_sha256"][:16]),
                       f", temperature 0, seed {first['seed']}, at most {first['answer_max_tokens']} tokens. The answer "
                       f"model ", Code(first["answer_model"]), " was requested of every system, but ",
                       Strong(f"{len(served)} served models answered"), " (see the deviations).")
    blocks: list = [Heading(2, "The fairness contract", "contract"),
                    Para(segs("Held constant for every system:")), Bullets(held)]
    found = deviations(scores, checks)
    if found:
        blocks += [Para(segs(Strong("Deviations from the contract"), " (read every number with these in mind):")),
                   Bullets(found)]
    else:
        blocks.append(Para(segs("No deviation from the contract was recorded.")))
    return blocks


# The main table's metric columns: header, scores.json key, the name its footnotes use, format.
# The model-free report keeps the ones that need no answer.
METRIC_COLUMNS = (("accuracy", "accuracy", "accuracy", rate), ("abstention", "abstention_accuracy", "abstention", rate),
                  ("gap closed", "gap_closed", "gap closed", rate), ("EM", "exact_match", "EM/F1", rate),
                  ("F1", "token_f1", "EM/F1", rate), ("recall@k", "recall_any_at_k", "recall", rate),
                  ("recall in ctx", "recall_all_in_context", "recall", rate),
                  ("recall_all@k", "recall_all_at_k", "recall", rate), ("NDCG@k", "ndcg_at_k", "recall", rate),
                  ("R@k", "evidence_recall_at_k", "recall", rate),
                  ("kw recall@k", "keyword_recall_at_k", "keyword recall", rate),
                  ("kw recall in ctx", "keyword_recall_in_context", "keyword recall", rate),
                  ("staleness", "staleness", "staleness", rate), ("contradiction", "contradiction", "contradiction", rate),
                  ("write precision", "write_precision", "write precision", rate),
                  ("ctx tokens", "mean_context_tokens", "context tokens", whole),
                  ("search p95 ms", "search_ms_p95", "search latency", rate))
MODEL_FREE_KEYS = ("recall_any_at_k", "recall_all_in_context", "recall_all_at_k", "ndcg_at_k", "evidence_recall_at_k",
                   "keyword_recall_at_k", "keyword_recall_in_context", "staleness", "mean_context_tokens",
                   "search_ms_p95")
# score.py's note beside a metric: why it is null, or that it was measured on part of the questions.
NOTE_OF = {"accuracy": "accuracy_note", "gap_closed": "gap_closed_note", "recall_any_at_k": "recall_note",
           "recall_all_in_context": "recall_note", "recall_all_at_k": "recall_note", "ndcg_at_k": "recall_note",
           "evidence_recall_at_k": "recall_note", "keyword_recall_at_k": "keyword_recall_note",
           "keyword_recall_in_context": "keyword_recall_note", "staleness": "staleness_note",
           "contradiction": "contradiction_note", "write_precision": "write_precision_note",
           "noise_floor": "noise_floor_note"}


def qualifier(s: dict, key: str) -> str | None:
    """The reason to give beside a metric: score.py's note for it, or, where score.py writes none,
    why the metric is null (from the counts beside it)."""
    note = s[NOTE_OF[key]] if key in NOTE_OF else None
    if note or s[key] is not None:
        return note
    graded = s["accuracy_note"] or "no answerable question was graded"
    return {"accuracy": "no answerable question was graded",
            "abstention_accuracy": s["accuracy_note"] or "no unanswerable (abstention) question was graded",
            "exact_match": graded, "token_f1": graded,
            "mean_context_tokens": s["context_tokens_note"], "search_ms_p95": s["search_ms_note"]}.get(key)


def main_table(scores: dict, order: list[dict], notes: Footnotes) -> Table:
    """The main table: one row per system (controls first, the baseline marked); each metric
    with its footnote, the paired difference to the baseline and the noise floor."""
    diffs = {d["system"]: d for d in scores["differences"]}
    model_free = retrieval_only(scores)
    columns = [c for c in METRIC_COLUMNS if not model_free or c[1] in MODEL_FREE_KEYS]
    header = ["system", "n"] + (["accuracy"] if model_free else []) + [c[0] for c in columns] + ["errors"]
    if not model_free:
        header += ["Δ accuracy vs baseline [95% CI]", "noise floor"]
    rows, classes = [], []
    for s in order:
        row = [display(s, scores), str(s["n"])] + (["not measured"] if model_free else [])
        row += [notes.cell(fmt(s[key]), s["label"], name, qualifier(s, key)) for _, key, name, fmt in columns]
        row.append(str(s["errors"]))
        if not model_free:
            row += [difference_cell(s, scores, diffs, notes),
                    notes.cell(interval_text(s["noise_floor"]), s["label"], "noise floor", qualifier(s, "noise_floor"))]
        rows.append(row)
        classes.append("baseline" if is_baseline(s, scores) else "control" if is_control(s) else "")
    return Table(header, rows, classes, [False] + [True] * (len(header) - 1), "full")


def difference_cell(s: dict, scores: dict, diffs: dict, notes: Footnotes) -> str:
    """A system's paired difference to the baseline; controls are not compared."""
    if is_baseline(s, scores):
        return "baseline"
    if is_control(s):
        return "control: not compared"
    d = diffs.get(s["label"])
    if d is None or d["difference"] is None:
        return notes.cell("n/a", s["label"], "paired difference", "no graded answerable question shared with the "
                                                                  "baseline")
    return f"{interval_text(d)} ({reading(d)})"


def results_section(scores: dict, order: list[dict], plots: dict) -> list:
    """The main table, what its columns mean, the noise floor and the footnotes."""
    notes = Footnotes()
    blocks: list = [Heading(2, "All metrics", "metrics")]
    if retrieval_only(scores):
        blocks.append(Para(segs(Strong("Accuracy: not measured."), " This is a retrieval-only run (run.py "
                                "--retrieval-only): no answer model was asked and nothing was graded. The columns "
                                "below need no model: whether the evidence was retrieved and reached the context, "
                                "keyword recall, staleness, context size and search latency.")))
    blocks.append(main_table(scores, order, notes))
    if "accuracy" in plots:
        blocks.append(Image(plots["accuracy"], "Accuracy per system" if not retrieval_only(scores)
                            else "Evidence in context per system"))
    k = order[0]["rank_k"]
    legend = ("Rows: controls first (they validate the harness and are not compared), then the systems. "
              "recall@k: any evidence turn retrieved; recall in ctx: every evidence turn inside the token budget; "
              f"recall_all@k, NDCG@k (LongMemEval's definitions) and R@k (LoCoMo's: the share of a question's "
              f"evidence) read the first k = {k} turns the hits name, in rank order; "
              "kw recall: a retrieved hit holds the question's keywords (needs no provenance); staleness: share of "
              "context items superseded by a newer stored item; ctx tokens: mean context size, in the harness's "
              f"{scores['contract']['tokenizer']} units (the Contract says what they are); search p95 ms: "
              "measured from this machine, so for a service over the network it includes the round trips")
    contended = [s for s in order if s["search_contended_share"]]
    if contended:
        legend += (", and searches that ran while answer calls were in flight share the CPU with a local model "
                   "(" + ", ".join(f"{s['label']} {rate(s['search_contended_share'])}" for s in contended) + ")")
    if not retrieval_only(scores):
        legend += ("; accuracy is on answerable questions, abstention on unanswerable ones apart; gap closed: "
                   "(system - none) / (oracle - none); EM and F1 need no judge and are on answerable questions too "
                   "(the unanswerable types have theirs in the per-type tables); contradiction: answers stating a "
                   "replaced value; write precision: share of stored items that ever reached the context of a "
                   "correct answer")
    blocks.append(Para(segs(legend + ".")))
    if not retrieval_only(scores):
        blocks.append(Para(segs(f"Noise floor: {noise_floor_legend(order)}. It needs run.py --repeat 2 or more. "
                                "Minimum detectable difference: a property of this sample of questions, not of the "
                                "runs.")))
        for budget, m in sorted(scores["minimum_detectable_difference"].items(), key=lambda kv: int(kv[0])):
            at = f" at budget {int(budget):,}" if len(scores["budgets"]) > 1 else ""
            blocks.append(Para(segs(f"Minimum detectable difference{at}: {mdd_text(m)}.")))
    blocks += notes.blocks()
    return blocks


def paired_section(scores: dict, order: list[dict]) -> list:
    """The paired comparison: systems only, against the baseline, with intervals."""
    if retrieval_only(scores):
        return []
    diffs = {d["system"]: d for d in scores["differences"]}
    compared = [s for s in order if not is_control(s) and not is_baseline(s, scores) and s["label"] in diffs]
    blocks: list = [Heading(2, "Paired comparison", "paired"),
                    Para(segs("Each system minus the baseline ", Code(scores["baseline"]), ", question by question, "
                              f"on answerable questions (abstention apart), with a 95% cluster-bootstrap interval "
                              f"over cases ({scores['resamples']:,} resamples). An interval that contains 0 means "
                              f"this dataset does not separate the two. The controls are not compared."))]
    if not compared:
        blocks.append(Para(segs("No system besides the baseline and the controls: nothing to compare.")))
        return blocks
    rows = []
    for s in compared:
        d = diffs[s["label"]]
        rows.append([segs(s["label"]), interval_text(d), interval_text(d["abstention"]), f"{d['questions']:,}",
                     f"{d['clusters']:,}", rate(d["noise_floor"]), rate(d["minimum_detectable_difference"]),
                     reading(d)])
    blocks.append(Table(["system", "Δ accuracy [95% CI]", "Δ abstention", "questions", "clusters",
                         "noise floor (±)", "minimum detectable", "reading"], rows, [""] * len(rows),
                        [False, True, True, True, True, True, True, False]))
    return blocks


RETRIEVAL_METRIC_NAMES = {"recall_any_at_k": "recall@k", "recall_all_in_context": "recall in ctx",
                          "recall_all_at_k": "recall_all@k", "ndcg_at_k": "NDCG@k"}


def retrieval_paired_section(scores: dict) -> list:
    """Each system's paired difference to the baseline in retrieval (needs no answer, so the
    model-free report has it too), with its interval and minimum detectable difference."""
    found = scores["retrieval_differences"]
    level = 2 if retrieval_only(scores) else 3
    blocks: list = [Heading(level, "Paired comparison in retrieval", "paired-retrieval"),
                    Para(segs("Each system minus the baseline ", Code(scores["baseline"]), ", question by question, on "
                              "the questions with gold evidence that both trace to stored turns (provenance), with a "
                              f"95% cluster-bootstrap interval ({scores['resamples']:,} resamples). recall@k: some "
                              "evidence turn among the k retrieved; recall in ctx: every evidence turn in the context "
                              "the model read; recall_all@k and NDCG@k at the k the runs searched with. The controls "
                              "are not compared."))]
    if not found:
        return blocks + [Para(segs("No system besides the baseline and the controls: nothing to compare."))]
    notes = Footnotes()
    rows = [[segs(d["system"]), RETRIEVAL_METRIC_NAMES[d["metric"]],
             notes.cell(interval_text(d), d["system"], "retrieval difference", d["note"]), separated_text(d),
             segs(Link(f"{d['questions']:,}", questions_href(a=d["system"], b=d["baseline"], v="differ"))),
             f"{d['clusters']:,}", rate(d["minimum_detectable_difference"])] for d in found]
    blocks.append(Table(["system", "metric", "Δ vs baseline [95% CI]", "interval", "questions", "clusters",
                         "minimum detectable"], rows, [""] * len(rows), [False, False, True, False, True, True, True]))
    return blocks + notes.blocks("Notes:")


def kind_recall_section(scores: dict, order: list[dict]) -> list:
    """Recall per kind (meta.kind when the dataset names one, else the type), with answer-bearing
    recall beside it: whether a turn that states the answer, not only a bridge turn that leads to
    it, was retrieved and reached the context."""
    notes = Footnotes()
    rows, classes = [], []
    for s in order:
        for kind, m in s["by_kind"].items():
            rows.append([display(s, scores), segs(kind), str(m["n"])] +
                        [notes.cell(rate(m[key]), s["label"], name, m[note]) for key, name, note in (
                            ("recall_any_at_k", "recall", "recall_note"),
                            ("recall_all_in_context", "recall", "recall_note"),
                            ("answer_recall_at_k", "answer-bearing recall", "answer_recall_note"),
                            ("answer_recall_in_context", "answer-bearing recall", "answer_recall_note"))])
            classes.append(row_class(s, scores))
    header = ["system", "kind", "n", "recall@k", "recall in ctx", "answer recall@k", "answer recall in ctx"]
    return [Heading(2, "Recall per kind, and answer-bearing recall", "kinds"),
            Para(segs("Per kind of question (", Code("meta.kind"), " when the dataset names one, else the type). "
                      "recall@k counts a question as found when any evidence turn was retrieved, a bridge turn that "
                      "only leads to the answer included; answer recall counts it only when a turn that states the "
                      "answer (", Code("meta.answer_evidence"), ") was retrieved (@k) or reached the context.")),
            Table(header, rows, classes, [False, False] + [True] * (len(header) - 2))] + notes.blocks()


def artifacts_section(scores: dict, artifacts: dict | None, manifest: dict, path: str | None) -> list:
    """The artifact audit of artifacts.py (model-free report only): what systems that never read
    the question find, per kind, against the baseline, and the verdict; or how to run it."""
    if not retrieval_only(scores):
        return []
    blocks: list = [Heading(2, "Artifact audit: what a system that never reads the question finds", "artifacts")]
    if artifacts is None:
        return blocks + [Para(segs("Not run. ", Code(f"python artifacts.py --dataset {manifest['dataset']} --out "
                                                     f"results/{manifest['run_id']}/model-free/artifacts.json"),
                                   " runs it, and report.py shows it with --artifacts."))]
    if artifacts["dataset_sha256"] != manifest["dataset_sha256"]:
        blocks.append(Para(segs(Strong("Another dataset: "), Code(path), f" audited {artifacts['dataset']} "
                                f"(sha256 {artifacts['dataset_sha256'][:12]}), not this comparison's; rerun "
                                "artifacts.py on it.")))
    header, rows = artifacts_table(artifacts)
    classes = ["baseline" if row[0] == "all" else "" for row in rows]
    names = [x for i, s in enumerate(artifacts["blind_systems"]) for x in ([", "] if i else []) + [Code(s)]]
    others = [x for s in artifacts["systems"][1:] for x in (", ", Code(s))]
    return blocks + [Para(segs(f"recall_any@{artifacts['k']} per kind of the query-blind systems (", *names,
                               ") beside the baseline ", Code(artifacts["baseline"]), *others, ", each with its "
                               f"difference to the baseline and 95% paired cluster-bootstrap interval "
                               f"({artifacts['resamples']:,} resamples). ", Code("cues"), " learns what marks an "
                               "evidence turn on half the cases and ranks the other half's turns without the "
                               "question.")),
                     Table(header, rows, classes, [False, True] + [True] * (len(header) - 2)),
                     Para(segs(Strong(artifacts["verdict"]), ": ", artifacts_summary(artifacts)))]


def controls_section(scores: dict, order: list[dict], checks: dict | None) -> list:
    """What the controls say about the instrument (none low, oracle high). Whether `none` is
    low enough and `oracle` high enough is check.py's verdict, per question type against
    config.yaml's `checks:` thresholds: quoted from checks.json when it belongs to these runs;
    otherwise the numbers only (a threshold of this report's own would contradict check.py's)."""
    if retrieval_only(scores):
        return []
    lines = []
    if checks is not None:
        lines += [segs(f"{c['status']} ", Code(c["id"]), f": {c['summary']}") for c in checks["checks"]
                  if c["check"] == "controls"]
        intro = ("check.py's verdicts on the controls (per question type, thresholds from config.yaml's checks: "
                 "section):")
    else:
        intro = ("What the controls scored. Whether that is within their limits is check.py's verdict, per question "
                 "type (config.yaml checks.none_max and checks.oracle_min); no checks.json of these runs was given.")
        lines += [ticked(line) for line in control_lines(scores)]
    if not lines:
        lines.append(segs("Neither the ", Code("none"), " nor the ", Code("oracle"), " control is in this comparison: "
                          "nothing checks the instrument's floor and ceiling. Run them (make bench does)."))
    return [Heading(2, "What the controls say", "controls"), Para(segs(intro)), Bullets(lines)]


def type_order(scores: dict) -> tuple[list[str], set]:
    """Question types as the tables list them, and those shown apart (no question of the type is
    answerable): the answerable types in the dataset contract's order, then the apart ones,
    then any type of an importer's own."""
    present = {t for s in scores["systems"] for t in s["by_type"]}
    apart = {t for s in scores["systems"] for t, x in s["by_type"].items() if not x["answerable_n"]}
    known = [t for t in QUESTION_TYPES if t in present]
    return ([t for t in known if t not in apart] + [t for t in known if t in apart]
            + sorted(present - set(QUESTION_TYPES))), apart


def row_class(s: dict, scores: dict) -> str:
    """A row's CSS class: the baseline and the controls stand out."""
    return "baseline" if is_baseline(s, scores) else "control" if is_control(s) else ""


# The per-type table's columns: header, by_type key, footnote name, by_type key of its note.
TYPE_COLUMNS = (("accuracy", "accuracy", "accuracy", "accuracy_note"), ("EM", "exact_match", "EM/F1", "accuracy_note"),
                ("F1", "token_f1", "EM/F1", "accuracy_note"), ("recall@k", "recall_any_at_k", "recall", "recall_note"),
                ("recall in ctx", "recall_all_in_context", "recall", "recall_note"),
                ("recall_all@k", "recall_all_at_k", "recall", "recall_note"),
                ("NDCG@k", "ndcg_at_k", "recall", "recall_note"),
                ("R@k", "evidence_recall_at_k", "recall", "recall_note"),
                ("kw recall@k", "keyword_recall_at_k", "keyword recall", "keyword_recall_note"),
                ("kw recall in ctx", "keyword_recall_in_context", "keyword recall", "keyword_recall_note"),
                ("staleness", "staleness", "staleness", "staleness_note"),
                ("contradiction", "contradiction", "contradiction", "contradiction_note"))


def by_type_section(scores: dict, order: list[dict]) -> list:
    """Accuracy per question type, the unanswerable types apart; then every memory metric per
    type (score.py computes them with the same functions on each type's questions)."""
    types, apart = type_order(scores)
    blocks: list = [Heading(2, "Per question type", "types")]
    model_free = retrieval_only(scores)
    if model_free:
        blocks.append(Para(segs("Accuracy is not measured: a retrieval-only run has no answers to grade. The retrieval "
                                "metrics per type follow.")))
    else:
        rows = [[display(s, scores)] + [f"{rate(s['by_type'][t]['accuracy'])} ({s['by_type'][t]['n']})"
                                        if t in s["by_type"] else "–" for t in types] for s in order]
        header = ["system"] + [f"{t} (apart)" if t in apart else t for t in types]
        blocks += [Para(segs("Accuracy (questions) per type, over all repeats. Unanswerable types (",
                             ", ".join(t for t in types if t in apart) or "none here",
                             ") are apart: a system that always declines gets them right and fails everything else.")),
                   Table(header, rows, [row_class(s, scores) for s in order], [False] + [True] * (len(header) - 1))]
    columns = [c for c in TYPE_COLUMNS if not model_free or c[1] in MODEL_FREE_KEYS]
    notes = Footnotes()
    rows, classes = [], []
    for s in order:
        for t in types:
            if t not in s["by_type"]:
                continue
            m = s["by_type"][t]
            row = [display(s, scores), segs(t + (" (apart)" if t in apart else "")), str(m["n"])]
            row += [notes.cell(rate(m[key]), s["label"], name, m[note] if note else None) for _, key, name, note in columns]
            rows.append(row)
            classes.append(row_class(s, scores))
    header = ["system", "type", "n"] + [c[0] for c in columns]
    em = "" if model_free else (" (EM and F1 on all of them: for an unanswerable type they are its abstention "
                                "scores)")
    blocks += [Para(segs(f"Every memory metric per type, on that type's questions{em}. Write precision is per stored "
                         f"item, so it has no type.")),
               Table(header, rows, classes, [False, False] + [True] * (len(header) - 2))]
    blocks += notes.blocks()
    return blocks


def type_differences_section(scores: dict, order: list[dict]) -> list:
    """Each system's paired difference to the baseline per question type, with its interval."""
    if retrieval_only(scores):
        return []
    diffs = {d["system"]: d for d in scores["differences"]}
    compared = [s for s in order if not is_control(s) and not is_baseline(s, scores) and s["label"] in diffs]
    if not compared:
        return []
    # Every difference holds one entry per graded type of the comparison (metrics.Scoring.differences;
    # every budget holds the same questions), so each compared system has every type shown.
    types, apart = type_order(scores)
    types = [t for t in types if t in diffs[compared[0]["label"]]["by_type"]]
    base = {s["label"]: s for s in order if is_baseline(s, scores)}
    rows = [[segs(s["label"])] + [type_difference_text(diffs[s["label"]]["by_type"][t], [
        x["by_type"][t]["accuracy"] for x in (s, base[diffs[s["label"]]["baseline"]]) if t in x["by_type"]])
        for t in types] for s in compared]
    return [Heading(3, "Paired difference per question type", "paired-types"),
            Para(segs("The same paired difference to ", Code(scores["baseline"]), ", per question type (all of the "
                      "type's questions; the unanswerable types are the abstention difference), with its 95% "
                      "cluster-bootstrap interval; no interval when the type's questions sit in a single cluster.")),
            Table(["system"] + [f"{t} (apart)" if t in apart else t for t in types], rows,
                  [""] * len(rows), [False] + [True] * len(types))]


def budget_section(scores: dict, order: list[dict], plots: dict) -> list:
    """The budget curve (run.py --budgets), when there is one, with the share of questions whose
    context k bounded rather than the budget."""
    if len(scores["budgets"]) < 2:
        return []
    budgets = scores["budgets"]
    backends = list(dict.fromkeys(s["backend"] for s in order))
    cell = {(s["backend"], s["budget"]): s for s in order}
    model_free = retrieval_only(scores)
    notes = Footnotes()
    rows = []
    for b in backends:
        row = [segs(b)]
        for budget in budgets:
            s = cell.get((b, budget))
            if s is None:
                row.append("–")
                continue
            k = notes.cell(rate(s["k_limited_share"]), s["label"], "k-limited share", s["k_limited_note"])
            first = "" if model_free else f"{rate(s['accuracy'])} / "
            row.append(f"{first}{rate(s['recall_all_in_context'])} / {k}")
        rows.append(row)
    what = "recall in context / k-limited share" if model_free else "accuracy / recall in context / k-limited share"
    blocks: list = [Heading(2, "Budget curve", "budget"),
                    Para(segs(f"{what.capitalize()} per context budget (tokens): one search per question, the "
                              f"context cut at each budget. The k-limited share is the share of questions whose "
                              f"search returned exactly top_k hits and the budget cut none of them: there k, not the "
                              f"budget, bounded the context, so a flat curve there says k ran out.")),
                    Table(["system"] + [f"{b:,}" for b in budgets], rows, [""] * len(rows),
                          [False] + [True] * len(budgets))]
    blocks += notes.blocks("Notes:")
    if "budget" in plots:
        blocks.append(Image(plots["budget"], "Budget curve"))
    return blocks


def failures_section(scores: dict, order: list[dict], plots: dict, html_name: str) -> list:
    """Where the wrong answers came from, per system."""
    if retrieval_only(scores):
        return []
    causes = list(order[0]["failure_causes"])

    def count(n: int, s: dict, cause: str | None) -> list | str:
        """A count that links to its questions in report.html."""
        return segs(Link(f"{n:,}", questions_href(a=s["label"], v="a_wrong", cause=cause))) if n else "0"
    rows = [[display(s, scores), count(sum(s["failure_causes"].values()), s, None)]
            + [count(s["failure_causes"][c], s, c) for c in causes] for s in order]
    blocks: list = [Heading(2, "Where the wrong answers came from", "failures"),
                    Para(segs("One cause per wrong answer, the first that applies, in this order: "
                              + "; ".join(f"{c}: {FAILURE_CAUSES[c]}" for c in causes) + ".")),
                    Table(["system", "wrong"] + causes, rows, [row_class(s, scores) for s in order],
                          [False] + [True] * (len(causes) + 1))]
    if "failures" in plots:
        blocks.append(Image(plots["failures"], "Failure causes per system"))
    repeats = max(s["repeats"] for s in order)
    blocks.append(Para(segs("Each count links to its questions in ", Link(html_name, html_name), ", filtered by "
                            "system and failure cause" + (f"; with {repeats} repeats a count is of records (one per "
                                                          "repeat), and the list filters each question by its first "
                                                          "repeat" if repeats > 1 else "") + ".")))
    return blocks


def cost_section(scores: dict, order: list[dict]) -> list:
    """Tokens, calls and latency per system (over all repeats), each n/a with its reason."""
    notes = Footnotes()
    rows = []
    for s in order:
        label = s["label"]
        u = s["internal_usage"]
        ing, fl = s["ingest_s"], s["flush_s"]
        # The usage note goes beside a count that is n/a or left calls out, not beside a complete one.
        prompt_note = s["usage_note"] if s["prompt_tokens"] is None or s["prompt_tokens_missing"] else None
        completion_note = s["usage_note"] if s["completion_tokens"] is None or s["completion_tokens_missing"] else None
        row = [display(s, scores),
               notes.cell(whole(s["mean_context_tokens"]), label, "context tokens", s["context_tokens_note"]),
               whole(s["total_context_tokens"]),
               notes.cell(whole(s["prompt_tokens"]), label, "token usage", prompt_note),
               notes.cell(whole(s["completion_tokens"]), label, "token usage", completion_note),
               f"{whole(s['mean_prompt_tokens'])} / {whole(s['mean_completion_tokens'])}",
               f"{s['answer_calls']:,} ({s['answer_calls_cached']:,} cached, {s['answer_requests']:,} sent)",
               (f"{u['calls']:,} ({u['cached']:,} cached), {whole(u['prompt_tokens'])} + "
                f"{whole(u['completion_tokens'])} tokens" if u else
                notes.cell("n/a", label, "internal model", s["internal_usage_note"])),
               (f"{rate(ing['mean'])} (max {rate(ing['max'])})" if ing else
                notes.cell("n/a", label, "ingest", s["ingest_s_note"])),
               f"{rate(fl['mean'])} (max {rate(fl['max'])})" if fl else notes.cell("n/a", label, "ingest",
                                                                                  s["ingest_s_note"]),
               (f"{rate(s['search_ms_p50'])} / {rate(s['search_ms_p95'])} / {rate(s['search_ms_max'])}"
                if s["search_ms_p95"] is not None else notes.cell("n/a", label, "search latency", s["search_ms_note"])),
               (f"{whole(s['store_items_mean'])} (max {whole(s['store_items_max'])})" if s["store_items_mean"] is not None
                else notes.cell("n/a", label, "store size", s["store_items_note"])),
               notes.cell(rate(s["search_contended_share"]), label, "searches during answer calls",
                          s["search_contended_note"])]
        rows.append(row)
    header = ["system", "ctx tokens (mean)", "ctx tokens (total)", "prompt tokens", "completion tokens",
              "per question: prompt / completion", "answer calls", "internal model calls", "ingest s per case",
              "flush s per case", "search ms p50 / p95 / max", "store items per namespace",
              "searches during answer calls"]
    blocks: list = [Heading(2, "Cost and latency", "cost"),
                    Para(segs("Per system, over all repeats. Tokens are whole; prompt and completion tokens are the "
                              "endpoint's "
                              "own counts, over the calls that reported one (a call without a count is left out and "
                              "counted in a note, never taken as 0). Internal model: the calls a system makes to a "
                              "model of its own, apart from the answer calls. Search latency is measured at the store "
                              "size beside it, from this machine; the last column is the share of searches made while "
                              "answer calls were in flight, which share the CPU with a local model.")),
                    Table(header, rows, [row_class(s, scores) for s in order], [False] + [True] * (len(header) - 1))]
    blocks += notes.blocks()
    return blocks


def repeats_section(scores: dict, order: list[dict]) -> list:
    """Accuracy per repeat, its mean and spread, and each system's noise floor (its repeat 1
    against its repeat 0, paired, with the interval)."""
    if retrieval_only(scores):
        return []
    notes = Footnotes()
    rows = []
    for s in order:
        rep = s["repeat_accuracy"]
        if rep is None:
            na = notes.cell("n/a", s["label"], "repeats", s["noise_floor_note"])
            rows.append([display(s, scores), str(s["repeats"]), na, "n/a", "n/a", "n/a", "n/a"])
            continue
        rows.append([display(s, scores), str(s["repeats"]), ", ".join(rate(a) for a in rep["per_repeat"]),
                     rate(rep["mean"]), rate(rep["sd"]), f"{rate(rep['min'])} – {rate(rep['max'])}",
                     notes.cell(interval_text(s["noise_floor"]), s["label"], "noise floor", s["noise_floor_note"])])
    header = ["system", "repeats", "accuracy per repeat", "mean", "sd", "min – max", "noise floor: repeat 1 − 0 [95% CI]"]
    blocks: list = [Heading(2, "Repeats and noise floor", "repeats"),
                    Para(segs("Every other figure of this report is over all repeats; here, accuracy on answerable "
                              "questions in each repeat (run.py --repeat N), and the noise floor: "
                              f"{noise_floor_legend(order)}. A difference between systems no larger than either "
                              "one's noise floor (the larger end of that interval) is marked as within it.")),
                    Table(header, rows, [row_class(s, scores) for s in order], [False] + [True] * (len(header) - 1))]
    blocks += notes.blocks("Notes:")
    return blocks
