"""The report's document model: blocks (headings, paragraphs, bullets, tables, lines, images,
preformatted text) described once and rendered as markdown (report.md), as HTML (the body of
report.html) and as plain text for the terminal. Text is a list of segments, and every
renderer escapes plain text itself, so no question, answer or system name can break the markup,
and shows its control characters as escapes (cli.printable), as the terminal does.
"""
from __future__ import annotations

import base64
import html
import os
import re
import urllib.parse
from typing import NamedTuple

from cli import printable


# ---------------------------------------------------------------------------------------------
# The document: blocks that render as markdown and as HTML from one description
# ---------------------------------------------------------------------------------------------
# Text is a list of segments: a plain str (escaped by each renderer), Code, Strong or Link.
# Questions, answers, system names and check summaries are untrusted text: they only ever
# enter as segments, so no renderer can mistake them for markup.

class Code(NamedTuple):
    """Inline code: a name, a command, an id."""
    text: str


class Strong(NamedTuple):
    """Emphasis for what must not be missed."""
    text: str


class Link(NamedTuple):
    """A link to a file beside the report."""
    text: str
    href: str


class Heading(NamedTuple):
    """A section heading; anchor is its id in report.html."""
    level: int
    text: str
    anchor: str


class Para(NamedTuple):
    """A paragraph of segments."""
    segments: list


class Bullets(NamedTuple):
    """A list of items, each a segment list."""
    items: list  # of segment lists


class Table(NamedTuple):
    """A table with a header row. Its kind says how report.html lays it out: `compact` fits the
    page as it is (the first screen), `full` scrolls in a box of its own with its first column
    fixed, `text` wraps long cells, `summary` keeps cells on one line and scrolls in its box."""
    header: list   # of str
    rows: list     # of lists of cells; a cell is a str or a segment list
    classes: list  # one CSS class per row ("" for none): control, baseline
    numeric: list  # per column: right-aligned
    kind: str = "summary"


class Lines(NamedTuple):
    """Short statements, one each: report.html cuts those marked `cut` at the page's edge (their
    link, before the text, leads to the whole); the others wrap."""
    items: list  # of segment lists
    cut: list    # per item: cut at the page's edge


class Image(NamedTuple):
    """A plot: linked from report.md, inlined in report.html."""
    path: str      # the PNG beside the report
    alt: str


class Pre(NamedTuple):
    """Commands, shown as they are."""
    text: str


def segs(*parts) -> list:
    """A segment list from strings and segments."""
    return list(parts)


def ticked(text: str) -> list:
    """score.py's words, whose names are in `backticks`, as segments: the names as Code (escaped
    by each renderer like any text), so markdown shows them as code, not as \\`name\\`."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: plain text, escaped as such
        return segs(text)
    return [Code(p) if i % 2 else p for i, p in enumerate(parts) if p]


def md_plain(text: str, in_table: bool) -> str:
    """Plain text for markdown, shown as written: control characters as printable() writes them,
    then what would start markup escaped: a backslash, a backtick, an asterisk, `<` (every HTML
    tag and autolink opens with it) and `&`, `](` (a link or an image) and, in a table, `|`."""
    out = (printable(text.replace("\r", " ").replace("\n", " ")).replace("\\", "\\\\").replace("`", "\\`")
           .replace("*", "\\*").replace("&", "&amp;").replace("<", "&lt;").replace("](", "\\]("))
    return out.replace("|", "\\|") if in_table else out


def md_bracketed(text: str, in_table: bool) -> str:
    """Plain text inside a link's or an image's brackets: md_plain, and every bracket escaped
    unless they pair up. CommonMark allows matched brackets there; an unmatched one would pair
    with the link's own and make a link of part of the text."""
    out = md_plain(text, in_table)
    depth = 0
    for token in re.findall(r"\\.|[\[\]]", out):  # an escaped character pairs with nothing
        depth += {"[": 1, "]": -1}.get(token, 0)
        if depth < 0:
            break
    if depth == 0:
        return out
    return re.sub(r"\\.|[\[\]]", lambda m: m.group() if len(m.group()) == 2 else "\\" + m.group(), out)


def longest_backticks(text: str) -> int:
    """The longest run of backticks in the text (0 for none)."""
    return max((len(run) for run in re.findall("`+", text)), default=0)


def md_code(body: str) -> str:
    """A markdown code span that shows body as written: CommonMark ends a span at the first run
    of backticks as long as its fence (spec 0.31, 6.1), so the fence is one backtick longer than
    any run inside, with a space each side (stripped again) so that a backtick at an end stays
    apart from the fence."""
    n = longest_backticks(body)
    return f"`{body}`" if n == 0 else f"{'`' * (n + 1)} {body} {'`' * (n + 1)}"


def md_href(target: str) -> str:
    """A link's target for markdown: what would end it or open markup (a space, brackets,
    parentheses, `<`, a backtick, a control character) percent-encoded; the characters of a
    path, an anchor and a query string stay as they are."""
    return urllib.parse.quote(target, safe="/#?=&%+:;,.-_~!$'*@")


def md_segments(parts, in_table: bool = False, href=lambda h: h) -> str:
    """A segment list (or a plain cell string) as markdown; href maps a link's target. No markup
    forms where two segments meet: plain strings side by side are escaped as one, a space parts
    two code spans (their backticks would run together into one run that closes neither), and a
    `!` before a link is escaped (it would make the link an image)."""
    if isinstance(parts, str):
        parts = [parts]
    joined: list = []
    for p in parts:
        if isinstance(p, str) and joined and isinstance(joined[-1], str):
            joined[-1] += p
        else:
            joined.append(p)
    out = ""
    for i, p in enumerate(joined):
        if isinstance(p, Code):
            body = " ".join(printable(p.text).split())
            out += (" " if i and isinstance(joined[i - 1], Code) else "") + md_code(
                body.replace("|", "\\|") if in_table else body)
        elif isinstance(p, Strong):
            out += f"**{md_plain(p.text, in_table)}**"
        elif isinstance(p, Link):
            out = (out[:-1] + "\\!" if out.endswith("!") else out) + \
                f"[{md_bracketed(p.text, in_table)}]({md_href(href(p.href))})"
        else:
            out += md_plain(p, in_table)
    return out


def md_slug(text: str) -> str:
    """The anchor GitHub gives a markdown heading: lower case, punctuation dropped, spaces as -."""
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def render_markdown(blocks: list, html_name: str) -> str:
    """The blocks as GitHub-flavoured markdown. A link to a section goes to its heading; a link to
    the question list goes to report.html, which holds it."""
    anchors = {b.anchor: md_slug(b.text) for b in blocks if isinstance(b, Heading)}

    def href(target: str) -> str:
        if target.startswith("#questions"):
            return html_name + target
        return "#" + anchors[target[1:]] if target.startswith("#") and target[1:] in anchors else target
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out += ["#" * b.level + " " + md_plain(b.text, False), ""]
        elif isinstance(b, Para):
            out += [md_segments(b.segments, href=href), ""]
        elif isinstance(b, (Bullets, Lines)):
            out += [f"- {md_segments(item, href=href)}" for item in b.items] + [""]
        elif isinstance(b, Table):
            out.append("| " + " | ".join(md_plain(h, True) for h in b.header) + " |")
            out.append("|" + "|".join("---:" if num else "---" for num in b.numeric) + "|")
            out += ["| " + " | ".join(md_segments(c, True, href) for c in row) + " |" for row in b.rows]
            out.append("")
        elif isinstance(b, Image):
            out += [f"![{md_bracketed(b.alt, False)}]({md_href(os.path.basename(b.path))})", ""]
        elif isinstance(b, Pre):
            fence = "`" * max(3, longest_backticks(b.text) + 1)  # no line of the text can close it
            out += [fence + "sh", printable(b.text), fence, ""]
    return "\n".join(out).rstrip("\n") + "\n"


def html_text(text: str) -> str:
    """Text for HTML, shown as written: control characters as printable() writes them (a
    bidirectional override reorders a browser's text as it does a terminal's), markup escaped."""
    return html.escape(printable(text))


def html_segments(parts) -> str:
    """A segment list (or a plain cell string) as HTML, every text escaped."""
    if isinstance(parts, str):
        parts = [parts]
    out = []
    for p in parts:
        if isinstance(p, Code):
            out.append(f"<code>{html_text(p.text)}</code>")
        elif isinstance(p, Strong):
            out.append(f"<strong>{html_text(p.text)}</strong>")
        elif isinstance(p, Link):
            out.append(f'<a href="{html.escape(p.href)}">{html_text(p.text)}</a>')
        else:
            out.append(html_text(p))
    return "".join(out)


def render_html_blocks(blocks: list, images: dict) -> str:
    """The blocks as HTML; images are inlined as data URIs (images: path -> PNG bytes)."""
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out.append(f'<h{b.level} id="{html.escape(b.anchor)}">{html_text(b.text)}</h{b.level}>')
        elif isinstance(b, Para):
            out.append(f"<p>{html_segments(b.segments)}</p>")
        elif isinstance(b, Bullets):
            out.append("<ul>" + "".join(f"<li>{html_segments(i)}</li>" for i in b.items) + "</ul>")
        elif isinstance(b, Lines):
            out.append('<ul class="lines">' + "".join(f'<li{" class=cut" if c else ""}>{html_segments(i)}</li>'
                                                      for i, c in zip(b.items, b.cut)) + "</ul>")
        elif isinstance(b, Table):
            head = "".join(f'<th{" class=num" if num else ""}>{html_text(h)}</th>'
                           for h, num in zip(b.header, b.numeric))
            rows = []
            for row, cls in zip(b.rows, b.classes):
                cells = "".join(f'<td{" class=num" if num else ""}>{html_segments(c)}</td>'
                                for c, num in zip(row, b.numeric))
                rows.append(f'<tr class="{html.escape(cls)}">{cells}</tr>' if cls else f"<tr>{cells}</tr>")
            table = (f'<table class="summary {b.kind}"><thead><tr>{head}</tr></thead>'
                     f'<tbody>{"".join(rows)}</tbody></table>')
            out.append(table if b.kind == "compact" else f'<div class="scroll">{table}</div>')
        elif isinstance(b, Image):
            data = base64.b64encode(images[b.path]).decode("ascii")
            out.append(f'<figure><img alt="{html_text(b.alt)}" src="data:image/png;base64,{data}"></figure>')
        elif isinstance(b, Pre):
            out.append(f"<pre>{html_text(b.text)}</pre>")
    return "\n".join(out)


class Footnotes:
    """Why a number is n/a (or measured on part of the questions): one numbered note per
    distinct reason, naming the systems it applies to."""

    def __init__(self) -> None:
        self.notes: dict = {}  # (metric, reason) -> [number, [labels]]

    def mark(self, label: str, metric: str, reason: str | None) -> str:
        """The marker to put beside a cell, or '' when there is no reason to give."""
        if not reason:
            return ""
        key = (metric, reason)
        if key not in self.notes:
            self.notes[key] = [len(self.notes) + 1, []]
        if label not in self.notes[key][1]:
            self.notes[key][1].append(label)
        return f" [{self.notes[key][0]}]"

    def cell(self, value: str, label: str, metric: str, reason: str | None) -> str:
        """A cell with its marker."""
        return value + self.mark(label, metric, reason)

    def bullets(self) -> Bullets | None:
        """The notes, in number order."""
        if not self.notes:
            return None
        return Bullets([segs(f"[{n}] {metric}: {reason} ({', '.join(labels)})")
                        for (metric, reason), (n, labels) in sorted(self.notes.items(), key=lambda kv: kv[1][0])])

    def blocks(self, heading: str = "Notes (n/a means not measurable, never 0):") -> list:
        """The notes under their heading, to end a section; nothing when there are none."""
        footnotes = self.bullets()
        return [Para(segs(heading)), footnotes] if footnotes else []


def plain(parts) -> str:
    """A segment list (or a plain cell string) as plain text."""
    return "".join(p if isinstance(p, str) else p.text for p in ([parts] if isinstance(parts, str) else parts))


def aligned(table: Table) -> list[str]:
    """A compact table for a terminal: its columns aligned, numbers to the right."""
    cells = [table.header] + [[plain(c) for c in row] for row in table.rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(table.header))]
    out = ["  ".join(c.rjust(w) if num and r else c.ljust(w) for c, w, num in zip(row, widths, table.numeric)).rstrip()
           for r, row in enumerate(cells)]
    out.insert(1, "  ".join("-" * w for w in widths))
    return out


def render_terminal(blocks: list, html_path: str) -> str:
    """The first screen for a terminal: its first compact table, then its lines, then any other
    compact table of the first screen under its heading (the accuracy of the answered runs, when
    retrieval leads), then where the whole report is."""
    first = next(i for i, b in enumerate(blocks) if isinstance(b, Heading) and b.level == 2)
    end = next((i for i, b in enumerate(blocks) if i > first and isinstance(b, Heading) and b.level == 2), len(blocks))
    screen = blocks[first:end]
    tables = [b for b in screen if isinstance(b, Table) and b.kind == "compact"]
    lines = next(b for b in screen if isinstance(b, Lines))
    # The lines' links lead to sections of the report, which a terminal does not have.
    said = [plain([p for p in item if not (isinstance(p, Link) and p.href.startswith("#"))]).replace(" ()", "")
            for item in lines.items]
    out = aligned(tables[0]) + [""] + [line.rstrip(" :") for line in said]
    for table in tables[1:]:
        heading = screen[max(i for i, b in enumerate(screen[:screen.index(table)]) if isinstance(b, Heading))]
        out += ["", heading.text + ":"] + aligned(table)
    return "\n".join(out + ["", f"report: {html_path} (open it from disk)"])
