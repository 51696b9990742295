"""The shared context builder: by rank, never over budget, the same counting for everyone."""
from __future__ import annotations

import pytest

from cli import InputError
from context import EMPTY_CONTEXT, build_context, make_counter, render_line
from contract import Hit

APPROX = make_counter("approx")


def hits(n: int, size: int = 40) -> list[Hit]:
    return [Hit(text=f"turn {i} " + "x" * size, score=1.0, source_ids=(f"t{i}",),
                timestamp=f"2026-01-{i + 1:02d}T00:00:00Z") for i in range(n)]


@pytest.mark.parametrize("budget", [1, 15, 40, 100, 1000])
def test_never_over_budget_and_counts_add_up(budget):
    ctx = build_context(hits(10), budget, APPROX)
    assert ctx.tokens <= budget
    assert ctx.hits_kept + ctx.hits_cut == ctx.hits_returned == 10
    assert ctx.tokens == APPROX.count(ctx.text) if ctx.kept else ctx.tokens == 0


def test_the_budget_holds_for_the_joined_text_as_sent():
    # Each line is 4k+3 characters: len // 4 per line hides 3 characters, and the newlines of the
    # join push the text as sent over a budget that the lines alone fit exactly.
    hs = [Hit(text="x" * 30, score=1.0, source_ids=(f"t{i}",), timestamp="t") for i in range(6)]
    per_line = APPROX.count(render_line(1, hs[0]))
    for newest_first in (False, True):
        ctx = build_context(hs, 6 * per_line, APPROX, newest_first=newest_first)
        assert APPROX.count(ctx.text) <= 6 * per_line
        assert ctx.tokens == APPROX.count(ctx.text)
        assert ctx.hits_kept < 6


def test_cut_is_by_rank_a_short_low_rank_hit_does_not_jump_ahead():
    hs = [Hit("a" * 40, 1, ("a",), "t"), Hit("b" * 400, 1, ("b",), "t"), Hit("c", 1, ("c",), "t")]
    ctx = build_context(hs, 30, APPROX)
    assert [h.source_ids for h in ctx.kept] == [("a",)]


def test_line_format_and_empty_context():
    assert render_line(3, Hit("user: hi\nthere", 1.0, (), "2026-01-01")) == "[3] (2026-01-01) user: hi there"
    assert build_context([], 100, APPROX).text == EMPTY_CONTEXT


def test_newest_first_keeps_newest_and_shows_them_oldest_first():
    hs = list(reversed(hits(6)))  # newest first, as run.py passes full_context
    ctx = build_context(hs, 40, APPROX, newest_first=True)
    assert ctx.kept[0].source_ids == ("t5",) and 0 < ctx.hits_kept < 6
    lines = ctx.text.split("\n")
    assert lines[-1].startswith("[1] ") and "turn 5" in lines[-1]


def test_unknown_or_unloadable_tokenizer_is_an_error_not_a_fallback():
    with pytest.raises(InputError, match="tokenizer"):
        make_counter("sentencepiece")
    with pytest.raises(InputError, match="cannot load"):
        make_counter("hf:/nonexistent/tokenizer.json")
