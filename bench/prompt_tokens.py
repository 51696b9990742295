"""What the answer pass makes a model read and write, counted without running it.

Rebuilds every answer prompt of a comparison from its model-free run files (run.py
--retrieval-only: the same contexts the answered pass sends) with config.yaml's answer prompt,
tokenizes each with the served model's own tokenizer (its GGUF file, vocabulary only), and
replays the server's one-slot prompt cache in the order run.py sends the calls (a system's
questions in dataset order): a call reads only the tokens after the prefix it shares with the
call before it. The chat template's few fixed tokens around the prompt are not counted.

With the engine's measured rates (`prompt_eval.py`, or a server log), the time follows:
uncached tokens / prompt rate + answer tokens / generation rate, the floor of the answer pass
(bench/README.md, "The cold answer pass at the engine's limit").

Usage:
  python bench/prompt_tokens.py --runs runs/latest/model-free --model smollm2-135m
  python bench/prompt_tokens.py --runs runs/latest/model-free --gguf PATH --prompt bench/prompts/bare.txt
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import yaml

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from answer_prompts import resolve  # noqa: E402
from context import answer_prompt  # noqa: E402
from cli import run_cli  # noqa: E402
from machine import describe  # noqa: E402
from serve import DEFAULT_MODEL, MODELS, ROOT, model_path  # noqa: E402

SYSTEMS = ("none", "oracle", "full_context", "keyword", "bm25")


def shared_prefix(a: list[int], b: list[int]) -> int:
    """How many leading tokens two prompts share: what the prompt cache supplies."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def count(path: str, template: str, tokenize) -> dict:
    """Calls, prompt tokens and the tokens the prompt cache cannot supply, for one run file."""
    calls = total = uncached = 0
    previous: list[int] = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            tokens = tokenize(answer_prompt(template, rec["asked_at"], rec["context_text"], rec["question"]))
            calls += 1
            total += len(tokens)
            uncached += len(tokens) - shared_prefix(previous, tokens)
            previous = tokens
    return {"calls": calls, "prompt_tokens": total, "uncached_tokens": uncached}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", required=True, help="the folder of the model-free run files")
    ap.add_argument("--systems", nargs="+", default=list(SYSTEMS))
    ap.add_argument("--config", default=os.path.join(ROOT, "config.yaml"))
    ap.add_argument("--prompt", help="a file with another answer prompt (default: the config's)")
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--model", choices=sorted(MODELS), default=DEFAULT_MODEL, help="an embedded model's tokenizer")
    which.add_argument("--gguf", help="any GGUF file's tokenizer")
    ap.add_argument("--prompt-rate", type=float, help="prompt tokens/s the engine reads (for the time floor)")
    ap.add_argument("--gen-rate", type=float, help="tokens/s the engine writes (for the time floor)")
    ap.add_argument("--answer-tokens", type=float, help="mean tokens per answer (for the time floor)")
    a = ap.parse_args(argv)
    import llama_cpp

    with open(a.config, encoding="utf-8") as fh:
        template = resolve(yaml.safe_load(fh)["answer_prompt"])
    if a.prompt:
        with open(a.prompt, encoding="utf-8") as fh:
            template = fh.read()
    path = a.gguf or model_path(a.model)  # the pinned file: a conversion keeps its tokenizer
    vocab = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)

    def tokenize(text: str) -> list[int]:
        return vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    print(describe())
    print(f"tokenizer: {os.path.basename(path)}; runs: {a.runs}")
    calls = uncached = 0
    for system in a.systems:
        c = count(os.path.join(a.runs, f"{system}.jsonl"), template, tokenize)
        calls += c["calls"]
        uncached += c["uncached_tokens"]
        per_call = c["uncached_tokens"] / max(c["calls"], 1)
        print(f"{system}: {c['calls']} calls, {c['prompt_tokens']:,} prompt tokens, "
              f"{c['uncached_tokens']:,} not in the prompt cache ({per_call:.0f} a call)")
    print(f"all: {calls} calls, {uncached:,} prompt tokens to read")
    if a.prompt_rate and a.gen_rate and a.answer_tokens:
        floor = uncached / a.prompt_rate + calls * a.answer_tokens / a.gen_rate
        print(f"floor at {a.prompt_rate:g} prompt tokens/s, {a.gen_rate:g} generated tokens/s and "
              f"{a.answer_tokens:g} tokens an answer: {floor:,.0f} s ({floor / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
