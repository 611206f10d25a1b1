"""The whole graph through a real, temporary Dagster instance, as `rag-eval run` drives it."""

import dagster as dg
import pytest

from rag_eval_pipeline import cli, runner
from rag_eval_pipeline.definitions import defs

MODELS = ["extractive-baseline", "oracle", "null"]


@pytest.fixture(scope="module")
def evaluated(shared_hotpotqa, tmp_path_factory):
    """40 questions of the shared file, three offline answer models, one persistent instance."""
    home = tmp_path_factory.mktemp("dagster_home")
    with dg.instance_for_test(temp_dir=str(home)) as instance:
        report = runner.run_evaluation(
            defs, instance, MODELS, dataset=str(shared_hotpotqa), sample=40, echo=lambda _: None
        )
        yield instance, report


def test_calibration_models_bound_the_baseline(evaluated):
    _, report = evaluated
    comparison = report.comparison.set_index("answer_model")
    assert len(comparison) == 3
    correctness = comparison["correctness"]
    assert correctness["oracle"] == 1.0
    assert correctness["null"] == 0.0
    assert 0.0 < correctness["extractive-baseline"] < 1.0
    assert (comparison["n_cases"] == 40).all() and (comparison["n_failed"] == 0).all()
    assert comparison["case_set"].nunique() == 1
    # retrieval does not depend on the answer model: same context metrics for all three
    assert comparison["context_recall"].nunique() == 1


def test_runs_partitions_and_lineage_are_recorded_in_the_instance(evaluated):
    instance, _ = evaluated
    assert sorted(instance.get_dynamic_partitions("answer_model")) == sorted(MODELS)
    for model in MODELS:
        event = instance.get_latest_materialization_event(dg.AssetKey("judge_scores"))
        assert event is not None
        record = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("candidate_answers"), asset_partitions=[model]),
            limit=1,
        ).records[0]
        metadata = record.asset_materialization.metadata
        assert metadata["answer_config"].value == f"{model}@bm25-k4"
        assert metadata["cases"].value == 40
    checks = instance.event_log_storage.get_latest_asset_check_execution_by_key(
        [dg.AssetCheckKey(dg.AssetKey("judge_scores"), "judge_scores_in_range")]
    )
    assert checks


def test_stored_artifacts_hold_per_case_detail(evaluated):
    instance, _ = evaluated
    answers = runner.load_asset(defs, instance, "candidate_answers", partition="extractive-baseline")
    assert len(answers) == 40
    first = answers.iloc[0]
    assert len(first["retrieved_ids"]) == 4
    assert list(first["retrieved_scores"]) == sorted(first["retrieved_scores"], reverse=True)
    assert first["prompt_version"] == "extractive-v1" and first["model_id"] == "extractive-baseline"
    assert first["latency_s"] >= 0
    summary = runner.load_asset(defs, instance, "metric_summary", partition="oracle")
    assert {"all", "type=bridge", "type=comparison"} <= set(summary["group"])


def test_candidate_answers_asset_directly(evaluated):
    """The asset body on its own, with a partition key, outside a run."""
    from rag_eval_pipeline.defs.assets import candidate_answers
    from rag_eval_pipeline.defs.resources import AnthropicResource, EvaluationResource, KnowledgeBaseResource

    instance, _ = evaluated
    cases = runner.load_asset(defs, instance, "judgement_list").head(5)
    manifest = runner.load_asset(defs, instance, "kb_index")
    context = dg.build_asset_context(partition_key="oracle", instance=instance)
    answers = candidate_answers(
        context,
        judgement_list=cases,
        kb_index=manifest,
        knowledge_base=KnowledgeBaseResource(),
        anthropic=AnthropicResource(),
        evaluation=EvaluationResource(),
    )
    assert answers["answer"].tolist() == cases["answer"].tolist()


def test_cli_run_prints_the_comparison_and_models_list(shared_hotpotqa, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    home = tmp_path / "home"
    args = ["--dagster-home", str(home)]
    code = cli.main(
        args + ["run", "--dataset", str(shared_hotpotqa), "--sample", "6", "--models", "oracle,null"]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "| oracle | reference | 6 | 0 |" in out and "| null | reference | 6 | 0 |" in out
    assert "[model 2/2] null" in out
    assert cli.main(args + ["models", "list"]) == 0
    assert capsys.readouterr().out.split() == ["oracle", "null"]
    assert cli.main(args + ["models", "remove", "null"]) == 0
    assert cli.main(args + ["models", "add", "baseline@bm25-k2"]) == 0
    assert cli.main(args + ["models", "add", "baseline@nope"]) == 2
    capsys.readouterr()
    assert cli.main(args + ["models", "list"]) == 0
    assert capsys.readouterr().out.split() == ["oracle", "baseline@bm25-k2"]
    assert (home / "storage" / "artifacts" / "model_comparison.parquet").is_file()


def test_cli_reports_a_malformed_dataset_by_file_and_line(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    code = cli.main(["--dagster-home", str(tmp_path / "h"), "run", "--dataset", str(bad), "--models", "null"])
    err = capsys.readouterr().err
    assert code != 0
    assert f"{bad}, line 1" in err


def test_semantic_partition_on_a_lexical_index_fails_with_the_remedy(evaluated):
    from rag_eval_pipeline.retrieval.modes import ModeUnavailableError

    instance, _ = evaluated
    runner.add_models(instance, ["null@semantic-k4"])
    with pytest.raises(ModeUnavailableError, match="--embedding-model"):
        defs.resolve_job_def("evaluation_job").execute_in_process(
            instance=instance, partition_key="null@semantic-k4"
        )
    runner.remove_models(instance, ["null@semantic-k4"])
