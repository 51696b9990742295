"""score.py --csv: every table of scores.json as a CSV file with the JSON's exact numbers."""
from __future__ import annotations

import csv
import json

import score
from cli import run_cli
from conftest import write_config
from fileio import sha256_file
from records import run_record, verdict_for, write_dataset, write_jsonl


def read_csv(path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_score_csv_holds_every_table_with_the_json_numbers(tmp_path):
    recs = [run_record(name, f"q{i}", f"c{i // 2}", "g" if (i + (name == "bm25")) % 3 else "x", ["t1"], ["t1"],
                       type="single_hop" if i % 2 else "multi_hop")
            for name in ("keyword", "bm25") for i in range(8)]
    data = tmp_path / "data.jsonl"
    write_dataset(data, recs)
    for r in recs:
        r["dataset_sha256"] = sha256_file(str(data))
    runs = [write_jsonl(tmp_path / f"{name}.jsonl", [r for r in recs if r["backend"] == name])
            for name in ("keyword", "bm25")]
    verdicts = write_jsonl(tmp_path / "verdicts.jsonl",
                           [verdict_for(r, "correct" if r["answer"] == "g" else "incorrect") for r in recs])
    out = tmp_path / "csv"
    assert run_cli(score.main, ["--runs", *runs, "--verdicts", verdicts, "--baseline", "keyword", "--resamples", "200",
                                "--config", write_config(tmp_path, dataset=str(data)),
                                "--json", str(tmp_path / "scores.json"), "--csv", str(out)]) == 0
    scores = json.loads((tmp_path / "scores.json").read_text(encoding="utf-8"))
    assert {p.name for p in out.iterdir()} == {"systems.csv", "by_type.csv", "differences.csv",
                                               "differences_by_type.csv", "retrieval_differences.csv",
                                               "minimum_detectable_difference.csv", "questions.csv"}
    systems = {r["label"]: r for r in read_csv(out / "systems.csv")}
    for s in scores["systems"]:
        row = systems[s["label"]]
        assert float(row["accuracy"]) == s["accuracy"] and int(row["n"]) == s["n"]
        assert float(row["accuracy_ci_low"]) == s["accuracy_ci"][0]
        assert int(row["failure_causes.reader_miss"]) == s["failure_causes"]["reader_miss"]
    [d] = scores["differences"]
    [row] = read_csv(out / "differences.csv")
    assert (row["system"], float(row["difference"]), float(row["ci_low"]), float(row["ci_high"])) == \
        (d["system"], d["difference"], d["ci_low"], d["ci_high"])
    by_type = {(r["system"], r["type"]): r for r in read_csv(out / "by_type.csv")}
    bm25 = next(s for s in scores["systems"] if s["label"] == "bm25")
    assert float(by_type[("bm25", "multi_hop")]["accuracy"]) == bm25["by_type"]["multi_hop"]["accuracy"]
    assert len(read_csv(out / "questions.csv")) == len(scores["questions"]) == 16
