"""The report's rough edges, outside the browser: a per-type difference where both systems got
every question wrong says so, the budget's units are explained where they stand, the model-free
page's help speaks of retrieval only, and accuracy bars near 0 get an axis that shows them."""
from __future__ import annotations

import pytest

from report_pipeline import pipeline
from test_report import build, recs


def test_a_type_both_systems_got_wrong_does_not_read_as_a_tie(tmp_path):
    code, md, _ = build(tmp_path, {"none": recs("none"), "keyword": recs("keyword", answer="no"),
                                   "other": recs("other", answer="no")})
    assert code == 0
    table = md.split("### Paired difference per question type", 1)[1].split("\n#", 1)[0]
    assert "| other | 0.00 [0.00, 0.00] (both got every question wrong) |" in table


def test_the_token_budget_says_what_its_units_are_where_it_stands(tmp_path):
    code, md, _ = build(tmp_path, {"none": recs("none"), "keyword": recs("keyword"), "other": recs("other")})
    assert code == 0
    contract = md.split("## The fairness contract", 1)[1].split("\n## ", 1)[0] if "## The fairness contract" in md \
        else md
    assert "counted by `approx`, never over (`approx`: the harness's count, a token per 4 characters" in contract
    assert "in the harness's approx units" in md


def test_the_model_free_pages_help_speaks_of_retrieval_not_of_judges_or_prompts(tmp_path):
    with pytest.MonkeyPatch.context() as mp:
        paths = pipeline(tmp_path, run_args=("--retrieval-only",), monkeypatch=mp)
    page = open(paths["html"], encoding="utf-8").read()
    help_text = page.split('<h2 id="questions">Every question</h2>', 1)[1].split("</p>", 1)[0]
    assert "No model was asked" in help_text
    assert "judge" not in help_text and "prompt" not in help_text and "right" not in help_text
    assert "evidence it did not retrieve" in help_text


def test_accuracy_bars_near_zero_get_an_axis_that_shows_them():
    pytest.importorskip("matplotlib", reason="the plots extra (pip install -r requirements-plots.txt)")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import report_plots
    seen = {}
    real = plt.subplots

    def subplots(*args, **kwargs):
        fig, ax = real(*args, **kwargs)
        seen["ax"] = ax
        return fig, ax
    order = [{"label": name, "backend": name, "budget": 280, "accuracy": acc}
             for name, acc in (("none", 0.01), ("keyword", 0.05), ("bm25", 0.08))]
    scores = {"baseline": "keyword", "differences": [{"system": "bm25", "difference": 0.03, "ci_low": 0.0,
                                                      "ci_high": 0.06}],
              "contract": {"retrieval_only": False}}
    plt.subplots = subplots
    try:
        report_plots.accuracy_plot(plt, scores, order)
    finally:
        plt.subplots = real
    assert seen["ax"].get_ylim()[1] == pytest.approx(0.11 * 1.25)
    assert seen["ax"].get_ylabel().endswith(", axis to 0.138")
