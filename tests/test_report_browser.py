"""report.html in a real browser: headless Debian Chromium driven by Playwright opens the file
from disk, as a researcher would. The tables render, a filter narrows the rows, a question's row
shows its context with the evidence highlighted and the budget cut, a permalink opens its
question, a question holding <script> stays text, and the console stays clean.

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
    assert page.locator("figure img").count() in (0, 2)  # 2 plots with the extra, none without
    everything = visible_qids(page)
    assert len(everything) == 7 and page.inner_text("#count") == "7 of 7 questions"
    page.select_option("#f-system", label="keyword (baseline)")
    page.select_option("#f-cause", "budget_miss")
    narrowed = visible_qids(page)
    assert narrowed == ["c001q1"] and page.inner_text("#count") == "1 of 7 questions"
    assert page.locator("#qtable thead th").all_inner_texts()[-1] == "keyword"  # one system's column
    page.select_option("#f-cause", "")
    page.fill("#f-search", "ledger-sync")
    # The search waits 150 ms for typing to stop. (wait_for_function evaluates a string, which the
    # page's Content-Security-Policy forbids: expect polls without it.)
    expect(page.locator("#count")).to_have_text("3 of 7 questions")
    assert set(visible_qids(page)) == {"c002q1", "c002q2", "c003q1"}
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
    assert page.evaluate("location.hash") == "#c001q1"  # the open row's permalink is in the address
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
