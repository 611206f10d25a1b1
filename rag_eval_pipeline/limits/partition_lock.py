"""One evaluation of an answer model at a time: a second run of the same partition waits for the
first and then answers from the cache it filled, instead of paying for every call twice."""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Callable
from pathlib import Path

from rag_eval_pipeline.limits.pools import Instance, InstancePool, instance_holds_pools

LOCKS_FOLDER = "locks"
EVALUATION_POOL_PREFIX = "rag_eval_evaluation_"  # a pool of one slot per answer-model partition
HOLDER = "evaluation"


class PartitionLock:
    """Held for as long as a run evaluates one answer-model partition: a slot of the instance's
    pool of one for that partition where the instance holds pools (PostgreSQL: runs on any
    machine), else an exclusive lock file under the instance's storage (released by the
    operating system if the process dies)."""

    def __init__(self) -> None:
        self._descriptor: int | None = None
        self._pool: InstancePool | None = None

    def hold(
        self, partition: str, run_id: str, instance: Instance, storage: Path, waiting: Callable[[], None]
    ) -> None:
        """Waits (saying so once, through ``waiting``) while another run evaluates ``partition``."""
        if instance_holds_pools(instance):
            pool = InstancePool(instance, f"{EVALUATION_POOL_PREFIX}{partition}", 1, run_id, HOLDER)
            pool.hold_blocking(HOLDER, waiting)
            self._pool = pool
            return
        folder = storage / LOCKS_FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(partition.encode()).hexdigest()[:16]
        descriptor = os.open(folder / f"evaluation-{name}.lock", os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            waiting()
            fcntl.flock(descriptor, fcntl.LOCK_EX)
        self._descriptor = descriptor

    def release(self) -> None:
        if self._pool is not None:
            self._pool.release(HOLDER)
            self._pool = None
        if self._descriptor is not None:
            fcntl.flock(self._descriptor, fcntl.LOCK_UN)
            os.close(self._descriptor)
            self._descriptor = None
