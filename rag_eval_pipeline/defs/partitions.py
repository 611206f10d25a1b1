"""Answer models are partitions: comparing models is a backfill with recorded lineage. Here: the
partitions definition, and what the instance knows of each partition's runs."""

import dagster as dg

from rag_eval_pipeline.defs.names import ANSWER_MODEL_PARTITIONS, PARTITION_TAG
from rag_eval_pipeline.metrics.freshness import FinishedRun

answer_model_partitions = dg.DynamicPartitionsDefinition(name=ANSWER_MODEL_PARTITIONS)

FINISHED = [dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED]


def registered_models(instance: dg.DagsterInstance) -> list[str]:
    return list(instance.get_dynamic_partitions(ANSWER_MODEL_PARTITIONS))


def newest_finished_run(instance: dg.DagsterInstance, partition: str) -> FinishedRun | None:
    """The newest finished run of any job that evaluated this partition (CLI, UI, sensor)."""
    runs = instance.get_runs(dg.RunsFilter(tags={PARTITION_TAG: partition}, statuses=FINISHED), limit=1)
    if not runs:
        return None
    return FinishedRun(runs[0].run_id, runs[0].status == dg.DagsterRunStatus.SUCCESS)


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
