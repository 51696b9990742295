"""Measure a reader: one answer prompt and one served model on the controls of a split, graded by
the rules alone, with the time of each system's answers.

The contexts are run.py's own (`--retrieval-only` run files, so each system's memories are what
`make bench` would show); each question is then asked one at a time with the request run.py
sends (one user message, temperature 0, the config's seed, max_tokens), and the answer graded by
rules.deterministic without a judge, as judge.py grades a rules-only run. Accuracy is over the
answerable questions (contract.is_answerable), as score.py counts it. Run it inside serve.py,
which serves the model; timings are printed, never asserted, with the load average.

Usage:
  python serve.py --model qwen2.5-coder-0.5b --threads 1 -- \\
      python bench/reader.py --dataset data/dev-v2.jsonl --systems oracle none
  python serve.py --threads 1 -- python bench/reader.py --dataset data/dev-v2.jsonl --prompt my-prompt.txt
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time

import requests
import yaml

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from context import answer_prompt  # noqa: E402
from contract import is_answerable  # noqa: E402
from fileio import write_json_atomic  # noqa: E402
from rules import deterministic  # noqa: E402
from serve import ROOT, key_header  # noqa: E402


def contexts(cfg_path: str, system: str, out_dir: str) -> list[dict]:
    """The system's records from a retrieval-only run of run.py: question, gold and context."""
    path = os.path.join(out_dir, f"{system}.jsonl")
    subprocess.run([sys.executable, "run.py", "--config", cfg_path, "--backend", system, "--out", path,
                    "--retrieval-only"], cwd=ROOT, check=True, capture_output=True)
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def ask(url: str, model: str, prompt: str, max_tokens: int, seed: int) -> tuple[str, int]:
    """One chat completion as run.py sends it; (the answer, the prompt's tokens)."""
    r = requests.post(f"{url}/chat/completions", timeout=900, headers=key_header(),
                      json={"model": model, "messages": [{"role": "user", "content": prompt}],
                            "temperature": 0.0, "seed": seed, "max_tokens": max_tokens})
    r.raise_for_status()
    body = r.json()
    return body["choices"][0]["message"]["content"] or "", body["usage"]["prompt_tokens"]


def measure(records: list[dict], template: str, url: str, model: str, max_tokens: int, seed: int) -> dict:
    """Ask every question of one system's records; accuracy, per type, time and each answer."""
    rows, prompt_tokens, t0 = [], 0, time.perf_counter()
    for rec in records:
        prompt = answer_prompt(template, rec["asked_at"], rec["context_text"], rec["question"])
        answer, tokens = ask(url, model, prompt, max_tokens, seed)
        prompt_tokens += tokens
        verdict = deterministic({**rec, "answer": answer}, with_judge=False)
        rows.append({"qid": rec["qid"], "type": rec["type"], "gold": rec["gold_answer"], "answer": answer,
                     "correct": verdict is not None and verdict[0] == "correct",
                     "layer": verdict[1] if verdict else "no_match", "answerable": is_answerable(rec)})
        print(f"  {rec['type']}: {'right' if rows[-1]['correct'] else 'wrong'} {rec['gold_answer']!r} "
              f"<- {answer[:80]!r}", file=sys.stderr)
    wall = time.perf_counter() - t0
    answerable = [r for r in rows if r["answerable"]]
    per_type = collections.defaultdict(lambda: [0, 0])
    for r in rows:
        per_type[r["type"]][0] += r["correct"]
        per_type[r["type"]][1] += 1
    right = sum(r["correct"] for r in answerable)
    return {"accuracy": round(right / len(answerable), 3) if answerable else None, "right": right,
            "answerable": len(answerable), "per_type": {t: f"{a}/{n}" for t, (a, n) in sorted(per_type.items())},
            "wall_s": round(wall, 1), "prompt_tokens": prompt_tokens, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=os.path.join(ROOT, "config.yaml"))
    ap.add_argument("--dataset", required=True, help="the split to measure on (a dev split: tune on nothing else)")
    ap.add_argument("--systems", nargs="+", default=["oracle", "none"])
    ap.add_argument("--prompt", help="a file with the answer prompt to try (default: the config's answer_prompt)")
    ap.add_argument("--max-tokens", type=int, help="default: the config's answer_max_tokens")
    a = ap.parse_args(argv)
    url = os.environ.get("LLM_BASE_URL")
    if not url:
        sys.exit("bench: no LLM_BASE_URL; run it inside serve.py (see --help)")
    with open(a.config, encoding="utf-8") as fh:
        cfg = yaml.safe_load(fh)
    if a.prompt:
        with open(a.prompt, encoding="utf-8") as fh:
            cfg["answer_prompt"] = fh.read()
    max_tokens = a.max_tokens or cfg["answer_max_tokens"]
    # A folder of its own even when two readers start in the same second (two models measured
    # side by side): a shared one let both append to the same run files.
    bench_dir = os.path.join(ROOT, ".cache", "bench")
    os.makedirs(bench_dir, exist_ok=True)
    out_dir = tempfile.mkdtemp(prefix=f"reader-{time.strftime('%Y%m%dT%H%M%S')}-", dir=bench_dir)
    cfg.update(dataset=os.path.abspath(a.dataset), run_id="bench-reader", cache_dir=os.path.join(out_dir, "llm"))
    cfg_path = os.path.join(out_dir, "config.yaml")
    with open(cfg_path, "w", encoding="utf-8") as fh:
        yaml.safe_dump(cfg, fh, sort_keys=False, allow_unicode=True)
    model = requests.get(f"{url}/models", timeout=30, headers=key_header()).json()["data"][0]["id"]
    result = {"model": model, "dataset": a.dataset, "prompt": cfg["answer_prompt"], "max_tokens": max_tokens,
              "systems": {}}
    for system in a.systems:
        load_before = os.getloadavg()[0]
        m = measure(contexts(cfg_path, system, out_dir), cfg["answer_prompt"], url, model, max_tokens, cfg["seed"])
        m["load_average"] = [round(load_before, 1), round(os.getloadavg()[0], 1)]
        result["systems"][system] = m
        print(f"{system}: {m['accuracy']} ({m['right']} of {m['answerable']} answerable), {m['per_type']}, "
              f"{m['wall_s']} s, {m['prompt_tokens']} prompt tokens, load average {m['load_average']}")
    write_json_atomic(os.path.join(out_dir, "reader.json"), result)
    print(f"wrote {os.path.relpath(os.path.join(out_dir, 'reader.json'), ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
