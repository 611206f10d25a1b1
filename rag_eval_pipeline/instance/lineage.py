"""Stored values read back for the command line: the latest of an asset, one run's own file, and
the Dagster run behind each step of a score; from an opened instance, or from a local home's
SQLite files without Dagster (``LocalHistory``: what makes a reading command answer at once)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import pandas as pd
from upath import UPath

from rag_eval_pipeline.defs.evaluations import InstanceRecords
from rag_eval_pipeline.defs.names import (
    AGENT_VERSION_PARTITIONS,
    ARTIFACTS,
    EVALUATION_STEPS,
    KNOWLEDGE_BASE_RUN_TAG,
    SNAPSHOT_ASSETS,
)
from rag_eval_pipeline.metrics.freshness import FinishedRun
from rag_eval_pipeline.storage import formats
from rag_eval_pipeline.storage.history import StoredMaterialization
from rag_eval_pipeline.storage.materializations import kept_runs, materialization_file
from rag_eval_pipeline.storage.paths import contained
from rag_eval_pipeline.storage.snapshots import SnapshotStore

if TYPE_CHECKING:
    import dagster as dg


class History(Protocol):
    """What a reading command asks of an instance's history; `diff` and `baseline` the scores'
    records too (``defs.evaluations.EvaluationRecords``)."""

    def storage_directory(self) -> str: ...

    def registered_models(self) -> list[str] | None: ...

    def latest_run(self, asset: str, partition: str | None) -> str | None: ...

    def newest_finished_run(self, partition: str) -> FinishedRun | None: ...

    def score_records(self, model: str | None, limit: int) -> list[StoredMaterialization]: ...

    def run_score_records(self, run_id: str) -> list[StoredMaterialization]: ...

    def materialization(self, asset: str, storage_id: int) -> StoredMaterialization | None: ...


@dataclass(frozen=True)
class InstanceHistory(InstanceRecords):
    """The same questions asked of an opened Dagster instance (any storage): the scores'
    records as ``InstanceRecords`` reads them, and these two."""

    def latest_run(self, asset: str, partition: str | None) -> str | None:
        import dagster as dg

        records = self.instance.fetch_materializations(
            dg.AssetRecordsFilter(
                asset_key=dg.AssetKey(asset), asset_partitions=None if partition is None else [partition]
            ),
            limit=1,
        ).records
        return records[0].run_id if records else None

    def newest_finished_run(self, partition: str) -> FinishedRun | None:
        from rag_eval_pipeline.defs.partitions import newest_finished_run

        return newest_finished_run(self.instance, partition)


def history_of(source: dg.DagsterInstance | History) -> History:
    """A history as given, or an opened instance's."""
    return source if hasattr(source, "latest_run") else InstanceHistory(source)  # type: ignore[arg-type]


class NotMaterializedError(FileNotFoundError):
    """An asset read before any run stored it: said with the command that stores it."""


def artifacts_folder(instance: dg.DagsterInstance | History) -> UPath:
    """Where the IO manager stores every asset of this instance."""
    return UPath(history_of(instance).storage_directory()) / ARTIFACTS


def load_agent_asset(
    instance: dg.DagsterInstance, key: str, version: str, command: str = "rag-eval trajectories"
):
    """An agent version's latest stored table (``command``, which wrote it, is the remedy)."""
    versions = instance.get_dynamic_partitions(AGENT_VERSION_PARTITIONS)
    if version not in versions:
        how = (
            "score its traces with `rag-eval trajectories --traces FILE --reference FILE`"
            if command == "rag-eval trajectories"
            else f"run `{command}` on it"
        )
        raise NotMaterializedError(
            f"{version} is not an agent version here (known: {', '.join(versions) or 'none'}): {how}"
        )
    base = artifacts_folder(instance)
    path = contained(base, base / key / version)
    if formats.stored_file(path) is None:
        raise NotMaterializedError(f"no {key} of {version} stored yet: run `{command}` again")
    return formats.read(path, f"delete it and run `{command}` again")


def load_asset(instance: dg.DagsterInstance | History, key: str, partition: str | None = None):
    """An asset's latest stored value, read from where the IO manager wrote it (a knowledge-base
    asset from the live snapshot), without building the definitions: a reading command needs
    the instance, not the code location."""
    registered = (history_of(instance).registered_models() or []) if partition is not None else []
    if partition is not None and partition not in registered:
        known = ", ".join(registered) or "none"
        raise NotMaterializedError(
            f"{partition} is not an evaluated answer model here (registered: {known}): evaluate it with "
            f"`rag-eval run --models {partition}`"
        )
    base = artifacts_folder(instance)
    if key in SNAPSHOT_ASSETS:
        snapshots = SnapshotStore(base)
        run_id = snapshots.live().get(key)
        if run_id is None:
            raise NotMaterializedError(f"no {key} stored yet: run `rag-eval run` first")
        return formats.read(snapshots.path(key, run_id), "rebuild the knowledge base (`rag-eval run`)")
    path = contained(base, base / key / partition) if partition is not None else base / key
    if formats.stored_file(path) is None:
        if partition is None:
            raise NotMaterializedError(f"no {key} stored yet: run `rag-eval run` first")
        raise NotMaterializedError(
            f"no {key} of {partition} stored yet (its evaluation failed or never ran; the UI shows "
            f"its runs): evaluate it with `rag-eval run --models {partition}`"
        )
    remedy = (
        f"delete it and evaluate {partition} again (`rag-eval run --models {partition}`)"
        if partition is not None
        else f"delete it and materialize {key} again (`rag-eval run` rebuilds every asset)"
    )
    return formats.read(path, remedy)


def load_snapshot_asset(instance: dg.DagsterInstance | History, knowledge_base_run: str, asset: str):
    """A knowledge-base asset as the rebuild of ``knowledge_base_run`` published it."""
    snapshots = SnapshotStore(artifacts_folder(instance))
    run_id = snapshots.published(knowledge_base_run)[asset]
    return formats.read(snapshots.path(asset, run_id), "rebuild the knowledge base (`rag-eval run`)")


def lineage_run_ids(instance: dg.DagsterInstance | History, answer_model: str) -> dict[str, str]:
    """The run that last materialized each step behind one answer model's scores."""
    history = history_of(instance)
    found = {
        key: history.latest_run(key, answer_model if key in EVALUATION_STEPS else None)
        for key in (*SNAPSHOT_ASSETS, *EVALUATION_STEPS)
    }
    return {key: run_id for key, run_id in found.items() if run_id is not None}


def snapshot_asset_of_run(instance: dg.DagsterInstance, run_id: str, asset: str):
    """A knowledge-base asset (the judgement list, the index) as the run ``run_id`` read it: the
    one it rebuilt itself, else the rebuild it was pinned to (``rag-eval run`` pins every
    evaluation to its rebuild); None when the run says neither (it read the live one of its time)."""
    snapshots = SnapshotStore(artifacts_folder(instance))
    remedy = "rebuild the knowledge base (`rag-eval run`)"
    if snapshots.has(asset, run_id):
        return formats.read(snapshots.path(asset, run_id), remedy)
    run = instance.get_run_by_id(run_id)
    pinned = run.tags.get(KNOWLEDGE_BASE_RUN_TAG) if run is not None else None
    if not pinned:
        return None
    published = snapshots.published(pinned)
    if asset not in published:
        return None
    return formats.read(snapshots.path(asset, published[asset]), remedy)


def load_materialization(
    instance: dg.DagsterInstance | History, asset: str, partition: str | None, run_id: str
) -> pd.DataFrame:
    """An asset partition as one run wrote it (kept under the artifacts' history), not the latest."""
    base = artifacts_folder(instance)
    kept = materialization_file(base, asset, partition, run_id)
    if kept is None:
        runs = ", ".join(kept_runs(base, asset, partition)[:5]) or "none"
        raise FileNotFoundError(f"no {asset} of {partition} from run {run_id} is kept (newest kept: {runs})")
    return pd.read_parquet(kept)
