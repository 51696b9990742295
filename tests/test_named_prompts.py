"""The benchmarks' own answer prompts, chosen by name in config.yaml: the upstream texts pinned,
the prompt run.py sends, its sha256 in every record and in the manifest with where the text was
read, one prompt per comparison, and the report rebuilding it."""
from __future__ import annotations

import json
import os

import pytest

import judge
import manifest
import run
import score
from answer_prompts import LOCOMO_COMMIT, LONGMEMEVAL_COMMIT, NAMED_PROMPTS
from cli import InputError, run_cli
from config import load_config
from conftest import write_config
from fileio import sha256_text
from report_explorer import fill_parts, prompt_parts

# sha256 of each upstream text, measured on the text as it stands in its file at the commit
# answer_prompts.py names (bench/upstream_scorers.py finds each text there): a word changed here
# is no longer the benchmark's prompt.
UPSTREAM_SHA256 = {
    "longmemeval": "e427ff913456e51a132ec865b1b5038d562bdc36890976943ad421cc9b365c9d",
    "longmemeval_cot": "9e2b3110622929ab896696dd8937231c7436740ec3b9586f653f97346e19ab2c",
    "locomo": "a30fe18a6c9b58c5d22b6188860e5a99cdfef33fcc8a36141b571d954b9b0266",
}


def records(path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_the_upstream_texts_are_pinned_and_fill_our_fields_in_upstreams_order():
    assert {n: sha256_text(p.text) for n, p in NAMED_PROMPTS.items()} == UPSTREAM_SHA256
    for p in NAMED_PROMPTS.values():
        # positional fields only, one per name, and the template is the text with them named
        assert p.text.count("{") == p.text.count("{}") == len(p.fields)
        filled = p.template.format(asked_at="<DATE>", context="<CONTEXT>", question="<QUESTION>")
        order = {"asked_at": "<DATE>", "context": "<CONTEXT>", "question": "<QUESTION>"}
        assert filled == p.lead.format(context="<CONTEXT>") + p.text.format(*(order[f] for f in p.fields))
    assert NAMED_PROMPTS["longmemeval"].fields == ("context", "asked_at", "question")
    assert NAMED_PROMPTS["locomo"].fields == ("question",) and NAMED_PROMPTS["locomo"].lead == "{context}\n\n"
    assert {p.commit for p in NAMED_PROMPTS.values()} == {LONGMEMEVAL_COMMIT, LOCOMO_COMMIT}


def test_the_config_takes_a_prompt_by_name_and_names_the_closest_for_a_misspelt_one(tmp_path):
    cfg = load_config(write_config(tmp_path, answer_prompt="longmemeval"))
    assert cfg["answer_prompt"] == NAMED_PROMPTS["longmemeval"].template
    assert cfg["answer_prompt_name"] == "longmemeval"
    assert load_config(write_config(tmp_path))["answer_prompt_name"] is None  # a prompt written out
    with pytest.raises(InputError, match=r"names no known prompt: 'locomoo'; did you mean 'locomo'\?; named prompts: "
                                         r"longmemeval, longmemeval_cot, locomo"):
        load_config(write_config(tmp_path, answer_prompt="locomoo"))
    with pytest.raises(InputError, match="must contain the field"):
        load_config(write_config(tmp_path, answer_prompt="Answer {question} from {context}."))


def test_run_sends_locomos_prompt_and_every_record_carries_its_sha256(tmp_path, fake_llm):
    cfg = write_config(tmp_path, answer_prompt="locomo")
    out = tmp_path / "keyword.jsonl"
    assert run_cli(run.main, ["--config", cfg, "--backend", "keyword", "--out", str(out)]) == 0
    rows = records(out)
    template = NAMED_PROMPTS["locomo"].template
    assert {r["prompt_sha256"] for r in rows} == {sha256_text(template)}
    sent = {b["messages"][-1]["content"] for b in fake_llm.bodies if len(b["messages"]) == 1}
    for r in rows:
        prompt = (f"{r['context_text']}\n\n\nBased on the above context, write an answer in the form of a short phrase "
                  f"for the following question. Answer with exact words from the context whenever possible.\n\n"
                  f"Question: {r['question']} Short answer:\n")
        assert prompt in sent


def test_the_manifest_records_the_named_prompt_where_it_was_read_and_its_sha256(tmp_path, fake_llm):
    cfg = write_config(tmp_path, answer_prompt="longmemeval")
    assert run_cli(manifest.main, [cfg, "--backends", "keyword", "--out-dir", str(tmp_path)]) == 0
    m = json.loads((tmp_path / "manifest-mb-embedded-001.json").read_text(encoding="utf-8"))
    assert m["prompt_sha256"] == sha256_text(NAMED_PROMPTS["longmemeval"].template)
    assert m["answer_prompt"] == {"name": "longmemeval", "repository": "xiaowu0162/LongMemEval",
                                  "file": "src/generation/run_generation.py", "commit": LONGMEMEVAL_COMMIT,
                                  "code": NAMED_PROMPTS["longmemeval"].code,
                                  "upstream_sha256": UPSTREAM_SHA256["longmemeval"],
                                  "template_sha256": m["prompt_sha256"]}
    assert run_cli(manifest.main, [write_config(tmp_path), "--backends", "keyword", "--out-dir", str(tmp_path)]) == 0
    assert json.loads((tmp_path / "manifest-mb-embedded-001.json").read_text(encoding="utf-8"))["answer_prompt"] is None


def test_systems_answered_under_different_prompts_are_not_one_comparison(tmp_path, fake_llm, capsys):
    named, written = tmp_path / "named", tmp_path / "written"
    named.mkdir()
    written.mkdir()
    kw, bm = tmp_path / "keyword.jsonl", tmp_path / "bm25.jsonl"
    assert run_cli(run.main, ["--config", write_config(named, answer_prompt="locomo"), "--backend", "keyword",
                              "--out", str(kw)]) == 0
    cfg = write_config(written)
    assert run_cli(run.main, ["--config", cfg, "--backend", "bm25", "--out", str(bm)]) == 0
    capsys.readouterr()
    verdicts = str(tmp_path / "verdicts.jsonl")
    assert run_cli(judge.main, ["--config", cfg, "--runs", str(kw), str(bm), "--out", verdicts]) == 2
    err = capsys.readouterr().err
    assert "field 'prompt_sha256' differs" in err and sha256_text(NAMED_PROMPTS["locomo"].template)[:12] in err
    # Both under the named prompt: one comparison
    assert run_cli(run.main, ["--config", write_config(named, answer_prompt="locomo"), "--backend", "bm25",
                              "--out", str(bm), "--fresh"]) == 0
    assert run_cli(judge.main, ["--config", cfg, "--runs", str(kw), str(bm), "--out", verdicts]) == 0
    assert run_cli(score.main, ["--config", cfg, "--runs", str(kw), str(bm), "--verdicts", verdicts,
                                "--baseline", "keyword", "--resamples", "100"]) == 0


def test_the_report_rebuilds_the_named_prompt_from_the_config(tmp_path):
    cfg = write_config(tmp_path, answer_prompt="longmemeval")
    template = NAMED_PROMPTS["longmemeval"].template
    parts, why = prompt_parts({"config": os.path.abspath(cfg)}, {"prompt_sha256": sha256_text(template)})
    assert why is None
    fields = {"asked_at": "2023-05-30T23:40:00", "context": "[1] (2023-05-20) user: hi", "question": "Q?"}
    assert fill_parts(parts, fields) == template.format(**fields)
