"""The agent simulated users talk to is no answer model unless its entry says so: the bundled
simulation configuration registers no model partition, and a partition an earlier start
registered for it (never evaluated) is removed by the sensor, so no view lists it as missing."""

import dagster as dg

from rag_eval_pipeline.config import load_settings
from rag_eval_pipeline.defs.sensors import answer_models_sensor
from rag_eval_pipeline_tests.support import REPO_ROOT

EXAMPLE = REPO_ROOT / "examples" / "simulation" / "rag_eval.yaml"


def test_the_simulations_agent_is_evaluated_only_when_its_entry_says_so(tmp_path):
    settings = load_settings(EXAMPLE)
    assert settings.configured_models() == []
    said = tmp_path / "rag_eval.yaml"
    said.write_text(EXAMPLE.read_text().replace('version: "1.0"', 'version: "1.0"\n    evaluate: true'))
    assert load_settings(said).configured_models() == ["support-desk"]
    left_out = tmp_path / "left_out.yaml"  # an agent nobody simulates may be left out too
    left_out.write_text(
        EXAMPLE.read_text()
        .replace('version: "1.0"', 'version: "1.0"\n    evaluate: false')
        .split("simulation:")[0]
    )
    assert load_settings(left_out).configured_models() == []


def test_the_sensor_removes_the_agents_partition_an_earlier_start_registered():
    settings = load_settings(EXAMPLE)
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("answer_model", ["support-desk"])
        result = answer_models_sensor(settings)(dg.build_sensor_context(instance=instance))
    removed = [
        key
        for request in result.dynamic_partitions_requests
        if isinstance(request, dg.DeleteDynamicPartitionsRequest)
        for key in request.partition_keys
    ]
    assert removed == ["support-desk"]


def test_run_with_only_the_simulations_agent_says_what_to_do(tmp_path, capsys):
    from rag_eval_pipeline_tests.support.cli import in_process

    code, _, err = in_process(capsys, "--config", str(EXAMPLE), "--dagster-home", str(tmp_path), "run")
    assert code == 2 and err.startswith("error: no answer model to evaluate"), err
    assert "evaluate: true" in err
