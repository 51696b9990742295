"""Prompt-evaluation speed of the embedded model under llama.cpp options, in process.

The measurement behind serve.py's SERVER_OPTIONS: the same prompt (the first N tokens of the
bundled dataset's text) evaluated with the server's defaults and with the chosen options, best
of two runs each. Needs the embedded set-up (`make setup`). Timings are printed, never asserted.

Usage:
  python bench/prompt_eval.py [--tokens 2000] [--threads 2]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from interface import run_cli  # noqa: E402
from serve import N_CTX, ROOT, model_path  # noqa: E402

VARIANTS = {
    "server defaults (logits_all on, flash_attn off)": {"logits_all": True, "flash_attn": False},
    "logits_all off": {"logits_all": False, "flash_attn": False},
    "logits_all off, flash_attn on (serve.py)": {"logits_all": False, "flash_attn": True},
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args(argv)
    from llama_cpp import Llama
    with open(os.path.join(ROOT, "data", "cases.jsonl"), encoding="utf-8") as fh:
        text = fh.read(a.tokens * 8)
    for label, options in VARIANTS.items():
        model = Llama(model_path=model_path(), n_ctx=N_CTX, n_threads=a.threads, n_threads_batch=a.threads,
                      verbose=False, **options)
        tokens = model.tokenize(text.encode("utf-8"))[:a.tokens]
        best = float("inf")
        for _ in range(2):
            model.reset()
            t0 = time.perf_counter()
            model.eval(tokens)
            best = min(best, time.perf_counter() - t0)
        print(f"{label}: {len(tokens)} tokens in {best:.2f} s, {len(tokens) / best:.0f} tokens/s", flush=True)
        del model
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
