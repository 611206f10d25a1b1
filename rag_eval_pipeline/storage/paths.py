"""The one function that builds storage paths from names a user controls (partition keys)."""

from __future__ import annotations

from upath import UPath


class PathOutsideStorageError(ValueError):
    """An artifact path that would leave the storage folder (a crafted partition key)."""


def contained(base: UPath, path: UPath) -> UPath:
    """``path`` if it lies inside ``base`` once resolved ('..' and links followed), else an error:
    whatever a partition key holds, nothing is read or written outside the storage folder."""
    root = base.resolve()
    target = path.resolve()
    if target != root and root not in target.parents:
        raise PathOutsideStorageError(f"refusing to store outside {root}: {path}")
    return path
