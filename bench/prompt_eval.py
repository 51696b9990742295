"""Prompt-evaluation and generation speed of the embedded model, in process.

The measurement behind serve.py's SERVER_OPTIONS and its f16 SERVED_FILE: the same prompt (the
first N tokens of the bundled dataset's text) evaluated with the server's defaults and with the
chosen options, on the pinned Q4_1 file and on the f16 file serve.py converts it to; best of two
runs each; then the time per generated token after a 300-token prompt. Needs the embedded set-up
(`make setup`). Timings are printed, never asserted.

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
from serve import N_CTX, ROOT, STATE_DIR, served_model, verified_model  # noqa: E402

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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args(argv)
    from llama_cpp import Llama
    with open(os.path.join(ROOT, "data", "cases.jsonl"), encoding="utf-8") as fh:
        text = fh.read(a.tokens * 8)
    source = verified_model()
    f16 = served_model(source, os.path.join(STATE_DIR, "convert-f16.log"))
    for label, use_f16, options in VARIANTS:
        model = Llama(model_path=f16 if use_f16 else source, n_ctx=N_CTX, n_threads=a.threads,
                      n_threads_batch=a.threads, verbose=False, **options)
        tokens = model.tokenize(text.encode("utf-8"))[:a.tokens]
        best = float("inf")
        for _ in range(2):
            model.reset()
            t0 = time.perf_counter()
            model.eval(tokens)
            best = min(best, time.perf_counter() - t0)
        # Generation: one token per decode step, as the server answers, after a short prompt.
        model.reset()
        model.eval(tokens[:300])
        generated = tokens[300:300 + GENERATED] or tokens[-1:]
        t0 = time.perf_counter()
        for token in generated:
            model.eval([token])
        per_token_ms = (time.perf_counter() - t0) / len(generated) * 1000
        print(f"{label}: {len(tokens)} prompt tokens in {best:.2f} s, {len(tokens) / best:.0f} tokens/s; "
              f"{per_token_ms:.1f} ms per generated token", flush=True)
        del model
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
