"""Prompt-evaluation and generation speed of the embedded model, every variant in one run.

The host takes a varying share of the two cores (steal), so a timing is only comparable with
one taken beside it: every measurement here alternates between the variants compared, call by
call, repeats, and prints the median and the range.

- Default, in process, on the compiled llama-cpp-python: the options behind serve.py's
  SERVER_OPTIONS and its f16 SERVED_FILE. The same prompt (N tokens of the bundled dataset's
  text, from a new offset each round) evaluated with llama-cpp-python's server defaults and with
  the chosen options, on the pinned Q4_1 file and on the f16 file; then the time per generated
  token after a 300-token prompt.
- --engines: the engines over HTTP, as the harness calls them. serve.py's server (xllamacpp's
  prebuilt llama.cpp), started as serve.py starts it, against the compiled llama-cpp-python's
  server, on the same f16 file with the same context, threads, flash attention and one slot. Per
  round and engine: an N-token prompt (max_tokens 1), a generation of up to 64 tokens after it
  (the prompt is then cached), and an answer-sized chat call (config.yaml's answer prompt with
  ~2,000 characters of memories, its answer_max_tokens).

Needs the embedded set-up (`make setup`) and the compiled engine (`make engine`). Timings are
printed, never asserted.

Usage:
  python bench/prompt_eval.py [--tokens 2000] [--rounds 4] [--threads 2]
  python bench/prompt_eval.py --engines [--rounds 6]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import requests
import yaml

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from cli import run_cli  # noqa: E402
from serve import (MODEL_ALIAS, N_CTX, ROOT, STATE_DIR, free_port, log_tail, server_command,  # noqa: E402
                   served_model, start_child, release_signals, stop, verified_model)

DEFAULTS = {"logits_all": True, "flash_attn": False}
SERVE_PY = {"logits_all": False, "flash_attn": True}
# (label, served f16 file?, options)
VARIANTS = [
    ("Q4_1, server defaults (logits_all on, flash_attn off)", False, DEFAULTS),
    ("Q4_1, logits_all off", False, {"logits_all": False, "flash_attn": False}),
    ("Q4_1, logits_all off, flash_attn on", False, SERVE_PY),
    ("f16, logits_all off, flash_attn on (serve.py)", True, SERVE_PY),
]
GENERATED = 40
# Characters of dataset text per round: each round reads from a new offset, so no engine's prompt
# cache holds the round's prompt.
ROUND_STRIDE_CHARS = 20_000
MEMORIES_CHARS = 2_000
READY_TIMEOUT_S = 180.0


# The compiled llama-cpp-python's server, set like serve.py's: the f16 file, N_CTX, the threads
# for prompts and for generation, flash attention on, logits only for the last token (its default
# computes them for every prompt token, which the harness never asks for), one slot.
def llama_cpp_server(path: str, port: int, threads: int) -> list[str]:
    """The command that serves `path` on 127.0.0.1:port with llama-cpp-python's server."""
    return [sys.executable, "-m", "llama_cpp.server", "--model", path, "--model_alias", MODEL_ALIAS,
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(N_CTX), "--n_threads", str(threads),
            "--n_threads_batch", str(threads), "--flash_attn", "true", "--logits_all", "false"]


def spread(values: list[float], fmt: str = ".0f") -> str:
    """'median [min-max]' of the values."""
    return f"{statistics.median(values):{fmt}} [{min(values):{fmt}}-{max(values):{fmt}}]"


def in_process(text: str, tokens: int, rounds: int, threads: int) -> None:
    """The server-option and file-type variants, loaded side by side, evaluated in turn."""
    from llama_cpp import Llama
    source = verified_model()
    f16 = served_model(source)
    models = [Llama(model_path=f16 if use_f16 else source, n_ctx=N_CTX, n_threads=threads,
                    n_threads_batch=threads, verbose=False, **options) for _, use_f16, options in VARIANTS]
    rates: list[list[float]] = [[] for _ in VARIANTS]
    gen_ms: list[list[float]] = [[] for _ in VARIANTS]
    for r in range(rounds + 1):  # round 0 warms the pages and caches up and is not counted
        prompt = models[0].tokenize(text[r * ROUND_STRIDE_CHARS:].encode("utf-8"))[:tokens]
        order = range(len(VARIANTS)) if r % 2 else reversed(range(len(VARIANTS)))
        for i in order:
            model = models[i]
            model.reset()
            t0 = time.perf_counter()
            model.eval(prompt)
            seconds = time.perf_counter() - t0
            # Generation: one token per decode step, as the server answers, after a short prompt.
            model.reset()
            model.eval(prompt[:300])
            t0 = time.perf_counter()
            for token in prompt[300:300 + GENERATED]:
                model.eval([token])
            if r:
                rates[i].append(len(prompt) / seconds)
                gen_ms[i].append((time.perf_counter() - t0) / GENERATED * 1000)
    for (label, _, _), rate, ms in zip(VARIANTS, rates, gen_ms):
        print(f"{label}: {tokens}-token prompts {spread(rate)} tokens/s; {spread(ms, '.1f')} ms per "
              f"generated token ({rounds} rounds)", flush=True)


def wait_models(url: str, proc: subprocess.Popen, log: str) -> None:
    """Until the server at url answers /v1/models; RuntimeError if it exits or times out."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"a server exited with code {proc.returncode}; log tail:\n{log_tail(log)}")
        try:
            if requests.get(f"{url}/v1/models", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {READY_TIMEOUT_S} s; log tail:\n{log_tail(log)}")


def call(url: str, path: str, body: dict) -> tuple[float, dict]:
    """POST one request; its wall time in seconds and its usage."""
    t0 = time.perf_counter()
    r = requests.post(f"{url}{path}", json=body, timeout=600)
    seconds = time.perf_counter() - t0
    r.raise_for_status()
    return seconds, r.json()["usage"]


def engines(text: str, tokens: int, rounds: int, threads: int) -> None:
    """serve.py's engine (xllamacpp) against the compiled llama-cpp-python, both serving the f16
    file over HTTP, in turn."""
    with open(os.path.join(ROOT, "config.yaml"), encoding="utf-8") as fh:
        cfg = yaml.safe_load(fh)
    f16 = served_model(verified_model())
    logs = {name: os.path.join(STATE_DIR, f"prompt-eval-{name}.log") for name in ("llama-cpp-python", "xllamacpp")}
    ports = {name: free_port() for name in logs}
    commands = {"llama-cpp-python": llama_cpp_server(f16, ports["llama-cpp-python"], threads),
                "xllamacpp": server_command(f16, ports["xllamacpp"], threads)}
    procs: dict[str, subprocess.Popen] = {}
    try:
        for name, command in commands.items():
            with open(logs[name], "w", encoding="utf-8") as log_fh:
                procs[name] = start_child(command, stdout=log_fh, stderr=subprocess.STDOUT, start_new_session=True)
            release_signals()
        for name in commands:
            wait_models(f"http://127.0.0.1:{ports[name]}", procs[name], logs[name])
        chars_per_token = 3  # enough text for `tokens` tokens; the usage says how many were read
        results: dict[str, dict[str, list[float]]] = {n: {"prompt": [], "gen": [], "answer": [], "tokens": [],
                                                          "answer_tokens": []}
                                                      for n in commands}
        for r in range(rounds + 1):  # round 0 warms up and is not counted
            start = r * ROUND_STRIDE_CHARS
            prompt = text[start:start + tokens * chars_per_token]
            memories = text[start + tokens * chars_per_token:][:MEMORIES_CHARS]
            answer = cfg["answer_prompt"].format(asked_at="2026-01-01T00:00:00Z", context=memories,
                                                 question="What did the user decide about the release?")
            for name in (list(commands) if r % 2 else list(commands)[::-1]):
                url = f"http://127.0.0.1:{ports[name]}"
                body = {"model": MODEL_ALIAS, "prompt": prompt, "max_tokens": 1, "temperature": 0.0}
                seconds, usage = call(url, "/v1/completions", body)
                # The same prompt again, now cached, generating up to 64 tokens (the text is a JSON
                # dataset, so the model rarely stops early; the usage says how many it wrote).
                gen_s, gen_usage = call(url, "/v1/completions", {**body, "max_tokens": 64})
                answer_s, answer_usage = call(url, "/v1/chat/completions",
                                   {"model": MODEL_ALIAS, "messages": [{"role": "user", "content": answer}],
                                    "max_tokens": cfg["answer_max_tokens"], "temperature": 0.0, "seed": cfg["seed"]})
                if r:
                    results[name]["tokens"].append(usage["prompt_tokens"])
                    results[name]["prompt"].append(usage["prompt_tokens"] / seconds)
                    results[name]["gen"].append(gen_s / gen_usage["completion_tokens"] * 1000)
                    results[name]["answer"].append(answer_s)
                    results[name]["answer_tokens"].append(answer_usage["prompt_tokens"])
        for name, res in results.items():
            print(f"{name}: {spread(res['tokens'])}-token prompts {spread(res['prompt'])} tokens/s; {spread(res['gen'], '.1f')} ms "
                  f"per generated token; answer-sized call ({spread(res['answer_tokens'])} prompt tokens after the "
                  f"chat template) {spread(res['answer'], '.2f')} s ({rounds} rounds)",
                  flush=True)
        ours, theirs = results["llama-cpp-python"], results["xllamacpp"]
        pairs = [b / a for a, b in zip(ours["prompt"], theirs["prompt"])]
        answer_pairs = [b / a for a, b in zip(ours["answer"], theirs["answer"])]
        print(f"xllamacpp / llama-cpp-python, same round: prompt tokens/s {spread(pairs, '.2f')}; "
              f"answer-call time {spread(answer_pairs, '.2f')}")
        with open(logs["xllamacpp"], encoding="utf-8", errors="replace") as fh:
            print("serve.py's server:", *[line.strip() for line in fh if line.startswith("xllamacpp ")])
    finally:
        for proc in procs.values():
            stop(proc)


def main(argv: list[str] | None = None) -> int:
    """Measure and print; 0."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=4, help="measured rounds, after one warm-up round")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--engines", action="store_true", help="serve.py's engine against the compiled one, over HTTP")
    a = ap.parse_args(argv)
    with open(os.path.join(ROOT, "data", "cases.jsonl"), encoding="utf-8") as fh:
        text = fh.read()
    if a.engines:
        engines(text, a.tokens, a.rounds, a.threads)
    else:
        in_process(text, a.tokens, a.rounds, a.threads)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
