"""A 500-case report of five models in Chromium at 1,440 px, as a reader uses it: the first screen
says which model is better (means with intervals, the paired differences drawn); the case table
filters, sorts and pages every row of every page (a model, a case id in any case or its first
characters), and "go to a case" answers after the filter is cleared; no cell is broken inside a
word, no section is wider than its pane, nothing logs an error. Copied alone it says in each
chart's place what is missing, and `rag-eval report --single-file` writes a copy that needs
nothing beside it.

The time of each click is measured with performance.now() and written to
test-artifacts/report-500x5.json (benchmarks/README.md records the figures); never asserted: a
busy machine is not a failure."""

import contextlib
import shutil

import pytest

from rag_eval_pipeline.reporting import report as report_module
from rag_eval_pipeline_tests.support.cli import rag_eval
from rag_eval_pipeline_tests.support.report_page import (
    LAYOUT_PROBLEMS,
    LOAD_FIGURES,
    interaction_times,
    open_report,
    record,
)
from rag_eval_pipeline_tests.support.ui import TIMED_CASE_SEARCH, browser_context

MODELS = {
    "oracle": "oracle",
    "null": "null",
    "extractive-baseline": "extractive-baseline",
    "baseline": "baseline",
    "baseline-k2": "extractive-baseline",
}
CASES = 500
SHOWN_ROWS = "#cases tbody tr[data-row]"


@pytest.fixture(scope="module")
def report(tmp_path_factory, shared_hotpotqa):
    folder = tmp_path_factory.mktemp("report-500x5")
    models = "".join(
        f"  - {{name: '{name}', provider: offline, model: '{model}'"
        + (", top_k: 2" if name.endswith("-k2") else "")
        + "}\n"
        for name, model in MODELS.items()
    )
    config = folder / "rag_eval.yaml"
    config.write_text(
        f"dataset: {{source: '{shared_hotpotqa}', sample_size: {CASES}}}\nanswer_models:\n{models}"
    )
    home = folder / "home"
    where = ["--config", str(config), "--dagster-home", str(home)]
    ran = rag_eval(*where, "run", cwd=folder, timeout=900)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-3000:]
    path = home / "storage" / "artifacts" / "eval_report.html"
    assert f"report: {path}" in ran.stdout  # `rag-eval run` says where its report is
    return folder, where, path


def _column(page, n: int) -> list[str]:
    return page.locator(f"{SHOWN_ROWS} td:nth-child({n})").all_inner_texts()


@pytest.mark.slow  # a 500 x 5 run (about a minute) and a browser
def test_the_first_screen_answers_and_the_case_table_reaches_every_row(report):
    _, _, path = report
    with contextlib.ExitStack() as stack:
        page = browser_context(stack).new_page()
        page.set_viewport_size({"width": 1440, "height": 900})
        errors = open_report(page, path.as_uri())
        loaded = page.evaluate(LOAD_FIGURES)

        # the first screen: the verdicts in words, each model's mean with its interval, the pairs drawn
        first = page.locator("#answers")
        assert first.bounding_box()["y"] < 900
        assert "paired comparisons show a difference" in page.inner_text("#verdict-summary")
        shown = page.locator("#answers .answers:not([hidden]) svg.chart")
        assert shown.count() == 2 and shown.first.bounding_box()["y"] < 900
        assert shown.first.locator("circle").count() == len(MODELS)  # a dot per model (one judge)
        assert shown.nth(1).locator("circle").count() == len(MODELS) * (len(MODELS) - 1) // 2
        # one colour per model: its dot among the means, the bar of its answers, in every picture
        colours = page.evaluate(
            """() => Object.fromEntries(
                 [...document.querySelectorAll('#answers .answers:not([hidden]) svg')[0]
                 .querySelectorAll('g.mark')].map(g => [g.querySelector('text').textContent.split(' (')[0],
                 g.querySelector('circle').getAttribute('fill')]))"""
        )
        assert len(set(colours.values())) == len(MODELS)
        page.select_option("#metric-pick", "f1")
        assert page.locator('.answers[data-metric="f1"]').is_visible()
        assert not page.locator('.answers[data-metric="correctness"]').is_visible()

        # every row of every page: 25 pages of 100 rows
        rows = CASES * len(MODELS)
        assert page.inner_text("#case-count") == f"{rows:,}"
        assert page.locator(SHOWN_ROWS).count() == report_module.VIEW_ROWS
        assert page.get_attribute("#case-pager", "data-pages") == str(rows // report_module.VIEW_ROWS)
        page.fill("#case-filter", "ORACLE")  # a model, on whichever pages it is, in any case
        page.wait_for_function(f"document.getElementById('case-count').innerText === '{CASES}'")
        assert set(_column(page, 1)) == {"oracle"}
        ids = page.evaluate("caseData.qids")
        prefix = ids[-1][:8]  # the 8 characters the Dagster UI shows, upper-cased
        page.fill("#case-filter", prefix.upper())
        expected = sum(1 for i in ids if i.lower().startswith(prefix.lower())) * len(MODELS)
        page.wait_for_function(f"document.getElementById('case-count').innerText === '{expected:,}'")
        assert all(i.lower().startswith(prefix.lower()) for i in _column(page, 3))
        page.fill("#case-filter", "")
        page.wait_for_function(f"document.getElementById('case-count').innerText === '{rows:,}'")
        # a sort over every row: the lowest correctness of all 2,500 first, absent last
        page.locator("#cases th").nth(4).click()
        assert _column(page, 5)[0] == "0.00"
        page.locator("#cases th").nth(4).click()
        assert _column(page, 5)[0] == "1.00"

        # a case id in any case shows its every model's row; "go to a case" after the filter is cleared
        last = ids[-1]
        page.fill("#case-filter", last.upper())
        page.wait_for_function(f"document.getElementById('page-status').innerText.includes('case {last}:')")
        assert sorted(_column(page, 1)) == sorted(MODELS) and set(_column(page, 3)) == {last}
        page.fill("#case-filter", "")
        page.wait_for_function(f"document.getElementById('case-count').innerText === '{rows:,}'")
        page.fill("#case-jump", ids[0])
        page.press("#case-jump", "Enter")
        page.wait_for_function(f"document.getElementById('page-status').innerText.includes('case {ids[0]}:')")
        assert sorted(_column(page, 1)) == sorted(MODELS)
        # its record: the answer, the reference and the passages the model read
        page.locator(f"{SHOWN_ROWS} button.open").first.click()
        record_row = page.locator("#cases tr.record")
        assert "ground truth" in record_row.inner_text() and record_row.locator("details").count() == 1

        # the layout at 1,440 px, every folded table opened: one line a cell, nothing wider than its pane
        page.fill("#case-filter", "")
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        page.wait_for_timeout(200)
        assert page.evaluate(LAYOUT_PROBLEMS) == []
        header = page.inner_text("#report-header")
        assert header.startswith("answer models: baseline, baseline-k2, extractive-baseline, null, oracle")
        body = page.inner_text("body")
        assert "None" not in body and "nan" not in body.split() and "NaN" not in body

        page.goto(path.as_uri())
        page.wait_for_function("performance.getEntriesByName('cases-ready').length > 0")
        times = interaction_times(page, "baseline-k2", ids[len(ids) // 2][:8], ids[len(ids) // 3])
        assert errors == []
    written = record("report-500x5", {"load": loaded, "clicks_ms": times})
    print(f"\n500 x 5 report in Chromium: {loaded} {times} ({written})")


EVERY_CHART_DRAWN = "[...document.querySelectorAll('.lazy-chart')].every(d => d.dataset.drawn === '2')"
# each shown chart: the height its place kept before it was drawn, and its height drawn
CHART_PLACES = """[...document.querySelectorAll('.lazy-chart')].filter(d => d.offsetParent)
  .map(d => [parseInt(d.style.minHeight), d.offsetHeight])"""


@pytest.mark.slow  # shares the 500 x 5 run above
def test_a_report_copied_alone_says_what_is_missing_and_the_single_file_copy_needs_nothing(report, tmp_path):
    folder, where, path = report
    alone = tmp_path / "copied" / "eval_report.html"
    alone.parent.mkdir()
    shutil.copy(path, alone)
    single = tmp_path / "sent" / "report.html"
    single.parent.mkdir()
    made = rag_eval(*where, "report", "--single-file", "--out", str(single), cwd=folder)
    assert made.returncode == 0, made.stderr
    none = rag_eval("--dagster-home", str(tmp_path / "fresh"), "report", "--single-file", cwd=tmp_path)
    assert none.returncode != 0 and none.stderr.startswith("error: no report at "), none.stderr
    assert "3 page(s) of cases inside" in made.stdout
    with contextlib.ExitStack() as stack:
        page = browser_context(stack).new_page()
        page.goto(alone.as_uri())
        page.locator("#distributions").scroll_into_view_if_needed()
        page.wait_for_selector(".chart-missing")
        notices = page.locator(".chart-missing").all_inner_texts()
        assert len(notices) >= 2 and page.locator(".plotly-graph-div").count() == 0
        assert all("rag-eval report --single-file" in n and "is not beside this report" in n for n in notices)
        # a record on a page whose file is not beside the copy: said, not a silent blank
        page.fill("#case-jump", page.evaluate("caseData.qids.at(-1)"))
        page.press("#case-jump", "Enter")
        page.locator("#cases tr[data-row] button.open").last.click()
        page.wait_for_function(
            "document.getElementById('page-status').innerText.includes('cannot be loaded')"
        )

        errors = open_report(page, single.as_uri())
        page.locator("#distributions").scroll_into_view_if_needed()
        page.wait_for_selector(".plotly-graph-div .main-svg")
        assert page.locator(".chart-missing").count() == 0
        # each chart drawn fills the place kept for it before plotly.js was read: nothing below
        # a chart moves under a reader's click (the record's button further down, say)
        page.wait_for_function(EVERY_CHART_DRAWN)
        places = page.evaluate(CHART_PLACES)
        assert places and all(kept == drawn for kept, drawn in places), places
        last = page.evaluate("caseData.qids.at(-1)")
        page.evaluate(TIMED_CASE_SEARCH, ["case-filter", "input", last])
        assert sorted(_column(page, 1)) == sorted(MODELS)
        page.locator("#cases tr[data-row] button.open").last.click()  # its record from page 3, carried inside
        # the record, or the page's own word on why not: a busy machine may take long, never silently
        page.wait_for_function(
            "document.querySelector('#cases tr.record')"
            " || /cannot|error|fail/i.test(document.getElementById('page-status').innerText)",
            timeout=120_000,
        )
        status = page.inner_text("#page-status")
        assert page.locator("#cases tr.record").count() == 1, f"no record; the page says: {status}"
        assert last in page.locator("#cases tr.record").inner_text()
        assert errors == []
