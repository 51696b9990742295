"""The report's plots (accuracy with its intervals, the budget curve, failure causes), drawn with
matplotlib's Agg backend when the optional extra is installed (pip install -r
requirements-plots.txt); without it, draw_plots returns None and the report says how to get them.
"""
from __future__ import annotations

import io

from contract import CONTROL_NAMES
from report_sections import is_baseline, is_control, retrieval_only
from wording import rate


# ---------------------------------------------------------------------------------------------
# Plots (the optional extra: requirements-plots.txt)
# ---------------------------------------------------------------------------------------------

CONTROL_COLOR, BASELINE_COLOR, SYSTEM_COLOR = "#a0a0a0", "#1f5fa8", "#5b9bd5"
# One colour per cause in every plot: memory failures warm, reader and grading failures cool.
CAUSE_COLORS = {"error": "#333333", "unparseable": "#8c6d31", "judge_disagreement": "#b5a642",
                "unmeasurable": "#c7c7c7", "retrieval_miss": "#d62728", "budget_miss": "#ff9f40",
                "reader_miss": "#4c78a8"}


def figure_bytes(fig) -> bytes:
    """A figure as PNG bytes (no timestamp in the file, so the same numbers give the same bytes)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()


def accuracy_plot(plt, scores: dict, order: list[dict]) -> bytes:
    """Accuracy per row with each system's paired interval against the baseline (retrieval-only:
    the share of questions with all evidence in context, no intervals)."""
    model_free = retrieval_only(scores)
    key = "recall_all_in_context" if model_free else "accuracy"
    diffs = {d["system"]: d for d in scores["differences"]}
    labels = [s["label"] for s in order]
    values = [s[key] if s[key] is not None else 0.0 for s in order]
    colors = [BASELINE_COLOR if is_baseline(s, scores) else CONTROL_COLOR if is_control(s) else SYSTEM_COLOR
              for s in order]
    fig, ax = plt.subplots(figsize=(max(5.0, 0.75 * len(order) + 2), 3.6))
    bars = ax.bar(range(len(order)), values, color=colors, edgecolor="#333333", linewidth=0.5)
    for i, s in enumerate(order):
        d = diffs.get(s["label"])
        if not model_free and not is_control(s) and d and d["ci_low"] is not None and s[key] is not None:
            # The paired interval of the difference, drawn around the system's own accuracy: where it
            # crosses the baseline's line, the two are not separated.
            ax.errorbar(i, s[key], yerr=[[d["difference"] - d["ci_low"]], [d["ci_high"] - d["difference"]]],
                        fmt="none", ecolor="#222222", capsize=4, linewidth=1.2)
        ax.annotate("n/a" if s[key] is None else rate(s[key]), (bars[i].get_x() + bars[i].get_width() / 2, values[i]),
                    textcoords="offset points", xytext=(0, 3), ha="center", fontsize=8)
    for s in order:
        if is_baseline(s, scores) and s[key] is not None and not model_free:
            # across the bars of its own budget only: a sweep has one baseline per budget
            at = [i for i, x in enumerate(order) if x["budget"] == s["budget"]]
            ax.hlines(s[key], at[0] - 0.45, at[-1] + 0.45, colors=BASELINE_COLOR, linestyles="--", linewidth=0.8)
    ax.set_xticks(range(len(order)), labels, rotation=30 if len(order) > 4 else 0, ha="right" if len(order) > 4 else "center")
    # Bars of 0.01-0.08 on a 0-1 axis are flat: below 0.5 the axis ends a quarter above the highest
    # bar or interval, and says so in its label.
    highest = max([v for v in values] + [s[key] + diffs[s["label"]]["ci_high"] - diffs[s["label"]]["difference"]
                                          for s in order if s["label"] in diffs and s[key] is not None
                                          and diffs[s["label"]]["ci_high"] is not None and not model_free])
    top = 1.08 if highest > 0.5 else max(0.05, highest * 1.25)
    ax.set_ylim(0, top)
    ax.set_ylabel(("all evidence in context" if model_free else "accuracy (answerable)")
                  + ("" if top == 1.08 else f", axis to {rate(top)}"))
    title = ("Evidence in context per system (retrieval only: accuracy not measured)" if model_free else
             "Accuracy; bars on systems: paired 95% interval vs the baseline (dashed)")
    ax.set_title(title, fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    return figure_bytes(fig)


def budget_plot(plt, scores: dict, order: list[dict]) -> bytes:
    """One line per system over the budgets: accuracy, and all evidence in context."""
    model_free = retrieval_only(scores)
    panels = [("recall_all_in_context", "all evidence in context")]
    if not model_free:
        panels.insert(0, ("accuracy", "accuracy (answerable)"))
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 3.6), squeeze=False)
    backends = list(dict.fromkeys(s["backend"] for s in order))
    for ax, (key, name) in zip(axes[0], panels):
        for b in backends:
            points = [(s["budget"], s[key]) for s in order if s["backend"] == b and s[key] is not None]
            if points:
                style = ":" if b in CONTROL_NAMES else "-"
                ax.plot([p[0] for p in points], [p[1] for p in points], style, marker="o", label=b)
        ax.set_xscale("log")
        ax.set_xticks(scores["budgets"], [f"{b:,}" for b in scores["budgets"]])
        ax.minorticks_off()
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("context budget (tokens)")
        ax.set_ylabel(name)
        ax.spines[["top", "right"]].set_visible(False)
    axes[0][-1].legend(fontsize=8, frameon=False, loc="best")
    fig.suptitle("Budget curve", fontsize=10)
    return figure_bytes(fig)


def failures_plot(plt, order: list[dict]) -> bytes:
    """Wrong answers per system, stacked by cause."""
    causes = list(order[0]["failure_causes"])
    fig, ax = plt.subplots(figsize=(7.5, max(2.2, 0.42 * len(order) + 1.2)))
    left = [0] * len(order)
    for cause in causes:
        counts = [s["failure_causes"][cause] for s in order]
        if any(counts):
            ax.barh(range(len(order)), counts, left=left, color=CAUSE_COLORS.get(cause, "#bbbbbb"), label=cause)
            left = [a + b for a, b in zip(left, counts)]
    ax.set_yticks(range(len(order)), [s["label"] for s in order])
    ax.invert_yaxis()
    ax.set_xlabel("wrong answers")
    ax.set_title("Where the wrong answers came from", fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.spines[["top", "right"]].set_visible(False)
    return figure_bytes(fig)


def frontier_plot(plt, scores: dict, order: list[dict]) -> bytes | None:
    """Accuracy against cost per question and against search p95, a point per system (controls
    aside), the systems on each frontier filled and joined, the others hollow; a panel only where
    some system has both figures, None where neither has."""
    panels = [(key, name, field) for key, name, field in
              (("cost_per_question_usd", "cost per question (USD)", "cost_frontier"),
               ("search_ms_p95", "search p95 (ms)", "latency_frontier"))
              if any(s[key] is not None and s["accuracy"] is not None and not is_control(s) for s in order)]
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 3.6), squeeze=False)
    for ax, (key, name, field) in zip(axes[0], panels):
        points = [s for s in order if s[key] is not None and s["accuracy"] is not None and not is_control(s)]
        for s in points:
            on = s[field]
            ax.scatter([s[key]], [s["accuracy"]], s=36, edgecolors=SYSTEM_COLOR, linewidths=1.2,
                       facecolors=SYSTEM_COLOR if on else "white", zorder=3)
            ax.annotate(s["label"], (s[key], s["accuracy"]), textcoords="offset points", xytext=(5, 4), fontsize=8)
        for budget in dict.fromkeys(s["budget"] for s in points):
            line = sorted((s[key], s["accuracy"]) for s in points if s[field] and s["budget"] == budget)
            if len(line) > 1:
                ax.step([p[0] for p in line], [p[1] for p in line], where="post", color=SYSTEM_COLOR,
                        linewidth=0.8, linestyle="--")
        ax.set_xlabel(name + " (less is better)")
        ax.set_ylabel("accuracy (answerable)")
        ax.set_ylim(0, 1.05)
        ax.spines[["top", "right"]].set_visible(False)
    fig.suptitle("Frontiers: filled points are on them (no other system as accurate for less)", fontsize=10)
    return figure_bytes(fig)


def draw_plots(scores: dict, order: list[dict]) -> dict | None:
    """{name: PNG bytes} for the plots that apply, or None without matplotlib (the optional
    extra): a missing extra is not an error, the report says how to get it."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")  # no display here, and none needed
    import matplotlib.pyplot as plt
    plots = {"accuracy": accuracy_plot(plt, scores, order)}
    if len(scores["budgets"]) > 1:
        plots["budget"] = budget_plot(plt, scores, order)
    if not retrieval_only(scores):
        plots["failures"] = failures_plot(plt, order)
        frontier = frontier_plot(plt, scores, order)
        if frontier is not None:
            plots["frontier"] = frontier
    plt.close("all")
    return plots
