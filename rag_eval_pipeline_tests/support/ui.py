"""The real Dagster UI for the UI tests: `rag-eval ui` started on a fresh home with a
configuration file of the test's, headless Debian chromium driven by Playwright, and what the
tests read back (GraphQL as the UI calls it, pages, screenshots)."""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg

from rag_eval_pipeline_tests.support import ARTIFACTS
from rag_eval_pipeline_tests.support.cli import RAG_EVAL
from rag_eval_pipeline_tests.support.processes import free_port, stop_process_group, wait_until

LOCATION = "rag_eval_pipeline"


@dataclass(frozen=True)
class UI:
    url: str
    home: Path
    config: Path
    reports_url: str

    def instance(self) -> dg.DagsterInstance:
        return dg.DagsterInstance.from_config(str(self.home))


def graphql(url: str, query: str, variables: dict | None = None) -> dict:
    """The webserver's GraphQL API, as the UI itself calls it."""
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    request = urllib.request.Request(f"{url}/graphql", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        answer = json.loads(response.read())
    assert "errors" not in answer, answer["errors"]
    return answer["data"]


def serve_ui(
    stack: contextlib.ExitStack,
    folder: Path,
    config: Path,
    reports_port: int,
    command: list[str] | None = None,
    cwd: Path | None = None,
    background: bool = False,
) -> UI:
    """`rag-eval ui` (webserver and daemon) on a fresh home in ``folder``, stopped with ``stack``;
    or ``command`` as a command printed it (its home, its configuration), from ``cwd``;
    ``background``: started as a script's "&" starts it, SIGINT ignored."""
    assert shutil.which("chromium"), (
        "Debian's chromium is required (apt-get install chromium); .ci/run installs it"
    )
    home, port = folder / "home", free_port()
    if command is not None:
        home = Path(command[command.index("--dagster-home") + 1])
    command = command or [RAG_EVAL, "--config", str(config), "--dagster-home", str(home), "ui"]
    # Dagster asks each new instance to "Join the Dagster community" in a modal that takes the
    # page's clicks until dismissed; it may open after any first wait, so the home says it was seen
    (home / ".nux").mkdir(parents=True, exist_ok=True)
    (home / ".nux" / "nux.yaml").write_text("seen: 1\n")
    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "RAG_EVAL_CONFIG")}
    log = stack.enter_context(open(folder / "ui.log", "w"))  # noqa: SIM115 (open for the server's lifetime)
    process = subprocess.Popen(
        [*command, "--port", str(port)],
        cwd=cwd or folder,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if background else None,  # noqa: PLW1509
    )
    stack.callback(stop_process_group, process)
    url = f"http://127.0.0.1:{port}"

    def serving() -> bool:
        assert process.poll() is None, (folder / "ui.log").read_text()[-3000:]
        with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/server_info", timeout=2) as reply:
            return reply.status == 200
        return False

    wait_until(serving, 180, "the Dagster webserver")
    return UI(url, home, config, f"http://127.0.0.1:{reports_port}")


# the global lineage's button (its name also holds its icon's: matched as a part); Dagster writes
# "Materialize all (N)…" beside an asset no run can make, which is why every asset has a definition
MATERIALIZE_ALL = "Materialize all…"


def materialize_all(ui: UI, page, partitions: int | None, seen: Callable[[Any], None] = lambda dialog: None):
    """The global lineage's "Materialize all…" as a user launches it for every model: *All*
    under the partition selection (the dialog opens on *Custom*, none chosen: Dagster's default
    for dynamic partitions), which must read ``partitions`` (None: a dialog that offers no
    choice, every family's partitions), ``seen`` shown the dialog, then "Launch backfill". The
    backfill, once it has ended."""
    from dagster._core.execution.backfill import BulkActionStatus
    from playwright.sync_api import expect

    with ui.instance() as instance:
        before = {b.backfill_id for b in instance.get_backfills()}
    open_page(page, f"{ui.url}/asset-groups")
    page.get_by_role("button", name=MATERIALIZE_ALL).click()
    dialog = page.locator("[role=dialog]")
    if partitions is not None:
        dialog.get_by_role("button", name="All", exact=True).click()
        expect(dialog.get_by_text(f"{partitions} partitions", exact=True)).to_be_visible()
    seen(dialog)
    dialog.get_by_role("button", name="Launch backfill").click()

    def launched():
        with ui.instance() as instance:
            return next((b for b in instance.get_backfills() if b.backfill_id not in before), None)

    backfill_id = wait_until(launched, 120, "the backfill").backfill_id

    def ended():
        with ui.instance() as instance:
            backfill = instance.get_backfill(backfill_id)
        return backfill if backfill.status != BulkActionStatus.REQUESTED else None

    return wait_until(ended, 900, "the backfill's end")


def evaluates(run: dg.DagsterRun) -> bool:
    """A run that answers and judges its partition (a backfill's step, a sensor's or a launch's
    evaluation), not one that only summarizes it again."""
    selection = run.asset_selection
    if selection is None:
        return run.job_name == "evaluation_job"
    return dg.AssetKey("candidate_answers") in selection


def sensor_ticks(ui: UI, sensor: str) -> list[dict]:
    """The sensor's latest ticks as the UI lists them, newest first: status, timestamp, skip
    reason and the runs each launched."""
    query = """query($s: SensorSelector!) { sensorOrError(sensorSelector: $s) { ... on Sensor {
                 sensorState { ticks(limit: 20) { status timestamp skipReason runIds } } } } }"""
    selector = {"repositoryLocationName": LOCATION, "repositoryName": "__repository__", "sensorName": sensor}
    return graphql(ui.url, query, {"s": selector})["sensorOrError"]["sensorState"]["ticks"]


NAVIGATION_TIMEOUT_MS = 120_000
LAPTOP = {"width": 1440, "height": 900}
ACTION_TIMEOUT_MS = 60_000


def browser_context(stack: contextlib.ExitStack):
    """A headless chromium (Debian's; Playwright never downloads one) and a wide page context."""
    from playwright.sync_api import sync_playwright

    playwright = stack.enter_context(sync_playwright())
    browser = playwright.chromium.launch(
        executable_path=shutil.which("chromium"),
        args=[
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ],
    )
    stack.callback(browser.close)
    # a laptop's screen: every page and screenshot of docs/ at 1,440 x 900, as a new user sees it
    context = browser.new_context(viewport=LAPTOP)
    # a webserver sharing two cores with the daemon, its runs and another test worker can take
    # longer than Playwright's 30 s default to answer a page: waits are for behaviour, not speed
    context.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    stack.callback(context.close)
    return context


def open_page(page, url: str) -> None:
    """Go to a page, let its first queries settle, and dismiss the first-visit "Join the Dagster
    community" dialog if shown. Pages that keep polling (runs in flight, partitioned assets) never
    reach network idle, so the settling is bounded and callers wait for what they assert."""
    from playwright.sync_api import TimeoutError as StillPolling

    page.goto(url, wait_until="load")
    with contextlib.suppress(StillPolling):
        page.wait_for_load_state("networkidle", timeout=30_000)
    with contextlib.suppress(Exception):  # the dialog shows once per browser profile
        page.get_by_role("button", name="Skip", exact=True).first.click(timeout=3_000)


def screenshot(page, name: str, full_page: bool = True) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


# a report's case search: fills an input as a reader types into it, and resolves with the
# milliseconds (performance.now()) until the status line says the case's rows are shown
TIMED_CASE_SEARCH = """async ([input, event, id]) => {
  const status = () => document.getElementById('page-status').innerText;
  const t0 = performance.now();
  const field = document.getElementById(input);
  field.value = id;
  field.dispatchEvent(new Event(event));
  while (!status().includes('case ' + id + ':')) await new Promise(r => setTimeout(r, 2));
  return performance.now() - t0;
}"""


# the backfill page's asset table is virtualized: only the rows near its scrolled window are in
# the page, so with every root, probe and health asset in a backfill the cross-model rows are
# below it at 1,000 px. This scrolls the table through and returns each asset's row as read
# ({asset name: its row's text, one line}), then leaves the row of ``keep`` in view. A row is
# the positioned element (Dagster's virtual row) around its asset's link
BACKFILL_ASSET_ROWS = """async (keep) => {
  const links = () => [...document.querySelectorAll('a[href*="/assets/"]')]
    .filter((a) => /% completed/.test((a.closest('[style*="translate"], [style*="top"]') || a).innerText));
  const rowOf = (a) => a.closest('[style*="translate"], [style*="top"]') || a.parentElement;
  const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const seen = {};
  const take = () => links().forEach((a) => {
    seen[a.innerText.trim()] = rowOf(a).innerText.split(/\\s+/).join(' ').trim();
  });
  const first = links()[0];
  if (!first) return seen;
  const scrolls = (e) => e.scrollHeight > e.clientHeight && /auto|scroll/.test(getComputedStyle(e).overflowY);
  let box = first.parentElement;
  while (box && !scrolls(box)) box = box.parentElement;
  box = box || document.scrollingElement;
  const step = Math.max(50, box.clientHeight / 2);
  for (let top = 0; top <= box.scrollHeight + step; top += step) {
    box.scrollTop = top;
    await frames();
    take();
  }
  for (let top = 0; top <= box.scrollHeight + step; top += step) {
    const row = links().find((a) => a.innerText.trim() === keep);
    if (row) { rowOf(row).scrollIntoView({block: 'center'}); break; }
    box.scrollTop = top;
    await frames();
  }
  return seen;
}"""


# Dagster's Timestamp column says each metadata entry's time in the viewer's clock ("Dec 6, 9:29
# PM"), on one line, so a pane that fits at 9 in the evening can be past its width at noon (a
# CI run at 22:00 was 3 px past a pane that fit at 21:00). Given an element, this sets every such
# time in it to its widest form ("<month> 28, 12:58 PM", the month widest in the page's font)
# and returns how many it set and a function that puts them back: widths measured meanwhile
# hold at any hour
AT_WIDEST_TIMES = """(root) => {
  const TIME = /^[A-Z][a-z]{2} \\d{1,2}, \\d{1,2}:\\d{2} [AP]M$/;
  const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const times = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (TIME.test(node.nodeValue.trim())) times.push([node, node.nodeValue]);
  }
  if (times.length) {
    const [first] = times[0];
    const widths = MONTHS.map((month) => {
      first.nodeValue = `${month} 28, 12:58 PM`;
      return [first.parentElement.getBoundingClientRect().width, first.nodeValue];
    });
    const [, widest] = widths.reduce((a, b) => (b[0] > a[0] ? b : a));
    times.forEach(([node]) => { node.nodeValue = widest; });
  }
  return [times.length, () => times.forEach(([node, text]) => { node.nodeValue = text; })];
}"""


# what an asset page's metadata pane needs: its whole width against its own; the narrowest its
# content can be (`needed`, the pane squeezed to 1 px) and the entry that sets it (`widest`, the
# one whose hiding narrows it most), both with the values of the entries ``hidden`` hidden (their
# keys kept, so the key column is as on the page); and the page's. Measured with Dagster's
# timestamps at their widest (AT_WIDEST_TIMES), so a page that fits fits at any hour
PANE_WIDTHS = (
    """(hidden) => {
  const atWidestTimes = """
    + AT_WIDEST_TIMES
    + """;
  const panes = [...document.querySelectorAll('[class*=assetEventMetadataScrollContainer]')];
  const page = [document.documentElement.scrollWidth, document.documentElement.clientWidth];
  const needed = (pane) => {
    const width = pane.style.width;
    pane.style.width = '1px';
    const least = pane.scrollWidth;
    pane.style.width = width;
    return least;
  };
  return {page, panes: panes.map((pane) => {
    const [times, putBack] = atWidestTimes(pane);
    const whole = pane.scrollWidth;
    const rows = [...pane.querySelector('table').tBodies[0].rows];
    const values = rows
      .filter((row) => hidden.includes(row.cells[0].innerText.trim()))
      .flatMap((row) => [...row.cells].slice(1).flatMap((cell) => [...cell.children]));
    values.forEach((element) => { element.style.display = 'none'; });
    const without = pane.scrollWidth;
    const least = needed(pane);
    let widest = null;
    rows.forEach((row) => {
      row.style.display = 'none';
      const less = needed(pane);
      row.style.display = '';
      if (less < least && (!widest || less < widest.without)) {
        widest = {entry: row.cells[0].innerText.trim(), without: less};
      }
    });
    values.forEach((element) => { element.style.display = ''; });
    putBack();
    return {whole, without, needed: least, widest, width: pane.clientWidth, times};
  })};
}"""
)


# what a metadata table needs of the pane it shows in and how wide that pane is (its nearest
# ancestor that scrolls sideways). The table is laid out in the room its entry leaves it (the
# pane less the key and timestamp cells beside it and its cell's padding), as it would be if
# no other entry widened the pane (a long file path does: Dagster's to wrap), and fits when it
# needs no more than that room (at any hour: AT_WIDEST_TIMES)
_TABLE_AND_PANE = (
    """(cell) => {
  const atWidestTimes = """
    + AT_WIDEST_TIMES
    + """;
  const table = cell.closest('table');
  const entry = table.parentElement.closest('td');
  const row = entry ? entry.parentElement : null;
  let pane = table.parentElement;
  while (pane && pane !== document.body) {
    const overflow = getComputedStyle(pane).overflowX;
    if (overflow === 'auto' || overflow === 'scroll') break;
    pane = pane.parentElement;
  }
  if (!pane || pane === document.body) pane = document.documentElement;
  const [, putBack] = atWidestTimes(pane);
  let beside = 0;
  if (row) {
    const style = getComputedStyle(entry);
    beside += parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
    for (const other of row.cells) if (other !== entry) beside += other.getBoundingClientRect().width;
  }
  const holder = table.parentElement, kept = holder.style.cssText;
  holder.style.width = holder.style.maxWidth = (pane.clientWidth - beside) + 'px';
  const needed = table.getBoundingClientRect().width + beside;
  holder.style.cssText = kept;
  putBack();
  return [Math.ceil(needed), pane.clientWidth];
}"""
)


def table_and_pane_widths(page, text: str) -> tuple[int, int]:
    """The width the metadata table showing ``text`` needs of its pane, and the pane's width."""
    cell = page.locator("td", has=page.get_by_text(text, exact=True)).last
    cell.wait_for(timeout=ACTION_TIMEOUT_MS)
    needed, pane = cell.evaluate(_TABLE_AND_PANE)
    return needed, pane
