"""One broken model among good ones, in the real UI: `rag-eval ui` on a fresh instance with three
offline models and a fourth whose Python agent cannot be imported, then "Materialize all" over
every partition (the UI's own GraphQL call). The good models each get their summary; the
backfill itself builds the comparison, which holds them and names the broken one with its
reason; the backfill's page counts every cross-model asset built and only the broken model's
history failed; the broken run's page opens on the reason, and the report opens."""

import contextlib
import json
import re
import time

import dagster as dg
import pytest
from playwright.sync_api import expect

from rag_eval_pipeline.config import load_settings
from rag_eval_pipeline.definitions import build_definitions
from rag_eval_pipeline_tests.support import ARTIFACTS, SHARED_HOTPOTQA
from rag_eval_pipeline_tests.support.cli import rag_eval
from rag_eval_pipeline_tests.support.processes import free_port
from rag_eval_pipeline_tests.support.ui import (
    BACKFILL_ASSET_ROWS,
    PANE_WIDTHS,
    browser_context,
    graphql,
    open_page,
    screenshot,
    sensor_ticks,
    serve_ui,
    table_and_pane_widths,
    wait_until,
)

pytestmark = pytest.mark.slow  # `rag-eval ui` (webserver and daemon) and a browser

GOOD = ("extractive-baseline", "oracle", "null")
REASON = "cannot import broken_agent (RuntimeError: the vector store is not configured)"


@pytest.fixture(scope="module")
def ui(tmp_path_factory):
    with contextlib.ExitStack() as stack:
        folder = tmp_path_factory.mktemp("broken-ui")
        (folder / "broken_agent.py").write_text("raise RuntimeError('the vector store is not configured')\n")
        reports_port = free_port()
        models = "".join(f"  - {{name: {m!r}, provider: offline, model: {m!r}}}\n" for m in GOOD)
        (folder / "rag_eval.yaml").write_text(
            f"dataset: {{source: '{SHARED_HOTPOTQA}', sample_size: 20}}\n"
            f"answer_models:\n{models}"
            "  - {name: broken, provider: python, target: 'broken_agent:answer'}\n"
            f"ui: {{reports_port: {reports_port}}}\n"
        )
        yield serve_ui(stack, folder, folder / "rag_eval.yaml", reports_port)


@pytest.fixture(scope="module")
def browser(ui):
    with contextlib.ExitStack() as stack:
        yield browser_context(stack)


@pytest.fixture(scope="module")
def backfilled(ui):
    """Every asset over every partition, launched as the UI's "Materialize all" launches it."""

    def registered():
        with ui.instance() as instance:
            return set(instance.get_dynamic_partitions("answer_model")) >= {*GOOD, "broken"}

    wait_until(registered, 180, "the configured models registered by the sensor")
    # what "Materialize all" runs: every asset a run can make (security_probes too, which reads
    # the stored probe rows again and never probes)
    keys = [
        {"path": node["assetKey"]["path"]}
        for node in graphql(ui.url, "{ assetNodes { assetKey { path } isExecutable } }")["assetNodes"]
        if node["isExecutable"]
    ]
    launched = graphql(
        ui.url,
        """mutation($params: LaunchBackfillParams!) { launchPartitionBackfill(backfillParams: $params) {
             __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message } } }""",
        {"params": {"allPartitions": True, "assetSelection": keys}},
    )["launchPartitionBackfill"]
    assert launched["__typename"] == "LaunchBackfillSuccess", launched

    def ended():
        with ui.instance() as instance:
            backfill = instance.get_backfill(launched["backfillId"])
        return backfill if backfill.status.value != "REQUESTED" else None

    backfill = wait_until(ended, 900, "the backfill's end")

    def compared():
        with ui.instance() as instance:
            comparison = instance.fetch_materializations(dg.AssetKey("model_comparison"), limit=1).records
            summaries = [
                instance.fetch_materializations(
                    dg.AssetRecordsFilter(dg.AssetKey("metric_summary"), asset_partitions=[m]), limit=1
                ).records
                for m in GOOD
            ]
        if not comparison or not all(summaries):
            return None
        return comparison[0] if comparison[0].timestamp > max(s[0].timestamp for s in summaries) else None

    comparison = wait_until(compared, 300, "the comparison after the good models' summaries")
    with ui.instance() as instance:
        summaries = [
            instance.fetch_materializations(
                dg.AssetRecordsFilter(dg.AssetKey("metric_summary"), asset_partitions=[m]), limit=1
            )
            .records[0]
            .timestamp
            for m in GOOD
        ]
    # how long it took, recorded for docs/ui.md (never asserted: a busy machine is slower)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "broken-model-backfill.json").write_text(
        json.dumps(
            {
                "last_good_summary_s": round(max(summaries) - backfill.backfill_timestamp, 1),
                "comparison_s": round(comparison.timestamp - backfill.backfill_timestamp, 1),
            }
        )
    )
    return backfill, comparison


def test_the_sensor_says_why_the_broken_model_cannot_run_and_registers_it(ui, backfilled):
    """Every tick says why, the first (which registers the models) too: a backfill over before the
    sensor's second tick (22 s on a quiet machine, its interval 30 s) left only "Sensor function
    returned an empty result" to read."""
    ticks = sensor_ticks(ui, "answer_models_sensor")
    why = f"broken cannot run: agent broken: target broken_agent:answer: {REASON}"
    assert ticks and all(why in (tick["skipReason"] or "") for tick in ticks), ticks
    assert "registered extractive-baseline" in ticks[-1]["skipReason"]  # the oldest: it registered them


def test_the_good_models_are_evaluated_and_compared_without_the_broken_one(ui, backfilled):
    backfill, record = backfilled
    assert backfill.status.value == "COMPLETED_FAILED"  # one partition failed; the others stand
    with ui.instance() as instance:
        comparison = build_definitions(load_settings(ui.config)).load_asset_value(
            "model_comparison", instance=instance
        )
    rows = comparison.set_index("answer_model")
    assert set(rows.index) == {*GOOD, "broken"}
    assert not rows.loc[list(GOOD), "missing"].any() and rows.loc["broken", "missing"]
    assert REASON in rows.loc["broken", "note"]
    assert REASON in record.asset_materialization.metadata["missing_models"].value


def test_the_broken_run_opens_on_its_reason_and_the_backfill_shows_one_failed_partition(
    ui, browser, backfilled
):
    backfill, _ = backfilled
    with ui.instance() as instance:
        failed = instance.get_runs(dg.RunsFilter(tags={"dagster/partition": "broken"}), limit=1)[0]
        runs = instance.get_runs(dg.RunsFilter(tags={"dagster/backfill": backfill.backfill_id}))
    assert failed.status == dg.DagsterRunStatus.FAILURE
    assert [r.run_id for r in runs if r.status != dg.DagsterRunStatus.SUCCESS] == [failed.run_id]
    # the failure sensor writes the check's own words at the foot of the run's log, where its page
    # opens (Dagster's own error says only that a blocking check failed, the reason a click further)
    said = f"metric_summary answered failed: target broken_agent:answer: {REASON}"

    def written():
        with ui.instance() as instance:
            return any(said in (entry.message or "") for entry in instance.all_logs(failed.run_id))

    wait_until(written, 120, "the reason written at the foot of the run's log")
    page = browser.new_page()
    open_page(page, f"{ui.url}/runs/{failed.run_id}")
    reason = page.get_by_text(re.compile("^" + re.escape(said))).first
    reason.wait_for(timeout=60_000)
    expect(reason).to_be_in_viewport()  # the first screen, no click on "View full message"
    screenshot(page, "ui-broken-model-run", full_page=False)
    open_page(page, f"{ui.url}/runs/b/{backfill.backfill_id}")
    # the backfill's page: targeted, in progress, succeeded, failed. The broken model's answers,
    # scores and summary are stored (with its reason); only its history, behind the failed
    # check, is not; every cross-model asset was built by the backfill itself
    # its asset table is virtualized: rows below its window (the cross-model assets, after every
    # root, probe and health asset of this configuration) are read by scrolling it through
    page.get_by_text(re.compile(r"^\d+% completed$")).first.wait_for(timeout=60_000)
    rows = page.evaluate(BACKFILL_ASSET_ROWS, "model_comparison")
    shown = " ".join([*rows.values(), *page.locator("body").inner_text().split()])
    for asset in ("candidate_answers", "judge_scores", "metric_summary"):
        assert re.search(rf"{asset} 100% completed 4 0 4 0\b", shown), shown[:3000]
    assert re.search(r"metric_history 100% completed 4 0 3 1\b", shown), shown[:3000]
    for asset in ("model_comparison", "paired_comparison", "eval_report", "prometheus_metrics"):
        assert re.search(rf"{asset} 100% completed - - Succeeded -", shown), shown[:3000]
    assert "Failed -" not in shown  # no unpartitioned asset is counted failed
    # the lower rows in view (left there by BACKFILL_ASSET_ROWS): the cross-model assets built
    screenshot(page, "ui-broken-model-backfill", full_page=False)


def test_exactly_one_comparison_follows_the_backfill_and_it_is_the_backfills_own(ui, backfilled):
    """The broken model's chain ends in its recorded failure, so Dagster's backfill goes on past
    it: the comparison is built in the backfill, once, naming the broken model; no sensor adds a
    second one after it (docs/ui.md)."""
    backfill, record = backfilled
    ended = time.time()  # the backfill has ended (its last run built the comparison)

    def ticked_since():
        return [t for t in sensor_ticks(ui, "reports_refresh_sensor") if t["timestamp"] > ended] or None

    wait_until(ticked_since, 180, "a tick of the refresh sensor after the backfill")
    refreshes = [t for t in sensor_ticks(ui, "reports_refresh_sensor") if t["runIds"]]
    with ui.instance() as instance:
        after_launch = instance.fetch_materializations(
            dg.AssetRecordsFilter(
                dg.AssetKey("model_comparison"), after_timestamp=backfill.backfill_timestamp
            ),
            limit=10,
        ).records
        run = instance.get_run_by_id(record.run_id)
    assert [r.storage_id for r in after_launch] == [record.storage_id]
    assert run.tags["dagster/backfill"] == backfill.backfill_id
    assert "broken" in record.asset_materialization.metadata["missing_models"].value
    assert refreshes == []


def test_the_comparison_names_the_broken_model_and_the_report_opens(ui, browser, backfilled):
    page = browser.new_page()
    page.set_viewport_size({"width": 1440, "height": 900})
    open_page(page, f"{ui.url}/assets/model_comparison")
    page.get_by_text(re.compile(r"broken: missing: evaluation run")).first.wait_for(timeout=60_000)
    screenshot(page, "ui-broken-model-comparison", full_page=False)
    # each row's model links to its cases (judge_scores on its partition)
    link = page.locator("a", has_text="extractive-baseline").first
    href = link.get_attribute("href")
    assert "/assets/judge_scores?view=partitions&partition=extractive-baseline" in href, href
    table, pane = table_and_pane_widths(page, "extractive-baseline")
    assert table <= pane, f"the comparison is {table} px wide in a {pane} px pane"
    page.goto(f"{ui.reports_url}/eval_report.html", wait_until="load")
    page.wait_for_selector("#missing", timeout=60_000)
    assert REASON in page.locator("#missing").inner_text()
    page.wait_for_selector(".main-svg", timeout=60_000)  # the charts of the good models drawn


# The one entry Dagster's layout leaves no room for: metric_summary's Overview, whose plotted
# means' keys (`answer_model/cost_per_case_usd`, 30 characters, which the Plots tab follows by
# name) make a 277 px key column beside the 140 px Timestamp column, so a `path` Dagster will
# not break at '/' (`history/metric_summary/extractive-…`) is past the 784 px pane. Its tables
# are measured without it; the model's own pane fits whole (docs/ui.md).
PLOTTED_KEYS_LEAVE_NO_ROOM = {"metric_summary": ["path"]}
MEASURED_GROUPS = ("evaluation", "reporting")
# security_probes as `rag-eval probe` records it (a runless materialization: no file of its own)
SHOWN_LAST = {"security_probes": "worst_probes"}


def test_every_metadata_pane_fits_at_a_laptops_width(ui, browser, backfilled):
    """Every asset page of the evaluation and reporting groups that the backfill materialized,
    on its Overview and on the materialization's own pane (a model's partition, or Events), fits
    1,440 x 900 whole, at any time of day: the files relative to `artifacts` (absolute paths made
    every pane scroll sideways), and the summary tables narrow (the worst cases, the summary and
    usage, the paired verdicts), their details one click away. The widths measured go to
    test-artifacts/metadata-pane-widths.json. The bundled multimodal sample, evaluated on the same
    instance by the command line, is measured too (oracle's image cases: the judges of ten
    metrics in each entry made the page 1,057 px in an 851 px pane), and its first image case's
    entry shows the image with its gold and predicted boxes drawn, and their IoU. A probe of two
    models (`rag-eval probe`) is measured with them, and its first model's rates are on its
    page's first screen."""
    ran = rag_eval(
        "--config", str(ui.config), "--dagster-home", str(ui.home),
        "run", "--dataset", "multimodal-sample", "--models", "oracle", cwd=ui.config.parent,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-3000:]
    probed = rag_eval(
        "--config", str(ui.config), "--dagster-home", str(ui.home),
        "probe", "--models", "oracle,extractive-baseline", "--sample", "3", "--seed", "ui",
        cwd=ui.config.parent,
    )  # fmt: skip
    assert probed.returncode == 0, probed.stderr[-3000:]
    nodes = graphql(ui.url, "{ assetNodes { assetKey { path } groupName isPartitioned } }")["assetNodes"]
    with ui.instance() as instance:
        assets = [
            (node["assetKey"]["path"][0], node["isPartitioned"])
            for node in nodes
            if node["groupName"] in MEASURED_GROUPS
            and instance.get_latest_materialization_event(dg.AssetKey(node["assetKey"]["path"]))
        ]
    assert {"judge_scores", "metric_summary", "paired_comparison", "eval_report", "security_probes"} <= {
        a for a, _ in assets
    }
    page = browser.new_page()
    page.set_viewport_size({"width": 1440, "height": 900})
    wide, figures = [], {}
    for asset, partitioned in sorted(assets):
        views = ["", "?view=partitions&partition=extractive-baseline" if partitioned else "?view=events"]
        for view in views + (["?view=partitions&partition=oracle"] if asset == "judge_scores" else []):
            open_page(page, f"{ui.url}/assets/{asset}{view}")
            pane = page.locator("[class*=assetEventMetadataScrollContainer]").first
            pane.get_by_text(SHOWN_LAST.get(asset, "latest_path"), exact=True).first.wait_for(timeout=60_000)
            hidden = [] if view else PLOTTED_KEYS_LEAVE_NO_ROOM.get(asset, [])
            measured = page.evaluate(PANE_WIDTHS, hidden)
            figures[f"{asset}{view}"] = measured
            # the Overview's Timestamp column was found and measured at its widest time
            assert view or all(found["times"] for found in measured["panes"]), (asset, measured)
            page_width, page_room = measured["page"]
            if page_width > page_room:
                wide.append(f"{asset}{view}: the page is {page_width} px in {page_room}")
            wide += [
                f"{asset}{view}: its metadata is {found['whole']} px in a {found['width']} px pane"
                + (f" ({found['without']} without {hidden})" if hidden else "")
                for found in measured["panes"]
                if found["without"] > found["width"]
            ]
            if asset == "judge_scores" and view:
                pane.get_by_text("latest_path", exact=True).first.scroll_into_view_if_needed()
                screenshot(page, "ui-metadata-files", full_page=False)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "metadata-pane-widths.json").write_text(json.dumps(figures, indent=1))
    assert not wide, wide
    # the first image case's entry, one click away: its image with the boxes drawn, and the IoU
    with ui.instance() as instance:
        record = instance.fetch_materializations(
            dg.AssetRecordsFilter(dg.AssetKey("judge_scores"), asset_partitions=["oracle"]), limit=1
        ).records[0]
    metadata = record.asset_materialization.metadata
    cases = {k: str(v.value) for k, v in metadata.items() if k.startswith("oracle worst case")}
    entries = [k for k, text in cases.items() if "**Overlay**" in text]
    assert len(entries) == 3, entries  # four image cases with boxes: the worst three drawn
    open_page(page, f"{ui.url}/assets/judge_scores?view=partitions&partition=oracle")
    key = page.get_by_text(entries[0], exact=True).first
    key.wait_for(timeout=60_000)
    page.locator("tr", has=key).last.get_by_text("[Show Markdown]").click()
    dialog = page.get_by_role("dialog")
    drawn = dialog.get_by_role("img", name=re.compile("with its gold and predicted boxes"))
    drawn.scroll_into_view_if_needed(timeout=60_000)
    assert drawn.evaluate("image => image.complete && image.naturalWidth") == 320  # decoded, not broken
    expect(dialog).to_contain_text("the best predicted red; IoU 1.00")
    screenshot(page, "ui-grounding-overlay", full_page=False)
    # the probes' rates on their page: each model's attack success per attack with its interval
    open_page(page, f"{ui.url}/assets/security_probes")
    rates = page.locator("[class*=assetEventMetadataScrollContainer]").first.locator(
        "tr", has=page.get_by_text("attack_success", exact=True)
    ).last  # the entry's own row (the innermost of the rows holding its key)
    last = rates.locator("tr", has_text="oracle").last
    last.wait_for(timeout=60_000)
    expect(last).to_contain_text(re.compile(r"\d\.\d\d \[\d\.\d\d, \d\.\d\d\]"))
    # every model's rates on the first screen at 1,440 x 900: a row per model, a column per attack
    for model in ("extractive-baseline", "oracle"):
        expect(rates.locator("tr", has_text=model).last).to_be_in_viewport()
    screenshot(page, "ui-security-probes", full_page=False)
