"""report.html in a real browser: headless Debian Chromium driven by Playwright opens the file
from disk, as a researcher would. The tables render, a filter narrows the rows, a question's row
shows its context with the evidence highlighted and the budget cut, a permalink opens its
question, a question holding <script> stays text, one whose evidence is a line of 200,000
characters opens at once with the line cut, and the console stays clean.

Skipped when Chromium or Playwright is absent, unless MEMBENCH_REQUIRE_BROWSER=1 (make test sets
it): then that is a failure. MEMBENCH_SCREENSHOT_DIR=PATH keeps the screenshots to look at."""
from __future__ import annotations

import os
import shutil

import pytest

from report_pipeline import pipeline

try:  # the browser test's own dependency (requirements-test.txt); its absence is a skip below
    from playwright.sync_api import expect, sync_playwright
except ImportError:
    expect = sync_playwright = None

CHROMIUM = os.environ.get("MEMBENCH_CHROMIUM", "/usr/bin/chromium")
# The flags a root session on a closed network needs: no sandbox (root), no GPU, and no calls
# home (background networking and component updates are refused here, noisily).
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run"]
HOSTILE = "Which pager does <script>alert('question')</script> <img src=x onerror=alert(1)> ledger-sync use?"
# One line of 200,000 characters and no space, in writing systems a browser is slow to lay out
# together: Latin, Hebrew, Arabic, CJK, an emoji and a combining mark.
LONG_LINE = (("ab" + "אב" + "مر" + "汉字" + "😀" + "e\u0303") * 18182)[:200_000]


def require_browser() -> None:
    """Skip when the browser or Playwright is absent; fail instead under MEMBENCH_REQUIRE_BROWSER=1."""
    why = None
    if not os.access(CHROMIUM, os.X_OK):
        why = f"{CHROMIUM} is not installed (apt-get install chromium; make test installs it)"
    elif sync_playwright is None:
        why = "playwright is not installed (pip install -r requirements-test.txt)"
    if why:
        if os.environ.get("MEMBENCH_REQUIRE_BROWSER") == "1":
            pytest.fail(f"MEMBENCH_REQUIRE_BROWSER=1 but {why}")
        pytest.skip(why)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The report of a real comparison (budget 60 tokens, so the budget cuts keyword's hits)."""
    with pytest.MonkeyPatch.context() as mp:
        return pipeline(tmp_path_factory.mktemp("browser"), monkeypatch=mp)


@pytest.fixture
def browser(tmp_path):
    """A fresh Chromium profile per test; every console message and page error is collected."""
    require_browser()
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(str(tmp_path / "profile"), executable_path=CHROMIUM,
                                                       headless=True, args=FLAGS,
                                                       viewport={"width": 1400, "height": 1000})
        context.messages, context.dialogs = [], []
        yield context
        context.close()


def open_page(browser, url: str):
    page = browser.new_page()
    page.on("console", lambda m: browser.messages.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: browser.messages.append(f"pageerror: {e}"))
    page.on("dialog", lambda d: (browser.dialogs.append(d.message), d.dismiss()))
    page.goto(url)
    page.wait_for_selector("#qtable tbody tr.q")
    return page


def keep_screenshot(page, tmp_path, name: str) -> None:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    if os.environ.get("MEMBENCH_SCREENSHOT_DIR"):
        os.makedirs(os.environ["MEMBENCH_SCREENSHOT_DIR"], exist_ok=True)
        shutil.copy(path, os.environ["MEMBENCH_SCREENSHOT_DIR"])


def url_of(report, fragment: str = "") -> str:
    return "file://" + os.path.abspath(report["html"]) + fragment


def visible_qids(page) -> list[str]:
    return page.eval_on_selector_all("#qtable tbody tr.q td:first-child a", "els => els.map(e => e.textContent)")


def test_the_tables_render_and_a_filter_narrows_the_rows(browser, report, tmp_path):
    page = open_page(browser, url_of(report))
    first_column = page.eval_on_selector_all("table.summary >> nth=0 >> tbody tr td:first-child",
                                             "els => els.map(e => e.textContent)")
    assert first_column == ["none (control)", "oracle (control)", "full_context (control)", "keyword (baseline)",
                            "hash"]
    assert page.locator("table.summary tr.baseline").first.inner_text().startswith("keyword")
    assert page.locator("figure img").count() in (0, 3)  # 3 plots with the extra (frontier too), none without
    everything = visible_qids(page)
    assert len(everything) == 7 and page.inner_text("#count") == "7 of 7 questions"
    page.select_option("#f-a", label="keyword (baseline)")
    page.select_option("#f-v", "a_wrong")
    page.select_option("#f-cause", "budget_miss")
    narrowed = visible_qids(page)
    assert narrowed == ["c001q1"] and page.inner_text("#count") == "1 of 7 questions"
    columns = page.locator("#qtable thead th").all_inner_texts()
    assert columns[4] == "A: keyword" and len(columns) == 4 + 5  # A first, and every other system still shown
    page.select_option("#f-cause", "")
    page.select_option("#f-v", "")
    page.fill("#f-search", "ledger-sync")
    # The search waits 150 ms for typing to stop. (wait_for_function evaluates a string, which the
    # page's Content-Security-Policy forbids: expect polls without it.)
    expect(page.locator("#count")).to_have_text("4 of 7 questions")
    assert set(visible_qids(page)) == {"c002q1", "c002q2", "c002q3", "c003q1"}  # c002q3: full_context's answer
    page.locator("#questions").evaluate("e => e.scrollIntoView()")  # the filters and rows in the shot
    keep_screenshot(page, tmp_path, "filtered")
    assert browser.dialogs == [] and not [m for m in browser.messages if not m.startswith(("log:", "debug:"))]


def test_a_row_shows_its_context_with_the_evidence_highlighted_and_the_budget_cut(browser, report, tmp_path):
    page = open_page(browser, url_of(report))
    page.click("#qtable tbody tr.q >> nth=0")  # c001q1
    detail = page.locator("#qtable tr.detail")
    assert detail.count() == 1
    keyword = detail.locator(".answer", has_text="keyword (baseline)")
    assert "budget_miss" in keyword.inner_text()
    cut = keyword.locator("li.cut")
    assert cut.count() == 1 and "budget cut" in cut.inner_text()
    evidence = keyword.locator("li.ev")
    assert evidence.count() == 1 and "We finished migrating billing to Postgres 16" in evidence.inner_text()
    assert "dropped" in evidence.get_attribute("class")  # below the cut: retrieved, not given to the model
    background = evidence.evaluate("e => getComputedStyle(e).backgroundColor")
    assert background not in ("rgba(0, 0, 0, 0)", "transparent")  # highlighted
    none = detail.locator(".answer", has_text="none (control)")
    assert "Evidence not retrieved" in none.inner_text()
    assert page.evaluate("location.hash") == "#questions?open=c001q1"  # the open row is in the address
    keep_screenshot(page, tmp_path, "context")
    assert browser.dialogs == [] and not [m for m in browser.messages if not m.startswith(("log:", "debug:"))]


def test_a_permalink_opens_its_question_and_clears_a_filter_that_hides_it(browser, report, tmp_path):
    page = open_page(browser, url_of(report, "#c002q2"))
    opened = page.locator("#qtable tr.q.open")
    assert opened.count() == 1 and opened.locator("td").first.inner_text() == "c002q2"
    assert page.locator("#qtable tr.detail").inner_text().count("Which cluster runs") == 0  # question in its row
    assert "quartz-7" in page.locator("#qtable tr.detail").inner_text()
    in_view = opened.evaluate("e => { const r = e.getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight; }")
    assert in_view
    # A filter that hides the question is cleared when its link is followed.
    page.select_option("#f-type", "abstention")
    assert visible_qids(page) == ["c001q3"]
    page.evaluate("location.hash = '#c003q1'")
    page.wait_for_selector("#qtable tr.q.open >> text=c003q1")
    assert page.input_value("#f-type") == ""
    keep_screenshot(page, tmp_path, "permalink")
    assert browser.dialogs == [] and not [m for m in browser.messages if not m.startswith(("log:", "debug:"))]


def test_a_question_holding_a_script_tag_is_shown_as_text(browser, report, tmp_path):
    page = open_page(browser, url_of(report, "#c003q1"))
    row = page.locator("#qtable tr.q.open")
    assert row.locator("td.qtext").inner_text() == HOSTILE
    assert page.locator("script").count() == 2  # the data and the explorer: nothing injected
    assert page.locator("#qtable img").count() == 0
    turn = page.locator("#qtable tr.detail li.ev").first.inner_text()
    assert "<b>on-call</b>" in turn and "<script>alert('turn')</script>" in turn
    keep_screenshot(page, tmp_path, "hostile")
    assert browser.dialogs == []  # no alert ran
    assert not [m for m in browser.messages if not m.startswith(("log:", "debug:"))]


def test_a_question_whose_evidence_is_one_line_of_200000_characters_opens_at_once_cut(browser, tmp_path):
    import json
    import time
    import report_pipeline
    with open(report_pipeline.CASES, encoding="utf-8") as fh:
        cases = [json.loads(line) for line in fh]
    turn = next(t for c in cases for s in c["sessions"] for t in s["turns"] if t["turn_id"] == "c003-s1t1")
    turn["text"] += " " + LONG_LINE  # the evidence of c003q1: shown six times when it opens
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases),
                                          encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(report_pipeline, "CASES", str(tmp_path / "cases.jsonl"))
        paths = pipeline(tmp_path / "long", monkeypatch=mp)
    page = open_page(browser, url_of(paths))
    start = time.monotonic()
    page.locator("#qtable tbody tr.q", has=page.locator("a:text-is('c003q1')")).click()
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")  # painted
    took = time.monotonic() - start
    # Uncut, this line took 6 to 8 s to open in Chromium (the same characters in a random order, over
    # 20 s), the page not responding; cut, a few tenths. The bound tells the two apart on a slow machine.
    assert took < 3, f"opening the question took {took:.1f} s"
    evidence = page.locator("#qtable tr.detail .evidence li.ev")
    cut = evidence.locator("span.long")
    shown = cut.evaluate("e => e.firstChild.textContent")
    more = cut.locator("button.more").inner_text()
    assert more.startswith("… (") and more.endswith(" more characters)")
    cut.locator("button.more").click()  # the whole text, in its place; the question stays open
    whole = cut.inner_text()
    assert LONG_LINE in whole and len(shown) + int(more[3:-len(" more characters)")].replace(",", "")) == len(whole)
    assert page.locator("#qtable tr.q.open").count() == 1
    keep_screenshot(page, tmp_path, "long-line")
    assert not [m for m in browser.messages if not m.startswith(("log:", "debug:"))]


# ---------------------------------------------------------------------------------------------
# The first screen at 1366 x 768, and the comparison view
# ---------------------------------------------------------------------------------------------

def laptop_page(browser, url: str):
    """The report in a 1366 x 768 window, the width the first screen is laid out for."""
    page = open_page(browser, url)
    page.set_viewport_size({"width": 1366, "height": 768})
    page.evaluate("window.scrollTo(0, 0)")
    return page


def sideways(page) -> int:
    """How far the page scrolls sideways (0: not at all)."""
    return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")


def on_first_screen(locator) -> bool:
    box = locator.bounding_box()
    return box is not None and box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= 1366 and \
        box["y"] + box["height"] <= 768


@pytest.fixture(scope="module")
def checked(report, tmp_path_factory):
    """The same report with check.py's results: long check messages, a FAIL among them."""
    import check
    from cli import run_cli
    from report_pipeline import make_report
    out = str(report["results"] / "checks.json")
    assert run_cli(check.main, ["--runs", *report["runs"], "--verdicts", report["verdicts"], "--manifest",
                                report["manifest"], "--config", report["config"], "--out", out]) in (0, 4)
    assert make_report(report, "--checks", out) == 0
    return report


def test_the_first_screen_shows_each_difference_with_its_interval_and_nothing_scrolls_sideways(browser, checked,
                                                                                                 tmp_path):
    import json
    from wording import interval_text
    scores = json.load(open(checked["scores"]))
    page = laptop_page(browser, url_of(checked))
    table = page.locator("table.compact")
    for d in scores["differences"]:
        row = table.locator("tbody tr", has=page.locator(f"td:first-child:text-is('{d['system']}')"))
        cell = row.locator("td").nth(2)
        assert cell.inner_text() == interval_text(d) and on_first_screen(cell)
        assert row.locator("td").nth(3).inner_text() in ("separated", "not separated")
    assert on_first_screen(page.locator("ul.lines li", has_text="Instrument checks: "))
    assert sideways(page) == 0
    keep_screenshot(page, tmp_path, "first-screen")
    # the full table scrolls in its own box, its first column fixed; the rest of the page never sideways
    full = page.locator("table.full")
    box = page.locator("div.scroll", has=full)
    assert box.evaluate("e => e.scrollWidth > e.clientWidth")
    box.evaluate("e => { e.scrollLeft = e.scrollWidth; }")
    first = full.locator("tbody tr td:first-child").first
    assert first.evaluate("e => e.getBoundingClientRect().left") >= box.evaluate("e => e.getBoundingClientRect().left")
    page.click("#qtable tbody tr.q >> nth=0")
    for name in ("checks", "cost", "questions"):
        page.locator(f"#{name}").evaluate("e => e.scrollIntoView()")
        assert sideways(page) == 0, name
    assert browser.dialogs == [] and not [m for m in browser.messages if not m.startswith(("log:", "debug:"))]


def test_the_model_free_first_screen_compares_recall_without_sideways_scroll(browser, tmp_path):
    import json
    from wording import interval_text
    with pytest.MonkeyPatch.context() as mp:
        paths = pipeline(tmp_path / "model-free", run_args=("--retrieval-only",), monkeypatch=mp)
    scores = json.load(open(paths["scores"]))
    d = next(x for x in scores["retrieval_differences"] if x["metric"] == "recall_all_in_context")
    page = laptop_page(browser, url_of(paths))
    cell = page.locator("table.compact tbody tr", has_text="hash").locator("td").nth(2)
    assert cell.inner_text() == interval_text(d) and on_first_screen(cell)
    assert sideways(page) == 0
    page.click("#qtable tbody tr.q >> nth=0")
    assert "in ctx" in page.locator("#qtable tbody tr.q").first.inner_text()  # what each system retrieved
    assert sideways(page) == 0
    keep_screenshot(page, tmp_path, "model-free")


def test_a_comparison_view_lives_in_the_address_and_opens_again_from_it(browser, report, tmp_path):
    page = open_page(browser, url_of(report))
    page.select_option("#f-a", "keyword")
    page.select_option("#f-b", "none")
    page.select_option("#f-v", "a_only")
    rows = visible_qids(page)
    assert rows and page.inner_text("#count") == f"{len(rows)} of 7 questions"
    for qid in rows:  # keyword right, none wrong, on each
        cells = page.locator("#qtable tr.q", has=page.locator(f"a:text-is('{qid}')")).locator("td")
        assert "correct" in cells.nth(4).inner_text() and "incorrect" in cells.nth(5).inner_text()
    page.select_option("#f-sort", "type")
    view = page.evaluate("location.hash")
    assert view.startswith("#questions?") and "a=keyword" in view and "b=none" in view and "v=a_only" in view
    again = open_page(browser, url_of(report, view))  # the link a colleague is sent
    assert visible_qids(again) == visible_qids(page)
    assert again.input_value("#f-a") == "keyword" and again.input_value("#f-v") == "a_only"
    page.click("#f-swap")
    assert page.input_value("#f-a") == "none" and page.input_value("#f-b") == "keyword"
    page.select_option("#f-v", "b_only")  # A wrong, B right: the same questions, seen from the other side
    assert sorted(visible_qids(page)) == sorted(rows)
    keep_screenshot(page, tmp_path, "compare")
    assert browser.dialogs == [] and not [m for m in browser.messages if not m.startswith(("log:", "debug:"))]


def test_a_count_in_the_summary_opens_its_rows(browser, report, tmp_path):
    import json
    scores = json.load(open(report["scores"]))
    keyword = next(s for s in scores["systems"] if s["label"] == "keyword")
    page = open_page(browser, url_of(report))
    page.locator("#failures ~ div.scroll table tr.baseline a").first.click()  # keyword's wrong answers
    expect(page.locator("#count")).to_have_text(f"{sum(keyword['failure_causes'].values())} of 7 questions")
    assert page.input_value("#f-a") == "keyword" and page.input_value("#f-v") == "a_wrong"
    in_view = page.locator("#questions").evaluate("e => e.getBoundingClientRect().top < innerHeight")
    assert in_view


def test_each_answer_shows_the_prompt_its_model_read(browser, report, tmp_path):
    import yaml
    from context import answer_prompt
    from records import read_records
    template = yaml.safe_load(open(report["config"], encoding="utf-8"))["answer_prompt"]
    rec = next(r for p in report["runs"] for r in read_records(p) if r["backend"] == "full_context" and r["qid"] == "c001q1")
    page = open_page(browser, url_of(report, "#c001q1"))
    answer = page.locator("#qtable tr.detail .answer", has_text="full_context (control)")
    answer.locator("details.prompt summary").click()
    assert answer.locator("details.prompt pre").inner_text() == answer_prompt(template, rec["asked_at"],
                                                                              rec["context_text"], rec["question"])
    lines = answer.locator(".context ul.ctx > li:not(.cut):not(.gap):not(.dropped)").all_inner_texts()
    assert [line.split(" ")[0] for line in lines] == [line.split(" ")[0] for line in rec["context_text"].split("\n")]
    keep_screenshot(page, tmp_path, "prompt")


def test_the_judges_reason_is_shown_next_to_decided_by_llm(browser, report, tmp_path):
    import shutil
    import score
    from cli import run_cli
    from records import read_records, write_jsonl
    from report_pipeline import make_report
    copy = tmp_path / "copy"
    shutil.copytree(report["results"], copy)
    paths = {**report, "verdicts": str(copy / "verdicts.jsonl"), "scores": str(copy / "scores.json"),
             "md": str(copy / "report.md"), "html": str(copy / "report.html")}
    verdicts = read_records(paths["verdicts"])
    target = next(v for v in verdicts if v["backend"] == "keyword" and v["qid"] == "c002q1")
    target.update(by="llm", judge_reason="It names the owner the history gives.")
    write_jsonl(copy / "verdicts.jsonl", verdicts)
    assert run_cli(score.main, ["--runs", *paths["runs"], "--verdicts", paths["verdicts"], "--baseline", "keyword",
                                "--json", paths["scores"], "--manifest", paths["manifest"], "--resamples", "50"]) == 0
    assert make_report(paths) == 0
    page = open_page(browser, url_of(paths, "#c002q1"))
    answer = page.locator("#qtable tr.detail .answer", has_text="keyword (baseline)")
    assert "decided by llm — the judge: It names the owner the history gives." in answer.inner_text()


def test_a_failed_judge_call_is_listed_under_its_error_count(browser, report, tmp_path):
    # The tables count an answer whose judge call failed wrong, with cause error; the explorer
    # shows what they computed, so the error count's link lists it, marked error.
    import json
    import shutil
    import score
    from cli import run_cli
    from records import read_records, write_jsonl
    from report_pipeline import make_report
    copy = tmp_path / "copy"
    shutil.copytree(report["results"], copy)
    paths = {**report, "verdicts": str(copy / "verdicts.jsonl"), "scores": str(copy / "scores.json"),
             "md": str(copy / "report.md"), "html": str(copy / "report.html")}
    verdicts = read_records(paths["verdicts"])
    target = next(v for v in verdicts if v["backend"] == "keyword" and v["qid"] == "c002q1")
    target.update(verdict=None, by="llm", judge_error="timeout")
    write_jsonl(copy / "verdicts.jsonl", verdicts)
    assert run_cli(score.main, ["--runs", *paths["runs"], "--verdicts", paths["verdicts"], "--baseline", "keyword",
                                "--json", paths["scores"], "--manifest", paths["manifest"], "--resamples", "50"]) == 0
    assert make_report(paths) == 0
    keyword = next(s for s in json.load(open(paths["scores"]))["systems"] if s["label"] == "keyword")
    errors = keyword["failure_causes"]["error"]
    assert errors >= 1
    page = open_page(browser, url_of(paths))
    page.locator("#failures ~ div.scroll table tr.baseline a[href*='cause=error']").click()
    expect(page.locator("#count")).to_have_text(f"{errors} of 7 questions")
    assert "c002q1" in visible_qids(page)
    cell = page.locator("#qtable tbody tr.q", has_text="c002q1").locator("td").nth(4 + page.eval_on_selector_all(
        "#qtable thead th", "ths => ths.slice(4).map(t => t.textContent)").index("A: keyword"))
    assert "! error" in cell.inner_text()


def test_the_index_lists_the_pipelines_runs_and_links_to_each_page(browser, report, tmp_path):
    import json
    import compare
    from cli import run_cli
    # keyword against hash across the files of the pipeline's run: a compare page beside its report
    runs = [p for p in report["runs"] if p.endswith(("keyword.jsonl", "hash.jsonl"))]
    out = report["results"] / "compare" / "keyword-hash" / "compare.md"
    assert run_cli(compare.main, ["--runs", *runs, "--verdicts", report["verdicts"], report["verdicts"],
                                  "--manifest", report["manifest"], "--resamples", "50", "--out", str(out)]) == 0
    run_id = json.load(open(report["manifest"]))["run_id"]
    index = report["results"] / "index.html"
    page = browser.new_page()
    page.on("console", lambda m: browser.messages.append(f"{m.type}: {m.text}"))
    page.goto("file://" + str(index))
    rows = page.locator("table.index tbody tr")
    assert rows.count() == 2  # the report and the comparison: one contract, one group
    assert page.locator("h2").count() == 1
    report_row = page.locator("table.index tbody tr.report")
    assert report_row.locator("td").first.inner_text() == run_id
    assert "keyword: accuracy" in report_row.inner_text() and "hash: accuracy" in report_row.inner_text()
    assert f"{run_id}/keyword: accuracy" in page.locator("table.index tbody tr.compare").inner_text()
    report_row.locator("a").click()
    page.wait_for_selector("#qtable tbody tr.q")  # the report itself
    page.go_back()
    page.locator("table.index tbody tr.compare a").click()
    expect(page.locator("h1")).to_contain_text(f"{run_id}/keyword, {run_id}/hash")
    keep_screenshot(page, tmp_path, "index")
    assert not [m for m in browser.messages if not m.startswith(("log:", "debug:"))]


def test_an_opened_question_sits_below_the_sticky_filters_and_types_do_not_break_inside_a_word(browser, report,
                                                                                                tmp_path):
    page = browser.new_page()
    # A narrow window, where the filters wrap onto three lines and the table squeezes its columns.
    page.set_viewport_size({"width": 760, "height": 700})
    page.on("console", lambda m: browser.messages.append(f"{m.type}: {m.text}"))
    page.goto(url_of(report, "#c001q1"))
    page.wait_for_selector("#qtable tr.q.open")
    bar = page.locator(".filters").bounding_box()
    row = page.locator("#qtable tr.q.open").bounding_box()
    assert bar["height"] > 120  # taller than a fixed margin would allow for
    assert row["y"] >= bar["y"] + bar["height"]  # the filters, stuck to the top, hide none of it
    # every type cell on one line: knowledge_update is not cut into "knowledg" and "e_update"
    lines = page.eval_on_selector_all("#qtable td.qtype", """els => els.map(e => {
        const r = document.createRange(); r.selectNodeContents(e); return r.getClientRects().length; })""")
    assert lines and set(lines) == {1}
    keep_screenshot(page, tmp_path, "opened-below-filters")
    assert not [m for m in browser.messages if not m.startswith(("log:", "debug:"))]
