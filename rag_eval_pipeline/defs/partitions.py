"""Answer models are partitions: comparing models is a backfill with recorded lineage. Here: the
partitions definition, and what the instance knows of each partition's runs."""

from collections.abc import Iterable

import dagster as dg

from rag_eval_pipeline.defs.names import (
    ANSWER_MODEL_PARTITIONS,
    CANDIDATE_ANSWERS,
    CASE_SHARD_PARTITIONS,
    EVALUATION_FAILED,
    PARTITION_TAG,
    WORKER_TAG,
)
from rag_eval_pipeline.metrics.freshness import FinishedRun

answer_model_partitions = dg.DynamicPartitionsDefinition(name=ANSWER_MODEL_PARTITIONS)
# a case shard's run carries its model in this tag (Dagster's, one per multi-partition dimension)
SHARD_MODEL_TAG = f"{PARTITION_TAG}/{ANSWER_MODEL_PARTITIONS}"

FINISHED = [dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED]


def registered_models(instance: dg.DagsterInstance) -> list[str]:
    return list(instance.get_dynamic_partitions(ANSWER_MODEL_PARTITIONS))


def newest_finished_run(instance: dg.DagsterInstance, partition: str) -> FinishedRun | None:
    """The newest finished run of any job that evaluated this partition (CLI, UI, sensor); a
    newer run whose answers recorded that the model could not answer counts as failed already
    (its blocking check fails it: a comparison made meanwhile must not call the summary current)."""
    newest = instance.get_runs(dg.RunsFilter(tags={PARTITION_TAG: partition}), limit=1)
    if newest and newest[0].status in IN_FLIGHT and recorded_failure(instance, partition, newest[0].run_id):
        return FinishedRun(newest[0].run_id, False, newest[0].tags.get(WORKER_TAG))
    runs = instance.get_runs(dg.RunsFilter(tags={PARTITION_TAG: partition}, statuses=FINISHED), limit=1)
    if not runs:
        return None
    return FinishedRun(
        runs[0].run_id, runs[0].status == dg.DagsterRunStatus.SUCCESS, runs[0].tags.get(WORKER_TAG)
    )


IN_FLIGHT = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
]
REASON_CHARS = 240  # of a failure's message, in a comparison's note


BLOCKED_BY_CHECKS = "DagsterAssetCheckFailedError"  # a step stopped by a failed blocking check


def step_failure_reasons(
    instance: dg.DagsterInstance, run_id: str, blocked_by_checks: bool = True
) -> list[tuple[str, str]]:
    """Each failed step of a run with its reason in one line: a ``dagster.Failure``'s own
    description (what the stage says first), else its error's first line. ``blocked_by_checks``
    False leaves out the steps a failed blocking check stopped (where the checks' own
    descriptions say why)."""
    reasons = []
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_FAILURE):
        data = entry.dagster_event.step_failure_data if entry.dagster_event else None
        if data is None:
            continue
        if not blocked_by_checks and data.error is not None and data.error.cls_name == BLOCKED_BY_CHECKS:
            continue
        described = data.user_failure_data.description if data.user_failure_data else None
        message = described or (data.error.message if data.error else "") or "failed"
        line = next((part.strip() for part in message.splitlines() if part.strip()), "failed")
        reasons.append((entry.dagster_event.step_key or "", line))
    return reasons


def failed_checks(instance: dg.DagsterInstance, run_id: str) -> list[tuple[str, str]]:
    """Each check of the run that failed with ERROR severity: (`<asset> <check>`, what it said)."""
    said = []
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION):
        evaluation = entry.dagster_event.event_specific_data if entry.dagster_event else None
        if evaluation is None or evaluation.passed or evaluation.severity != dg.AssetCheckSeverity.ERROR:
            continue
        key = evaluation.asset_check_key
        said.append(
            (f"{key.asset_key.to_user_string()} {key.name}", evaluation.description or "no reason given")
        )
    return said


def run_failure_reason(instance: dg.DagsterInstance, run_id: str) -> str:
    """Why a run failed, in one line: its first failed step and that step's own reason, else its
    first failed check and what the check said (not Dagster's "1 blocking asset check failed")."""
    for step, line in step_failure_reasons(instance, run_id, blocked_by_checks=False):
        return f"{step}: {line}"[:REASON_CHARS] if step else line[:REASON_CHARS]
    for check, line in failed_checks(instance, run_id):
        return f"{check}: {line}"[:REASON_CHARS]
    for step, line in step_failure_reasons(instance, run_id):
        return f"{step}: {line}"[:REASON_CHARS] if step else line[:REASON_CHARS]
    return "the run failed before any step (see its page)"


def recorded_failure(instance: dg.DagsterInstance, partition: str, run_id: str) -> str | None:
    """Why this run's model could not answer at all, as its answers recorded it (None: it could,
    or the run has not stored its answers): known as soon as the answers are stored, before the
    run ends."""
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(dg.AssetKey(CANDIDATE_ANSWERS), asset_partitions=[partition]), limit=1
    ).records
    if not records or records[0].run_id != run_id:
        return None
    value = (records[0].asset_materialization.metadata or {}).get(EVALUATION_FAILED)
    return str(value.value) if value is not None else None


def _newest_record(instance: dg.DagsterInstance, tags: dict[str, str]):
    records = instance.get_run_records(dg.RunsFilter(tags=tags), limit=1)
    return records[0] if records else None


def why_missing(instance: dg.DagsterInstance, partition: str) -> str:
    """Why a registered model has no summary, in one line: never evaluated, being evaluated, or
    its latest evaluation's failure in that run's own words (or its case shard's, when the
    newest run of the model was one of its shards)."""
    own = _newest_record(instance, {PARTITION_TAG: partition})
    shard = _newest_record(instance, {SHARD_MODEL_TAG: partition})
    if shard is not None and (own is None or shard.create_timestamp > own.create_timestamp):
        return _why_shard_missing(instance, shard.dagster_run)
    if own is None:
        return "missing: not evaluated yet"
    run = own.dagster_run
    recorded = recorded_failure(instance, partition, run.run_id)
    if recorded is not None:
        return f"missing: evaluation run {run.run_id[:8]} failed: {CANDIDATE_ANSWERS}: {recorded}"[
            :REASON_CHARS
        ]
    if run.status in IN_FLIGHT:
        return f"missing: being evaluated (run {run.run_id[:8]})"
    if run.status == dg.DagsterRunStatus.FAILURE:
        return f"missing: evaluation run {run.run_id[:8]} failed: {run_failure_reason(instance, run.run_id)}"
    if run.status == dg.DagsterRunStatus.CANCELED:
        return f"missing: evaluation run {run.run_id[:8]} was canceled"
    return f"missing: run {run.run_id[:8]} stored no summary"


def _why_shard_missing(instance: dg.DagsterInstance, run: dg.DagsterRun) -> str:
    shard = run.tags.get(f"{PARTITION_TAG}/{CASE_SHARD_PARTITIONS}", "?")
    if run.status in IN_FLIGHT:
        return f"missing: case shard {shard} being evaluated (run {run.run_id[:8]})"
    if run.status == dg.DagsterRunStatus.FAILURE:
        reason = run_failure_reason(instance, run.run_id)
        return f"missing: case shard {shard} failed in run {run.run_id[:8]}: {reason}"
    if run.status == dg.DagsterRunStatus.CANCELED:
        return f"missing: case shard {shard} was canceled (run {run.run_id[:8]})"
    return f"missing: its case shards are done, its own run has not started (after run {run.run_id[:8]})"


def missing_models(instance: dg.DagsterInstance, evaluated: Iterable[str]) -> dict[str, str]:
    """Each registered model without results among ``evaluated`` (those with a summary), with why:
    what a cross-model asset names beside the models it computed over."""
    have = set(evaluated)
    return {model: why_missing(instance, model) for model in registered_models(instance) if model not in have}


def add_models(instance: dg.DagsterInstance, keys: list[str], resolve) -> list[str]:
    """Registers answer-model partitions, each resolved first (``resolve`` raises for an invalid
    or unknown name, before anything is written); returns those that were new."""
    for key in keys:
        resolve(key)
    existing = set(registered_models(instance))
    new = [k for k in dict.fromkeys(keys) if k not in existing]
    if new:
        instance.add_dynamic_partitions(ANSWER_MODEL_PARTITIONS, new)
    return new


def remove_models(instance: dg.DagsterInstance, keys: list[str]) -> list[str]:
    existing = set(registered_models(instance))
    removed = [k for k in keys if k in existing]
    for key in removed:
        instance.delete_dynamic_partition(ANSWER_MODEL_PARTITIONS, key)
    return removed
