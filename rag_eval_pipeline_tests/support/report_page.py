"""The evaluation report in headless chromium as a reader meets it: what breaks its layout (a cell
wrapped inside a word, a section wider than its pane), what it logs as an error, and how long
each click takes (performance.now() in the page: recorded, never asserted)."""

from __future__ import annotations

import json
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
TEST_ARTIFACTS = REPO_ROOT / "test-artifacts"

# every visible table cell outside a row's opened record: one line (a number, id or model name
# cut with an ellipsis, its whole value in its title), and every section, table box and figure no
# wider than the pane that holds it
LAYOUT_PROBLEMS = """() => {
  const problems = [];
  const visible = e => e.offsetParent !== null && e.getClientRects().length > 0;
  for (const cell of document.querySelectorAll('td, th')) {
    if (!visible(cell) || cell.closest('tr.record') || cell.closest('.js-plotly-plot')) continue;
    const style = getComputedStyle(cell);
    const line = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.3;
    const inner = cell.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
    if (style.whiteSpace !== 'nowrap' && inner > line * 1.6)
      problems.push('wraps: ' + cell.textContent.slice(0, 60));
    if (cell.scrollWidth > cell.clientWidth + 1 && !cell.title && cell.textContent.trim())
      problems.push('cut without its whole value on hover: ' + cell.textContent.slice(0, 60));
  }
  const page = document.documentElement;
  if (page.scrollWidth > page.clientWidth + 1) problems.push('page ' + page.scrollWidth + ' px wide');
  for (const box of document.querySelectorAll('body > *, section, .wide, .answers > div, figure, table')) {
    if (!visible(box) || box.id === 'js-plotly-tester') continue;  // plotly's off-screen measurer
    const pane = box.parentElement.clientWidth;
    if (box.getBoundingClientRect().width > pane + 1 || box.scrollWidth > box.clientWidth + 1)
      problems.push((box.id || box.tagName.toLowerCase()) + ' wider than its pane');
  }
  return problems;
}"""

# load: the longest main-thread task and when the case table showed its rows
LOAD_FIGURES = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const ready = performance.getEntriesByName('cases-ready')[0];
  const tasks = window.__longTasks || [];
  return {
    dom_content_loaded_ms: nav ? nav.domContentLoadedEventEnd : null,
    load_ms: nav ? nav.loadEventEnd : null,
    cases_ready_ms: ready ? ready.startTime : null,
    longest_task_ms: tasks.length ? Math.max(...tasks) : 0,
    usable_ms: Math.max(nav ? nav.loadEventEnd : 0, ...tasks.map((d, i) => window.__longTaskEnds[i])),
  };
}"""

# before any script of the page: the long tasks as they happen
OBSERVE_LONG_TASKS = """window.__longTasks = []; window.__longTaskEnds = [];
new PerformanceObserver(list => { for (const e of list.getEntries()) {
  window.__longTasks.push(e.duration); window.__longTaskEnds.push(e.startTime + e.duration); } })
  .observe({type: 'longtask', buffered: true});"""

# one click's time: from the event to the table drawn again (the report counts its renderings in
# window.caseRenders) and the next frame
TIMED = """async ([what, arg]) => {
  const before = window.caseRenders, t0 = performance.now();
  if (what === 'next') document.getElementById('page-next').click();
  else if (what === 'sort') document.querySelectorAll('#cases th')[arg].click();
  else if (what === 'filter' || what === 'jump') {
    const f = document.getElementById(what === 'filter' ? 'case-filter' : 'case-jump');
    f.value = arg; f.dispatchEvent(new Event(what === 'filter' ? 'input' : 'change'));
  }
  while (window.caseRenders === before) {
    if (performance.now() - t0 > 30000) throw new Error(what + ' ' + arg + ': the table was not drawn');
    await new Promise(r => setTimeout(r, 1));
  }
  await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
  return performance.now() - t0;
}"""


def open_report(page, url: str) -> list[str]:
    """``url`` opened with its long tasks observed; the errors it logs (uncaught or console)."""
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(f"uncaught: {err}"))
    page.on(
        "console",
        lambda msg: (
            errors.append(f"console: {msg.text} ({msg.location.get('url')})") if msg.type == "error" else None
        ),
    )
    page.add_init_script(OBSERVE_LONG_TASKS)
    page.goto(url, wait_until="load")
    page.wait_for_function("performance.getEntriesByName('cases-ready').length > 0")
    return errors


def interaction_times(page, model: str, prefix: str, case_id: str) -> dict[str, float]:
    """Each click of a reader on the open report, in ms: next page, a sort, a filter by model and
    by case-id prefix (typing stopped to rows shown: its debounce included), go to a case."""
    times = {"next page": page.evaluate(TIMED, ["next", 0])}
    times["sort by correctness"] = page.evaluate(TIMED, ["sort", 4])
    times["filter by model"] = page.evaluate(TIMED, ["filter", model])
    times["filter by case-id prefix"] = page.evaluate(TIMED, ["filter", prefix])
    page.evaluate(TIMED, ["filter", ""])
    times["go to a case"] = page.evaluate(TIMED, ["jump", case_id])
    return times


def record(name: str, figures: dict) -> Path:
    """``figures`` written to test-artifacts/<name>.json (what benchmarks/README.md quotes)."""
    TEST_ARTIFACTS.mkdir(exist_ok=True)
    path = TEST_ARTIFACTS / f"{name}.json"
    path.write_text(json.dumps(figures, indent=2) + "\n")
    return path
