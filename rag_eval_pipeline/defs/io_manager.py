"""One partition-aware IO manager: DataFrames as parquet, small records (manifests) as JSON."""

import json
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
            _file(path, ".html").write_text(obj, encoding="utf-8")
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
        if len(keys) == 0:
            return {}
        loaded = super().load_input(context)
        if len(keys) == 1:
            return {} if loaded is None else {keys[0]: loaded}
        return loaded

    def get_metadata(self, context: dg.OutputContext, obj: Any) -> dict[str, Any]:
        """The file as written, extension included (it replaces the extension-less default)."""
        base = (
            next(iter(self._get_paths_for_partitions(context).values()))
            if context.has_asset_partitions
            else self._get_path(context)
        )
        if isinstance(obj, pd.DataFrame):
            return {
                "path": dg.MetadataValue.path(str(_file(base, ".parquet"))),
                "dagster/row_count": len(obj),
            }
        if isinstance(obj, HtmlDocument):
            report = str(_file(base, ".html"))
            return {"path": dg.MetadataValue.path(report), "report": dg.MetadataValue.url(f"file://{report}")}
        return {"path": dg.MetadataValue.path(str(_file(base, ".json")))}


class ArtifactIOManager(dg.ConfigurableIOManagerFactory):
    """Stores every asset under ``base_dir`` (default: the Dagster instance's storage folder)."""

    base_dir: str | None = None

    def create_io_manager(self, context: dg.InitResourceContext) -> dg.UPathIOManager:
        base = self.base_dir or str(context.instance.storage_directory())  # type: ignore[union-attr]
        return _ArtifactStore(base_path=UPath(base) / "artifacts")
