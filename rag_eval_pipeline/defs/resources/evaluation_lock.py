"""One evaluation of an answer model at a time: a second run of the same partition waits for the
first and then answers from the cache it filled, instead of paying for every call twice."""

import fcntl
import hashlib
import os

import dagster as dg
from pydantic import PrivateAttr

from rag_eval_pipeline.defs.names import PARTITION_TAG
from rag_eval_pipeline.defs.resources.pools import InstancePool, instance_holds_pools
from rag_eval_pipeline.defs.resources.settings import storage_folder

LOCKS_FOLDER = "locks"
EVALUATION_POOL_PREFIX = "rag_eval_evaluation_"  # a pool of one slot per answer-model partition
HOLDER = "evaluation"


class EvaluationLockResource(dg.ConfigurableResource):
    """Held for as long as a run evaluates one answer-model partition: a slot of the instance's
    pool of one for that partition where the instance holds pools (PostgreSQL: runs on any
    machine), else an exclusive lock file under the instance's storage (released by the
    operating system if the process dies). Deployments also cap runs per partition with the run
    queue's tag limit (README)."""

    _descriptor: int | None = PrivateAttr(default=None)
    _pool: InstancePool | None = PrivateAttr(default=None)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        partition = context.dagster_run.tags.get(PARTITION_TAG) if context.dagster_run else None
        if partition is None or context.instance is None:
            return

        def waiting() -> None:
            context.log.info(f"{partition} is being evaluated by another run: waiting for it")

        if instance_holds_pools(context.instance):
            pool = InstancePool(
                context.instance,
                f"{EVALUATION_POOL_PREFIX}{partition}",
                1,
                context.dagster_run.run_id,
                HOLDER,
            )
            pool.hold_blocking(HOLDER, waiting)
            self._pool = pool
            return
        folder = storage_folder(context) / LOCKS_FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(partition.encode()).hexdigest()[:16]
        descriptor = os.open(folder / f"evaluation-{name}.lock", os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            waiting()
            fcntl.flock(descriptor, fcntl.LOCK_EX)
        self._descriptor = descriptor

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._pool is not None:
            self._pool.release(HOLDER)
            self._pool = None
        if self._descriptor is not None:
            fcntl.flock(self._descriptor, fcntl.LOCK_UN)
            os.close(self._descriptor)
            self._descriptor = None
