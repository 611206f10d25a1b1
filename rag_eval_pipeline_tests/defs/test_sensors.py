"""Sensor ticks against a temporary documents folder and a real instance."""

import json
import socket
import subprocess
import time

import dagster as dg
import pytest
from dagster._core.execution.backfill import PartitionBackfill

from rag_eval_pipeline.answering.registry import AnswerRegistry
from rag_eval_pipeline.config import ProfileSettings, Settings
from rag_eval_pipeline.definitions import build_definitions
from rag_eval_pipeline.defs.names import (
    CLI_PID_TAG,
    COMPARED_BY_TAG,
    DOCUMENTS_TAG,
    EVALUATION_STEPS,
    KNOWLEDGE_BASE_RUN_TAG,
    PROFILE_TAG,
    TRIGGER_TAG,
)
from rag_eval_pipeline.defs.partitions import add_models
from rag_eval_pipeline.defs.resources import DocumentsResource, SettingsResource
from rag_eval_pipeline.defs.run_config import knowledge_base_run_config
from rag_eval_pipeline.defs.sensors import evaluations_after_publish, failed_checks_said
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.instance.runs import run_evaluation
from rag_eval_pipeline_tests.support.instances import instance_on, storage_params


def _documents_in(folder) -> Settings:
    return Settings.model_validate({"dataset": {"documents": str(folder)}})


def _tick(defs, instance, folder, cursor=None):
    sensor = defs.resolve_sensor_def("new_documents_sensor")
    documents = DocumentsResource(settings=SettingsResource.from_settings(_documents_in(folder)))
    with dg.build_sensor_context(
        instance=instance, cursor=cursor, resources={"documents": documents}
    ) as context:
        return sensor(context)


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
@pytest.mark.parametrize("storage", storage_params())
def test_new_documents_rebuild_then_every_partition_is_re_evaluated(
    storage, shared_hotpotqa, tmp_path, request, monkeypatch
):
    folder = tmp_path / "documents"
    folder.mkdir()
    defs = build_definitions(_documents_in(folder))
    with instance_on(storage, tmp_path / "home", request, monkeypatch) as instance:
        run_evaluation(
            defs, instance, ["oracle", "null"], dataset=str(shared_hotpotqa), sample=5, echo=lambda _: None
        )

        empty = _tick(defs, instance, folder)
        assert isinstance(empty, dg.SkipReason)

        (folder / "Company handbook.md").write_text("Our office is in Lyon.")
        (folder / "broken.jsonl").write_text("{not json\n")
        result = _tick(defs, instance, folder)
        assert len(result.run_requests) == 1
        request = result.run_requests[0]
        assert request.tags[DOCUMENTS_TAG] == "Company handbook.md"  # the malformed file is skipped
        assert {k.to_user_string() for k in request.asset_selection} == {
            "user_documents",
            "kb_passages",
            "kb_index",
            "knowledge_base",  # publishes the rebuilt part only when all of it succeeded
        }
        assert "broken.jsonl" in json.loads(result.cursor)

        same = _tick(defs, instance, folder, cursor=result.cursor)
        assert isinstance(same, dg.SkipReason)  # unchanged files: no second rebuild

        (folder / "Company handbook.md").write_text("Our office moved to Paris.")
        changed = _tick(defs, instance, folder, cursor=result.cursor)
        assert changed.run_requests[0].run_key != request.run_key

        # the rebuild run, as the daemon would launch it
        kb = defs.resolve_job_def("knowledge_base_job")
        rebuild = kb.execute_in_process(
            instance=instance, asset_selection=list(request.asset_selection), tags=request.tags
        )
        passages = load_asset(instance, "kb_passages")
        assert "Company handbook" in set(passages["title"])

        # the rebuild published the knowledge base: every registered model is evaluated again
        sensor = defs.resolve_sensor_def("knowledge_base_rebuilt_sensor")
        assert sensor.asset_key == dg.AssetKey("knowledge_base")  # fires on a publish, from any launch
        requests = evaluations_after_publish(instance, rebuild.run_id, Settings())
        assert sorted(r.partition_key for r in requests) == ["null", "oracle"]
        assert all(r.tags[DOCUMENTS_TAG] == "Company handbook.md" for r in requests)
        assert all(r.tags[KNOWLEDGE_BASE_RUN_TAG] == rebuild.run_id for r in requests)  # pinned to it
        assert len({r.run_key for r in requests}) == 2
        assert all("judge_scores" not in r.run_config.get("ops", {}) for r in requests)  # the file's judges

        # a rebuild launched from the UI's catalog (no tag of ours at all) re-evaluates too
        ui = kb.execute_in_process(instance=instance, asset_selection=list(request.asset_selection))
        assert TRIGGER_TAG not in instance.get_run_by_id(ui.run_id).tags
        requests = evaluations_after_publish(instance, ui.run_id, Settings())
        assert sorted(r.partition_key for r in requests) == ["null", "oracle"]
        assert {r.run_key.split(":")[0] for r in requests} == {ui.run_id}
        assert all(DOCUMENTS_TAG not in r.tags for r in requests)  # no empty documents tag

        # one published by rag-eval is not: the command evaluates its models itself
        cli_run = kb.execute_in_process(
            instance=instance, asset_selection=list(request.asset_selection), tags={CLI_PID_TAG: "1"}
        )
        skipped = evaluations_after_publish(instance, cli_run.run_id, Settings())
        assert isinstance(skipped, dg.SkipReason) and "evaluates its models itself" in skipped.skip_message

        # nor, by a backfill (the UI's "Materialize all" over partitions), the models it targets:
        # their runs in it evaluate them; a second evaluation of each would be the same work twice
        backfill = PartitionBackfill.from_asset_partitions(
            backfill_id="abc",
            asset_graph=defs.resolve_asset_graph(),
            partition_names=["oracle"],
            asset_selection=[dg.AssetKey(step) for step in EVALUATION_STEPS],
            backfill_timestamp=time.time(),
            tags={},
            dynamic_partitions_store=instance,
            all_partitions=False,
            title=None,
            description=None,
            run_config=None,
        )
        instance.add_backfill(backfill)
        in_backfill = kb.execute_in_process(
            instance=instance, asset_selection=list(request.asset_selection), tags={"dagster/backfill": "abc"}
        )
        requests = evaluations_after_publish(instance, in_backfill.run_id, Settings())
        assert [r.partition_key for r in requests] == ["null"]  # the model the backfill left out

        # nor by one run that selected a partition's evaluation too ("Materialize all" with one
        # partition chosen): that model, not the others
        everything = [*request.asset_selection, *(dg.AssetKey(step) for step in EVALUATION_STEPS)]
        one = defs.resolve_implicit_global_asset_job_def().execute_in_process(
            instance=instance, asset_selection=everything, partition_key="null", raise_on_error=False
        )
        requests = evaluations_after_publish(instance, one.run_id, Settings())
        assert [r.partition_key for r in requests] == ["oracle"]


def test_a_scheduled_profile_re_evaluates_with_its_own_judges(shared_hotpotqa, tmp_path):
    """The nightly schedule's rebuild carries its profile, and the evaluations it fans out to
    use that profile's judges rather than the file's."""
    settings = Settings(
        profiles={
            "nightly": ProfileSettings(sample_size=5, judges=["reference", "ragas:m"], schedule="0 3 * * *")
        }
    )
    settings = settings.model_copy(update={"dataset": _documents_in(tmp_path / "none").dataset})
    defs = build_definitions(settings=settings)
    schedule = defs.resolve_schedule_def("nightly_schedule")
    assert schedule.tags == {TRIGGER_TAG: "schedule:nightly", PROFILE_TAG: "nightly"}
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        add_models(instance, ["oracle"], AnswerRegistry().resolve)
        kb = defs.resolve_job_def("knowledge_base_job")
        run_config = knowledge_base_run_config(source=str(shared_hotpotqa), sample_size=5)
        published = kb.execute_in_process(instance=instance, run_config=run_config, tags=schedule.tags)
        requests = evaluations_after_publish(instance, published.run_id, settings)
    assert [r.partition_key for r in requests] == ["oracle"]
    assert requests[0].run_config == {
        "ops": {"judge_scores": {"config": {"judges": ["reference", "ragas:m"]}}}
    }


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_new_summaries_refresh_the_reports_once_and_catch_up(shared_hotpotqa, tmp_path):
    """The refresh sensor is on by default and reads stored history: a partition evaluated while
    nothing watched (as a backfill's runs, or before the daemon started) is caught up at the
    first tick, with one comparison run, and nothing more once that ran."""
    defs = build_definitions()
    sensor = defs.resolve_sensor_def("reports_refresh_sensor")
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    assert sensor.job_name == "comparison_job"
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        assert isinstance(sensor(dg.build_sensor_context(instance=instance)), dg.SkipReason)  # nothing yet
        run_evaluation(
            defs, instance, ["oracle", "null"], dataset=str(shared_hotpotqa), sample=5, echo=lambda _: None
        )
        current = sensor(dg.build_sensor_context(instance=instance))
        assert isinstance(current, dg.SkipReason) and "current" in current.skip_message  # rag-eval compared

        # a command between its own runs (its comparison comes next): left to it while it runs
        command = subprocess.Popen(["sleep", "600"])
        between = {COMPARED_BY_TAG: f"{command.pid}@{socket.gethostname()}"}
        evaluation = defs.resolve_job_def("evaluation_job")
        evaluation.execute_in_process(instance=instance, partition_key="null", tags=between)
        waiting = sensor(dg.build_sensor_context(instance=instance))
        assert isinstance(waiting, dg.SkipReason) and f"pid {command.pid}" in waiting.skip_message
        command.kill()
        command.wait()
        gone = sensor(dg.build_sensor_context(instance=instance))  # killed before it compared
        assert isinstance(gone, dg.RunRequest)

        evaluation.execute_in_process(instance=instance, partition_key="null")  # the UI's own run
        behind = sensor(dg.build_sensor_context(instance=instance))  # a fresh sensor: no cursor at all
        assert isinstance(behind, dg.RunRequest) and behind.run_key.startswith("results-up-to-")
        again = sensor(dg.build_sensor_context(instance=instance))
        assert again.run_key == behind.run_key  # the same state asks for the same run (deduplicated)

        defs.resolve_job_def("comparison_job").execute_in_process(instance=instance, tags=behind.tags)
        done = sensor(dg.build_sensor_context(instance=instance))
        assert isinstance(done, dg.SkipReason) and "current" in done.skip_message


def test_the_refresh_waits_for_runs_in_flight():
    from rag_eval_pipeline.defs.sensors import reports_refresh

    assert isinstance(reports_refresh(10, 5, busy_runs=2), dg.SkipReason)  # a backfill still running
    assert isinstance(reports_refresh(10, 5, busy_runs=0), dg.RunRequest)
    assert isinstance(reports_refresh(10, 12, busy_runs=0), dg.SkipReason)
    assert isinstance(reports_refresh(None, None, busy_runs=0), dg.SkipReason)
    assert isinstance(reports_refresh(10, 5, busy_runs=0, comparing="rag-eval (pid 7)"), dg.SkipReason)


def test_a_command_of_another_machine_is_waited_for_only_briefly():
    """Its process cannot be seen from the daemon's machine: a minute after it stored its
    results, a command that still has not compared them is taken as gone."""
    from rag_eval_pipeline.defs.sensors import OTHER_HOST_GAP_S, comparing_command

    tags = {COMPARED_BY_TAG: "4242@laptop"}
    waited = comparing_command(tags, stored_at=100.0, now=110.0, host="daemon-host")
    assert waited == "rag-eval (pid 4242 on laptop)"
    assert comparing_command(tags, stored_at=100.0, now=100.0 + OTHER_HOST_GAP_S, host="daemon-host") is None
    assert comparing_command({}, stored_at=100.0, now=100.0, host="daemon-host") is None  # the UI's run


@pytest.mark.slow  # over 10 s: a knowledge base and a failed evaluation run
def test_a_failed_gate_is_said_as_the_last_line_of_its_run(shared_hotpotqa, tmp_path):
    """The run page opens at the end of its log: the failure sensor writes there which gate
    failed, with its metric, value and threshold (Dagster's own error counts failed checks)."""
    settings = Settings.model_validate({"thresholds": {"correctness": {"min": 0.3, "bound": "lower"}}})
    defs = build_definitions(settings=settings)
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        add_models(instance, ["null", "oracle"], AnswerRegistry().resolve)
        run_config = knowledge_base_run_config(source=str(shared_hotpotqa), sample_size=20)
        kb = defs.resolve_job_def("knowledge_base_job")
        kb.execute_in_process(instance=instance, run_config=run_config)
        evaluation = defs.resolve_job_def("evaluation_job")
        failed = evaluation.execute_in_process(instance=instance, partition_key="null", raise_on_error=False)
        passed = evaluation.execute_in_process(instance=instance, partition_key="oracle")
        assert not failed.success and passed.success
        assert failed_checks_said(instance, passed.run_id) == []
        said = failed_checks_said(instance, failed.run_id)
        gate = "correctness (reference) lower bound 0.000 < threshold 0.3"
        assert said == [f"judge_scores quality_gates failed: {gate}"]

        sensor = defs.resolve_sensor_def("failed_checks_sensor")
        run = instance.get_run_by_id(failed.run_id)
        failure = next(
            e.dagster_event for e in instance.all_logs(failed.run_id, of_type=dg.DagsterEventType.RUN_FAILURE)
        )
        sensor(
            dg.build_run_status_sensor_context(
                sensor_name=sensor.name, dagster_event=failure, dagster_instance=instance, dagster_run=run
            ).for_run_failure()
        )
        last = instance.all_logs(failed.run_id)[-1]
        assert last.dagster_event.event_type == dg.DagsterEventType.ENGINE_EVENT
        assert last.message == said[0]
