"""A materialization as the run history records it, read from an opened Dagster instance or from
a local home's SQLite files: the plain record both give. Standard library only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class StoredMaterialization:
    """One materialization: its event's storage id, the run that made it, the asset, the
    partition (an answer model) and the tags Dagster gave it (its inputs' event pointers and
    data versions)."""

    storage_id: int
    run_id: str
    asset: str
    partition: str | None
    tags: Mapping[str, str] = field(default_factory=dict)
