"""How often the daemon moves a backfill on: the run queue Dagster's own, set in ``dagster.yaml``
(``dequeue_interval_seconds``), and the backfill daemon's interval, which Dagster fixes at 30 s
(dagster-io/dagster#11649, open): a whole-lineage backfill crosses from the knowledge base to
the models to the comparison, and waited up to 30 s at each crossing for compute of a few
seconds. The run coordinator the daemon builds from ``dagster.yaml`` is the one place a
deployment's own settings reach the daemon's process, so it carries the interval there."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import dagster as dg
from dagster._core.run_coordinator import QueuedRunCoordinator

BACKFILL_INTERVAL_S = 5  # Dagster's RFC (dagster-io/dagster#11860) proposed 2 s during backfills
DEQUEUE_INTERVAL_S = 1  # Dagster's default is 5 s: a queued run waits that long to start


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
        # Dagster's backfill loop reads this module constant when it starts, after the daemon
        # has built its run coordinator (which it does to know which daemons to run).
        from dagster._daemon import controller

        controller.DEFAULT_DAEMON_INTERVAL_SECONDS = backfill_interval_seconds

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
