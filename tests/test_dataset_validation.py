"""Every kind of bad dataset or config input exits 2 naming path:line, before any model call."""
from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest

from conftest import ROOT, TINY, script, write_config


def tiny_cases() -> list[dict]:
    with open(TINY, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def break_case(mutate) -> list[dict]:
    cases = copy.deepcopy(tiny_cases())
    mutate(cases)
    return cases


def dump(path, cases) -> str:
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return str(path)


BAD = {
    "missing_field": (lambda cs: cs[1]["questions"][0].pop("gold_answer"), ":2:", "gold_answer"),
    "wrong_type": (lambda cs: cs[1]["sessions"][0]["turns"][0].update(text=5), ":2:", "'text'"),
    "duplicate_case": (lambda cs: cs[1].update(case_id="c001"), ":2:", "duplicate case_id"),
    "duplicate_qid": (lambda cs: cs[1]["questions"][0].update(qid="c001q1"), ":2:", "duplicate qid"),
    "duplicate_turn": (lambda cs: cs[0]["sessions"][1]["turns"][0].update(turn_id="c001-s1t1"), ":1:", "duplicate turn_id"),
    "missing_evidence": (lambda cs: cs[0]["questions"][0].update(evidence=["c001-s9t9"]), ":1:", "c001-s9t9"),
    "unknown_type": (lambda cs: cs[0]["questions"][1].update(type="trivia"), ":1:", "'type'"),
    "bad_timestamp": (lambda cs: cs[0]["sessions"][1].update(timestamp="11 May 2026"), ":1:", "'timestamp'"),
    "bad_asked_at": (lambda cs: cs[1]["questions"][2].update(asked_at="yesterday"), ":2:", "'asked_at'"),
    "sessions_out_of_order": (lambda cs: cs[0]["sessions"].reverse(), ":1:", "chronological"),
    "abstention_with_evidence": (lambda cs: cs[0]["questions"][2].update(evidence=["c001-s1t1"]), ":1:", "abstention"),
    "answerable_without_evidence": (lambda cs: cs[0]["questions"][0].update(evidence=[]), ":1:", "meta.no_evidence"),
    "meta_not_object": (lambda cs: cs[0].update(meta=[1]), ":1:", "'meta'"),
    "question_not_object": (lambda cs: cs[1]["questions"].append("what?"), ":2:", "questions[3]"),
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_bad_dataset_exits_2_naming_path_line_and_field(tmp_path, kind):
    mutate, line, needle = BAD[kind]
    path = dump(tmp_path / "bad.jsonl", break_case(mutate))
    r = script("dataset.py", "validate", path)
    assert r.returncode == 2, r.stderr
    assert f"{path}{line}" in r.stderr and needle in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_an_answerable_question_without_evidence_is_valid_when_meta_says_why(tmp_path):
    def mutate(cs: list) -> None:
        cs[0]["questions"][0].update(evidence=[], meta={"no_evidence": "the source lists no evidence"})
    r = script("dataset.py", "validate", dump(tmp_path / "ok.jsonl", break_case(mutate)))
    assert r.returncode == 0, r.stderr


def test_invalid_json_line_is_named(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(open(TINY, encoding="utf-8").read() + '{"case_id": "c9", \n', encoding="utf-8")
    r = script("dataset.py", "validate", str(path))
    assert r.returncode == 2 and f"{path}:3: invalid JSON" in r.stderr


def test_run_rejects_bad_dataset_before_any_model_call(tmp_path, fake_llm):
    path = dump(tmp_path / "bad.jsonl", break_case(BAD["missing_evidence"][0]))
    cfg = write_config(tmp_path, dataset=path)
    out = tmp_path / "runs" / "none.jsonl"
    r = script("run.py", "--config", cfg, "--backend", "none", "--out", str(out))
    assert r.returncode == 2 and f"{path}:1:" in r.stderr and "Traceback" not in r.stderr
    assert fake_llm.requests == 0
    assert not out.exists()


def test_validate_prints_counts_per_type():
    r = script("dataset.py", "validate", TINY)
    assert r.returncode == 0
    assert "2 cases, 5 sessions, 11 turns, 6 questions" in r.stdout and "abstention 1" in r.stdout


@pytest.mark.parametrize("override, needle", [
    ({"top_kk": 3}, "unknown key 'top_kk'"),
    ({"top_k": "ten"}, "key 'top_k' must be an integer"),
    ({"answer_prompt": "no fields"}, "answer_prompt"),
    ({"seed": True}, "key 'seed'"),
])
def test_bad_config_names_the_key(tmp_path, override, needle):
    cfg = write_config(tmp_path, **override)
    r = subprocess.run([sys.executable, "-m", "backends", "check-config", cfg], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and needle in r.stderr and cfg in r.stderr


def test_missing_required_config_key(tmp_path):
    import yaml
    cfg = write_config(tmp_path)
    data = yaml.safe_load(open(cfg, encoding="utf-8"))
    del data["run_id"]
    open(cfg, "w", encoding="utf-8").write(yaml.safe_dump(data))
    r = script("run.py", "--config", cfg, "--backend", "none", "--out", str(tmp_path / "x.jsonl"))
    assert r.returncode == 2 and "missing required key 'run_id'" in r.stderr


def gzipped(path, text: bytes) -> str:
    import gzip
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
        fh.write(text)
    return str(path)


def test_a_gzipped_dataset_is_read_as_it_is_and_keeps_its_sha256(tmp_path):
    # A frozen release is stored compressed: the reader takes it directly, and its sha256 is
    # that of the JSONL text, so results published on the plain file still match it.
    from dataset import dataset_counts, dataset_index, load_dataset
    from fileio import sha256_data, sha256_file
    with open(TINY, "rb") as fh:
        packed = gzipped(tmp_path / "tiny.jsonl.gz", fh.read())
    assert sha256_data(packed) == sha256_data(TINY) == sha256_file(TINY) != sha256_file(packed)
    assert dataset_index(packed) == dataset_index(TINY)
    assert dataset_counts(load_dataset(packed)) == dataset_counts(load_dataset(TINY))
    r = script("dataset.py", "validate", packed)
    assert r.returncode == 0 and f"{packed}: ok: 2 cases" in r.stdout


def test_a_cut_or_corrupt_gzipped_dataset_exits_2_naming_the_file(tmp_path):
    with open(TINY, "rb") as fh:
        whole = open(gzipped(tmp_path / "whole.jsonl.gz", fh.read()), "rb").read()
    for name, data in (("cut.jsonl.gz", whole[: len(whole) // 2]), ("bad.jsonl.gz", b"not gzip at all\n")):
        path = tmp_path / name
        path.write_bytes(data)
        r = script("dataset.py", "validate", str(path))
        assert r.returncode == 2 and f"error: {path}: not a whole gzip file (" in r.stderr, r.stderr


def test_a_run_on_the_gzipped_dataset_records_what_a_run_on_the_plain_one_does(tmp_path):
    import run
    from cli import run_cli
    with open(TINY, "rb") as fh:
        packed = gzipped(tmp_path / "tiny.jsonl.gz", fh.read())
    made = []
    for name, dataset in (("plain", TINY), ("packed", packed)):
        folder = tmp_path / name
        folder.mkdir()
        cfg = write_config(folder, dataset=dataset)
        out = folder / "keyword.jsonl"
        assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--retrieval-only", "--out", str(out)]) == 0
        made.append([{k: r[k] for k in ("qid", "dataset_sha256", "retrieved_ids", "context_text")}
                     for r in map(json.loads, open(out, encoding="utf-8"))])
    assert made[0] == made[1]
