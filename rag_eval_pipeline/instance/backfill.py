"""A model comparison as one Dagster backfill: the evaluation partitions are submitted to the
instance, the daemon (of ``dagster dev`` or a deployment) launches one run per partition through
the instance's run coordinator, in parallel up to its limit, and the backfill, its runs and their
lineage show in the UI's backfill view. The CLI follows it with a line per partition.

Runs launched by the daemon load the code location the daemon serves, so the configuration they
see is the deployment's (``rag_eval.yaml``), not the CLI's one-off flags.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import dagster as dg
from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill  # no public API yet
from dagster._core.utils import make_new_backfill_id

from rag_eval_pipeline.defs.names import BACKFILL_TAG, PARTITION_TAG, TRIGGER_TAG

BACKFILL_DAEMON = "BACKFILL"
HEARTBEAT_FRESH_S = 60.0  # the daemon beats every few seconds; older than this: not running
DONE = {
    BulkActionStatus.COMPLETED,
    BulkActionStatus.COMPLETED_SUCCESS,
    BulkActionStatus.COMPLETED_FAILED,
    BulkActionStatus.FAILED,
    BulkActionStatus.CANCELED,
}


def daemon_running(instance: dg.DagsterInstance, now: float | None = None) -> bool:
    """Whether a daemon that processes backfills has beaten recently for this instance."""
    heartbeat = instance.get_daemon_heartbeats().get(BACKFILL_DAEMON)
    return heartbeat is not None and (now or time.time()) - heartbeat.timestamp < HEARTBEAT_FRESH_S


def submit(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    assets: Sequence[dg.AssetKey],
    partitions: Sequence[str],
    run_config: Mapping,
    title: str,
    tags: Mapping[str, str] | None = None,
) -> str:
    """Adds the backfill (the selected assets of each partition) for the daemon; its id."""
    backfill = PartitionBackfill.from_asset_partitions(
        backfill_id=make_new_backfill_id(),
        asset_graph=defs.resolve_asset_graph(),
        partition_names=list(partitions),
        asset_selection=list(assets),
        backfill_timestamp=time.time(),
        tags={TRIGGER_TAG: "cli", **(tags or {})},
        dynamic_partitions_store=instance,
        all_partitions=False,
        title=title,
        description="rag-eval run --backfill: one run per answer-model partition",
        run_config=dict(run_config),
    )
    instance.add_backfill(backfill)
    return backfill.backfill_id


@dataclass(frozen=True)
class PartitionOutcome:
    partition: str
    status: str  # SUCCESS, FAILURE, CANCELED, or NOT_LAUNCHED
    run_ids: tuple[str, ...]
    seconds: float


def follow(
    instance: dg.DagsterInstance,
    backfill_id: str,
    partitions: Sequence[str],
    echo: Callable[[str], None],
    poll_s: float = 1.0,
    timeout_s: float = 6 * 3600,
) -> dict[str, PartitionOutcome]:
    """Waits for the backfill, saying each partition's result as its runs finish."""
    said: set[str] = set()
    deadline = time.monotonic() + timeout_s
    while True:
        backfill = instance.get_backfill(backfill_id)
        records = instance.get_run_records(filters=dg.RunsFilter(tags={BACKFILL_TAG: backfill_id}))
        outcomes = _outcomes(records, partitions)
        for partition, outcome in outcomes.items():
            if outcome.status != "RUNNING" and partition not in said:
                said.add(partition)
                echo(f"[backfill] {partition}: {outcome.status} in {outcome.seconds:.1f}s")
        finished = backfill is None or backfill.status in DONE
        if finished and all(o.status != "RUNNING" for o in outcomes.values()):
            return {p: outcomes.get(p) or PartitionOutcome(p, "NOT_LAUNCHED", (), 0.0) for p in partitions}
        if time.monotonic() > deadline:
            raise TimeoutError(f"backfill {backfill_id} still running after {timeout_s:.0f}s")
        time.sleep(poll_s)


def _outcomes(records: Sequence, partitions: Sequence[str]) -> dict[str, PartitionOutcome]:
    by_partition: dict[str, list] = {}
    for record in records:
        by_partition.setdefault(record.dagster_run.tags.get(PARTITION_TAG, ""), []).append(record)
    outcomes = {}
    for partition in partitions:
        own = by_partition.get(partition, [])
        if not own:
            continue
        statuses = {record.dagster_run.status for record in own}
        if any(not record.dagster_run.is_finished for record in own):
            status = "RUNNING"
        elif dg.DagsterRunStatus.FAILURE in statuses:
            status = "FAILURE"
        elif dg.DagsterRunStatus.CANCELED in statuses:
            status = "CANCELED"
        else:
            status = "SUCCESS"
        seconds = sum((r.end_time or r.start_time) - r.start_time for r in own if r.start_time)
        outcomes[partition] = PartitionOutcome(
            partition, status, tuple(r.dagster_run.run_id for r in own), seconds
        )
    return outcomes
