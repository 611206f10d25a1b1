"""The bundled simulation configuration (examples/simulation/rag_eval.yaml: the support desk and
its scripted users) in the real Dagster UI at 1,440 x 900, as a new user meets it: `rag-eval
simulate`, then `rag-eval ui` as simulate prints it, then the global lineage's "Materialize all…"
and its "Launch backfill". The simulation (partitioned by agent version) and the knowledge base
(unpartitioned) are one backfill of every family's partitions, which succeeds; the support desk
is no answer model, and every view says nothing is missing."""

import contextlib
import shutil

import dagster as dg
import pytest
from dagster._core.execution.backfill import BulkActionStatus
from playwright.sync_api import expect

from rag_eval_pipeline_tests.support import REPO_ROOT
from rag_eval_pipeline_tests.support.cli import RAG_EVAL, rag_eval
from rag_eval_pipeline_tests.support.processes import free_port
from rag_eval_pipeline_tests.support.ui import (
    PANE_WIDTHS,
    browser_context,
    materialize_all,
    open_page,
    screenshot,
    serve_ui,
)

pytestmark = pytest.mark.slow  # `rag-eval simulate`, `rag-eval ui` (webserver and daemon) and a browser

EXAMPLE = REPO_ROOT / "examples" / "simulation"
VERSION = "1.0"  # the support desk's version: the simulation's partition


@pytest.fixture(scope="module")
def ui(tmp_path_factory):
    """The example's file as it is (its ui section added for a free port), simulated once, then
    `rag-eval ui` on the same home."""
    folder = tmp_path_factory.mktemp("simulation-ui")
    shutil.copytree(REPO_ROOT / "example_agent", folder / "example_agent")  # importable from cwd
    shutil.copy(EXAMPLE / "scenarios.jsonl", folder / "scenarios.jsonl")
    reports_port = free_port()
    config = folder / "rag_eval.yaml"
    config.write_text((EXAMPLE / "rag_eval.yaml").read_text() + f"ui: {{reports_port: {reports_port}}}\n")
    on_home = ["--config", str(config), "--dagster-home", str(folder / "home")]
    simulated = rag_eval(*on_home, "simulate", cwd=folder)
    assert simulated.returncode == 0, simulated.stdout + simulated.stderr
    with contextlib.ExitStack() as stack:
        yield serve_ui(stack, folder, config, reports_port, command=[RAG_EVAL, *on_home, "ui"], cwd=folder)


@pytest.fixture(scope="module")
def browser(ui):
    with contextlib.ExitStack() as stack:
        yield browser_context(stack)


def _laptop(browser):
    page = browser.new_page()
    page.set_viewport_size({"width": 1440, "height": 900})
    return page


@pytest.fixture(scope="module")
def backfilled(ui, browser):
    """The whole lineage launched as the UI launches it: "Materialize all…", then the dialog's
    "Launch backfill" (every partition of every family; Dagster says why it offers no choice)."""
    with ui.instance() as instance:
        runs_before = {r.run_id for r in instance.get_runs()}
    page = _laptop(browser)

    def every_family(dialog) -> None:
        expect(dialog.get_by_text("different partition definitions", exact=False)).to_be_visible()
        screenshot(page, "ui-materialize-all-families", full_page=False)

    backfill = materialize_all(ui, page, None, every_family)
    with ui.instance() as instance:
        new = [r for r in instance.get_runs() if r.run_id not in runs_before]
    return backfill, new, page


def test_materialize_all_is_one_backfill_of_every_family_and_it_succeeds(ui, backfilled):
    backfill, runs, page = backfilled
    assert backfill.status == BulkActionStatus.COMPLETED_SUCCESS, backfill
    assert runs and all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
    with ui.instance() as instance:
        summary = instance.fetch_materializations(
            dg.AssetRecordsFilter(dg.AssetKey("simulation_summary"), asset_partitions=[VERSION]), limit=1
        ).records[0]
        assert summary.run_id in {r.run_id for r in runs}  # the backfill simulated the version again
        for asset in ("simulation_scenarios", "kb_index", "model_comparison", "eval_report"):
            assert instance.get_latest_materialization_event(dg.AssetKey(asset)), asset
        # the support desk is the simulation's agent, not a model: nothing to evaluate, none missing
        assert instance.get_dynamic_partitions("answer_model") == []
        assert not instance.get_latest_materialization_event(dg.AssetKey("candidate_answers"))
        comparison = instance.get_latest_materialization_event(dg.AssetKey("model_comparison"))
    assert comparison.asset_materialization.metadata["missing_models"].value == "none"
    open_page(page, f"{ui.url}/runs/b/{backfill.backfill_id}")
    status = page.get_by_text("Status", exact=True).first.locator("xpath=..")
    expect(status).to_contain_text("Succeeded", timeout=60_000)
    screenshot(page, "ui-backfill-simulation", full_page=False)


def test_the_scenarios_read_as_a_list_and_the_summary_fits_a_laptop(ui, browser, backfilled):
    """simulation_scenarios' Overview lists each scenario (task, goal, user); the Overview of
    simulation_summary and of the scenarios fit 1,440 px without scrolling sideways."""
    page = _laptop(browser)
    wide = []
    for asset, shown in (("simulation_scenarios", "refund"), ("simulation_summary", "task_success")):
        open_page(page, f"{ui.url}/assets/{asset}")
        pane = page.locator("[class*=assetEventMetadataScrollContainer]").first
        expect(pane.get_by_text(shown, exact=True).first).to_be_visible(timeout=60_000)
        measured = page.evaluate(PANE_WIDTHS, [])
        wide += [
            f"{asset}: {found['whole']} px in a {found['width']} px pane (widest: {found['widest']})"
            for found in measured["panes"]
            if found["whole"] > found["width"]
        ]
        screenshot(page, f"ui-{asset.replace('_', '-')}", full_page=False)
    assert not wide, wide
