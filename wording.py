"""How every number of a comparison is written for people, in one place: the order of the system
rows, rates to 3 significant digits, whole tokens, intervals and what they say in words, the
notes scores.json writes beside a minimum detectable difference or a noise floor, the grader's
error rates in one sentence, and the lines that state what the controls scored and every
deviation from the contract. score.py's stdout, check.py, compare.py and the report write every
figure with these functions, so the same number reads the same everywhere.
"""
from __future__ import annotations

import math

from contract import CONTROL_NAMES
from stats import Z80, Z95

# Why a minimum detectable difference is n/a when the standard error behind it is 0.
NO_SPREAD = ("the paired difference is the same in every bootstrap resample (standard error 0), as when the systems "
             "agree on every question: no spread to scale")


# Why a paired difference of several clusters has no interval, no standard error and no minimum
# detectable difference: stats.interval() withholds an interval when over 5% of the resamples leave
# the statistic undefined (they drew no question of its selection).
WITHHELD = ("more than 5% of the bootstrap resamples draw no question it is measured on: no interval, so no "
            "standard error and no minimum detectable difference")


MDD_FORMULA = (f"({Z95:.3f} + {Z80:.3f}) x the bootstrap standard error of the paired difference to the baseline on "
               "answerable questions: the smallest true difference detected with 80% power at 95% confidence; the "
               "largest over the systems compared")


# How the noise floor is computed, written beside it in scores.json as the minimum detectable
# difference's method and formula are (two quantities a reader must not confuse).
NOISE_FLOOR_METHOD = "paired_bootstrap_interval"
NOISE_FLOOR_FORMULA = ("repeat 1 minus repeat 0 of the same system on answerable questions, question by question, with "
                       "its 95% cluster-bootstrap interval: the run-to-run variation, 0 when the repeats are graded "
                       "alike")


# ---------------------------------------------------------------------------------------------
# Numbers and words for people: score.py's stdout and the report write every number with these
# ---------------------------------------------------------------------------------------------

def row_order(systems: list[dict], baseline: str) -> list[dict]:
    """Per budget: the controls (none, oracle, full_context), then the baseline, then the other
    systems by name."""
    def key(s: dict) -> tuple:
        control = s["backend"] in CONTROL_NAMES
        return (s["budget"], 0 if control else 1,
                CONTROL_NAMES.index(s["backend"]) if control else (0 if s["backend"] == baseline else 1), s["label"])
    return sorted(systems, key=key)


def rate(x: float | None, signed: bool = False) -> str:
    """A rate, share or latency for reading: 3 significant digits in fixed notation (0.400,
    0.0333, 1.00, 12.3, 1234, never 1.2e+03); n/a for not measured, never 0."""
    if x is None:
        return "n/a"
    if x == 0:
        return "0.00"
    decimals = max(0, 2 - math.floor(math.log10(abs(x))))
    text = f"{x:.{decimals}f}"
    if float(text) != 0 and len(text.lstrip("-").replace(".", "").lstrip("0")) > 3 and decimals:
        text = f"{x:.{decimals - 1}f}"  # 0.9996 rounds up to 1.000: one decimal fewer keeps 3 digits
    return ("+" if signed and x > 0 else "") + text


def error_rate_text(k: int, n: int, x: float | None, ci: list | None) -> str:
    """A grader's error count with its rate and 95% Wilson interval: 3 of 120 (0.0250,
    0.00855–0.0710); – when there was nothing to count (no known-wrong, or known-right, answer)."""
    if not n:
        return "–"
    return f"{k} of {n} ({rate(x)}" + (f", {rate(ci[0])}–{rate(ci[1])}" if ci else "") + ")"


def calibration_text(cal: dict) -> str:
    """A grader's error rates on its labelled sets in one sentence, the held-out set (never tuned
    on: the rates to quote) beside the tuning set (the rules were tuned on it, so its rates are
    in-sample), each with its 95% Wilson intervals and kappa: score.py's stdout and the report's
    first screen."""
    def rates(c: dict) -> str:
        o = c["overall"]
        accepts = error_rate_text(o["false_accepts"], o["known_wrong"], o["false_accept_rate"], o["false_accept_ci95"])
        rejects = error_rate_text(o["false_rejects"], o["known_right"], o["false_reject_rate"], o["false_reject_ci95"])
        return f"false accepts {accepts}, false rejects {rejects}, kappa {rate(c['kappa'])}"
    held = cal["heldout"]
    first = (f"held-out set {held['calibration_set']} (never tuned on: the rates to quote): {rates(held)}; " if held
             else "no held-out set was graded (judge.py --calibrate ... --heldout), so every rate here is in-sample; ")
    return first + f"tuning set {cal['calibration_set']} (the rules were tuned on it): {rates(cal)}"


def whole(x: float | None) -> str:
    """Token counts: whole numbers (half up, as people round) with thousands separators."""
    return "n/a" if x is None else f"{math.floor(x + 0.5):,}"


def interval_text(d: dict | None) -> str:
    """A paired difference with its 95% interval: +0.050 [+0.000, +0.125]."""
    if d is None or d["difference"] is None:
        return "n/a"
    if d["ci_low"] is None:
        return f"{rate(d['difference'], True)} (no interval)"
    return f"{rate(d['difference'], True)} [{rate(d['ci_low'], True)}, {rate(d['ci_high'], True)}]"


def type_difference_text(d: dict | None, accuracies: list) -> str:
    """A paired difference on one question type (interval_text); where both systems got every
    question of the type wrong (accuracies: theirs on the type) it says so, as 0.00 [0.00, 0.00]
    alone reads as a tie between two systems that each got some right."""
    text = interval_text(d)
    if d is not None and d["difference"] is not None and accuracies and all(a == 0 for a in accuracies):
        text += " (both got every question wrong)"
    return text


def estimate_text(value: float | None, ci: list | None) -> str:
    """A system's figure with its 95% interval: 0.400 [0.250, 0.550]; without one, the figure."""
    if value is None:
        return "n/a"
    return rate(value) if ci is None else f"{rate(value)} [{rate(ci[0])}, {rate(ci[1])}]"


def reading(d: dict) -> str:
    """What a difference to the baseline says, in words: what its interval says (better, worse,
    not separated, or why there is no interval), with the noise floor as a note beside it,
    never in its place."""
    if d["difference"] is None:
        return "not comparable"
    if d["separated"] is None:
        words = "no interval (one cluster)" if d["clusters"] < 2 else "no interval (too few resamples define it)"
    else:
        words = ("better" if d["difference"] > 0 else "worse") if d["separated"] else "not separated"
    return words + ("; within the noise floor" if d["within_noise_floor"] else "")


def separated_text(d: dict | None) -> str:
    """Whether a paired interval separates a system from the baseline, in the words of the
    report's first table: separated, not separated, no interval (one cluster), or n/a."""
    if d is None or d["difference"] is None:
        return "n/a"
    if d["separated"] is None:
        return "no interval"
    return "separated" if d["separated"] else "not separated"


def coverage_reasons(coverage: dict, partial: str = "--allow-partial") -> list[str]:
    """Why runs cover less than the dataset, from a comparison's coverage: the --limit, --shard
    and --sample they recorded, and `partial` for what --allow-partial left out."""
    return ([f"--limit {', '.join(map(str, coverage['limit']))}"] if coverage["limit"] else []) + \
        ([f"--shard {', '.join(coverage['shards'])}"] if coverage["shards"] else []) + \
        ([f"--sample {', '.join(map(str, coverage['sample']))} (a stratified sample: that many questions of each "
          f"kind)"] if coverage["sample"] else []) + \
        ([partial] if coverage["partial"] else [])


def mdd_text(m: dict) -> str:
    """The minimum detectable difference of a budget, with how it was computed, or why it is n/a."""
    return f"n/a ({m['note']})" if m["value"] is None else f"{rate(m['value'])}, {m['formula']}"


def noise_floor_legend(systems: list[dict]) -> str:
    """How the noise floor of these system rows was computed, from the rows themselves."""
    return "; ".join(f"{formula} ({method})" for method, formula in
                     sorted({(s["noise_floor_method"], s["noise_floor_formula"]) for s in systems}))


def noise_floor_text(s: dict) -> str:
    """A system's noise floor (its repeat 1 minus repeat 0, with the interval), or why none."""
    return interval_text(s["noise_floor"]) if s["noise_floor"] else f"n/a ({s['noise_floor_note']})"


def control_lines(scores: dict) -> list[str]:
    """Without check.py's verdicts: what the controls scored, per type on the questions check.py
    holds each to its limit with, and where the systems fall between them, in numbers only
    (names in `backticks`); whether that is within their limits is check.py's verdict, per
    question type against config.yaml's thresholds."""
    lines = []
    # `none` is limited on each type's answerable questions (declining needs no memory); `oracle`
    # on all of a type's questions (given exactly the evidence, it must also decline).
    controls = (("none", "no memory at all", "none_max", "answerable_accuracy", "answerable_n", ""),
                ("oracle", "exactly the gold evidence", "oracle_min", "accuracy", "n",
                 " (all of each type's questions)"))
    for budget in scores["budgets"]:
        systems = [s for s in scores["systems"] if s["budget"] == budget]
        at = f" (budget {budget:,})" if len(scores["budgets"]) > 1 else ""
        by = {s["backend"]: s for s in systems}
        for name, what, key, figure, count, over in controls:
            c = by.get(name)  # a control may be absent from the comparison
            if c is None or c["accuracy"] is None:
                continue
            types = ", ".join(f"{t} {rate(v[figure])} (n={v[count]})" for t, v in c["by_type"].items()
                              if v[figure] is not None and v[count])
            lines.append(f"The `{name}` control ({what}) answers {rate(c['accuracy'])} of answerable questions{at}; "
                         f"per type{over}: {types or 'none graded'}. Whether that is within its limits is check.py's "
                         f"verdict (config.yaml checks.{key}, per type): run check.py and pass --checks.")
        none, oracle = by.get("none"), by.get("oracle")
        for s in systems:
            if s["backend"] in CONTROL_NAMES or s["accuracy"] is None:
                continue
            if none and none["accuracy"] is not None and s["accuracy"] < none["accuracy"]:
                lines.append(f"`{s['label']}` answers fewer answerable questions ({rate(s['accuracy'])}) than the "
                             f"`none` control ({rate(none['accuracy'])}){at}: its context misleads the answer model.")
            if oracle and oracle["accuracy"] is not None and s["accuracy"] > oracle["accuracy"]:
                lines.append(f"`{s['label']}` scores above the oracle ({rate(s['accuracy'])} against "
                             f"{rate(oracle['accuracy'])}){at}: audit the evidence labels of the questions it gets "
                             f"right and the oracle does not.")
    return lines


def disclosures(systems: list[dict]) -> list[str]:
    """Every deviation of a system from the contract that a reader must know (a result without them
    reads as fair when it was not), one line each, names in `backticks`: hits without provenance, an
    unverified flush, a model of its own, time-aware search, an extra wait, failed questions."""
    lines, seen = [], set()
    for s in systems:
        name = s["backend"]
        if name not in seen and name not in CONTROL_NAMES and s["hits_without_provenance"]:
            lines.append(f"`{name}` returned hits without provenance (source ids) on {s['hits_without_provenance']} of "
                         f"{s['searched']} questions, so its retrieval recall, staleness and write precision are n/a "
                         f"there; keyword recall needs no provenance.")
        if name not in seen and s["flush_note"]:
            lines.append(f"`{name}` does not verify that what it stored is searchable: {s['flush_note']} (an "
                         f"unverified assumption).")
        if name not in seen and s["internal_model"]:
            lines.append(f"`{name}` calls a model of its own during ingestion or search: `{s['internal_model']}`.")
        if name not in seen and s["time_aware"]:
            lines.append(f"`{name}` searched with each question's date as \"now\" (time-aware search), which the "
                         f"other systems did not.")
        if name not in seen and s["extra_wait_s"]:
            lines.append(f"`{name}` waited {s['extra_wait_s']:g} s more after flush than the others (run.py "
                         f"--extra-wait-s).")
        if s["errors"]:
            lines.append(f"`{s['label']}`: {s['errors']} of {s['records']} question records failed (run or judge "
                         f"errors) and count as incorrect; the first: `{s['first_error']}`")
        seen.add(name)
    return lines
