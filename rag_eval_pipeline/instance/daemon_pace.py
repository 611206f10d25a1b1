"""How often the daemon moves a backfill on: the run queue Dagster's own, set in ``dagster.yaml``
(``dequeue_interval_seconds``), and the backfill daemon's interval, which Dagster fixes at 30 s
(dagster-io/dagster#11649, open): a whole-lineage backfill crosses from the knowledge base to
the models to the comparison, and waited up to 30 s at each crossing for compute of a few
seconds. The run coordinator the daemon builds from ``dagster.yaml`` is the one place a
deployment's own settings reach the daemon's process, so it carries the interval there.

A faster iteration alone would see a model's run half done (its answers stored, its summary
not yet) and launch the comparison's parents in runs of their own, a chain of runs where one run
did: so while every backfill in progress has a run in flight, an iteration is skipped, up to
Dagster's own 30 s. A backfill then moves on within the interval after its runs end, never later
than Dagster would have."""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import dagster as dg
from dagster._core.run_coordinator import QueuedRunCoordinator

from rag_eval_pipeline.defs.names import BACKFILL_TAG
from rag_eval_pipeline.defs.partitions import IN_FLIGHT

DAEMON_MODULES = {"dagster._daemon.controller", "dagster._daemon.backfill"}
DAGSTER_INTERVAL_S = 30  # the backfill daemon's own interval: never waited longer than that
BACKFILL_INTERVAL_S = 5  # Dagster's RFC (dagster-io/dagster#11860) proposed 2 s during backfills
DEQUEUE_INTERVAL_S = 1  # Dagster's default is 5 s: a queued run waits that long to start
# Queued runs are launched one at a time (Dagster's `dequeue_use_threads` left off): a launch waits,
# up to Dagster's 60 s gRPC timeout, for the run's new process to import the pipeline, and four
# launched at once on a loaded 2-core machine passed it, failing three good models' runs.


class PacedRunCoordinator(QueuedRunCoordinator):
    """Dagster's queued run coordinator, plus ``backfill_interval_seconds``: how long the backfill
    daemon sleeps between iterations (each iteration launches the runs whose parents are done)."""

    def __init__(self, backfill_interval_seconds: int = BACKFILL_INTERVAL_S, **queue: Any) -> None:
        super().__init__(**queue)
        if backfill_interval_seconds < 1:
            raise dg.DagsterInvalidConfigError(
                f"run_coordinator.config.backfill_interval_seconds must be at least 1, not "
                f"{backfill_interval_seconds}",
                [],
                None,
            )
        self.backfill_interval_seconds = backfill_interval_seconds
        # `dagster-daemon run` (python -m dagster._daemon) imports both before it opens the instance;
        # the webserver and run workers need neither, so they are not imported there.
        if sys.modules.keys() >= DAEMON_MODULES:
            pace_backfill_daemon(backfill_interval_seconds)

    @classmethod
    def config_type(cls) -> dict:
        return {
            **QueuedRunCoordinator.config_type(),
            "backfill_interval_seconds": dg.Field(
                dg.IntSource,
                is_required=False,
                default_value=BACKFILL_INTERVAL_S,
                description="Seconds between the backfill daemon's iterations (Dagster's own: 30).",
            ),
        }

    @classmethod
    def from_config_value(cls, inst_data: Any, config_value: Mapping[str, Any]) -> PacedRunCoordinator:
        queue = {k: v for k, v in config_value.items() if k != "backfill_interval_seconds"}
        return cls(
            backfill_interval_seconds=config_value.get("backfill_interval_seconds", BACKFILL_INTERVAL_S),
            inst_data=inst_data,
            **queue,
        )


def pace_backfill_daemon(interval_s: int) -> None:
    """Dagster's backfill loop reads the controller's constant when it starts, after the daemon
    has built its run coordinator (which it does to know which daemons to run), and calls the
    iteration by its module's name."""
    from dagster._daemon import backfill, controller

    controller.DEFAULT_DAEMON_INTERVAL_SECONDS = interval_s
    iteration = backfill.execute_backfill_iteration
    if not getattr(iteration, "waits_for_runs_in_flight", False):
        backfill.execute_backfill_iteration = _waiting_for_runs_in_flight(iteration)


def _waiting_for_runs_in_flight(iteration: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    """Dagster's backfill iteration, skipped while every backfill in progress still has a run in
    flight (and none is being canceled), unless Dagster's own interval has passed since the last."""
    last = [0.0]

    @functools.wraps(iteration)
    def paced(workspace_process_context: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        instance = workspace_process_context.instance
        if time.monotonic() - last[0] < DAGSTER_INTERVAL_S and all_backfills_busy(instance):
            return
        last[0] = time.monotonic()
        yield from iteration(workspace_process_context, *args, **kwargs)

    paced.waits_for_runs_in_flight = True  # type: ignore[attr-defined]
    return paced


def all_backfills_busy(instance: dg.DagsterInstance) -> bool:
    """Some backfill is in progress, each has a run queued or running, and none is being canceled
    or failed (those the daemon must finish at once)."""
    from dagster._core.execution.backfill import BulkActionsFilter, BulkActionStatus

    stopping = [BulkActionStatus.CANCELING, BulkActionStatus.FAILING]
    if instance.get_backfills(filters=BulkActionsFilter(statuses=stopping), limit=1):
        return False
    requested = instance.get_backfills(filters=BulkActionsFilter(statuses=[BulkActionStatus.REQUESTED]))
    return bool(requested) and all(
        instance.get_runs(dg.RunsFilter(tags={BACKFILL_TAG: b.backfill_id}, statuses=IN_FLIGHT), limit=1)
        for b in requested
    )
