"""The default configuration in the real Dagster UI at 1,440 x 900: a file that names no model, no
dataset and no section (only the reports' port, so parallel runs do not collide), `rag-eval ui`
on a fresh home, then the global lineage's "Materialize all…" with All partitions and "Launch
backfill", as a new user's first click. The backfill succeeds and evaluates each default model
once; the comparison says none is missing."""

import collections
import contextlib

import dagster as dg
import pytest
from dagster._core.execution.backfill import BulkActionStatus
from playwright.sync_api import expect

from rag_eval_pipeline.answering.spec import DEFAULT_MODELS
from rag_eval_pipeline_tests.support.processes import free_port
from rag_eval_pipeline_tests.support.ui import browser_context, open_page, serve_ui, wait_until

pytestmark = pytest.mark.slow  # `rag-eval ui` (webserver and daemon), a backfill and a browser

MATERIALIZE_ALL = "Materialize all…"


def _evaluations(runs: list[dg.DagsterRun]) -> collections.Counter:
    """How many runs answered and judged each partition (not those that only summarize again)."""
    return collections.Counter(
        run.tags.get("dagster/partition")
        for run in runs
        if (run.asset_selection is None and run.job_name == "evaluation_job")
        or (run.asset_selection is not None and dg.AssetKey("candidate_answers") in run.asset_selection)
    )


def test_materialize_all_with_the_default_configuration_evaluates_each_default_model_once(tmp_path):
    reports_port = free_port()
    config = tmp_path / "rag_eval.yaml"
    config.write_text(f"ui: {{reports_port: {reports_port}}}\n")
    with contextlib.ExitStack() as stack:
        ui = serve_ui(stack, tmp_path, config, reports_port)
        page = browser_context(stack).new_page()
        page.set_viewport_size({"width": 1440, "height": 900})
        open_page(page, f"{ui.url}/asset-groups")
        page.get_by_role("button", name=MATERIALIZE_ALL).click()
        dialog = page.locator("[role=dialog]")
        dialog.get_by_role("button", name="All", exact=True).click()
        expect(dialog.get_by_text(f"{len(DEFAULT_MODELS)} partitions", exact=True)).to_be_visible()
        dialog.get_by_role("button", name="Launch backfill").click()

        def launched():
            with ui.instance() as instance:
                return next(iter(instance.get_backfills()), None)

        backfill_id = wait_until(launched, 120, "the backfill").backfill_id

        def ended():
            with ui.instance() as instance:
                backfill = instance.get_backfill(backfill_id)
            return backfill if backfill.status != BulkActionStatus.REQUESTED else None

        assert wait_until(ended, 900, "the backfill's end").status == BulkActionStatus.COMPLETED_SUCCESS
        with ui.instance() as instance:
            runs = instance.get_runs()
            comparison = instance.get_latest_materialization_event(dg.AssetKey("model_comparison"))
        assert runs and all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs), runs
        assert _evaluations(runs) == dict.fromkeys(DEFAULT_MODELS, 1)
        assert comparison is not None
        assert comparison.asset_materialization.metadata["missing_models"].value == "none"
        open_page(page, f"{ui.url}/runs/b/{backfill_id}")
        status = page.get_by_text("Status", exact=True).first.locator("xpath=..")
        expect(status).to_contain_text("Succeeded", timeout=60_000)
