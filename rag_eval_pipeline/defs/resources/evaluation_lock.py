"""The partition lock (``limits/partition_lock.py``) as a resource: held from a run's start to
its end, for the partition the run evaluates."""

import dagster as dg
from pydantic import PrivateAttr

from rag_eval_pipeline.defs.names import PARTITION_TAG
from rag_eval_pipeline.defs.resources.settings import storage_folder
from rag_eval_pipeline.limits.partition_lock import PartitionLock


class EvaluationLockResource(dg.ConfigurableResource):
    """One evaluation of an answer-model partition at a time, across every run that could
    evaluate it (deployments also cap runs per partition with the run queue's tag limit)."""

    _lock: PartitionLock | None = PrivateAttr(default=None)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        partition = context.dagster_run.tags.get(PARTITION_TAG) if context.dagster_run else None
        if partition is None or context.instance is None:
            return

        def waiting() -> None:
            context.log.info(f"{partition} is being evaluated by another run: waiting for it")

        self._lock = PartitionLock()
        self._lock.hold(
            partition, context.dagster_run.run_id, context.instance, storage_folder(context), waiting
        )

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None
