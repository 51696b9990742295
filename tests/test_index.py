"""results/index.json and index.html: every report and compare page under a results folder is a
row, rows of one contract grouped, rows whose page is gone dropped."""
from __future__ import annotations

import json
import os

import pytest

import runindex
from report_pipeline import make_report, pipeline


@pytest.fixture(scope="module")
def model_free(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        return pipeline(tmp_path_factory.mktemp("index"), run_args=("--retrieval-only",), monkeypatch=mp)


def rows(results) -> list[dict]:
    return json.loads((results / "index.json").read_text(encoding="utf-8"))["rows"]


def test_a_report_is_listed_with_its_run_id_date_reader_systems_and_contract(model_free):
    [row] = rows(model_free["results"])
    manifest = json.load(open(model_free["manifest"], encoding="utf-8"))
    scores = json.load(open(model_free["scores"], encoding="utf-8"))
    assert row["page"] == "report.html" and row["run_ids"] == [manifest["run_id"]]
    assert row["created_utc"] == manifest["created_utc"] and row["reader"] == scores["contract"]["answer_model"]
    assert row["fingerprint"] == runindex.contract_fingerprint(scores["contract"], scores["budgets"])
    assert [(h["label"], h["metric"], h["value"]) for h in row["systems"]] == \
        [(s["label"], "recall_all_in_context", s["recall_all_in_context"]) for s in scores["systems"]]
    page = (model_free["results"] / "index.html").read_text(encoding="utf-8")
    assert 'href="report.html"' in page and f"Contract {row['fingerprint']}" in page


def test_pages_of_one_contract_are_grouped_and_a_deleted_page_leaves_the_index(model_free):
    again = dict(model_free, md=str(model_free["results"] / "again" / "report.md"))
    assert make_report(again) == 0
    listed = rows(model_free["results"])
    assert sorted(r["page"] for r in listed) == [os.path.join("again", "report.html"), "report.html"]
    assert len({r["fingerprint"] for r in listed}) == 1
    assert (model_free["results"] / "index.html").read_text(encoding="utf-8").count("<h2") == 1
    os.unlink(model_free["results"] / "again" / "report.html")
    assert make_report(model_free) == 0
    assert [r["page"] for r in rows(model_free["results"])] == ["report.html"]


def test_a_page_outside_a_results_folder_is_indexed_nowhere(tmp_path):
    assert runindex.index_root(str(tmp_path / "out" / "report.html")) is None
    assert runindex.index_root(str(tmp_path / "results" / "RUN" / "model-free" / "report.html")) == \
        str(tmp_path / "results")
