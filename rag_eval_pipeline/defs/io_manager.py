"""One partition-aware IO manager over ``storage/``: where each asset's value is read and written,
the knowledge base's snapshots, every materialization's own file, and fan-in reads pinned to
the last accepted summary."""

from typing import Any

import dagster as dg
from upath import UPath

from rag_eval_pipeline.defs.kept import kept_for
from rag_eval_pipeline.defs.names import (
    ARTIFACTS,
    CLI_PID_TAG,
    EVALUATION_FAILED,
    KNOWLEDGE_BASE_RUN_TAG,
    SNAPSHOT_ASSETS,
)
from rag_eval_pipeline.storage import formats
from rag_eval_pipeline.storage.formats import HtmlDocument
from rag_eval_pipeline.storage.materializations import (
    KEEP_MATERIALIZATIONS,
    history_folder,
    keep_as_materialization,
    materialization_file,
    trim_kept,
    trim_pages,
    write_companions,
)
from rag_eval_pipeline.storage.paths import contained
from rag_eval_pipeline.storage.read_once import ReadOnce
from rag_eval_pipeline.storage.snapshots import SNAPSHOTS, SnapshotStore

# input metadata of a fan-in (an unpartitioned asset reading every answer model's partition)
FAN_IN = "rag_eval/fan_in"
# and of a pinned fan-in: each partition as of the run that last materialized this asset
PINNED_BY = "rag_eval/pinned_by"
# input metadata of an input that may not exist yet (labels before anyone labelled): None then
ABSENT_AS_NONE = "rag_eval/absent_as_none"
# input metadata of a table input read in part: the columns the asset uses (those it has)
COLUMNS = "rag_eval/columns"
# output metadata: the folder every materialization's ``path`` and ``latest_path`` are relative to
# (a short key: the longest key sets the width of the asset page's key column)
ARTIFACTS_FOLDER = "artifacts"


class PublishSnapshot:
    """What the knowledge_base asset returns: publish this run's knowledge-base assets."""


def _run(context: dg.InputContext | dg.OutputContext) -> dg.DagsterRun | None:
    """The run loading or writing, or None outside a run (a value read for the CLI or a test)."""
    try:
        return context.step_context.dagster_run
    except dg.DagsterInvariantViolationError:
        return None


def _forget_returned_value(context: dg.OutputContext) -> None:
    """Drop the copy of a stored value that ``execute_in_process`` keeps for ``output_for_node``,
    in a run a ``rag-eval`` command executes: the command reads every value back from its file,
    and the copies would hold every table of a run until it ends (Dagster 1.13 keeps one step
    context of a command's first run alive after it, and with it that run's tables)."""
    run = _run(context)
    if run is None or CLI_PID_TAG not in run.tags:
        return  # (a notebook's `dg.materialize` keeps its result's values)
    captured = getattr(context.step_context, "output_capture", None)
    mine = (context.step_key, context.name)
    for handle in [h for h in captured or {} if (h.step_key, h.output_name) == mine]:
        del captured[handle]


def _failure_reason_of(value: Any) -> str | None:
    """The reason a model could not answer, where ``value`` is its chain's recorded failure."""
    return (getattr(value, "attrs", None) or {}).get(EVALUATION_FAILED)


def _remedy(asset: str, partition: str | None) -> str:
    if partition is None:
        return f"delete it and materialize {asset} again (`rag-eval run` rebuilds every asset)"
    return f"delete it and evaluate {partition} again (`rag-eval run --models {partition}`)"


class _ArtifactStore(dg.UPathIOManager):
    """Writes ``<base>/<asset>[/<partition>].<ext>`` in the format its value's type has. Each
    version of a stored file is read once by the runs of one instance in this process: a model's
    run reads its answers and scores in five steps, a command's six runs the same judgement list
    and scores (``defs.kept``)."""

    extension = None  # chosen per value by storage.formats
    keep_materializations = KEEP_MATERIALIZATIONS
    reads: ReadOnce | None = None  # set by the factory; a store of its own reads alone

    def _read(self, path: UPath, remedy: str) -> Any:
        """The value at ``path``, read once per version of its file."""
        found = formats.stored_file(path)
        if found is None:
            return formats.read(path, remedy)  # says what is missing
        if self.reads is None:
            self.reads = ReadOnce()
        return self.reads.read(found, lambda: formats.read(path, remedy))

    @property
    def snapshots(self) -> SnapshotStore:
        return SnapshotStore(self._base_path)

    def get_asset_relative_path(self, context: dg.InputContext | dg.OutputContext) -> UPath:
        """Knowledge-base assets live in snapshots: written into their run's folder; read from
        the same run's folder while that run rebuilds, else from the snapshot the run is pinned
        to (the rebuild that launched it), else from the live one."""
        asset = context.asset_key.to_user_string()
        if asset not in SNAPSHOT_ASSETS:
            return super().get_asset_relative_path(context)
        run = _run(context)
        if isinstance(context, dg.OutputContext):
            return UPath(SNAPSHOTS) / context.run_id / asset
        if run is not None and self.snapshots.has(asset, run.run_id):
            return UPath(SNAPSHOTS) / run.run_id / asset
        pinned = run.tags.get(KNOWLEDGE_BASE_RUN_TAG) if run is not None else None
        source = self.snapshots.published(pinned) if pinned else self.snapshots.live()
        if asset not in source:
            raise FileNotFoundError(
                f"no published knowledge base holds {asset} yet: materialize knowledge_base_job"
            )
        return UPath(SNAPSHOTS) / source[asset] / asset

    def get_path_for_partition(
        self, context: dg.InputContext | dg.OutputContext, path: UPath, partition: str
    ) -> UPath:
        return contained(self._base_path, super().get_path_for_partition(context, path, partition))

    def dump_to_path(self, context: dg.OutputContext, obj: Any, path: UPath) -> None:
        contained(self._base_path, path)
        if isinstance(obj, PublishSnapshot):  # every knowledge-base asset of this run succeeded
            obj = self.snapshots.publish(context.run_id).to_dict()
        asset = context.asset_key.to_user_string()
        companions = getattr(obj, "companions", None)
        if companions:  # the pages a document loads exist before the document does
            write_companions(self._base_path, companions)
        if _failure_reason_of(obj) and context.has_asset_partitions:
            # a model that could not answer: this run's own file only; the latest value (the last
            # good evaluation, or none) stays what every later reader sees
            folder = history_folder(self._base_path, asset, context.partition_key)
            folder.mkdir(parents=True, exist_ok=True)
            formats.write(obj, folder / context.run_id, asset)
            trim_kept(folder, self.keep_materializations)
            return
        written = formats.write(obj, path, asset)
        if asset not in SNAPSHOT_ASSETS:  # (knowledge-base snapshots are per run already)
            partition = context.partition_key if context.has_asset_partitions else None
            folder = history_folder(self._base_path, asset, partition)
            keep_as_materialization(written, folder, context.run_id, self.keep_materializations)
            if companions:  # pages go with the materializations they belong to
                trim_pages(self._base_path, asset)

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        super().handle_output(context, obj)
        _forget_returned_value(context)

    def load_from_path(self, context: dg.InputContext, path: UPath) -> Any:
        contained(self._base_path, path)
        partition = context.partition_key if context.has_partition_key else None
        own = self._written_by_this_run(context, partition)
        if own is not None:  # what this run stored, a recorded failure included
            path = own
        remedy = _remedy(context.asset_key.to_user_string(), partition)
        columns = (context.definition_metadata or {}).get(COLUMNS)
        if columns is not None:  # a part of a table: read as asked, not kept for other readers
            return formats.read(path, remedy, columns)
        return self._read(path, remedy)

    def _written_by_this_run(self, context: dg.InputContext, partition: str | None) -> UPath | None:
        """The file the reading run itself wrote for this partition (its extension dropped), if
        any: a run reads its own answers and scores even where they were not made the latest."""
        run = _run(context)
        if run is None or partition is None:
            return None
        kept = materialization_file(
            self._base_path, context.asset_key.to_user_string(), partition, run.run_id
        )
        return kept.with_name(kept.name.split(".")[0]) if kept is not None else None

    def path_exists(self, path: UPath) -> bool:
        return formats.stored_file(path) is not None

    def load_input(self, context: dg.InputContext) -> Any:
        """A fan-in input (an asset across every answer model) is always {partition: value},
        whether the run holds one partition, several or none, and whatever number of models
        exist; a partition with nothing stored (a model that failed) is left out."""
        metadata = context.definition_metadata or {}
        if metadata.get(ABSENT_AS_NONE) and not self.path_exists(self._get_path(context)):
            return None
        if not metadata.get(FAN_IN):
            return super().load_input(context)
        keys = context.asset_partitions_def.get_partition_keys(dynamic_partitions_store=context.instance)
        if metadata.get(PINNED_BY):
            return self._load_pinned(context, list(keys), metadata[PINNED_BY])
        asset = context.asset_key.to_user_string()
        base = self._get_path_without_extension(context)
        columns = metadata.get(COLUMNS)  # a part of each table: read as asked, not kept
        values = {}
        for key in keys:
            path = self.get_path_for_partition(context, base, key)
            if self.path_exists(path):
                remedy = _remedy(asset, key)
                values[key] = formats.read(path, remedy, columns) if columns else self._read(path, remedy)
        return values

    def _load_pinned(self, context: dg.InputContext, keys: list[str], pinned_by: str) -> dict[str, Any]:
        """Each partition as it was when ``pinned_by`` was last materialized for it (its newest
        materialization before that one); a partition ``pinned_by`` never accepted is left out.
        A judge_scores partition whose blocking check failed (so no metric_summary followed)
        thus never reaches the reports: they read what the last accepted summary was made from."""
        asset = context.asset_key.to_user_string()
        values = {}
        for key in keys:
            pins = context.instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=dg.AssetKey(pinned_by), asset_partitions=[key]),
                limit=self.keep_materializations,
            ).records
            # the last accepted one: a model's recorded failure is never what the reports read
            pins = [r for r in pins if EVALUATION_FAILED not in (r.asset_materialization.metadata or {})][:1]
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
            path = (
                kept.with_name(kept.name.split(".")[0])
                if kept is not None  # (written before files were kept per run: the latest is all there is)
                else self.get_path_for_partition(context, self._get_path_without_extension(context), key)
            )
            values[key] = self._read(path, _remedy(asset, key))
        return values

    def get_metadata(self, context: dg.OutputContext, obj: Any) -> dict[str, Any]:
        """The file this materialization wrote and keeps (``path``, extension included) and the
        latest, which downstream assets read (``latest_path``), each relative to
        ``artifacts``, the folder said once in full: Dagster shows a path on one line (it
        breaks at no ``/``), so an absolute one made the asset page's metadata pane scroll
        sideways at a laptop's width."""
        base = (
            next(iter(self._get_paths_for_partitions(context).values()))
            if context.has_asset_partitions
            else self._get_path(context)
        )
        extension = formats.extension_of(obj) if not isinstance(obj, PublishSnapshot) else ".json"
        folder = self._base_path
        latest = formats.with_extension(base, extension)
        asset = context.asset_key.to_user_string()
        metadata: dict[str, Any] = {"path": _relative(latest, folder)}
        if asset not in SNAPSHOT_ASSETS:
            partition = context.partition_key if context.has_asset_partitions else None
            own = history_folder(self._base_path, asset, partition) / f"{context.run_id}{extension}"
            metadata = {"path": _relative(own, folder), "latest_path": _relative(latest, folder)}
            if _failure_reason_of(obj) and partition is not None:
                del metadata["latest_path"]  # (not written: see dump_to_path)
        metadata[ARTIFACTS_FOLDER] = dg.MetadataValue.path(str(folder))
        if hasattr(obj, "shape"):
            metadata["dagster/row_count"] = len(obj)
        return metadata


def _relative(path: UPath, folder: UPath) -> dg.PathMetadataValue:
    return dg.MetadataValue.path(path.relative_to(folder).as_posix())


class ArtifactIOManager(dg.ConfigurableIOManagerFactory):
    """Stores every asset under ``base_dir`` (default: the Dagster instance's storage folder),
    keeping each materialization's own file for the newest ``keep_materializations`` runs."""

    base_dir: str | None = None
    keep_materializations: int = KEEP_MATERIALIZATIONS

    def create_io_manager(self, context: dg.InitResourceContext) -> dg.UPathIOManager:
        if context.instance is None:
            raise ValueError("the artifact store needs a Dagster instance (its storage folder)")
        base = self.base_dir or str(context.instance.storage_directory())
        store = _ArtifactStore(base_path=UPath(base) / ARTIFACTS)
        store.keep_materializations = self.keep_materializations
        store.reads = kept_for(context.instance).reads
        return store


__all__ = [
    "ABSENT_AS_NONE",
    "ARTIFACTS_FOLDER",
    "COLUMNS",
    "FAN_IN",
    "PINNED_BY",
    "ArtifactIOManager",
    "HtmlDocument",
    "PublishSnapshot",
]
