"""Measure the embedded default on this machine: the local model's answer calls per second, and
the wall time of the whole `make bench` answer pass (manifest, controls, keyword, judge, score, report)
with a cold response cache, then again with the warm cache.

It runs the same steps as `make pipeline`, each timed, inside one `serve.py` so the server start
is counted too. Outputs go to .cache/bench/<stamp>/ (git-ignored), never to runs/ or results/.
Timings are printed, never asserted.

The cold answer pass is set beside the engine's limit, measured in the same run. From the
server log (llama.cpp times every call): the prompt tokens the server's prompt cache could not
supply, the decode steps (generated tokens), the engine's own time on them, and the time inside
completion calls. After the pass, probes on the same server in the shape of each system's mean
call (its cached prefix, then its uncached tokens, then up to 64 generated) measure the prompt
rate and the time per decode step; the floor is uncached tokens / prompt rate + decode steps x
time per step, and wall / floor says what the harness adds.

With --model NAME the same is measured for another embedded model (serve.py, MODELS), its
config's answer_model set to that model's served name.

Usage:
  python bench/embedded.py
  python bench/embedded.py --systems none oracle --dataset tests/data/tiny.jsonl
  python bench/embedded.py --model qwen2.5-coder-0.5b --dataset data/dev-v2.jsonl
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

import requests
import yaml

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fileio import write_json_atomic  # noqa: E402
from serve import DEFAULT_MODEL, MODELS, ROOT, key_header  # noqa: E402
from machine import describe  # noqa: E402

SYSTEMS = ("none", "oracle", "full_context", "keyword", "bm25")
# llama.cpp's timings, printed by its server (serve.py's engine) after every completion call:
# "prompt eval time = X ms / N tokens", "       eval time = X ms / N tokens", "total time = X ms".
PROMPT_LINE = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
DECODE_LINE = re.compile(r"\|\s+eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
TOTAL_LINE = re.compile(r"total time =\s*([\d.]+) ms /")
PROBES = 3
PROBE_DECODE_TOKENS = 64
CHARS_PER_TOKEN = 3  # about, for this dataset's text; the log says how many tokens were read


def timed(cmd: list[str], env: dict | None = None) -> float:
    """Run a command from the repository root; return its wall time; stop on failure."""
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=ROOT, env=env)
    if r.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd[:3])} ... failed with exit code {r.returncode}")
    return time.perf_counter() - t0


def log_size() -> int | None:
    """Bytes in this run's embedded server log so far; None when no embedded server runs."""
    return os.path.getsize(os.environ["LLM_SERVER_LOG"]) if os.environ.get("LLM_SERVER_LOG") else None


def engine_work(start: int, end: int) -> dict:
    """Sums of llama.cpp's per-call timings in the server log between two offsets."""
    with open(os.environ["LLM_SERVER_LOG"], "rb") as fh:
        fh.seek(start)
        text = fh.read(end - start).decode("utf-8", errors="replace")
    prompt = [(float(ms), int(n)) for ms, n in PROMPT_LINE.findall(text)]
    decode = [(float(ms), int(n)) for ms, n in DECODE_LINE.findall(text)]
    return {"calls": len(prompt), "prompt_tokens": sum(n for _, n in prompt),
            "prompt_s": sum(ms for ms, _ in prompt) / 1000, "decode_steps": sum(n for _, n in decode),
            "decode_s": sum(ms for ms, _ in decode) / 1000,
            "completion_s": sum(float(ms) for ms in TOTAL_LINE.findall(text)) / 1000}


def probe(prompt: str, max_tokens: int, alias: str) -> dict:
    """One completion on the served model; llama.cpp's timings of it."""
    start = log_size()
    r = requests.post(f"{os.environ['LLM_BASE_URL']}/completions", timeout=600, headers=key_header(),
                      json={"model": alias, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0.0})
    r.raise_for_status()
    return engine_work(start, log_size())


def engine_floor(work: dict, mean_prompt_tokens: float, text: str, alias: str) -> dict:
    """The engine's limit for `work`, from probes run now in the shape of its mean call: a
    prefix of the mean cached length is read first (as the rules and, for full_context, the
    memories are cached in the pass), then the mean uncached length after it is timed, then up
    to 64 tokens are generated at that context length."""
    uncached = max(16, work["prompt_tokens"] // work["calls"])
    cached = max(0, round(mean_prompt_tokens) - uncached)
    rates, step_ms = [], []
    for i in range(PROBES):
        # A nonce first, so that nothing of it is in the prompt cache.
        prefix = f"probe {time.time_ns()}\n" + text[50_000 * i:][:cached * CHARS_PER_TOKEN]
        probe(prefix, 1, alias)
        timed_call = probe(prefix + text[50_000 * i + 25_000:][:uncached * CHARS_PER_TOKEN], PROBE_DECODE_TOKENS, alias)
        rates.append(timed_call["prompt_tokens"] / timed_call["prompt_s"])
        step_ms.append(timed_call["decode_s"] / max(1, timed_call["decode_steps"]) * 1000)
    rate, ms = statistics.median(rates), statistics.median(step_ms)
    floor_s = work["prompt_tokens"] / rate + work["decode_steps"] * ms / 1000
    return {"probe_cached_tokens": cached, "probe_prompt_tokens": uncached, "prompt_tokens_per_s": round(rate, 1),
            "prompt_tokens_per_s_range": [round(min(rates), 1), round(max(rates), 1)],
            "ms_per_decode_step": round(ms, 2), "ms_per_decode_step_range": [round(min(step_ms), 2), round(max(step_ms), 2)],
            "floor_s": round(floor_s, 2)}


def pipeline(cfg: str, out: str, systems: list[str], label: str) -> dict:
    """The steps of `make pipeline`, each timed; returns seconds per step, calls per second and,
    with the embedded server, the engine's work per run step."""
    py = sys.executable
    runs = [os.path.join(out, "runs", f"{s}.jsonl") for s in systems]
    steps: dict = {"manifest": timed([py, "manifest.py", cfg, "--backends", *systems,
                                      "--out-dir", os.path.join(out, "results")])}
    with open(cfg, encoding="utf-8") as fh:
        manifest = os.path.join(out, "results", f"manifest-{yaml.safe_load(fh)['run_id']}.json")
    rates = {}
    for s, path in zip(systems, runs):
        start = log_size()
        steps[f"run {s}"] = timed([py, "run.py", "--config", cfg, "--backend", s, "--out", path])
        with open(path, encoding="utf-8") as fh:
            recs = [json.loads(line) for line in fh]
        fresh = sum(1 for r in recs if not r["cached"])
        rates[s] = {"questions": len(recs), "model_calls": fresh,
                    "calls_per_s": round(fresh / steps[f"run {s}"], 3) if fresh else None,
                    "mean_prompt_tokens": statistics.mean(r["usage"]["prompt_tokens"] for r in recs if not r["cached"])
                    if fresh else None,
                    "engine": engine_work(start, log_size()) if start is not None else None}
    verdicts = os.path.join(out, "results", "verdicts.jsonl")
    steps["judge"] = timed([py, "judge.py", "--config", cfg, "--runs", *runs, "--out", verdicts])
    scores = os.path.join(out, "results", "scores.json")
    steps["score"] = timed([py, "score.py", "--runs", *runs, "--verdicts", verdicts, "--baseline",
                            "keyword" if "keyword" in systems else systems[-1], "--json", scores,
                            "--manifest", manifest])
    steps["report"] = timed([py, "report.py", "--scores", scores, "--manifest", manifest, "--runs", *runs,
                             "--verdicts", verdicts, "--out", os.path.join(out, "results", "report.md")])
    total = sum(steps.values())
    print(f"\n[{label}] " + ", ".join(f"{k} {v:.1f} s" for k, v in steps.items()) + f"; total {total:.1f} s",
          file=sys.stderr)
    for s, r in rates.items():
        print(f"[{label}] {s}: {r['model_calls']} model calls for {r['questions']} questions, "
              f"{r['calls_per_s']} calls/s", file=sys.stderr)
    return {"steps_s": {k: round(v, 2) for k, v in steps.items()}, "total_s": round(total, 2), "systems": rates}


def at_the_limit(result: dict, text: str, alias: str) -> dict | None:
    """The cold answer pass beside the engine's floor, per system and in all; printed and returned."""
    if log_size() is None:
        print("[cold cache] no embedded server, so no engine floor", file=sys.stderr)
        return None
    rows = {}
    for s, r in result["systems"].items():
        work = r["engine"]
        if not work["calls"]:
            continue
        rows[s] = {"wall_s": result["steps_s"][f"run {s}"], **{k: round(v, 2) for k, v in work.items()},
                   **engine_floor(work, r["mean_prompt_tokens"], text, alias)}
    total = {k: round(sum(row[k] for row in rows.values()), 2)
             for k in ("wall_s", "floor_s", "completion_s", "prompt_s", "decode_s", "prompt_tokens", "decode_steps")}
    print("\n[cold cache] answer pass at the engine's limit (floor: uncached prompt tokens / probed prompt rate "
          "+ decode steps x probed time per step):", file=sys.stderr)
    for s, row in {**rows, "all": total}.items():
        probe_note = (f"; probes {row['prompt_tokens_per_s']} tokens/s on {row['probe_prompt_tokens']} tokens after "
                      f"{row['probe_cached_tokens']} cached {row['prompt_tokens_per_s_range']}, "
                      f"{row['ms_per_decode_step']} ms per step {row['ms_per_decode_step_range']}") if s != "all" else ""
        print(f"  {s}: wall {row['wall_s']:.1f} s, floor {row['floor_s']:.1f} s, wall/floor "
              f"{row['wall_s'] / row['floor_s']:.2f}; engine {row['prompt_s'] + row['decode_s']:.1f} s "
              f"({row['prompt_tokens']} uncached prompt tokens in {row['prompt_s']:.1f} s, {row['decode_steps']} "
              f"decode steps in {row['decode_s']:.1f} s), inside completion calls {row['completion_s']:.1f} s"
              f"{probe_note}", file=sys.stderr)
    return {"systems": rows, "all": total, "wall_over_floor": round(total["wall_s"] / total["floor_s"], 3)}


def main(argv: list[str] | None = None) -> int:
    """Outer mode serves the model and re-runs this script inside; inner mode measures."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=os.path.join(ROOT, "config.yaml"))
    ap.add_argument("--dataset", help="override the config's dataset")
    ap.add_argument("--systems", nargs="+", default=list(SYSTEMS))
    ap.add_argument("--model", choices=sorted(MODELS), default=DEFAULT_MODEL)
    ap.add_argument("--threads", type=int, help="serve.py --threads (default: serve.py's, all cores); "
                    "1 when another job holds a core (bench/README.md, \"Two threads on a shared machine\")")
    ap.add_argument("--inner", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)

    if a.inner:
        cfg = os.path.join(a.inner, "config.yaml")
        cold = pipeline(cfg, os.path.join(a.inner, "cold"), a.systems, "cold cache")
        with open(os.path.join(ROOT, "data", "cases.jsonl"), encoding="utf-8") as fh:
            text = fh.read()
        result = {"cold": cold, "cold_at_the_limit": at_the_limit(cold, text, MODELS[a.model].alias),
                  "warm": pipeline(cfg, os.path.join(a.inner, "warm"), a.systems, "warm cache")}
        with open(os.path.join(a.inner, "inner.json"), "w", encoding="utf-8") as fh:
            json.dump(result, fh)
        return 0

    out = os.path.join(ROOT, ".cache", "bench", time.strftime("%Y%m%dT%H%M%S"))
    os.makedirs(out)
    with open(a.config, encoding="utf-8") as fh:
        cfg = yaml.safe_load(fh)
    cfg["cache_dir"] = os.path.join(out, "llm-cache")  # cold: a cache of its own
    cfg["answer_model"] = MODELS[a.model].alias
    if a.dataset:
        cfg["dataset"] = os.path.abspath(a.dataset)
    elif not os.path.isabs(cfg["dataset"]):
        cfg["dataset"] = os.path.join(os.path.dirname(os.path.abspath(a.config)), cfg["dataset"])
    with open(os.path.join(out, "config.yaml"), "w", encoding="utf-8") as fh:
        yaml.safe_dump(cfg, fh, allow_unicode=True)
    t0 = time.perf_counter()
    threads = ["--threads", str(a.threads)] if a.threads else []
    r = subprocess.run([sys.executable, "serve.py", "--model", a.model, *threads, "--", sys.executable, os.path.abspath(__file__),
                        "--inner", out, "--model", a.model, "--systems", *a.systems], cwd=ROOT)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        return r.returncode
    with open(os.path.join(out, "inner.json"), encoding="utf-8") as fh:
        result = json.load(fh)
    result.update(wall_s_including_server=round(wall, 2), dataset=cfg["dataset"], machine=describe(), model=a.model,
                  threads=a.threads,
                  answer_model=cfg["answer_model"], context_token_budget=cfg["context_token_budget"])
    write_json_atomic(os.path.join(out, "summary.json"), result)
    limit = result["cold_at_the_limit"]
    print(f"\nembedded bench: cold pipeline {result['cold']['total_s']} s, warm rerun {result['warm']['total_s']} s, "
          f"whole command with server start and both passes {wall:.1f} s; {describe()}"
          + (f"; cold answer pass / engine floor {limit['wall_over_floor']}" if limit else "")
          + f" (details: {os.path.relpath(out, ROOT)}/summary.json)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
