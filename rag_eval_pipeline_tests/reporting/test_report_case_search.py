"""A 500-case report of five models in Chromium at 1,440 px, as a reader uses it: a case id
typed in the filter, or given to "go to a case", shows every model's row of that case at once
(through the index built with the report, from whichever pages hold them); the page fits the
window, its header is words; copied alone it says in each chart's place what is missing, and
`rag-eval report --single-file` writes a copy that needs nothing beside it.

The time each search takes is measured with performance.now() and printed (benchmarks/README.md
records it); it is never asserted: a busy machine is not a failure."""

import contextlib
import shutil

import pytest

from rag_eval_pipeline.reporting import report as report_module
from rag_eval_pipeline_tests.support.cli import rag_eval
from rag_eval_pipeline_tests.support.ui import TIMED_CASE_SEARCH, browser_context

MODELS = {
    "oracle": "oracle",
    "null": "null",
    "extractive-baseline": "extractive-baseline",
    "baseline": "baseline",
    "baseline-k2": "extractive-baseline",
}
CASES = 500


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
    return folder, where, home / "storage" / "artifacts" / "eval_report.html"


def _rows_of(page, case_id: str) -> list[str]:
    rows = page.locator("#cases tbody tr:visible")
    assert all(text == case_id for text in rows.locator("td:nth-child(3)").all_inner_texts())
    return sorted(rows.locator("td:first-child").all_inner_texts())


@pytest.mark.slow  # a 500 x 5 run (about a minute) and a browser
def test_a_case_answers_at_once_with_every_models_row_and_the_page_fits(report):
    _, _, path = report
    with contextlib.ExitStack() as stack:
        page = browser_context(stack).new_page()
        page.set_viewport_size({"width": 1440, "height": 900})
        page.goto(path.as_uri())
        pages = int(page.get_attribute("#case-pager", "data-pages"))
        assert pages == -(-CASES * len(MODELS) // report_module.PAGE_ROWS)  # paged: rows on 3 pages
        # the last case id: its first model's row on page 1 or 2, its last model's on the last page
        last = page.evaluate("Object.keys(caseIndex).sort().at(-1)")
        assert sorted({p for p, _ in page.evaluate(f"caseIndex[{last!r}]")}) != [1]

        searched = page.evaluate(TIMED_CASE_SEARCH, ["case-filter", "input", last])
        assert _rows_of(page, last) == sorted(MODELS)
        assert page.inner_text("#case-count") == str(len(MODELS))
        page.fill("#case-filter", "")  # back to the page it was on
        page.wait_for_function("document.getElementById('cases').dataset.view === 'page'")
        assert page.locator("#cases tbody tr:visible").count() == report_module.PAGE_ROWS

        first = page.evaluate("Object.keys(caseIndex).sort()[0]")
        went = page.evaluate(TIMED_CASE_SEARCH, ["case-jump", "change", first])
        assert _rows_of(page, first) == sorted(MODELS)
        said = page.inner_text("#page-status")
        assert f"case {first}: its {len(MODELS)} row(s)" in said

        # a word, not a case id, filters the page shown (1,000 rows) without a freeze
        page.fill("#case-filter", "")
        page.wait_for_function("document.getElementById('cases').dataset.view === 'page'")
        filtered = page.evaluate(
            """() => { const t0 = performance.now(); const f = document.getElementById('case-filter');
                       f.value = 'baseline-k2'; f.dispatchEvent(new Event('input'));
                       document.body.offsetHeight; return performance.now() - t0; }"""
        )
        # page 1 holds baseline's 500 rows and baseline-k2's (models in order, then case ids)
        assert int(page.inner_text("#case-count")) == page.locator("#cases tbody tr:visible").count() == CASES
        page.goto("about:blank")
        print(
            f"\n500 x 5 report in Chromium: case-id search {searched:.0f} ms, go to a case {went:.0f} ms, "
            f"filter of a 1,000-row page {filtered:.0f} ms"
        )

        page.goto(path.as_uri())
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 1440, f"the report is {width} px wide in a 1,440 px window"
        header = page.inner_text("#report-header")
        assert header.startswith("answer models: baseline, baseline-k2, extractive-baseline, null, oracle")
        assert "language of the cases: en (500 cases)" in header and "[" not in header
        outside_cases = page.evaluate(
            "[...document.body.children].filter(e => !e.contains(document.getElementById('cases')))"
            ".map(e => e.innerText).join(' ')"
        )
        assert "None" not in outside_cases and "Paired comparison" in outside_cases


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
        page.wait_for_selector(".chart-missing")
        notices = page.locator(".chart-missing").all_inner_texts()
        assert len(notices) >= 4 and page.locator(".plotly-graph-div").count() == 0
        assert all("rag-eval report --single-file" in n and "is not beside this report" in n for n in notices)

        page.goto(single.as_uri())
        page.wait_for_selector(".plotly-graph-div .main-svg")
        assert page.locator(".chart-missing").count() == 0
        last = page.evaluate("Object.keys(caseIndex).sort().at(-1)")
        page.evaluate(TIMED_CASE_SEARCH, ["case-filter", "input", last])  # rows of pages carried inside
        assert _rows_of(page, last) == sorted(MODELS)
