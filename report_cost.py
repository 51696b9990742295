"""The report's dollar cost and its frontiers: accuracy against cost per question and against
search p95, one point per system, the systems no other beats on both marked (docs/metrics.md)."""
from __future__ import annotations

from prices import usd
from report_document import Code, Footnotes, Image, Para, Table, segs
from report_sections import display, retrieval_only, row_class
from wording import rate

MARK = {True: "yes", False: "no", None: "–"}


def dollar_cost_blocks(scores: dict, order: list[dict]) -> list:
    """Each system's dollar cost (docs/metrics.md): per question, of ingestion, per correct
    answer, with the answer, judge and total cost; n/a with its reason, never 0."""
    notes = Footnotes()
    rows = []
    for s in order:
        cells = [usd(s[k]) for k in ("cost_per_question_usd", "cost_ingestion_usd", "cost_per_correct_usd",
                                     "cost_answer_usd", "cost_judge_usd", "cost_total_usd")]
        if s["cost_note"]:
            cells[0] = notes.cell(cells[0], s["label"], "dollar cost", s["cost_note"])
        rows.append([display(s, scores), *cells, rate(s["accuracy"]), MARK[s["cost_frontier"]]])
    header = ["system", "per question", "ingestion", "per correct answer", "answer calls", "judge calls", "total",
              "accuracy", "frontier"]
    p = scores["prices"]
    blocks: list = [Para(segs("Dollar cost, in USD at the prices of ", Code(p["file"]), f" dated {p['date']} "
                              f"(sha256 {p['sha256'][:12]}): {p['basis']}. Per question: the answer call and its "
                              "judge call, over the records; ingestion: the system's own model calls while writing; "
                              "per correct answer: all of it over the correct answers. Frontier: no other system "
                              "at its budget (controls aside) is as accurate for no more per question and better in "
                              "one of the two; – for a control or a row without both figures.")),
                    Table(header, rows, [row_class(s, scores) for s in order], [False] + [True] * (len(header) - 1))]
    return blocks + notes.blocks()


def frontier_blocks(scores: dict, order: list[dict], plots: dict | None) -> list:
    """Accuracy against cost per question and against search p95, one row per system with
    whether it is on each frontier, and the plot of both when drawn. Nothing for a
    retrieval-only run, which has no accuracy to trade."""
    if retrieval_only(scores):
        return []
    rows = [[display(s, scores), rate(s["accuracy"]), usd(s["cost_per_question_usd"]), rate(s["search_ms_p95"]),
             MARK[s["cost_frontier"]], MARK[s["latency_frontier"]]] for s in order]
    header = ["system", "accuracy", "cost per question", "search p95 ms", "cost frontier", "latency frontier"]
    blocks: list = [Para(segs("Frontiers: a system is on one when no other system at its budget (controls aside) is "
                              "at least as accurate for no more cost per question, or no slower a search at the "
                              "95th percentile, and better in one of the two. A system off both pays more or waits "
                              "longer than another for no more accuracy; – for a control or a row without both "
                              "figures.")),
                    Table(header, rows, [row_class(s, scores) for s in order], [False] + [True] * (len(header) - 1))]
    if plots and "frontier" in plots:
        blocks.append(Image(plots["frontier"], "Accuracy against cost per question and against search p95"))
    return blocks
