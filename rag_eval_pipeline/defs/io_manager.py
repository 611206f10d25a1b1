"""One partition-aware IO manager: DataFrames as parquet, small records (manifests) as JSON."""

import json
import os
import shutil
from dataclasses import dataclass
from typing import Any

import dagster as dg
import pandas as pd
from upath import UPath

from rag_eval_pipeline.retrieval.base import IndexManifest

RECORD_TYPE = "__record__"  # marks a typed record in its JSON file, so it loads as that type again
RECORDS = {"IndexManifest": IndexManifest}

# The knowledge base is rebuilt as one snapshot: these assets are written into their run's own
# folder and become live together, when the knowledge_base asset publishes that run.
SNAPSHOT_ASSETS = ("hotpotqa_raw", "user_documents", "kb_passages", "kb_index", "judgement_list")
SNAPSHOTS = "knowledge_base"
LIVE_POINTER = "LIVE.json"
KEEP_SNAPSHOTS = 3  # runs whose files are kept besides the live ones (inspection, rollback)


@dataclass(frozen=True)
class KnowledgeBaseSnapshot:
    """Which run's version of each knowledge-base asset is live."""

    live: dict[str, str]
    published_by: str

    def to_dict(self) -> dict[str, Any]:
        return {"live": dict(self.live), "published_by": self.published_by}


class PublishSnapshot:
    """What the knowledge_base asset returns: publish this run's knowledge-base assets."""


class SnapshotStore:
    """The knowledge-base snapshots under ``<base>/knowledge_base``: ``<run id>/<asset>.*`` files
    and ``LIVE.json``, the pointer switched (write aside, rename) only when a rebuild completed."""

    def __init__(self, base: UPath) -> None:
        self.root = base / SNAPSHOTS

    def live(self) -> dict[str, str]:
        pointer = self.root / LIVE_POINTER
        return json.loads(pointer.read_text())["live"] if pointer.exists() else {}

    def path(self, asset: str, run_id: str) -> UPath:
        return self.root / run_id / asset

    def staged(self, run_id: str) -> list[str]:
        folder = self.root / run_id
        return sorted({f.name.split(".")[0] for f in folder.iterdir()}) if folder.exists() else []

    def publish(self, run_id: str) -> KnowledgeBaseSnapshot:
        snapshot = KnowledgeBaseSnapshot(
            {**self.live(), **dict.fromkeys(self.staged(run_id), run_id)}, run_id
        )
        target = self.root / LIVE_POINTER
        tmp = _file(target, ".tmp")
        tmp.write_text(json.dumps(snapshot.to_dict(), indent=2, sort_keys=True))
        tmp.rename(target)
        self._forget_old(set(snapshot.live.values()))
        return snapshot

    def _forget_old(self, live_runs: set[str]) -> None:
        runs = [f for f in self.root.iterdir() if f.is_dir() and f.name not in live_runs]
        runs.sort(key=lambda f: max((x.stat().st_mtime for x in f.iterdir()), default=0), reverse=True)
        for old in runs[KEEP_SNAPSHOTS:]:
            for file in old.iterdir():
                file.unlink()
            old.rmdir()


# Every materialization of the other assets also keeps its own file, under
# ``history/<asset>[/<partition>]/<run id>.<ext>`` (a hard link to the file it wrote: no copy),
# so an older score can still be inspected after a re-run replaced the latest.
HISTORY = "history"
# input metadata of a fan-in: read each partition as of the run that last materialized this asset
PINNED_BY = "rag_eval/pinned_by"
KEEP_MATERIALIZATIONS = 10


def history_folder(base: UPath, asset: str, partition: str | None = None) -> UPath:
    folder = base / HISTORY / asset
    return contained(base, folder / partition) if partition else folder


def materialization_file(base: UPath, asset: str, partition: str | None, run_id: str) -> UPath | None:
    """The file one run wrote for an asset (partition), if it is still kept."""
    folder = history_folder(base, asset, partition)
    if not folder.exists():
        return None
    return next((f for f in folder.iterdir() if f.name.split(".")[0] == run_id), None)


def kept_runs(base: UPath, asset: str, partition: str | None = None) -> list[str]:
    """The runs whose file of this asset (partition) is kept, newest first."""
    folder = history_folder(base, asset, partition)
    if not folder.exists():
        return []
    files = sorted(folder.iterdir(), key=lambda f: f.stat().st_mtime, reverse=True)
    return [f.name.split(".")[0] for f in files]


def _keep_as_materialization(written: UPath, folder: UPath, run_id: str, keep: int) -> UPath:
    """``written`` also under its run id; only the newest ``keep`` such files stay."""
    folder.mkdir(parents=True, exist_ok=True)
    kept = folder / f"{run_id}{''.join(written.suffixes[-1:])}"
    kept.unlink(missing_ok=True)
    try:
        os.link(str(written), str(kept))
    except OSError:  # another filesystem, or links not allowed: a copy
        shutil.copyfile(str(written), str(kept))
    files = sorted(folder.iterdir(), key=lambda f: f.stat().st_mtime, reverse=True)
    for old in files[keep:]:
        old.unlink()
    return kept


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


def _file(path: UPath, extension: str) -> UPath:
    """Append the extension: partition keys may hold dots (model ids), so never use with_suffix."""
    return path.with_name(path.name + extension)


class HtmlDocument(str):
    """A self-contained HTML file; stored as ``<asset>.html`` so it opens in a browser."""


def _current_run_id(context: dg.InputContext) -> str | None:
    """The run loading this input, or None outside a run (a value read for the CLI or a test)."""
    try:
        return context.step_context.run_id
    except dg.DagsterInvariantViolationError:
        return None


class _ArtifactStore(dg.UPathIOManager):
    """Writes ``<base>/<asset>[/<partition>].parquet`` or ``.json`` by the value's type."""

    extension = None  # chosen per value: .parquet for DataFrames, .json for dicts
    keep_materializations = KEEP_MATERIALIZATIONS

    @property
    def snapshots(self) -> SnapshotStore:
        return SnapshotStore(self._base_path)

    def get_asset_relative_path(self, context: dg.InputContext | dg.OutputContext) -> UPath:
        """Knowledge-base assets live in snapshots: written into their run's folder; read from
        the same run's folder while that run rebuilds, else from the live snapshot."""
        asset = context.asset_key.to_user_string()
        if asset not in SNAPSHOT_ASSETS:
            return super().get_asset_relative_path(context)
        if isinstance(context, dg.OutputContext):
            return UPath(SNAPSHOTS) / context.run_id / asset
        run_id = _current_run_id(context)
        if run_id is not None and self.path_exists(self.snapshots.path(asset, run_id)):
            return UPath(SNAPSHOTS) / run_id / asset
        live_run = self.snapshots.live().get(asset)
        if live_run is None:
            raise FileNotFoundError(
                f"no published knowledge base holds {asset} yet: materialize knowledge_base_job"
            )
        return UPath(SNAPSHOTS) / live_run / asset

    def get_path_for_partition(
        self, context: dg.InputContext | dg.OutputContext, path: UPath, partition: str
    ) -> UPath:
        return contained(self._base_path, super().get_path_for_partition(context, path, partition))

    def dump_to_path(self, context: dg.OutputContext, obj: Any, path: UPath) -> None:
        contained(self._base_path, path)
        if isinstance(obj, PublishSnapshot):  # every knowledge-base asset of this run succeeded
            obj = self.snapshots.publish(context.run_id).to_dict()
        if isinstance(obj, HtmlDocument):
            target = _file(path, ".html")
            tmp = _file(target, ".tmp")
            tmp.write_text(obj, encoding="utf-8")
            tmp.rename(target)
        elif isinstance(obj, pd.DataFrame):
            target = _file(path, ".parquet")
            tmp = _file(target, ".tmp")
            obj.to_parquet(tmp, index=False)
            tmp.rename(target)  # readers never see half a file
            _file(path, ".json").unlink(missing_ok=True)
        elif isinstance(obj, dict | IndexManifest):
            data = obj if isinstance(obj, dict) else {RECORD_TYPE: type(obj).__name__, **obj.to_dict()}
            target = _file(path, ".json")
            tmp = _file(target, ".tmp")
            tmp.write_text(json.dumps(data, indent=2, sort_keys=True))
            tmp.rename(target)
            _file(path, ".parquet").unlink(missing_ok=True)
        else:
            raise TypeError(
                f"{context.asset_key.to_user_string()}: cannot store a {type(obj).__name__}; "
                "assets return a pandas DataFrame, a dict or an IndexManifest"
            )
        asset = context.asset_key.to_user_string()
        if asset not in SNAPSHOT_ASSETS:  # (knowledge-base snapshots are per run already)
            partition = context.partition_key if context.has_asset_partitions else None
            folder = history_folder(self._base_path, asset, partition)
            _keep_as_materialization(target, folder, context.run_id, self.keep_materializations)

    def load_from_path(self, context: dg.InputContext, path: UPath) -> Any:
        contained(self._base_path, path)
        if _file(path, ".parquet").exists():
            return pd.read_parquet(_file(path, ".parquet"))
        if _file(path, ".json").exists():
            data = json.loads(_file(path, ".json").read_text())
            record = RECORDS.get(data.pop(RECORD_TYPE, None)) if isinstance(data, dict) else None
            return record.from_dict(data) if record is not None else data
        if _file(path, ".html").exists():
            return HtmlDocument(_file(path, ".html").read_text(encoding="utf-8"))
        raise FileNotFoundError(f"no stored artifact at {path}.parquet or {path}.json")

    def path_exists(self, path: UPath) -> bool:
        return any(_file(path, ext).exists() for ext in (".parquet", ".json", ".html"))

    def load_input(self, context: dg.InputContext) -> Any:
        """An unpartitioned asset reading a partitioned one always gets {partition: value}.

        UPathIOManager returns a bare value when exactly one partition exists and None when none
        does; a fan-in asset such as model_comparison should not care how many models there are.
        """
        fan_in = context.has_asset_partitions and not context.has_partition_key
        if not fan_in:
            return super().load_input(context)
        keys = context.asset_partition_keys
        pinned_by = (context.definition_metadata or {}).get(PINNED_BY)
        if pinned_by:
            return self._load_pinned(context, keys, pinned_by)
        if len(keys) == 0:
            return {}
        loaded = super().load_input(context)
        if len(keys) == 1:
            return {} if loaded is None else {keys[0]: loaded}
        return loaded

    def _load_pinned(self, context: dg.InputContext, keys: list[str], pinned_by: str) -> dict[str, Any]:
        """Each partition as it was when ``pinned_by`` was last materialized for it (its newest
        materialization before that one); a partition ``pinned_by`` never accepted is left out.
        A judge_scores partition whose blocking check failed (so no metric_summary followed)
        thus never reaches the reports: they read what the last accepted summary was made from."""
        asset = context.asset_key.to_user_string()
        values = {}
        for key in keys:
            pins = context.instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=dg.AssetKey(pinned_by), asset_partitions=[key]), limit=1
            ).records
            if not pins:
                continue
            # this asset's newest materialization up to the pin (in its run, or before it)
            own = context.instance.fetch_materializations(
                dg.AssetRecordsFilter(
                    asset_key=context.asset_key, asset_partitions=[key], before_storage_id=pins[0].storage_id
                ),
                limit=1,
            ).records
            if not own:
                continue
            kept = materialization_file(self._base_path, asset, key, own[0].run_id)
            if kept is not None:
                values[key] = self.load_from_path(context, kept.with_name(kept.name.split(".")[0]))
            else:  # written before files were kept per run: the latest is all there is
                path = self.get_path_for_partition(context, self._get_path_without_extension(context), key)
                values[key] = self.load_from_path(context, path)
        return values

    def get_metadata(self, context: dg.OutputContext, obj: Any) -> dict[str, Any]:
        """The file this materialization wrote and keeps (``path``, extension included), and the
        latest, which downstream assets read (``latest_path``)."""
        base = (
            next(iter(self._get_paths_for_partitions(context).values()))
            if context.has_asset_partitions
            else self._get_path(context)
        )
        extension = (
            ".parquet"
            if isinstance(obj, pd.DataFrame)
            else ".html"
            if isinstance(obj, HtmlDocument)
            else ".json"
        )
        latest = str(_file(base, extension))
        asset = context.asset_key.to_user_string()
        metadata: dict[str, Any] = {"path": dg.MetadataValue.path(latest)}
        if asset not in SNAPSHOT_ASSETS:
            partition = context.partition_key if context.has_asset_partitions else None
            own = history_folder(self._base_path, asset, partition) / f"{context.run_id}{extension}"
            metadata = {"path": dg.MetadataValue.path(str(own)), "latest_path": dg.MetadataValue.path(latest)}
        if isinstance(obj, pd.DataFrame):
            metadata["dagster/row_count"] = len(obj)
        if isinstance(obj, HtmlDocument):
            metadata["report"] = dg.MetadataValue.url(f"file://{latest}")
        return metadata


class ArtifactIOManager(dg.ConfigurableIOManagerFactory):
    """Stores every asset under ``base_dir`` (default: the Dagster instance's storage folder),
    keeping each materialization's own file for the newest ``keep_materializations`` runs."""

    base_dir: str | None = None
    keep_materializations: int = KEEP_MATERIALIZATIONS

    def create_io_manager(self, context: dg.InitResourceContext) -> dg.UPathIOManager:
        base = self.base_dir or str(context.instance.storage_directory())  # type: ignore[union-attr]
        store = _ArtifactStore(base_path=UPath(base) / "artifacts")
        store.keep_materializations = self.keep_materializations
        return store
