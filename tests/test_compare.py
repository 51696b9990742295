"""compare.py: runs of one contract across run ids, paired question by question with score.py's
intervals, written as a page, JSON and CSV; runs that differ in the contract refused, naming the
field."""
from __future__ import annotations

import csv
import json

import compare
import judge
import run
from cli import run_cli
from conftest import write_config
from fileio import sha256_file
from records import run_record, verdict_for, write_dataset, write_jsonl


def read_csv(path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def run_and_judge(tmp_path, run_id: str, backend: str = "bm25", **overrides) -> tuple[str, str]:
    """One run id's run of a backend and its verdicts, under runs/RUN_ID and results/RUN_ID."""
    folder = tmp_path / run_id
    folder.mkdir()
    cfg = write_config(folder, run_id=run_id, **overrides)
    out = str(tmp_path / "runs" / run_id / f"{backend}.jsonl")
    verdicts = str(tmp_path / "results" / run_id / "verdicts.jsonl")
    assert run_cli(run.main, ["--config", cfg, "--backend", backend, "--out", out]) == 0
    assert run_cli(judge.main, ["--config", cfg, "--runs", out, "--out", verdicts]) == 0
    return out, verdicts


def test_two_runs_of_one_system_with_a_changed_setting_give_a_paired_difference_a_page_and_a_csv(
        tmp_path, fake_llm, config):
    run_a, verdicts_a = run_and_judge(tmp_path, "A")
    run_b, verdicts_b = run_and_judge(tmp_path, "B", time_aware_search=True,
                                      backends={"bm25": {"recency_half_life_days": 1}})
    out = tmp_path / "results" / "compare" / "bm25" / "compare.md"
    assert run_cli(compare.main, ["--runs", run_a, run_b, "--verdicts", verdicts_a, verdicts_b, "--config", config,
                                  "--resamples", "300", "--out", str(out)]) == 0
    c = json.loads((out.parent / "compare.json").read_text(encoding="utf-8"))
    assert [r["label"] for r in c["runs"]] == ["A/bm25", "B/bm25"] and c["baseline"] == "A/bm25"
    # the setting changed the system's name and version, and its search reads the question's date
    assert {"backend_version", "time_aware"} <= set(compare.differing(c["runs"]))
    [d] = c["differences"]
    assert d["system"] == "B/bm25" and d["baseline"] == "A/bm25" and d["clusters"] == 2
    assert d["ci_low"] is not None and d["ci_low"] <= d["difference"] <= d["ci_high"]
    systems = {s["label"]: s for s in c["systems"]}
    assert d["difference"] == systems["B/bm25"]["accuracy"] - systems["A/bm25"]["accuracy"]
    page = (out.parent / "compare.html").read_text(encoding="utf-8")
    assert "Paired difference to A/bm25" in page and "B/bm25" in page
    [row] = read_csv(out.parent / "compare-differences.csv")
    assert row["system"] == "B/bm25" and float(row["difference"]) == d["difference"]
    assert float(row["ci_low"]) == d["ci_low"] and float(row["ci_high"]) == d["ci_high"]
    assert {r["label"] for r in read_csv(out.parent / "compare-systems.csv")} == {"A/bm25", "B/bm25"}
    # the comparison is listed in the index of the runs beside it
    index = json.loads((tmp_path / "results" / "index.json").read_text(encoding="utf-8"))
    assert [(r["kind"], r["page"], r["run_ids"]) for r in index["rows"]] == \
        [("compare", "compare/bm25/compare.html", ["A", "B"])]


def test_runs_of_two_readers_are_refused_naming_the_field(tmp_path, fake_llm, config, capsys):
    run_a, verdicts_a = run_and_judge(tmp_path, "A", backend="keyword")
    run_b, verdicts_b = run_and_judge(tmp_path, "B", backend="keyword", answer_model="another-reader")
    code = run_cli(compare.main, ["--runs", run_a, run_b, "--verdicts", verdicts_a, verdicts_b, "--config", config,
                                  "--out", str(tmp_path / "results" / "compare" / "x" / "compare.md")])
    err = capsys.readouterr().err
    assert code == 2 and "field 'answer_model' differs" in err and "another-reader" in err
    assert not (tmp_path / "results" / "compare").exists()


def fixture(tmp_path, answers: dict[str, list[bool]], **per_run) -> tuple[str, list, list]:
    """Run files and verdicts of keyword under several run ids: answers[run_id][i] says whether
    question i (two per case) was answered right. per_run[run_id] overrides record fields."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    recs = {}
    for run_id, right in answers.items():
        recs[run_id] = [run_record("keyword", f"q{i}", f"c{i // 2}", "g" if ok else "x", ["t1"], ["t1"],
                                   **{"run_id": run_id, **per_run.get(run_id, {})}) for i, ok in enumerate(right)]
    data = tmp_path / "data.jsonl"
    write_dataset(data, next(iter(recs.values())))
    sha = sha256_file(str(data))
    runs, verdicts = [], []
    for run_id, rs in recs.items():
        for r in rs:
            r["dataset_sha256"] = sha
        (tmp_path / run_id).mkdir()
        runs.append(write_jsonl(tmp_path / run_id / "keyword.jsonl", rs))
        verdicts.append(write_jsonl(tmp_path / run_id / "verdicts.jsonl",
                                    [verdict_for(r, "correct" if r["answer"] == "g" else "incorrect") for r in rs]))
    return write_config(tmp_path, dataset=str(data)), runs, verdicts


def test_a_history_of_three_runs_steps_from_each_run_to_the_next_by_hand(tmp_path):
    cfg, runs, verdicts = fixture(tmp_path, {"mon": [False] * 8, "tue": [True, False] * 4, "wed": [True] * 8},
                                  tue={"backend_version": "v2"}, wed={"backend_version": "v3"})
    out = tmp_path / "results" / "compare" / "week" / "compare.md"
    assert run_cli(compare.main, ["--runs", *runs, "--verdicts", *verdicts, "--config", cfg, "--resamples", "200",
                                  "--out", str(out)]) == 0
    c = json.loads((out.parent / "compare.json").read_text(encoding="utf-8"))
    assert [(d["system"], d["difference"]) for d in c["differences"]] == [("tue/keyword", 0.5), ("wed/keyword", 1.0)]
    assert [(s["system"], s["before"], s["difference"]) for s in c["steps"]] == \
        [("tue/keyword", "mon/keyword", 0.5), ("wed/keyword", "tue/keyword", 0.5)]
    # each case holds one right and one wrong answer on tuesday: every resample draws 0.5
    assert c["steps"][0]["ci_low"] == c["steps"][0]["ci_high"] == 0.5
    assert [r["system"] for r in read_csv(out.parent / "compare-steps.csv")] == ["tue/keyword", "wed/keyword"]
    # a type on which both runs got everything wrong says so, instead of reading as a tie
    cfg, runs, verdicts = fixture(tmp_path / "zero", {"a": [False] * 4, "b": [False] * 4})
    out = tmp_path / "zero" / "results" / "compare.md"
    assert run_cli(compare.main, ["--runs", *runs, "--verdicts", *verdicts, "--config", cfg, "--out", str(out)]) == 0
    assert "0.00 [0.00, 0.00] (both got every question wrong)" in out.read_text(encoding="utf-8")


def test_runs_graded_by_two_judges_are_refused_naming_the_field(tmp_path, capsys):
    cfg, runs, verdicts = fixture(tmp_path, {"a": [True] * 4, "b": [True] * 4})
    rows = [json.loads(line) for line in open(verdicts[1], encoding="utf-8")]
    rs = [json.loads(line) for line in open(runs[1], encoding="utf-8")]
    judged = {"rules_sha256": rows[0]["rules_sha256"], "judge_model": "judge-x", "judge_prompt_sha256": "j" * 64}
    write_jsonl(tmp_path / "b" / "verdicts.jsonl", [verdict_for(r, "correct", by="llm", grader=judged) for r in rs])
    code = run_cli(compare.main, ["--runs", *runs, "--verdicts", *verdicts, "--config", cfg,
                                  "--out", str(tmp_path / "c.md")])
    assert code == 2 and "field 'judge_model' differs" in capsys.readouterr().err


def test_two_runs_with_one_name_and_a_missing_verdicts_file_are_refused_with_the_fix(tmp_path, capsys):
    cfg, runs, verdicts = fixture(tmp_path, {"a": [True] * 4, "b": [True] * 4}, b={"run_id": "a"})
    code = run_cli(compare.main, ["--runs", *runs, "--verdicts", *verdicts, "--config", cfg])
    assert code == 2 and "name them with --labels" in capsys.readouterr().err
    code = run_cli(compare.main, ["--runs", *runs, "--verdicts", verdicts[0], "--config", cfg])
    assert code == 2 and "one verdicts file per run file" in capsys.readouterr().err


def test_model_free_runs_compare_their_retrieval_without_verdicts(tmp_path, config):
    runs = []
    for run_id, backend in (("A", "keyword"), ("B", "bm25")):
        (tmp_path / run_id).mkdir()
        cfg = write_config(tmp_path / run_id, run_id=run_id)
        runs.append(str(tmp_path / "runs" / run_id / f"{backend}.jsonl"))
        assert run_cli(run.main, ["--config", cfg, "--backend", backend, "--out", runs[-1], "--retrieval-only"]) == 0
    out = tmp_path / "results" / "compare" / "free" / "compare.md"
    assert run_cli(compare.main, ["--runs", *runs, "--config", config, "--resamples", "100", "--out", str(out)]) == 0
    c = json.loads((out.parent / "compare.json").read_text(encoding="utf-8"))
    assert c["differences"] == [] and c["contract"]["retrieval_only"] is True
    assert {d["metric"] for d in c["retrieval_differences"]} == {"recall_any_at_k", "recall_all_in_context",
                                                                 "recall_all_at_k", "ndcg_at_k"}
    assert all(d["system"] == "B/bm25" and d["baseline"] == "A/keyword" for d in c["retrieval_differences"])
    assert len(read_csv(out.parent / "compare-retrieval_differences.csv")) == 4
    assert not (out.parent / "compare-differences.csv").exists()  # no answers, no table of them
    assert "n/a (model-free)" in out.read_text(encoding="utf-8")


def test_a_label_or_version_with_markup_or_escape_codes_is_shown_as_written_in_compare_md(tmp_path):
    cfg, runs, verdicts = fixture(tmp_path, {"a": [True, False] * 2, "b": [True] * 4},
                                  b={"backend_version": "v2 <img src=x onerror=alert(1)> ``` \x1b[2J"})
    out = tmp_path / "results" / "compare" / "x" / "compare.md"
    assert run_cli(compare.main, ["--runs", *runs, "--verdicts", *verdicts, "--config", cfg, "--resamples", "50",
                                  "--labels", "a", "b`` <script>", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "<img" not in text and "<script>" not in text and "\x1b" not in text
    assert "&lt;img src=x onerror=alert(1)>" in text and "\\x1b[2J" in text
