"""`rag-eval run` on a custom documents folder (ten Chinese documents, five models), then
`rag-eval ui` on the same home, as a new user goes from the command line to the UI: every
sensor's first ticks compare with what the instance already holds (the documents the knowledge
base was built from, the stored evaluations and comparison), so the UI starts no run."""

import contextlib

import dagster as dg
import pytest

from rag_eval_pipeline.cli.ui import STOPS_ALL
from rag_eval_pipeline_tests.support import REPO_ROOT
from rag_eval_pipeline_tests.support.cli import RAG_EVAL, rag_eval
from rag_eval_pipeline_tests.support.languages import write_project
from rag_eval_pipeline_tests.support.processes import free_port
from rag_eval_pipeline_tests.support.ui import sensor_ticks, serve_ui, wait_until

pytestmark = pytest.mark.slow  # a run, then `rag-eval ui` (webserver and daemon) for two sensor intervals

# every sensor of the evaluation that can launch a run (the production sensors have no source)
SENSORS = (
    "new_documents_sensor",
    "knowledge_base_rebuilt_sensor",
    "reports_refresh_sensor",
    "new_labels_sensor",
)
TICKS = 2  # each sensor's first tick and the next, 30 s apart: a first minute of the UI


def test_run_then_ui_starts_no_run(tmp_path):
    config = write_project(tmp_path, ["zh"])
    reports_port = free_port()
    with config.open("a", encoding="utf-8") as file:
        file.write(f"ui: {{reports_port: {reports_port}}}\n")
    home = tmp_path / "home"
    ran = rag_eval("--config", str(config), "--dagster-home", str(home), "run", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    with dg.DagsterInstance.from_config(str(home)) as instance:
        before = {run.run_id for run in instance.get_runs()}
    assert before

    command = [RAG_EVAL, "--config", str(config), "--dagster-home", str(home), "ui"]
    with contextlib.ExitStack() as stack:
        ui = serve_ui(stack, tmp_path, config, reports_port, command=command, cwd=tmp_path)

        def ticked() -> bool:
            return all(len(sensor_ticks(ui, sensor)) >= TICKS for sensor in SENSORS)

        wait_until(ticked, 300, f"{TICKS} ticks of every sensor")
        with ui.instance() as instance:
            after = {run.run_id: run for run in instance.get_runs()}
        started = {run_id: run.tags for run_id, run in after.items() if run_id not in before}
        assert started == {}, started
        said = " ".join(tick["skipReason"] or "" for tick in sensor_ticks(ui, "new_documents_sensor"))
        assert "the knowledge base already holds the 10 documents" in said, said
    # the banner says what Ctrl-C stops, as docs/ui.md does
    banner = (tmp_path / "ui.log").read_text()
    assert f"({STOPS_ALL})" in banner and f"{STOPS_ALL}." in (REPO_ROOT / "docs" / "ui.md").read_text()
