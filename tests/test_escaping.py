"""Text from a dataset, a run file or an endpoint (an id, an answer, an error, a model's name) is
shown as written and never acted on. On the terminal its control characters are escaped: an
escape code would retitle the window or clear the screen, a bidirectional override reorders the
line around it. In report.md and report.html no value opens markup, whatever backticks, tags or
controls it holds: report.md is read through a CommonMark renderer that lets raw HTML through, as
a permissive viewer would."""
from __future__ import annotations

import html
import io
import json
import re
import sys

import pytest

from cli import UNPRINTABLE, InputError, Progress, printable, run_cli
from conftest import TINY, script, write_config
from records import run_record
from report_document import Code, Heading, Image, Link, Para, Pre, Strong, Table, render_markdown, ticked
from test_report import build

markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py not installed (pip install -r "
                                                        "requirements-test.txt)")

# What an endpoint or a dataset could hold: an OSC that retitles the terminal, one that clears the
# screen, a C1 control sequence introducer, a right-to-left override, DEL, and markup of every kind.
CONTROLS = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202egnp.exe\x7f"
MARKUP = ("`` <script>alert(1)</script> ``` <img src=x onerror=alert(2)> ` | *bold* [a link](https://evil.example) "
          "<!-- & -->")
HOSTILE = f"bad_request: {CONTROLS} {MARKUP}"


def rendered(md: str) -> str:
    """report.md as a CommonMark viewer with GitHub's tables shows it, raw HTML let through."""
    return markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(md)


def text_of(page: str) -> str:
    """What a reader of rendered HTML sees: its text, tags removed, entities read."""
    return html.unescape(re.sub(r"<[^>]*>", "", page))


# ---------------------------------------------------------------------------------------------
# The terminal
# ---------------------------------------------------------------------------------------------

def test_printable_escapes_each_control_character_and_bidi_override_and_leaves_other_text_as_it_is():
    unprintable = [chr(c) for c in [*range(0x00, 0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0),
                                    *range(0x202a, 0x202f), *range(0x2066, 0x206a)]]
    for c in unprintable:
        escape = f"\\x{ord(c):02x}" if ord(c) < 0x7f else f"\\u{ord(c):04x}"
        assert printable(f"a{c}b") == f"a{escape}b"
    ordinary = ("plain ASCII !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~\nline\ttab, é, 汉字, 😀, שלום, مرحبا, \u200f, "
                "a\\x1b as typed")
    assert printable(ordinary) == ordinary
    record = json.dumps({"error": f"backend: {CONTROLS}"}, ensure_ascii=False)
    assert json.loads(printable(record)) == json.loads(record)  # JSON on stdout stays the same JSON


def test_a_case_id_holding_escape_codes_is_shown_escaped_when_a_stage_stops_on_it(tmp_path):
    # Two cases under one hostile id: run.py stops before any model call, naming the id on stderr.
    case_id = f"c{CONTROLS}"
    with open(TINY, encoding="utf-8") as fh:
        cases = [json.loads(line) for line in fh][:2]
    dataset = tmp_path / "cases.jsonl"
    dataset.write_text("".join(json.dumps({**c, "case_id": case_id}, ensure_ascii=False) + "\n" for c in cases),
                       encoding="utf-8")
    cfg = write_config(tmp_path, dataset=str(dataset))
    r = script("run.py", "--config", cfg, "--backend", "keyword", "--out", str(tmp_path / "keyword.jsonl"),
               "--retrieval-only")
    assert r.returncode == 2, r.stderr
    assert f"case {printable(case_id)}: duplicate case_id" in r.stderr
    assert not UNPRINTABLE.search(r.stdout + r.stderr)


def test_run_cli_escapes_what_any_print_writes_and_the_error_it_stops_on(capsys):
    def main(argv: list[str]) -> int:
        print(f"answer: {HOSTILE}")
        print(f"warning: {HOSTILE}", file=sys.stderr)
        sys.stdout.writelines([CONTROLS, "\n"])
        raise InputError(f"data.jsonl:3: case {CONTROLS}: duplicate case_id")

    assert run_cli(main, []) == 2
    out, err = capsys.readouterr()
    assert out == f"answer: {printable(HOSTILE)}\n{printable(CONTROLS)}\n"
    assert err == f"warning: {printable(HOSTILE)}\nerror: data.jsonl:3: case {printable(CONTROLS)}: duplicate case_id\n"
    assert sys.stdout is not None and not hasattr(sys.stdout, "unescaped")  # the streams are given back


def test_the_progress_line_keeps_its_own_erase_code_on_a_terminal_and_escapes_a_phase(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)

    def main(argv: list[str]) -> int:
        progress = Progress("run keyword", 2, "cases")
        progress.phase(f"case {CONTROLS}")
        progress.close()
        return 0

    assert run_cli(main, []) == 0
    lines = terminal.getvalue()
    assert lines.startswith("\r\x1b[K") and f"[case {printable(CONTROLS)}]" in lines
    assert lines.count("\x1b") == lines.count("\r\x1b[K") and "\x07" not in lines and "\u202e" not in lines


# ---------------------------------------------------------------------------------------------
# report.md, report.html and report.py's first screen
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [HOSTILE, "``", "`", "```", "x`", "<script>alert(1)</script>",
                                   "a | b", "[x](javascript:alert(1))", "![x](y.png)", "&lt;", "\\`", "\\|"])
def test_any_value_in_any_block_of_report_md_reads_as_written_and_opens_no_markup(value):
    blocks = [Heading(2, value, "h"), Para([value, " ", Code(value), " ", Strong(value), " ", Link(value, value)]),
              Table(["system", value], [[value, [Code(value)]]], [""], [False, False]), Pre(value),
              Image(f"{value}.png", value)]
    md = render_markdown(blocks, "report.html")
    page = rendered(md)
    assert not UNPRINTABLE.search(md)
    assert "<script" not in page and "<img src=x" not in page and "<!--" not in page
    assert page.count("<a ") == 1 and page.count("<img ") == 1 and page.count("<table>") == 1  # ours alone
    shown = printable(value)
    for tag in ("h2", "p", "strong", "code", "td", "pre"):
        for inner in re.findall(f"<{tag}[^>]*>(.*?)</{tag}>", page, re.S):
            assert shown in text_of(inner), (tag, inner)


@pytest.mark.parametrize("parts", [
    [Code("a"), Code("`<img src=x onerror=alert(1)>")],  # two code spans side by side
    ["see [here]", "(https://evil.example)"],  # a link across two strings
    ["look!", Link("the report", "report.html")],  # an image of a `!` and a link
    ticked("the first: `a``<img src=x onerror=alert(1)>`` b`"),  # score.py's words around a value
], ids=["code-code", "plain-plain", "bang-link", "ticked"])
def test_segments_side_by_side_form_no_markup_where_they_meet(parts):
    page = rendered(render_markdown([Para(parts)], "report.html"))
    assert "<img" not in page and page.count("<a ") == sum(isinstance(p, Link) for p in parts)
    seen = text_of(page)
    for p in parts:
        text = printable(p if isinstance(p, str) else p.text)
        assert text in seen, (text, seen)
        seen = seen[seen.index(text) + len(text):]  # in order


def test_a_hostile_error_and_model_name_from_an_endpoint_are_text_in_every_output(tmp_path, capsys):
    served = f"m``<script>alert(3)</script>``{CONTROLS}"
    systems = {name: [run_record(name, f"q{i}", f"c{i // 2}", "yes" if i % 2 == 0 else "no", ["t1"], ["t1", "t2"],
                                 served_model=served) for i in range(4)] for name in ("none", "keyword", "hash")}
    systems["hash"][1].update(answer=None, error=HOSTILE)
    code, md, paths = build(tmp_path, systems)
    assert code == 0
    out, err = capsys.readouterr()  # score.py's table and report.py's first screen
    assert printable(HOSTILE) in out and not UNPRINTABLE.search(out + err)
    assert not UNPRINTABLE.search(md) and printable(served) in text_of(rendered(md))
    page = rendered(md)
    assert "<script" not in page and "<img src=x" not in page
    assert printable(HOSTILE).split("`")[0] in text_of(page)  # the error, up to its first backtick
    with open(paths["md"][:-3] + ".html", encoding="utf-8") as fh:
        shown = fh.read().split('<script type="application/json"')[0]  # the summary; the data is JSON
    assert not UNPRINTABLE.search(shown) and "<script>alert" not in shown and "<img src=x" not in shown
    assert html.escape(printable(served)) in shown
