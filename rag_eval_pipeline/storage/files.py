"""Writes that readers never see half done, and read-modify-writes that several runs can make at
once without losing each other's rows."""

from __future__ import annotations

import contextlib
import fcntl
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """``write`` fills a file of its own beside ``path`` (a unique name: concurrent writers never
    share it), which then replaces ``path`` in one rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Holds an exclusive lock on ``<path>.lock`` (every process on this machine, or sharing this
    filesystem's locks, waits its turn): for a read, change and write of one file."""
    lock = path.with_name(path.name + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with locked(lock):
        yield


@contextlib.contextmanager
def locked(lock: Path) -> Iterator[None]:
    """Holds an exclusive ``flock`` on the file ``lock`` (made if missing) until the block ends."""
    descriptor = os.open(lock, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        os.close(descriptor)
