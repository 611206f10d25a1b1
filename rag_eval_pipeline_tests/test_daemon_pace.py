"""The instance rag-eval writes paces the daemon for backfills (docs/ui.md): its run coordinator
moves a backfill on every 5 s instead of Dagster's fixed 30 s and starts queued runs within 1 s,
still one run per answer model at a time; a home written before gains the setting, and an
interval below a second is refused when the instance is opened."""

import dagster as dg
import pytest
import yaml
from dagster._serdes import ConfigurableClassData

from rag_eval_pipeline.instance.daemon_pace import PacedRunCoordinator
from rag_eval_pipeline.instance.home import default_instance_settings, resolve_dagster_home


def _coordinator(home):
    """The run coordinator as Dagster builds it from the home's dagster.yaml (schema, defaults,
    ``from_config_value``), without creating the instance's databases."""
    settings = yaml.safe_load((home / "dagster.yaml").read_text())["run_coordinator"]
    data = ConfigurableClassData(settings["module"], settings["class"], yaml.safe_dump(settings["config"]))
    return data.rehydrate(PacedRunCoordinator)


def test_a_new_home_paces_the_backfill_daemon_and_keeps_one_run_per_model(tmp_path):
    from dagster._core.instance.config import dagster_instance_config
    from dagster._daemon import backfill, controller  # loaded, as in the daemon's process

    home = resolve_dagster_home(str(tmp_path / "home"))
    settings, _ = dagster_instance_config(str(home))  # Dagster's own validation of the whole file
    coordinator = _coordinator(home)
    assert (coordinator.backfill_interval_seconds, coordinator.dequeue_interval_seconds) == (5, 1)
    assert controller.DEFAULT_DAEMON_INTERVAL_SECONDS == 5  # what Dagster's backfill loop sleeps
    assert getattr(backfill.execute_backfill_iteration, "waits_for_runs_in_flight", False)
    assert settings["concurrency"]["runs"]["tag_concurrency_limits"] == [
        {"key": "dagster/partition", "value": {"applyLimitPerUniqueValue": True}, "limit": 1}
    ]


def test_a_home_written_before_gains_the_pace_and_a_users_interval_is_kept(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    earlier = default_instance_settings()
    start = earlier.index("# The daemon moves a backfill")
    end = earlier.index("# Runs store INFO")
    (home / "dagster.yaml").write_text(earlier[:start] + earlier[end:])
    assert "run_coordinator" not in (home / "dagster.yaml").read_text()
    resolve_dagster_home(str(home))
    assert isinstance(_coordinator(home), PacedRunCoordinator)

    mine = (home / "dagster.yaml").read_text().replace("interval_seconds: 5", "interval_seconds: 12")
    (home / "dagster.yaml").write_text(mine)
    resolve_dagster_home(str(home))
    assert _coordinator(home).backfill_interval_seconds == 12


def test_an_interval_below_a_second_is_refused(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    text = default_instance_settings().replace("backfill_interval_seconds: 5", "backfill_interval_seconds: 0")
    (home / "dagster.yaml").write_text(text)
    with pytest.raises(dg.DagsterInvalidConfigError, match="backfill_interval_seconds must be at least 1"):
        _coordinator(home)


def test_an_iteration_waits_while_every_backfill_has_a_run_in_flight_and_not_past_dagsters_own():
    """The backfill daemon's iteration is skipped while each backfill in progress has a run
    queued or running (a model's run half done must not launch the comparison's parents apart),
    and runs again once none is in flight."""
    import types

    from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill
    from dagster._core.test_utils import create_run_for_test

    from rag_eval_pipeline.instance.daemon_pace import _waiting_for_runs_in_flight

    iterations = []

    def iteration(context, logger):
        iterations.append(logger)
        yield None

    paced = _waiting_for_runs_in_flight(iteration)
    with dg.DagsterInstance.ephemeral() as instance:
        context = types.SimpleNamespace(instance=instance)
        list(paced(context, "no backfill"))
        instance.add_backfill(
            PartitionBackfill(
                "bf", BulkActionStatus.REQUESTED, False, {}, 0.0, partition_names=["m"], asset_selection=None
            )
        )
        run = create_run_for_test(instance, job_name="j", tags={"dagster/backfill": "bf"})
        list(paced(context, "a run queued"))  # skipped: the backfill's run is in flight
        instance.delete_run(run.run_id)
        list(paced(context, "no run in flight"))
    assert iterations == ["no backfill", "no run in flight"]
