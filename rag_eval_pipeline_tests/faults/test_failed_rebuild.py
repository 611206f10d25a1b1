"""A knowledge-base rebuild that fails half-way never becomes live: the previous snapshot stays
readable, and explain, worst and gate keep working on it (not stale: it is still current)."""

import dagster as dg
import pandas as pd
import pytest

from rag_eval_pipeline import cli
from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.data.hotpotqa import EmptyDatasetError
from rag_eval_pipeline.definitions import build_definitions
from rag_eval_pipeline.defs.run_config import knowledge_base_run_config
from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.retrieval.elasticsearch.errors import ElasticsearchUnavailableError

QID = "5a8c7595554299585d9e36b6"  # the first question of the bundled sample


def _cli(capsys, *args):
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_a_failed_rebuild_leaves_the_previous_knowledge_base_live(tmp_path, capsys):
    home = ["--dagster-home", str(tmp_path / "home")]
    assert _cli(capsys, *home, "run", "--sample", "35", "--models", "extractive-baseline")[0] == 0
    defs, instance = build_definitions(), open_instance(str(tmp_path / "home"))
    before = load_asset(instance, "kb_index")

    # Elasticsearch unreachable: the command says so before any work
    code, _, err = _cli(capsys, *home, "run", "--sample", "10", "--elasticsearch", "http://127.0.0.1:9")
    assert code == 2 and err.startswith("error: Elasticsearch at http://127.0.0.1:9 does not answer")
    assert len(err.splitlines()) == 1
    # a rebuild launched around the command (the UI, a schedule) while the cluster is down: the
    # sample, passages and judgement list of 10 questions are built, the index is not; nothing of
    # that run becomes live
    down = Settings.model_validate(
        {"knowledge_base": {"backend": "elasticsearch", "elasticsearch": {"url": "http://127.0.0.1:9"}}}
    )
    rebuild = build_definitions(down).resolve_job_def("knowledge_base_job")
    with pytest.raises(ElasticsearchUnavailableError):
        rebuild.execute_in_process(instance=instance, run_config=knowledge_base_run_config(sample_size=10))
    assert len(load_asset(instance, "judgement_list")) == 35
    assert len(load_asset(instance, "hotpotqa_raw")) == 35
    assert load_asset(instance, "kb_index") == before

    # an empty dataset handed straight to the job (the CLI refuses it before): the first asset fails
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    job = defs.resolve_job_def("knowledge_base_job")
    with pytest.raises(EmptyDatasetError, match=f"no questions in {empty}"):
        job.execute_in_process(instance=instance, run_config=knowledge_base_run_config(str(empty)))
    assert len(load_asset(instance, "judgement_list")) == 35

    code, out, _ = _cli(capsys, *home, "explain", QID, "--model", "extractive-baseline")
    assert code == 0 and "ground truth: Chief of Protocol" in out and "stale" not in out
    code, out, _ = _cli(capsys, *home, "worst", "--model", "extractive-baseline", "-n", "3")
    assert code == 0 and "stale" not in out and out.count("\n| 5") == 3
    code, out, _ = _cli(capsys, *home, "gate", "--model", "extractive-baseline", "--min", "f1=0.05")
    assert code == 0 and "all gates passed" in out

    # the failed run's files stay beside the live ones, for inspection, never read as live
    snapshots = tmp_path / "home" / "storage" / "artifacts" / "knowledge_base"
    staged = [len(pd.read_parquet(f)) for f in snapshots.glob("*/judgement_list.parquet")]
    assert sorted(staged) == [10, 35]
    assert instance.get_runs(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED])) == []
