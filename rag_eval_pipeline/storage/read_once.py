"""Stored values read once per version of their file: a command's runs (the knowledge base, each
model's evaluation, the comparison) read the same judgement list, scores and summaries, and a
file once written is replaced, never changed in place (``formats.write`` renames a new file over
it), so its inode, size, time and the bytes at its ends name its content."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rag_eval_pipeline.common.recent import KeptRecent

KEPT_VALUES = 32  # a command's six runs read about twenty files
# of stored files (parquet is several times smaller in memory): a larger file is read each time
KEPT_BYTES = 128 * 2**20
SAMPLED_BYTES = 64 * 1024  # of each end of a file: all of a small file, a parquet file's footer
FileVersion = tuple[str | int, int, int, float, str]


def file_version(found: Path) -> FileVersion:
    """What changes whenever the file at ``found`` is written again: its inode (a rename gives a
    new one; a run's kept copy is a hard link of the same), size, time, and a hash of its first
    and last 64 KiB (a freed inode written again within the clock's tick at the same size still
    differs there: a small file whole, a parquet file in its footer's statistics). A store
    without inodes, such as object storage, gives its path instead."""
    stat = found.stat()
    modified = getattr(stat, "st_mtime_ns", None) or stat.st_mtime
    inode = getattr(stat, "st_ino", 0)
    where: str | int = getattr(stat, "st_dev", 0) if inode else str(found)
    digest = hashlib.blake2b(digest_size=16)
    with found.open("rb") as file:
        digest.update(file.read(SAMPLED_BYTES))
        if stat.st_size > SAMPLED_BYTES:
            file.seek(max(SAMPLED_BYTES, stat.st_size - SAMPLED_BYTES))
            digest.update(file.read(SAMPLED_BYTES))
    return where, inode, stat.st_size, modified, digest.hexdigest()


def handed_out(value: Any) -> Any:
    """A value handed to one more reader, copied where it could be changed (a step that changes
    its input must not change another step's): frames, and JSON's dicts and lists."""
    if isinstance(value, (dict, list)):
        return copy.deepcopy(value)
    return value.copy() if hasattr(value, "columns") else value


class ReadOnce:
    """Values by file version, the ``kept`` most recently read of them, from files of at most
    ``kept_bytes`` together; each reader gets its own copy. Thread-safe: a run's steps and a
    sensor may read at once."""

    def __init__(self, kept: int = KEPT_VALUES, kept_bytes: int = KEPT_BYTES) -> None:
        self._values: KeptRecent[FileVersion, Any] = KeptRecent(kept, kept_bytes)

    def read(self, found: Path, reader: Callable[[], Any]) -> Any:
        """The value of the file ``found`` as ``reader`` reads it, read only when this version of
        the file was not read before."""
        version = file_version(found)
        kept = self._values.get(version)
        if kept is not None:
            return handed_out(kept)
        value = reader()
        # kept only when no writer replaced the file while it was read (the value might be the new one's);
        # its size is the file's bytes: a cheap, steady measure of what the value holds
        if file_version(found) == version:
            self._values.put(version, value, size=version[2])
        return handed_out(value)

    def __len__(self) -> int:
        return len(self._values)
