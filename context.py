"""One context builder for every system (the budget is held fixed): hits in rank order, one line
each, cut at the token budget by rank and never over it. Token counting is the same for all
systems: `approx` (len // 4) by default, or a real tokenizer named in config.yaml.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from cli import InputError
from contract import Hit

EMPTY_CONTEXT = "(no memories)"


@dataclass(frozen=True)
class TokenCounter:
    """A named token counting function."""
    name: str
    count: Callable[[str], int]


def approx_tokens(text: str) -> int:
    """len // 4, at least 1: crude but identical for every backend. It undercounts Cyrillic and
    many other scripts (fewer characters per token); use a real tokenizer across languages."""
    return max(1, len(text) // 4)


def make_counter(spec: str) -> TokenCounter:
    """`approx`, `tiktoken:<encoding>` or `hf:<path to tokenizer.json>`. A tokenizer that cannot
    load offline is an error, never a silent fallback to approx (that would change the budget)."""
    if spec == "approx":
        return TokenCounter("approx", approx_tokens)
    kind, _, arg = spec.partition(":")
    if kind == "tiktoken" and arg:
        try:
            import tiktoken
            enc = tiktoken.get_encoding(arg)
        except Exception as e:  # ImportError, or a download that fails offline
            raise InputError(f"config: tokenizer {spec!r} cannot load here ({type(e).__name__}: {e}); "
                             f"install tiktoken with its encoding cached, or use tokenizer: approx") from None
        return TokenCounter(spec, lambda s: len(enc.encode(s, disallowed_special=())))
    if kind == "hf" and arg:
        try:
            from tokenizers import Tokenizer
            tok = Tokenizer.from_file(arg)
        except Exception as e:
            raise InputError(f"config: tokenizer {spec!r} cannot load ({type(e).__name__}: {e}); "
                             f"it needs the `tokenizers` package and a local tokenizer.json") from None
        return TokenCounter(spec, lambda s: len(tok.encode(s, add_special_tokens=False).ids))
    raise InputError(f"config: key 'tokenizer' is {spec!r}; expected approx, tiktoken:NAME or hf:PATH")


@dataclass(frozen=True)
class Context:
    """The text given to the answer model and what it cost."""
    text: str
    kept: tuple          # the Hits that fit, in rank order
    tokens: int
    hits_returned: int
    hits_kept: int
    hits_cut: int


def render_line(rank: int, hit: Hit) -> str:
    """`[rank] (timestamp) text`, the one line format for every system."""
    return f"[{rank}] ({hit.timestamp or 'unknown time'}) {' '.join(hit.text.split())}"


# render_line's format read back: the rank, then the timestamp up to the first ") ".
_LINE = re.compile(r"\[(\d+)\] \((.*?)\) (.*)")


def hit_texts(context_text: str) -> list[str] | None:
    """The texts of the hits a context holds, in rank order (render_line read back, full_context's
    oldest-first lines put back in rank order, whitespace as render_line left it): what
    check.py holds against the turns the hits name. None when a line is not render_line's."""
    if context_text == EMPTY_CONTEXT:
        return []
    lines = [_LINE.fullmatch(line) for line in context_text.split("\n")]
    if not all(lines):
        return None
    return [m.group(3) for m in sorted(lines, key=lambda m: int(m.group(1)))]


def build_context(hits: list[Hit], budget: int, counter: TokenCounter,
                  newest_first: bool = False) -> Context:
    """Keep hits by rank while they fit the budget; stop at the first that does not (a lower
    ranked short hit never jumps a higher ranked long one). The budget holds for the context
    text as sent, the kept lines joined, not only line by line: joining adds newlines, and a
    real tokenizer can count a join differently from its parts. newest_first=True is for
    full_context: the hits arrive newest first, so the budget keeps the newest turns, and the
    kept lines are then shown oldest first, each keeping its rank number."""
    lines: list[str] = []
    kept: list[Hit] = []
    used = 0
    for rank, hit in enumerate(hits, 1):
        candidate = lines + [render_line(rank, hit)]
        cost = counter.count(_join(candidate, newest_first))
        if cost > budget:
            break
        lines, used = candidate, cost
        kept.append(hit)
    return Context(text=_join(lines, newest_first) if lines else EMPTY_CONTEXT, kept=tuple(kept), tokens=used,
                   hits_returned=len(hits), hits_kept=len(kept), hits_cut=len(hits) - len(kept))


def answer_prompt(template: str, asked_at: str, context_text: str, question: str) -> str:
    """The answer prompt exactly as sent: config.yaml's answer_prompt with its three fields
    filled. run.py sends it, and the report rebuilds it from a record's context_text."""
    return template.format(asked_at=asked_at, context=context_text, question=question)


def _join(lines: list[str], newest_first: bool) -> str:
    """The context text as the model sees it."""
    return "\n".join(reversed(lines) if newest_first else lines)
