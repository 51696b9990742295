"""The prompt the answer model read is in the run record: run.py keeps each record's context
exactly as sent (context_text), and context.answer_prompt rebuilds the prompt from it byte for
byte: full_context's lines oldest first, and a backend that rewrites turns (summary_buffer's
model-written summary) with what the model read, not turns rebuilt from the dataset."""
from __future__ import annotations

import hashlib
import re
from collections import Counter

import pytest

import run
from cli import run_cli
from config import load_config
from conftest import TINY, write_config
from context import answer_prompt
from dataset import load_dataset
from records import read_records

SYSTEMS = ("none", "oracle", "full_context", "keyword", "summary_buffer")
RANKED = re.compile(r"^\[(\d+)\] \(([^)]*)\) ")


@pytest.fixture(scope="module")
def answered(tmp_path_factory):
    """Each system run on tiny.jsonl against the fake endpoint, a budget that cuts full_context;
    the prompts the endpoint received, and the records."""
    from fake_llm import FakeLLM
    folder = tmp_path_factory.mktemp("context-text")
    backends = {**load_config(write_config(folder))["backends"], "summary_buffer": {"recent_turns": 2}}
    cfg = write_config(folder, context_token_budget=90, backends=backends)
    server = FakeLLM().start()
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("LLM_BASE_URL", server.url)
            mp.setenv("LLM_API_KEY", "sk-test-not-a-secret")
            records = {}
            for name in SYSTEMS:
                out = folder / f"{name}.jsonl"
                assert run_cli(run.main, ["--config", cfg, "--backend", name, "--out", str(out), "--no-cache"]) == 0
                records[name] = read_records(out)
        return {"records": records, "prompts": [b["messages"][-1]["content"] for b in server.bodies],
                "config": load_config(cfg)}
    finally:
        server.stop()


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_every_prompt_sent_is_rebuilt_byte_for_byte_from_its_record(answered):
    template = answered["config"]["answer_prompt"]
    rebuilt = Counter(sha(answer_prompt(template, r["asked_at"], r["context_text"], r["question"]))
                      for recs in answered["records"].values() for r in recs)
    head = template.split("{")[0]
    sent = Counter(sha(p) for p in answered["prompts"] if p.startswith(head))  # not summary_buffer's own calls
    assert sum(rebuilt.values()) == sum(len(r) for r in answered["records"].values()) > 0
    assert sent == rebuilt


def test_full_context_is_recorded_oldest_first_as_the_model_read_it(answered):
    recs = answered["records"]["full_context"]
    cut = [r for r in recs if r["hits_cut"]]
    assert cut, "the budget must cut full_context for this test to mean anything"
    for r in recs:
        lines = r["context_text"].split("\n")
        ranks = [int(RANKED.match(line).group(1)) for line in lines]
        times = [RANKED.match(line).group(2) for line in lines]
        assert ranks == sorted(ranks, reverse=True) and times == sorted(times)  # newest kept, shown oldest first
        assert len(lines) == r["hits_kept"]


def test_a_backend_that_rewrites_turns_records_what_the_model_read(answered):
    turns = {f"{t['role']}: {' '.join(t['text'].split())}" for c in load_dataset(TINY) for s in c["sessions"]
             for t in s["turns"]}
    rewritten = [line for r in answered["records"]["summary_buffer"] for line in r["context_text"].split("\n")
                 if RANKED.sub("", line) not in turns]
    assert rewritten  # the summary the backend's model wrote, as the answer model read it
    for r in answered["records"]["keyword"]:
        assert all(RANKED.sub("", line) in turns for line in r["context_text"].split("\n"))


def test_an_empty_context_is_recorded_as_sent(answered):
    assert {r["context_text"] for r in answered["records"]["none"]} == {"(no memories)"}
