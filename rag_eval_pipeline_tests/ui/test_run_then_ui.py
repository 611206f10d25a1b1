"""`rag-eval run` on a custom documents folder (ten Chinese documents, five models), a security
probe, a simulation of the support desk, a day of production traffic and a reviewer's labels,
then `rag-eval ui` on the same home, as a new user goes from the command line to the UI: every
sensor's first ticks compare with what the instance already holds (the documents the knowledge
base was built from, the stored evaluations and comparison, the probe, the simulated sessions,
the scored day and its trend, the labels read), so the UI starts no run in its first two
minutes."""

import contextlib
import json
import shutil
import time

import dagster as dg
import pytest
import yaml

from rag_eval_pipeline.cli.ui import STOPS_ALL
from rag_eval_pipeline_tests.support import REPO_ROOT
from rag_eval_pipeline_tests.support.cli import RAG_EVAL, rag_eval
from rag_eval_pipeline_tests.support.languages import write_project
from rag_eval_pipeline_tests.support.processes import free_port
from rag_eval_pipeline_tests.support.production import log_row, production_config, shared_questions, write_day
from rag_eval_pipeline_tests.support.ui import sensor_ticks, serve_ui, wait_until

pytestmark = pytest.mark.slow  # a run, then `rag-eval ui` (webserver and daemon) for two sensor intervals

# every sensor that can launch a run: the evaluation's, and production's over its logs
SENSORS = (
    "new_documents_sensor",
    "knowledge_base_rebuilt_sensor",
    "reports_refresh_sensor",
    "new_labels_sensor",
    "production_logs_sensor",
    "production_reports_sensor",
)
DAY = "2026-11-28"
TICKS = 2  # each sensor's first tick and the next, 30 s apart: a first minute of the UI
WATCHED_S = 120  # and the runs counted once the UI has served two minutes
# the bundled support desk as the agent simulated users talk to (not a model to evaluate: the
# configuration does not say so), beside the project's five answer models
SUPPORT_DESK = (
    '  - {name: support-desk, provider: python, target: "example_agent.support:chat", '
    'response: {answer: $.reply, contexts: null}, version: "1.0"}\n'
    "simulation: {scenarios: %s, agent: support-desk, trials: 2, tool_calls: '$.tool_calls[*]'}\n"
)


def _label_the_queue(folder) -> str:
    """A reviewer's labels of every row of the exported queue, saved as the page saves them."""
    queue = [json.loads(line) for line in (folder / "review" / "first.jsonl").open()]
    saved = folder / "first.labels.jsonl"
    saved.write_text("".join(json.dumps({**row, "label": 1, "reviewer": "ui"}) + "\n" for row in queue))
    return str(saved)


def test_run_probe_simulate_production_review_then_ui_starts_no_run(tmp_path):
    shutil.copytree(REPO_ROOT / "example_agent", tmp_path / "example_agent")  # importable from cwd
    scenarios = REPO_ROOT / "examples" / "simulation" / "scenarios.jsonl"
    rows = [log_row(q, DAY, n, grounded=True) for n, q in enumerate(shared_questions(10))]
    write_day(tmp_path / "logs", DAY, rows)
    production = production_config(
        tmp_path / "logs", sample_per_day=10, sensor_interval_s=30, thresholds={"faithfulness_lexical": 0.5}
    )
    extra = SUPPORT_DESK % scenarios + yaml.safe_dump({"production": production})
    config = write_project(tmp_path, ["zh"], extra)
    reports_port = free_port()
    with config.open("a", encoding="utf-8") as file:
        file.write(f"ui: {{reports_port: {reports_port}}}\n")
    home = tmp_path / "home"
    on_home = ("--config", str(config), "--dagster-home", str(home))
    for command in (
        ["run"],
        ["probe", "--models", "oracle", "--attacks", "poisoning", "--sample", "3", "--seed", "t1"],
        ["simulate"],
        ["production", "run"],
        ["review", "export", "--model", "oracle", "--n", "4", "--name", "first"],
        ["review", "import", None],
    ):
        command = [word or _label_the_queue(tmp_path) for word in command]
        ran = rag_eval(*on_home, *command, cwd=tmp_path)
        assert ran.returncode == 0, ran.stdout + ran.stderr
    with dg.DagsterInstance.from_config(str(home)) as instance:
        before = {run.run_id for run in instance.get_runs()}
        models = instance.get_dynamic_partitions("answer_model")
        probed = instance.get_latest_materialization_event(dg.AssetKey("security_probes"))
        simulated = instance.get_latest_materialization_event(dg.AssetKey("simulation_summary"))
        stored = [
            instance.get_latest_materialization_event(dg.AssetKey(key))
            for key in ("production_summary", "production_report", "human_labels", "corrected_means")
        ]
    assert before and probed is not None and simulated is not None and all(stored), stored
    assert "support-desk" not in models and len(models) == 5, models  # simulated, never evaluated

    command = [RAG_EVAL, "--config", str(config), "--dagster-home", str(home), "ui"]
    with contextlib.ExitStack() as stack:
        # started in the background, as a script would: SIGINT ignored (what dagster dev takes
        # SIGTERM as), which must not keep it from stopping cleanly
        ui = serve_ui(stack, tmp_path, config, reports_port, command=command, cwd=tmp_path, background=True)
        served = time.monotonic()

        def ticked() -> bool:
            return all(len(sensor_ticks(ui, sensor)) >= TICKS for sensor in SENSORS)

        wait_until(ticked, 300, f"{TICKS} ticks of every sensor")
        time.sleep(max(0.0, served + WATCHED_S - time.monotonic()))
        with ui.instance() as instance:
            after = {run.run_id: run for run in instance.get_runs()}
        started = {run_id: run.tags for run_id, run in after.items() if run_id not in before}
        assert started == {}, started
        said = " ".join(tick["skipReason"] or "" for tick in sensor_ticks(ui, "new_documents_sensor"))
        assert "the knowledge base already holds the 10 documents" in said, said
    # the banner says what Ctrl-C stops, as docs/ui.md does
    banner = (tmp_path / "ui.log").read_text()
    # stopped with SIGTERM: dagster dev shut its servers down itself, not killed at the grace's end
    assert "Dagster services shut down." in banner, banner[-2000:]
    assert f"({STOPS_ALL})" in banner and f"{STOPS_ALL}." in (REPO_ROOT / "docs" / "ui.md").read_text()
