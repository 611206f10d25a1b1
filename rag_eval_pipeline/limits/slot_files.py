"""One limit on calls in flight per provider, shared by every run that calls it.

A backfill runs several answer-model partitions at once, each in its own process; each process
already bounds its own calls (``CachedClient``'s semaphore), but two Claude partitions together
would make twice as many calls as the account's rate limit allows. A ``SharedLimit`` is held for
each call: where the instance keeps pools (PostgreSQL: every machine of the deployment), a slot
of its pool (``limits/pools.py``); else, on one machine, one of N slot files under the
instance's storage (an exclusive ``flock``), here. A process that dies releases its slot files
with its file descriptors: nothing is left locked.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Protocol

POLL_S = 0.02


class SharedLimit(Protocol):
    """At most N holders at once among every process that shares it; ``where`` says which."""

    where: str

    def hold(self) -> AbstractAsyncContextManager[None]: ...


class SharedSlots:
    """At most ``slots`` holders at once among every process using ``folder``."""

    def __init__(self, folder: Path, slots: int) -> None:
        if slots < 1:
            raise ValueError("a shared limit needs at least one slot")
        self.folder = folder
        self.slots = slots
        self.where = f"slot files {folder} ({slots}, this machine's runs)"
        folder.mkdir(parents=True, exist_ok=True)

    def _try_take(self) -> int | None:
        for slot in range(self.slots):
            descriptor = os.open(self.folder / f"slot-{slot}", os.O_CREAT | os.O_RDWR, 0o644)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(descriptor)
                continue
            return descriptor
        return None

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        descriptor = self._try_take()
        while descriptor is None:
            await asyncio.sleep(POLL_S)
            descriptor = self._try_take()
        try:
            yield
        finally:
            fcntl.flock(descriptor, fcntl.LOCK_UN)
            os.close(descriptor)
