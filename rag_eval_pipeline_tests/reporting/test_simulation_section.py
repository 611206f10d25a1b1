"""The HTML report's "Simulated users" section, from a real report run on an evaluated instance
after `rag-eval simulate`: per scenario its task success and stop reasons, pass^k with its
interval, the sessions the simulated user spoiled counted apart, the worst session's
transcript; and no section where nothing was simulated."""

import json
from pathlib import Path

import pytest
import yaml

from rag_eval_pipeline.config import load_settings
from rag_eval_pipeline.definitions import build_definitions
from rag_eval_pipeline_tests.support.cli import in_process
from rag_eval_pipeline_tests.trajectories import conversational_agent
from rag_eval_pipeline_tests.trajectories.test_simulate import GOLDEN_SCENARIOS, MORE_SCENARIOS, _lines

LEAKY = next(s for s in MORE_SCENARIOS if isinstance(s, dict) and s["task_id"] == "leaky")


def _report(defs, instance) -> str:
    """The report materialized as the comparison job does, read back from where it is served."""
    import dagster as dg

    job = defs.resolve_job_def("comparison_job").get_subset(asset_selection={dg.AssetKey("eval_report")})
    assert job.execute_in_process(instance=instance).success
    return (Path(instance.storage_directory()) / "artifacts" / "eval_report.html").read_text(encoding="utf-8")


@pytest.mark.slow  # a simulation and two report runs on a copy of the evaluated instance (about 20 s)
def test_the_report_shows_each_simulated_version_with_its_scenarios_and_worst_session(
    evaluated_copy, tmp_path, capsys
):
    server, _ = conversational_agent.serve()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/chat"
        # before any simulation: no section
        before = _report(evaluated_copy.defs, evaluated_copy.instance)
        assert 'id="simulation"' not in before
        scenarios = tmp_path / "scenarios.jsonl"
        scenarios.write_text(_lines([*GOLDEN_SCENARIOS, LEAKY]))
        config = tmp_path / "rag_eval.yaml"
        section = {"tool_calls": "$.result.steps[*]", "scenarios": str(scenarios), "agent": "support"}
        entry = conversational_agent.entry(url, "1.0")
        config.write_text(yaml.safe_dump({"answer_models": [entry], "simulation": section}))
        code, out, err = in_process(
            capsys, "--dagster-home", str(evaluated_copy.home), "--config", str(config),
            "simulate", "--format", "json",
        )  # fmt: skip
        assert code == 0, err
        assert json.loads(out)["simulator_faults"] == 3
    finally:
        server.shutdown()
    defs = build_definitions(load_settings(str(config)))
    page = _report(defs, evaluated_copy.instance)
    section = page[page.index('<section id="simulation">') :]
    section = section[: section.index("</section>")]
    assert "<h3>agent version 1.0: 12 sessions</h3>" in section
    # per scenario: trials, successes, task success, stop reasons, simulator faults
    rows = {
        cells[0]: cells
        for cells in (
            [c.split(">", 1)[1] for c in row.split("</td>")[:-1]] for row in section.split("<tr>")[1:]
        )
        if cells
    }
    assert rows["address"][:5] == ["address", "3", "2", "0.667", "user_stop 3"]
    assert rows["cancel"][3] == "0.000" and rows["refund"][3] == "1.000"
    assert rows["leaky"][-1] == "3" and rows["leaky"][3] == "–"  # spoiled: not the agent's figure
    # pass^k with its interval, and the spoiled sessions counted apart
    assert rows["pass^3"][1] == "0.333" and float(rows["pass^3"][2]) < 0.333 < float(rows["pass^3"][3])
    assert rows["simulator_faults"][4] == "3"
    assert "3 session(s) spoiled by the simulated user" in section
    # the worst session's transcript: the reply that lost the address, escaped as text
    worst = section[section.index("The worst session") :]
    assert "<b>address-trial-2</b> — user_stop" in worst
    assert "<li><b>agent</b>: Which address did you mean? I could not update it.</li>" in worst
    assert "<li><b>user (last)</b>: Great, thank you.</li>" in worst
