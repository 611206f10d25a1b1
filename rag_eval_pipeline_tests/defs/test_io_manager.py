import dagster as dg
import pandas as pd
from upath import UPath

from rag_eval_pipeline.defs.io_manager import FAN_IN, ArtifactIOManager


def test_frames_and_dicts_round_trip_with_dotted_partition_keys(tmp_path):
    partitions = dg.DynamicPartitionsDefinition(name="m")

    @dg.asset(partitions_def=partitions)
    def table(context: dg.AssetExecutionContext) -> pd.DataFrame:
        return pd.DataFrame({"model": [context.partition_key], "values": [[1.0, 0.5]]})

    @dg.asset
    def manifest() -> dict:
        return {"version": "abc", "documents": 3}

    @dg.asset(ins={"table": dg.AssetIn(metadata={"allow_missing_partitions": True, FAN_IN: True})})
    def fan_in(table: dict[str, pd.DataFrame], manifest: dict) -> pd.DataFrame:
        assert manifest == {"version": "abc", "documents": 3}
        return pd.concat(table.values(), ignore_index=True)

    resources = {"io_manager": ArtifactIOManager(base_dir=str(tmp_path))}
    with dg.instance_for_test() as instance:
        key = "anthropic:claude-x-1.5@bm25-k4"
        instance.add_dynamic_partitions("m", [key, "other"])
        dg.materialize([manifest], instance=instance, resources=resources)
        dg.materialize([table], instance=instance, resources=resources, partition_key=key)
        # one partition of two materialized: the fan-in still gets a {partition: frame} dict
        result = dg.materialize(
            [table, manifest, fan_in],
            selection=[fan_in],
            instance=instance,
            resources=resources,
        )
        combined = result.output_for_node("fan_in")
    assert combined["model"].tolist() == [key]
    assert list(combined["values"].iloc[0]) == [1.0, 0.5]
    assert (tmp_path / "artifacts" / "table" / f"{key}.parquet").is_file()
    assert (tmp_path / "artifacts" / "manifest.json").is_file()


def test_no_partition_key_can_store_outside_the_storage_folder(tmp_path):
    """Even a key that slipped past the name grammar (added straight to the instance, as the
    UI's 'add partition' can) never reads or writes outside the storage folder."""
    import pytest

    from rag_eval_pipeline.storage.paths import PathOutsideStorageError, contained

    base = tmp_path / "artifacts"
    base.mkdir()
    assert (
        contained(UPath(base), UPath(base) / "judge_scores" / "oracle")
        == UPath(base) / "judge_scores" / "oracle"
    )
    for escape in ["../../x/PWNED", "a/../../../y", "/etc/passwd"]:
        with pytest.raises(PathOutsideStorageError, match="refusing to store outside"):
            contained(UPath(base), UPath(base) / "judge_scores" / escape)


def test_each_materialization_keeps_its_own_file_and_says_where(tmp_path):
    """A re-run replaces the latest file (what downstream reads) but not the earlier run's own
    file, whose path its materialization recorded; only the newest few are kept."""
    from rag_eval_pipeline.storage.materializations import kept_runs, materialization_file

    partitions = dg.DynamicPartitionsDefinition(name="m")

    @dg.asset(partitions_def=partitions)
    def judge_scores(context: dg.AssetExecutionContext) -> pd.DataFrame:
        return pd.DataFrame({"run": [context.run_id]})

    resources = {"io_manager": ArtifactIOManager(base_dir=str(tmp_path), keep_materializations=2)}
    base = UPath(tmp_path) / "artifacts"
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("m", ["oracle"])
        runs = [
            dg.materialize(
                [judge_scores], instance=instance, resources=resources, partition_key="oracle"
            ).run_id
            for _ in range(3)
        ]
        records = instance.fetch_materializations(dg.AssetKey("judge_scores"), limit=3).records
        metadata = [r.asset_materialization.metadata for r in records]
    # each path relative to the folder said once in full (an absolute one does not fit the UI)
    assert {m["artifacts"].value for m in metadata} == {str(base)}
    paths = [m["path"].value for m in metadata]
    latest = metadata[0]["latest_path"].value
    assert latest == "judge_scores/oracle.parquet"
    assert paths[0] == f"history/judge_scores/oracle/{runs[2]}.parquet"
    assert pd.read_parquet(base / latest)["run"].item() == runs[2]
    assert pd.read_parquet(base / paths[1])["run"].item() == runs[1]  # the earlier result, as it was
    assert kept_runs(base, "judge_scores", "oracle") == [runs[2], runs[1]]  # the oldest pruned
    assert materialization_file(base, "judge_scores", "oracle", runs[0]) is None


def test_a_commands_run_keeps_no_second_copy_of_what_it_stored(tmp_path):
    """`execute_in_process` keeps every returned value for `output_for_node`; in a run of a
    `rag-eval` command (tagged with its pid) the store drops that copy once the file is written,
    since the command reads every value back from its file. A notebook's run keeps it."""
    import pytest

    from rag_eval_pipeline.defs.names import CLI_PID_TAG

    @dg.asset
    def table() -> pd.DataFrame:
        return pd.DataFrame({"case": range(3)})

    resources = {"io_manager": ArtifactIOManager(base_dir=str(tmp_path))}
    with dg.instance_for_test() as instance:
        notebook = dg.materialize([table], instance=instance, resources=resources)
        assert notebook.output_for_node("table")["case"].tolist() == [0, 1, 2]
        command = dg.materialize([table], instance=instance, resources=resources, tags={CLI_PID_TAG: "1"})
        assert command.success
        with pytest.raises(dg.DagsterInvariantViolationError, match="No outputs found"):
            command.output_for_node("table")
        assert dg.Definitions(assets=[table], resources=resources).load_asset_value(
            "table", instance=instance
        )["case"].tolist() == [0, 1, 2]
