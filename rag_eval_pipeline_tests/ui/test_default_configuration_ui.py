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
from rag_eval_pipeline_tests.support.ui import (
    browser_context,
    evaluates,
    materialize_all,
    open_page,
    serve_ui,
)

pytestmark = pytest.mark.slow  # `rag-eval ui` (webserver and daemon), a backfill and a browser


def test_materialize_all_with_the_default_configuration_evaluates_each_default_model_once(tmp_path):
    reports_port = free_port()
    config = tmp_path / "rag_eval.yaml"
    config.write_text(f"ui: {{reports_port: {reports_port}}}\n")
    with contextlib.ExitStack() as stack:
        ui = serve_ui(stack, tmp_path, config, reports_port)
        page = browser_context(stack).new_page()
        page.set_viewport_size({"width": 1440, "height": 900})
        backfill = materialize_all(ui, page, len(DEFAULT_MODELS))
        assert backfill.status == BulkActionStatus.COMPLETED_SUCCESS, backfill
        with ui.instance() as instance:
            runs = instance.get_runs()
            comparison = instance.get_latest_materialization_event(dg.AssetKey("model_comparison"))
        assert runs and all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs), runs
        evaluations = collections.Counter(r.tags.get("dagster/partition") for r in runs if evaluates(r))
        assert evaluations == dict.fromkeys(DEFAULT_MODELS, 1)
        assert comparison is not None
        assert comparison.asset_materialization.metadata["missing_models"].value == "none"
        open_page(page, f"{ui.url}/runs/b/{backfill.backfill_id}")
        status = page.get_by_text("Status", exact=True).first.locator("xpath=..")
        expect(status).to_contain_text("Succeeded", timeout=60_000)
