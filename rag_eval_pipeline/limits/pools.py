"""Limits the Dagster instance enforces across the deployment: its concurrency pools (the limits
Dagster stores in the instance and shows under Deployment, Concurrency), held here per LLM call
and per evaluated partition. Where the instance keeps them on a server every machine reaches
(PostgreSQL), they hold deployment-wide; on SQLite (one machine anyway) the slot files and file
locks of ``slot_files.py`` and ``partition_lock.py`` hold the same limits without a
database write per call.

Why not an asset's ``pool``: a pool is fixed per asset, while one ``candidate_answers`` asset
answers with Claude in one partition, an OpenAI server in another and offline in a third; a
per-asset pool would make offline partitions wait behind Claude's and split the budget evenly
even when one step runs alone. A slot per call bounds exactly what each provider sees.

Every claim and every change of a limit is made under a PostgreSQL advisory lock of its pool:
Dagster claims a free slot with ``SELECT ... FOR UPDATE`` then ``UPDATE`` on an autocommit
connection, where the row lock ends with the select, so two claimants at once can both take
the same slot (measured: 4 holders of a pool of 2), and two runs setting a new pool's limit at
once collide on its unique row. Serialized, neither happens."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
import zlib
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

# a DagsterInstance: only its event-log storage's concurrency methods are used, so this pure
# package needs no Dagster import (the glue in defs/resources passes the run's instance)
Instance = Any

POLL_S = 0.05  # a blocked claim asks again this often: a freed slot is taken within it


POOL_LOCK_SPACE = 726_194_605  # the first half of this project's advisory-lock ids (int4)


def instance_holds_pools(instance: Instance) -> bool:
    """Whether the instance's pools are shared beyond this machine (a PostgreSQL server), where
    they replace the slot files."""
    storage = instance.event_log_storage
    return storage.supports_global_concurrency_limits and hasattr(storage, "postgres_url")


class _PoolLocks:
    """Advisory locks of one database, one per pool, taken on one connection of this process
    (threads take turns on it); the server releases them if the process dies."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._connection: Any = None
        self._turn = threading.Lock()

    @contextmanager
    def held(self, key: str) -> Iterator[None]:
        ident = zlib.crc32(key.encode()) - 2**31  # the pool's half of the id, in int4's range
        with self._turn:
            cursor = self._cursor()
            try:
                cursor.execute("SELECT pg_advisory_lock(%s, %s)", (POOL_LOCK_SPACE, ident))
            except Exception:
                self._reset()  # a lost connection: the next claim opens a new one
                raise
            try:
                yield
            finally:
                try:
                    cursor.execute("SELECT pg_advisory_unlock(%s, %s)", (POOL_LOCK_SPACE, ident))
                except Exception:
                    self._reset()  # closing the session releases the lock too

    def _cursor(self) -> Any:
        if self._connection is None or self._connection.closed:
            import psycopg2  # dagster-postgres brings it

            self._connection = psycopg2.connect(self._url)
            self._connection.autocommit = True
        return self._connection.cursor()

    def _reset(self) -> None:
        if self._connection is not None:
            self._connection.close()
        self._connection = None


_LOCKS: dict[str, _PoolLocks] = {}
_LOCKS_TURN = threading.Lock()


def _pool_locks(instance: Instance) -> _PoolLocks:
    url = instance.event_log_storage.postgres_url
    with _LOCKS_TURN:
        return _LOCKS.setdefault(url, _PoolLocks(url))


def ensure_limit(instance: Instance, key: str, limit: int) -> None:
    """The pool ``key`` holds ``limit`` slots (set from the configuration on every run start, so
    its ``concurrency`` stays the deployment-wide budget)."""
    storage = instance.event_log_storage
    with _pool_locks(instance).held(key):
        if storage.get_concurrency_info(key).slot_count != limit:
            storage.set_concurrency_slots(key, limit)


class InstancePool:
    """At most ``limit`` holders at once among every run of the deployment: each hold claims a
    slot of the instance's pool ``key`` for this run (freed when it ends, or by run monitoring
    and the next command if the process died)."""

    def __init__(self, instance: Instance, key: str, limit: int, run_id: str, holder: str) -> None:
        ensure_limit(instance, key, limit)
        self._storage = instance.event_log_storage
        self._locks = _pool_locks(instance)
        self._key = key
        self._run_id = run_id
        self._holder = holder
        self.where = f"instance pool {key} ({limit}, every run of the deployment)"

    def _claim(self, step: str) -> bool:
        with self._locks.held(self._key):  # one claimant at a time: see the module's docstring
            return self._storage.claim_concurrency_slot(self._key, self._run_id, step).is_claimed

    def _free(self, step: str) -> None:
        self._storage.free_concurrency_slot_for_step(self._run_id, step)

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        step = f"{self._holder}[{uuid.uuid4().hex[:8]}]"  # one pending claim per call, in the queue
        try:
            while not await asyncio.to_thread(self._claim, step):
                await asyncio.sleep(POLL_S)  # the pool is full: wait for a slot, in queue order
            yield
        finally:
            await asyncio.shield(asyncio.to_thread(self._free, step))

    def hold_blocking(self, step: str, waiting: callable | None = None) -> None:
        """The same claim for a whole run's work (an evaluated partition), waiting in queue order."""
        said = False
        while not self._claim(step):
            if waiting is not None and not said:
                waiting()
                said = True
            time.sleep(POLL_S)  # another run holds it: wait for its slot, in queue order

    def release(self, step: str) -> None:
        self._free(step)
