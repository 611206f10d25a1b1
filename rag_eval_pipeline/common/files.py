"""Writes that readers never see half done, and read-modify-writes that several processes can
make at once without losing each other's rows: every writer of the package goes through here.

A lock is ``filelock``'s (an ``flock`` on ``<file>.lock``, released by the operating system when
its process dies), held with a timeout: a wait that does not end says who holds the lock (its
process, machine, purpose and since when, kept beside the lock) instead of hanging."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import filelock

P = TypeVar("P", bound="os.PathLike[str]")  # a local Path or a universal-pathlib UPath

LOCK_TIMEOUT_S = 300.0  # a read-modify-write of one file takes milliseconds; minutes is a stuck holder


class LockTimeoutError(RuntimeError):
    """A lock still held after the timeout, with who holds it."""


def private_tmp(path: P) -> P:
    """A temporary name beside ``path`` that no other writer shares (two writers of one file
    each rename their own whole file; a shared name let one rename the other's, half written)."""
    return path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")  # type: ignore[attr-defined]


def write_atomically(path: P, write: Callable[[P], object]) -> None:
    """``write`` fills a file of its own beside ``path`` (``private_tmp``), which then replaces
    ``path`` in one rename; the file is removed if ``write`` fails, so a failed write leaves
    neither a half file nor litter. ``path`` is a local Path or a UPath (an object store)."""
    path.parent.mkdir(parents=True, exist_ok=True)  # type: ignore[attr-defined]
    tmp = private_tmp(path)
    try:
        write(tmp)
        tmp.rename(path)  # type: ignore[attr-defined]  # POSIX: replaces the target in one step
    finally:
        tmp.unlink(missing_ok=True)  # type: ignore[attr-defined]


def write_text_atomically(path: P, text: str) -> None:
    write_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))  # type: ignore[attr-defined]


def _holder_file(lock: Path) -> Path:
    return lock.with_name(lock.name + ".holder")


def _holder(lock: Path) -> str:
    """Who holds ``lock``, as its holder wrote it on taking it."""
    try:
        said = json.loads(_holder_file(lock).read_text())
    except (OSError, ValueError):
        return "a process that did not say who it is"
    since = time.strftime("%H:%M:%S", time.localtime(float(said.get("since", 0))))
    return f"pid {said.get('pid')} on {said.get('host')} ({said.get('purpose')}) since {since}"


@contextlib.contextmanager
def locked(
    lock: Path,
    purpose: str = "a write",
    timeout_s: float = LOCK_TIMEOUT_S,
    waiting: Callable[[str], object] | None = None,
) -> Iterator[None]:
    """Holds an exclusive lock on the file ``lock`` (made if missing) until the block ends. A
    lock held by another process is waited for at most ``timeout_s`` (``waiting`` hears once
    who holds it), then ``LockTimeoutError`` names the holder."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    guard = filelock.FileLock(str(lock))
    try:
        guard.acquire(timeout=0)
    except filelock.Timeout:
        if waiting is not None:
            waiting(f"waiting for {lock}, held by {_holder(lock)}")
        try:
            guard.acquire(timeout=timeout_s)
        except filelock.Timeout:
            raise LockTimeoutError(
                f"{lock} is still held after {timeout_s:.0f} s by {_holder(lock)}: wait for it to "
                "end, or stop that process"
            ) from None
    try:
        with contextlib.suppress(OSError):  # who holds it, for the one who waits; best effort
            said = {"pid": os.getpid(), "host": socket.gethostname(), "purpose": purpose}
            _holder_file(lock).write_text(json.dumps({**said, "since": time.time()}))
        yield
    finally:
        guard.release()


@contextlib.contextmanager
def exclusive(path: Path, purpose: str = "a write", timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Holds an exclusive lock on ``<path>.lock`` (every process on this machine, or sharing this
    filesystem's locks, waits its turn): for a read, change and write of one file."""
    with locked(path.with_name(path.name + ".lock"), purpose, timeout_s):
        yield


def way_back(path: Path, suffix: str, restore: str, otherwise: str) -> str:
    """What a damaged ``path`` is mended by: ``restore`` (a template naming ``{backup}`` and
    ``{path}``) where its kept copy ``<path><suffix>`` is there, else ``otherwise``."""
    backup = path.with_name(path.name + suffix)
    return restore.format(backup=backup, path=path) if backup.is_file() else otherwise
