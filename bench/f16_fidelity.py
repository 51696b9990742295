"""How closely the served f16 file follows the pinned model, in process.

serve.py serves the pinned Q4_1 weights converted to f16. This converts the same file once more
to f32, which holds every Q4_1 weight exactly, and compares the next-token predictions of the
Q4_1 file (llama.cpp's Q4_1 path) and of the served f16 file with the f32 copy's, at every
position of the first N tokens of the bundled dataset's text: how often the most likely next
token is the same, and the mean KL divergence from the f32 distribution. Needs the embedded
set-up (`make setup`) and the compiled engine in process (`make engine`); the f32 file goes to a
temporary folder under .cache/ and is deleted afterwards.
Numbers are printed, never asserted.

Usage:
  python bench/f16_fidelity.py [--tokens 1500]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from cli import run_cli  # noqa: E402
from serve import ROOT, STATE_DIR, convert, served_model, verified_model  # noqa: E402


def next_token_logits(path: str, tokens: list[int], threads: int):
    """Logits for the next token at every position of `tokens`, as an (n, vocab) array."""
    import numpy as np
    from llama_cpp import Llama
    model = Llama(model_path=path, n_ctx=max(512, len(tokens) + 8), n_threads=threads,
                  n_threads_batch=threads, logits_all=True, flash_attn=True, verbose=False)
    model.eval(tokens)
    scores = np.array(model.scores[:len(tokens)], dtype=np.float32)
    del model
    return scores


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", type=int, default=1500)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args(argv)
    import llama_cpp
    import numpy as np
    source = verified_model()
    f16 = served_model(source)
    with open(os.path.join(ROOT, "data", "cases.jsonl"), encoding="utf-8") as fh:
        text = fh.read(a.tokens * 8)
    tokens = llama_cpp.Llama(model_path=source, vocab_only=True, verbose=False).tokenize(text.encode("utf-8"))
    tokens = tokens[:a.tokens]
    with tempfile.TemporaryDirectory(dir=STATE_DIR) as tmp:
        f32 = os.path.join(tmp, "f32.gguf")
        convert(source, f32, "f32")
        exact = next_token_logits(f32, tokens, a.threads)

    def log_softmax(x):
        x = x.astype(np.float64) - x.max(axis=1, keepdims=True)
        return x - np.log(np.exp(x).sum(axis=1, keepdims=True))

    ref = log_softmax(exact)
    for label, path in (("Q4_1 file, llama.cpp's Q4_1 path", source), ("served f16 file", f16)):
        got = next_token_logits(path, tokens, a.threads)
        agree = float((got.argmax(axis=1) == exact.argmax(axis=1)).mean())
        kl = float((np.exp(ref) * (ref - log_softmax(got))).sum(axis=1).mean())
        print(f"{label}: top-1 next token as the exact f32 copy at {agree:.4f} of {len(tokens)} positions; "
              f"mean KL from it {kl:.5f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
