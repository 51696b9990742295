"""Does the ranking of memory systems survive another judge and another reader? The figures of
panel.py (one comparison graded by several judges) and sweep.py (one comparison answered by
several readers), defined once here, with their intervals from stats.py and their words from
wording.py:

- agreement between judges on whether each answer is right, as accuracy counts it (a verdict of
  `correct`, or not: incorrect, unparseable or a failed judge call), on every answer a judge
  graded: Cohen's kappa per pair of judges and Fleiss' kappa over the panel, overall, per system
  and per kind, each with a 95% interval from the cluster bootstrap over cases that score.py's
  intervals come from (the same clusters, resamples and seed);
- the panel's majority: an answer is right when more than half of the judges say so (with two
  judges, when both do);
- the ranking of the systems (the controls aside) by accuracy under each judge or reader, budget
  by budget, Kendall's tau-b between each pair of rankings, and every pair of systems whose order
  changes (one above the other under one view, below or tied under another);
- whether each system's paired difference to the baseline keeps its sign and its verdict
  (separated or not) under every view;
- the one sentence the report's first screen says of it all (stability_text).
"""
from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timezone
from itertools import combinations

import numpy as np

from cli import EXIT_OK, InputError
from contract import CONTROL_NAMES, kind_of
from fileio import write_json_atomic
from formats import BUDGET_FIELD, record_key
from metrics import Scoring, system_label
from stats import (ClusterBootstrap, agreeing_pairs, binary_cohen_kappa, fleiss_kappa, interval,
                   kendall_tau_b)
from wording import interval_text, rate, separated_text

PANEL_FORMAT = "panel/1"
SWEEP_FORMAT = "sweep/1"
MAJORITY = "majority"
MAJORITY_RULE = "an answer is right when more than half of the judges say it is; with two judges, when both do"
NOT_MEASURED = "one judge, one reader: stability not measured"


# ---------------------------------------------------------------------------------------------
# The accuracy figures of one view (a judge, the panel's majority, a reader)
# ---------------------------------------------------------------------------------------------

def resolve_baseline(name: str, records: list[dict]) -> str:
    """The display name of the baseline, given it or its --backend name; it must have run at
    every budget of the records."""
    matches = {r["backend"] for r in records if name in (r["backend"], r["backend_id"])}
    if len(matches) != 1:
        raise InputError(f"--baseline {name!r} is not among the systems: "
                         f"{', '.join(sorted({r['backend'] for r in records}))}")
    baseline = matches.pop()
    absent = sorted({r[BUDGET_FIELD] for r in records} - {r[BUDGET_FIELD] for r in records if r["backend"] == baseline})
    if absent:
        raise InputError(f"--baseline {name!r} has no run at budget {absent[0]}; it must be run at every budget")
    return baseline


def view_figures(scores: dict) -> dict:
    """What the panel and the sweep read of one view's scores (metrics.Scoring.scores's, or a
    scores.json): each system's accuracy with its interval, and each paired difference to the
    baseline with its interval and whether it separates them."""
    return {"systems": [{"system": s["label"], "backend": s["backend"], "budget": s["budget"],
                         "accuracy": s["accuracy"], "accuracy_ci": s["accuracy_ci"]} for s in scores["systems"]],
            "differences": [{"system": d["system"], "baseline": d["baseline"], "budget": d["budget"],
                             "difference": d["difference"], "ci_low": d["ci_low"], "ci_high": d["ci_high"],
                             "separated": d["separated"]} for d in scores["differences"]]}


def scored_view(pairs: list[tuple[dict, dict | None]], baseline: str, resamples: int, seed: int) -> dict:
    """One judge's (or the majority's) figures, by metrics.Scoring as score.py computes them;
    baseline: resolve_baseline's."""
    return view_figures(Scoring(pairs, resamples, seed).scores(baseline))


def majority_pairs(panel: list[list[tuple[dict, dict | None]]]) -> list[tuple[dict, dict | None]]:
    """The panel's majority verdict of every answer (MAJORITY_RULE), as (record, verdict) pairs
    that Scoring reads: the first judge's verdict with the majority's `verdict`, decided `by`
    the panel; a record without an answer keeps its verdict (the run failed)."""
    votes: dict = defaultdict(int)
    for pairs in panel:
        for r, v in pairs:
            votes[record_key(r)] += v is not None and v["verdict"] == "correct"
    out = []
    for r, v in panel[0]:
        if v is None or r["answer"] is None:
            out.append((r, v))
            continue
        right = 2 * votes[record_key(r)] > len(panel)
        out.append((r, {**v, "verdict": "correct" if right else "incorrect", "by": "panel", "judge_error": None,
                        "judge_reason": None}))
    return out


# ---------------------------------------------------------------------------------------------
# Agreement between judges, with cluster-bootstrap intervals
# ---------------------------------------------------------------------------------------------

def judged_answers(panel: list[list[tuple[dict, dict | None]]]) -> list[tuple[dict, list[bool]]]:
    """Every answer the judges graded (a record with an answer, not retrieval-only), with each
    judge's yes (a `correct` verdict) in panel order."""
    yes = [{record_key(r): v is not None and v["verdict"] == "correct" for r, v in pairs} for pairs in panel]
    return [(r, [y[record_key(r)] for y in yes]) for r, v in panel[0]
            if v is not None and r["answer"] is not None]


def agreement_columns(answers: list[tuple[dict, list[bool]]], raters: int) -> dict:
    """Per cluster, the totals the kappas are computed from: answers, yeses of each judge, answers
    each pair of judges labels alike, agreeing rater pairs and all yeses (Fleiss)."""
    pairs = list(combinations(range(raters), 2))
    width = 1 + raters + len(pairs) + 2
    out: dict = defaultdict(lambda: np.zeros(width))
    for r, ys in answers:
        row = out[r["cluster"]]
        row[0] += 1
        row[1:1 + raters] += ys
        row[1 + raters:1 + raters + len(pairs)] += [ys[i] == ys[j] for i, j in pairs]
        row[-2] += agreeing_pairs(sum(ys), raters)
        row[-1] += sum(ys)
    return out


def kappa_figure(points: np.ndarray, resampled: np.ndarray, answers: int, several_clusters: bool) -> dict:
    """A kappa, its 95% interval (none from one cluster, or where more than 5% of the resamples
    leave it undefined) and a note when it is not defined."""
    value = float(points) if not np.isnan(points) else None
    lo, hi = interval(resampled) if several_clusters and value is not None else (None, None)
    note = None if value is not None else ("no answer was graded" if not answers else
                                           "every judge gave every answer the same label")
    return {"kappa": value, "ci": None if lo is None else [lo, hi], "answers": answers, "note": note}


def kappas(answers: list[tuple[dict, list[bool]]], labels: list[str], boot: ClusterBootstrap) -> dict:
    """Cohen's kappa of each pair of judges and Fleiss' kappa over the panel, on these answers,
    with cluster-bootstrap intervals, and the share of answers on which every judge agrees."""
    raters = len(labels)
    per_cluster = agreement_columns(answers, raters)
    columns = np.column_stack([boot.column({c: row[i] for c, row in per_cluster.items()})
                               for i in range(1 + raters + raters * (raters - 1) // 2 + 2)])
    point = columns.sum(axis=0)
    totals = boot.totals(columns)
    several = len({r["cluster"] for r, _ in answers}) > 1
    n, tn = point[0], totals[:, 0]
    cohen = []
    for k, (i, j) in enumerate(combinations(range(raters), 2)):
        at = 1 + raters + k
        cohen.append({"judges": [labels[i], labels[j]], "agreement": point[at] / n if n else None,
                      **kappa_figure(binary_cohen_kappa(n, point[at], point[1 + i], point[1 + j]),
                                     binary_cohen_kappa(tn, totals[:, at], totals[:, 1 + i], totals[:, 1 + j]),
                                     int(n), several)})
    unanimous = sum(len(set(ys)) == 1 for _, ys in answers)
    return {"answers": int(n), "unanimous": unanimous, "unanimous_share": unanimous / n if n else None,
            "fleiss_kappa": kappa_figure(fleiss_kappa(n, raters, point[-2], point[-1]),
                                         fleiss_kappa(tn, raters, totals[:, -2], totals[:, -1]), int(n), several),
            "cohen_kappa": cohen}


def agreement(panel: list[list[tuple[dict, dict | None]]], labels: list[str], resamples: int, seed: int) -> dict:
    """The judges' agreement overall, per system and per kind, on one set of resamples of the
    comparison's clusters (common random numbers, as score.py draws them)."""
    records = [r for r, _ in panel[0]]
    answers = judged_answers(panel)
    boot = ClusterBootstrap(sorted({r["cluster"] for r in records}), resamples, seed)
    several = len({r[BUDGET_FIELD] for r in records}) > 1
    by_system: dict = defaultdict(list)
    by_kind: dict = defaultdict(list)
    for item in answers:
        by_system[system_label(item[0], several)].append(item)
        by_kind[kind_of(item[0])].append(item)
    return {"overall": kappas(answers, labels, boot),
            "by_system": {k: kappas(v, labels, boot) for k, v in sorted(by_system.items())},
            "by_kind": {k: kappas(v, labels, boot) for k, v in sorted(by_kind.items())}}


# ---------------------------------------------------------------------------------------------
# Rankings and differences across views (judges or readers)
# ---------------------------------------------------------------------------------------------

def sign(x: float) -> int:
    """1, -1 or 0: above, below or tied."""
    return (x > 0) - (x < 0)


def ranking_figures(views: dict) -> list[dict]:
    """Per budget: each view's ranking of the systems (the controls aside) by accuracy, best
    first; Kendall's tau-b between each pair of views; and each pair of systems whose order is
    not the same under every view (`order`: per view 1, -1 or 0, the first system above, below
    or tied with the second). views: {view label: view_figures(...)}."""
    accuracy: dict = defaultdict(dict)  # budget -> view -> {system: accuracy}
    for label, fig in views.items():
        for s in fig["systems"]:
            if s["backend"] not in CONTROL_NAMES and s["accuracy"] is not None:
                accuracy[s["budget"]].setdefault(label, {})[s["system"]] = s["accuracy"]
    out = []
    for budget, by_view in sorted(accuracy.items()):
        systems = sorted(set.intersection(*(set(a) for a in by_view.values())))
        acc = {label: {s: a[s] for s in systems} for label, a in by_view.items()}
        flips = []
        for x, y in combinations(systems, 2):
            order = {label: sign(a[x] - a[y]) for label, a in acc.items()}
            if len(set(order.values())) > 1:
                flips.append({"systems": [x, y], "order": order,
                              "accuracy": {label: [a[x], a[y]] for label, a in acc.items()}})
        out.append({"budget": budget, "systems": systems,
                    "by_view": {label: sorted(a, key=lambda s, a=a: (-a[s], s)) for label, a in acc.items()},
                    "accuracy": acc,
                    "kendall_tau_b": [{"views": [p, q], "tau": kendall_tau_b(acc[p], acc[q])}
                                      for p, q in combinations(acc, 2)],
                    "flips": flips})
    return out


def difference_figures(views: dict) -> list[dict]:
    """Each system's paired difference to the baseline under every view, and whether it keeps
    its sign and its verdict (separated or not) under all of them. A difference some view did
    not measure (no interval) holds its verdict only if no view separates it."""
    rows: dict = {}
    for label, fig in views.items():
        for d in fig["differences"]:
            row = rows.setdefault((d["budget"], d["system"]), {"system": d["system"], "baseline": d["baseline"],
                                                               "budget": d["budget"], "by_view": {}})
            row["by_view"][label] = {k: d[k] for k in ("difference", "ci_low", "ci_high", "separated")}
    out = []
    for row in rows.values():
        ds = list(row["by_view"].values())
        signs = {sign(d["difference"]) for d in ds if d["difference"] is not None}
        out.append({**row, "sign_holds": len(signs) <= 1 and len(ds) == len(views),
                    "separation_holds": len({bool(d["separated"]) for d in ds}) == 1 and len(ds) == len(views)})
    return out


def stability(views: dict) -> dict:
    """The ranking and the differences across these views, and whether both held: None for
    each when there is a single view (nothing to hold against)."""
    ranking, differences = ranking_figures(views), difference_figures(views)
    several = len(views) > 1
    return {"ranking": ranking, "differences": differences,
            "ranking_holds": all(not r["flips"] for r in ranking) if several else None,
            "differences_hold": all(d["sign_holds"] and d["separation_holds"] for d in differences)
            if several else None}


# ---------------------------------------------------------------------------------------------
# In words: panel.py's and sweep.py's lines, the first screen's line
# ---------------------------------------------------------------------------------------------

def tau_text(tau: float | None) -> str:
    """Kendall's tau-b, signed, 3 decimals (bench/ranking.py prints it so); n/a when undefined."""
    return "n/a" if tau is None else f"{tau:+.3f}"


def stability_lines(st: dict, what: str) -> list[str]:
    """The rankings under each view, tau-b between them, and each paired difference to the
    baseline under each view with whether it kept its sign and its verdict."""
    out = [f"\nranking of the systems by accuracy under each {what} (controls aside)"]
    for r in st["ranking"]:
        out += [f"budget {r['budget']}, {view}: {' > '.join(order)}" for view, order in r["by_view"].items()]
        out += [f"  Kendall's tau-b {t['views'][0]} / {t['views'][1]}: {tau_text(t['tau'])}"
                for t in r["kendall_tau_b"]]
    out.append(f"\npaired difference to the baseline under each {what}")
    for d in st["differences"]:
        each = "; ".join(f"{view} {interval_text(v)} ({separated_text(v)})" for view, v in d["by_view"].items())
        out.append(f"{d['system']} (budget {d['budget']}): {each}; sign {'kept' if d['sign_holds'] else 'CHANGED'}, "
                   f"verdict {'kept' if d['separation_holds'] else 'CHANGED'}")
    return out


# ---------------------------------------------------------------------------------------------
# ---------------------------------------------------------------------------------------------

def flip_text(flip: dict) -> str:
    """One pair whose order changed, the higher first under each view: `bm25 and keyword change
    order (A: bm25 0.700 > keyword 0.600; B: keyword 0.600 > bm25 0.500)`."""
    x, y = flip["systems"]
    each = []
    for view, (ax, ay) in flip["accuracy"].items():
        (hi, a_hi), (lo, a_lo) = ((x, ax), (y, ay)) if flip["order"][view] >= 0 else ((y, ay), (x, ax))
        each.append(f"{view}: {hi} {rate(a_hi)} {'=' if ax == ay else '>'} {lo} {rate(a_lo)}")
    return f"{x} and {y} change order ({'; '.join(each)})"


def changed_difference_text(d: dict) -> str:
    """One difference to the baseline that did not keep its sign or its verdict."""
    each = ", ".join(f"{view} {rate(v['difference'], True)} {separated_text(v)}" for view, v in d["by_view"].items())
    what = "its sign and its verdict" if not d["sign_holds"] and not d["separation_holds"] else \
        "its sign" if not d["sign_holds"] else "its verdict"
    return f"{d['system']} vs {d['baseline']} changes {what} ({each})"


def across_text(what: str, labels: list[str], figures: dict) -> str:
    """Whether the ranking held across the judges (or readers) that were run, and where not,
    which pairs changed order and which differences changed."""
    names = ", ".join(labels)
    if len(labels) < 2:
        return f"one {what}: not measured across {what}s"
    if figures["ranking_holds"] and figures["differences_hold"]:
        return f"the ranking held across {len(labels)} {what}s ({names}), every difference to the baseline keeping " \
               f"its sign and its verdict"
    parts = [flip_text(f) for r in figures["ranking"] for f in r["flips"]]
    parts += [changed_difference_text(d) for d in figures["differences"]
              if not (d["sign_holds"] and d["separation_holds"])]
    held = "held" if figures["ranking_holds"] else "did not hold"
    return f"the ranking {held} across {len(labels)} {what}s ({names}): " + "; ".join(parts)


def stability_text(panel: dict | None, sweep: dict | None) -> str:
    """The first screen's line: whether the ranking held across the judges and readers that
    were run; NOT_MEASURED when one of each ran."""
    judges = [j["label"] for j in panel["judges"]] if panel else []
    readers = [r["label"] for r in sweep["readers"]] if sweep else []
    if len(judges) < 2 and len(readers) < 2:
        return NOT_MEASURED
    return "; ".join([across_text("judge", judges or ["the run's"], panel["stability"] if panel else {}),
                      across_text("reader", readers or ["the run's"], sweep["stability"] if sweep else {})])


def publish(figures: dict, json_path: str | None, render) -> int:
    """panel.py's and sweep.py's last step: the figures stamped with the time they were made,
    written as JSON when asked (for report.py), and printed as text."""
    figures = {**figures, "created_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    if json_path:
        write_json_atomic(json_path, figures)
    print(render(figures))
    return EXIT_OK
