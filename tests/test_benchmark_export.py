"""export.py: a run file's answers in LongMemEval's hypotheses.jsonl and LoCoMo's prediction file,
under the benchmarks' own question ids, from small files in each benchmark's own layout imported
by the importers and answered by run.py against the fake endpoint; what it cannot map is refused
with exit 2 naming file:line and the field."""
from __future__ import annotations

import json

import pytest

import export
import run
from cli import run_cli
from conftest import script, write_config

LOCOMO = [
    {"sample_id": "conv-7",
     "conversation": {"speaker_a": "Ann", "speaker_b": "Bob",
                      "session_1_date_time": "1:56 pm on 8 May, 2023",
                      "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat named Tom."},
                                    {"speaker": "Bob", "dia_id": "D1:2", "text": "Nice, I run marathons."}],
                      "session_2_date_time": "9:00 am on 20 May, 2023",
                      "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "Tom likes tuna, salmon."}]},
     "qa": [{"question": "What is the name of Ann's cat?", "answer": "Tom", "evidence": ["D1:1"], "category": 4},
            {"question": "What does Bob's dog eat?", "adversarial_answer": "tuna", "evidence": ["D2:1"],
             "category": 5},
            {"question": "What does Tom eat?", "answer": "tuna, salmon", "evidence": ["D2:1"], "category": 1}]},
    {"sample_id": "conv-9",
     "conversation": {"speaker_a": "Cy", "speaker_b": "Di",
                      "session_1_date_time": "2:00 pm on 1 June, 2023",
                      "session_1": [{"speaker": "Cy", "dia_id": "D1:1", "text": "I moved to Oslo in 2021."}]},
     "qa": [{"question": "When did Cy move to Oslo?", "answer": 2021, "evidence": ["D1:1"], "category": 2}]},
]


def lme_record(qid: str, qtype: str, answer: str) -> dict:
    return {"question_id": qid, "question_type": qtype, "question": f"What is my cat called ({qid})?",
            "answer": answer, "question_date": "2023/05/30 (Tue) 23:40",
            "haystack_session_ids": [f"s-{qid}"], "haystack_dates": ["2023/05/20 (Sat) 10:00"],
            "haystack_sessions": [[{"role": "user", "content": "My cat is called Tom.", "has_answer": True},
                                   {"role": "assistant", "content": "Tom is a fine name."}]],
            "answer_session_ids": [f"s-{qid}"]}


LONGMEMEVAL = [lme_record("e47becba", "single-session-user", "Tom"),
               lme_record("gpt4_70e84552_abs", "single-session-user", "You did not mention a dog.")]


def imported_run(tmp_path, benchmark: str, source: list, backend: str = "keyword", **config) -> tuple[str, str, str]:
    """The source file, written in the benchmark's layout; the config of its import; one run of
    it by run.py against the fake endpoint (needs the fake_llm fixture)."""
    src = tmp_path / ("longmemeval_s.json" if benchmark == "longmemeval" else "locomo10.json")  # names the variant
    src.write_text(json.dumps(source), encoding="utf-8")
    dataset = tmp_path / f"{benchmark}.jsonl"
    done = script(f"data/import_{benchmark}.py", str(src), "--out", str(dataset))
    assert done.returncode == 0, done.stderr
    cfg = write_config(tmp_path, dataset=str(dataset), **config)
    out = str(tmp_path / "runs" / f"{backend}.jsonl")
    assert run_cli(run.main, ["--config", cfg, "--backend", backend, "--out", out]) == 0
    return str(src), cfg, out


def records(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_longmemeval_hypotheses_are_one_line_per_question_under_its_question_id(tmp_path, fake_llm):
    _, cfg, run_file = imported_run(tmp_path, "longmemeval", LONGMEMEVAL)
    out = tmp_path / "hypotheses.jsonl"
    assert run_cli(export.main, ["longmemeval", "--run", run_file, "--config", cfg, "--out", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(LONGMEMEVAL)
    written = [json.loads(line) for line in lines]
    assert all(list(h) == ["question_id", "hypothesis"] for h in written)
    assert [h["question_id"] for h in written] == [r["question_id"] for r in LONGMEMEVAL]
    answers = {r["qid"]: r["answer"] for r in records(run_file)}
    assert {h["question_id"]: h["hypothesis"] for h in written} == answers
    assert all(isinstance(h["hypothesis"], str) and h["hypothesis"] for h in written)


def test_locomo_predictions_are_the_samples_qa_items_with_the_model_prediction_key(tmp_path, fake_llm):
    src, cfg, run_file = imported_run(tmp_path, "locomo", LOCOMO, answer_model="gpt-test")
    out = tmp_path / "predictions.json"
    assert run_cli(export.main, ["locomo", "--run", run_file, "--config", cfg, "--locomo", src,
                                 "--out", str(out)]) == 0
    samples = json.loads(out.read_text(encoding="utf-8"))
    assert [list(s) for s in samples] == [["sample_id", "qa"]] * 2
    assert [s["sample_id"] for s in samples] == ["conv-7", "conv-9"]
    answers = {r["qid"]: r["answer"] for r in records(run_file)}
    for sample, given in zip(samples, LOCOMO):
        assert len(sample["qa"]) == len(given["qa"])
        for i, (item, original) in enumerate(zip(sample["qa"], given["qa"])):
            # Every field of the item as LoCoMo holds it, and the answer under <model>_prediction
            assert {k: item[k] for k in original} == original
            assert item["gpt-test_prediction"] == answers[f"{given['sample_id']}-q{i}"]
            # The scorer reads `answer` for every question: category 5 gets the gold graded against
            if original["category"] == 5:
                assert item["answer"] == "Not mentioned in the conversation"
            assert set(item) == set(original) | {"gpt-test_prediction", "answer"}
    assert run_cli(export.main, ["locomo", "--run", run_file, "--config", cfg, "--locomo", src,
                                 "--out", str(out), "--model", "mine"]) == 0
    assert "mine_prediction" in json.loads(out.read_text(encoding="utf-8"))[0]["qa"][0]


def test_locomo_keeps_only_the_questions_the_run_answered_in_the_files_order(tmp_path, fake_llm):
    src, cfg, run_file = imported_run(tmp_path, "locomo", LOCOMO)
    kept = [r for r in records(run_file) if r["qid"] in ("conv-7-q2", "conv-7-q0")]
    (tmp_path / "runs" / "keyword.jsonl").write_text("".join(json.dumps(r) + "\n" for r in reversed(kept)))
    out = tmp_path / "predictions.json"
    assert run_cli(export.main, ["locomo", "--run", run_file, "--config", cfg, "--locomo", src,
                                 "--out", str(out)]) == 0
    samples = json.loads(out.read_text(encoding="utf-8"))
    assert [s["sample_id"] for s in samples] == ["conv-7"]
    assert [q["question"] for q in samples[0]["qa"]] == [LOCOMO[0]["qa"][0]["question"], LOCOMO[0]["qa"][2]["question"]]


def test_a_run_of_another_benchmark_is_refused_naming_the_line_and_field(tmp_path, fake_llm, capsys):
    src, cfg, run_file = imported_run(tmp_path, "locomo", LOCOMO)
    out = tmp_path / "hypotheses.jsonl"
    assert run_cli(export.main, ["longmemeval", "--run", run_file, "--config", cfg, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{run_file}:1: field 'meta.source'" in err and "'locomo', not 'longmemeval'" in err
    assert not out.exists()


def test_a_run_of_the_bundled_data_is_refused(tmp_path, fake_llm, config, capsys):
    out_run = str(tmp_path / "keyword.jsonl")
    assert run_cli(run.main, ["--config", config, "--backend", "keyword", "--out", out_run]) == 0
    assert run_cli(export.main, ["longmemeval", "--run", out_run, "--config", config,
                                 "--out", str(tmp_path / "h.jsonl")]) == 2
    assert f"{out_run}:1: field 'meta.source'" in capsys.readouterr().err


def test_a_locomo_file_that_does_not_hold_the_question_is_refused(tmp_path, fake_llm, capsys):
    src, cfg, run_file = imported_run(tmp_path, "locomo", LOCOMO)
    other = json.loads(json.dumps(LOCOMO))
    other[0]["qa"][1]["question"] = "Something else?"
    bad = tmp_path / "other.json"
    bad.write_text(json.dumps(other), encoding="utf-8")
    out = tmp_path / "p.json"
    assert run_cli(export.main, ["locomo", "--run", run_file, "--config", cfg, "--locomo", str(bad),
                                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{run_file}:2: question 'conv-7-q1' is not question 1 of sample 'conv-7'" in err
    assert not out.exists()
    bad.write_text(json.dumps(LOCOMO[1:]), encoding="utf-8")  # a file without the sample
    assert run_cli(export.main, ["locomo", "--run", run_file, "--config", cfg, "--locomo", str(bad),
                                 "--out", str(out)]) == 2
    assert "no such question" in capsys.readouterr().err


def test_a_failed_question_is_refused_naming_the_line_and_field(tmp_path, fake_llm, capsys):
    _, cfg, run_file = imported_run(tmp_path, "longmemeval", LONGMEMEVAL)
    rows = records(run_file)
    rows[1].update(answer=None, error="timeout")
    (tmp_path / "runs" / "keyword.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert run_cli(export.main, ["longmemeval", "--run", run_file, "--config", cfg,
                                 "--out", str(tmp_path / "h.jsonl")]) == 2
    assert f"{run_file}:2: field 'answer' is null for question 'gpt4_70e84552_abs' (error: timeout)" in \
        capsys.readouterr().err


def test_a_retrieval_only_run_is_refused(tmp_path, fake_llm, capsys):
    _, cfg, _ = imported_run(tmp_path, "longmemeval", LONGMEMEVAL)
    out = str(tmp_path / "ro.jsonl")
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", out, "--retrieval-only"]) == 0
    assert run_cli(export.main, ["longmemeval", "--run", out, "--config", cfg, "--out", str(tmp_path / "h.jsonl")]) == 2
    assert f"{out}:1: field 'retrieval_only' is true" in capsys.readouterr().err


@pytest.mark.parametrize("line, expected", [
    ("{not json\n", ":2: "),
    (json.dumps({"format": "run/4", "qid": "x"}) + "\n", ":2: not a run record of format 'run/4': no field"),
])
def test_a_bad_line_is_refused_naming_the_file_and_line(tmp_path, fake_llm, capsys, line, expected):
    _, cfg, run_file = imported_run(tmp_path, "longmemeval", LONGMEMEVAL)
    rows = records(run_file)
    (tmp_path / "runs" / "keyword.jsonl").write_text(json.dumps(rows[0]) + "\n" + line)
    assert run_cli(export.main, ["longmemeval", "--run", run_file, "--config", cfg,
                                 "--out", str(tmp_path / "h.jsonl")]) == 2
    assert f"{run_file}{expected}" in capsys.readouterr().err


def test_locomo_needs_the_locomo_file_and_help_names_both_formats(tmp_path, capsys):
    assert run_cli(export.main, ["locomo", "--run", "x.jsonl", "--out", str(tmp_path / "p.json")]) == 2
    assert "--locomo is required" in capsys.readouterr().err
    done = script("export.py", "--help")
    assert done.returncode == 0 and "hypotheses.jsonl" in done.stdout and "_prediction" in done.stdout
