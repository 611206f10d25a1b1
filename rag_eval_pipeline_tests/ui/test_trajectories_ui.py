"""The trajectories in the real UI after `rag-eval trajectories`: the agent version is a
partition of the five assets, the scores page opens on the worst sessions with the spans they
were rebuilt from, and its lineage leads back through the sessions to those spans."""

import contextlib

import dagster as dg
import pytest
import yaml

from rag_eval_pipeline_tests.support.cli import rag_eval
from rag_eval_pipeline_tests.support.processes import free_port
from rag_eval_pipeline_tests.support.ui import (
    browser_context,
    graphql,
    open_page,
    screenshot,
    serve_ui,
    table_and_pane_widths,
)
from rag_eval_pipeline_tests.trajectories.support_agent import VERSION, write_files

pytestmark = pytest.mark.slow  # `rag-eval ui` (webserver and daemon) and a browser

LINEAGE = "{ assetNodes { assetKey { path } dependencyKeys { path } } }"


def test_a_bad_session_leads_to_its_spans_in_the_ui(tmp_path):
    traces, reference = write_files(tmp_path)
    reports_port = free_port()
    config = tmp_path / "rag_eval.yaml"
    section = {"traces": [str(traces)], "reference": str(reference)}
    config.write_text(yaml.safe_dump({"trajectories": section, "ui": {"reports_port": reports_port}}))
    done = rag_eval(
        "--config", str(config), "--dagster-home", str(tmp_path / "home"), "trajectories", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    printed = done.stdout.split("open the UI with: ")[1].split()
    with contextlib.ExitStack() as stack:
        ui = serve_ui(stack, tmp_path, config, reports_port, command=printed)
        nodes = graphql(ui.url, LINEAGE)["assetNodes"]
        upstream = {n["assetKey"]["path"][0]: {d["path"][0] for d in n["dependencyKeys"]} for n in nodes}
        assert upstream["agent_sessions"] == {"trajectory_spans"}
        assert upstream["trajectory_scores"] == {"agent_sessions"}
        assert upstream["trajectory_summary"] == {"trajectory_scores", "session_judge_scores"}
        context = browser_context(stack)
        page = context.new_page()
        page.set_viewport_size({"width": 1440, "height": 900})
        open_page(page, f"{ui.url}/assets/trajectory_scores?view=partitions&partition={VERSION}")
        page.get_by_text("worst_sessions", exact=True).first.wait_for(timeout=60_000)
        # the worst session (a wrong argument: F1 0.5) heads the table, where its calls part from
        # the reference (the argument and both values), and the span its lineage starts from
        bad = page.locator("tr", has=page.get_by_text("stock-3", exact=True)).last  # the innermost row
        bad.wait_for(timeout=60_000)
        assert 'call 2 sku: "SKU-3" (expected "SKU-2")' in bad.inner_text()
        screenshot(page, "ui-trajectory-worst-sessions")
        table, pane = table_and_pane_widths(page, "stock-3")
        assert table <= pane, f"the worst sessions are {table} px wide in a {pane} px pane"
        # the session's own entry: every call in full, made beside expected, the argument marked
        entry = page.get_by_text("worst session 1: stock-3", exact=True).first
        entry.wait_for(timeout=60_000)
        with ui.instance() as instance:
            record = instance.fetch_materializations(dg.AssetKey("trajectory_scores"), limit=1).records[0]
        said = record.asset_materialization.metadata["worst session 1: stock-3"].value.replace("\\", "")
        assert '2. check_inventory({**"sku": "SKU-3"**}): **sku differs**, expected' in said
        span_id = said.split("root spans of its turns: ")[1].split()[0]
        assert len(span_id) == 16
        open_page(
            page, f"{ui.url}/assets/trajectory_scores?view=lineage&lineageScope=upstream&lineageDepth=2"
        )
        for asset in ("agent_sessions", "trajectory_spans"):
            page.get_by_text(asset, exact=True).first.wait_for(timeout=60_000)
        screenshot(page, "ui-trajectory-lineage")
        open_page(page, f"{ui.url}/assets/trajectory_spans?view=partitions&partition={VERSION}")
        page.get_by_text("spans_in_files", exact=True).first.wait_for(timeout=60_000)
        with ui.instance() as instance:
            from rag_eval_pipeline.config import load_settings
            from rag_eval_pipeline.definitions import build_definitions
            from rag_eval_pipeline.defs.io_manager import ArtifactIOManager  # noqa: F401 (the stored table)

            spans = build_definitions(load_settings(str(config))).load_asset_value(
                "trajectory_spans", instance=instance, partition_key=VERSION
            )
        row = spans[spans["span_id"] == span_id].iloc[0]
        assert row["session_id"] == "stock-3" and row["where"] == str(traces)
