"""The whole graph through a real Dagster instance, as `rag-eval run` drives it (the session's
shared evaluated instance: 40 questions, three offline models), the core of it also on an
instance whose storage is PostgreSQL."""

from pathlib import Path

import dagster as dg
import pytest

from rag_eval_pipeline.answering.registry import AnswerRegistry
from rag_eval_pipeline.defs.partitions import add_models
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline_tests.conftest import Evaluated, fresh_database
from rag_eval_pipeline_tests.support import EVALUATED_MODELS as MODELS
from rag_eval_pipeline_tests.support import EVALUATED_SAMPLE

CHECKS = {
    "candidate_answers": ["complete"],
    "judge_scores": [
        "in_range",
        "complete",
        "judge_error_share",
        "quality_gates",
    ],
    "metric_summary": ["answered"],
}


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def evaluated_on(request, evaluated, shared_hotpotqa, tmp_path_factory, monkeypatch_module):
    """The evaluated instance on SQLite (the session's), or the same evaluation through the CLI
    on an instance whose storage is a fresh PostgreSQL database (DAGSTER_PG_URL set)."""
    if request.param == "sqlite":
        return evaluated
    from rag_eval_pipeline import cli
    from rag_eval_pipeline.definitions import build_definitions
    from rag_eval_pipeline.instance.home import InstanceStorage, open_instance

    monkeypatch_module.setenv("DAGSTER_PG_URL", fresh_database(request.getfixturevalue("postgres_server")))
    home = tmp_path_factory.mktemp("postgres") / "home"
    for _ in range(2):  # as the shared SQLite one: twice, for the history
        arguments = ["--dagster-home", str(home), "run", "--dataset", str(shared_hotpotqa)]
        assert cli.main([*arguments, "--sample", str(EVALUATED_SAMPLE)]) == 0
    assert "postgres_url" in (home / "dagster.yaml").read_text()
    return Evaluated(home, open_instance(str(home), InstanceStorage("DAGSTER_PG_URL")), build_definitions())


def test_calibration_models_bound_the_baseline(evaluated_on):
    evaluated = evaluated_on
    comparison = load_asset(evaluated.instance, "model_comparison")
    comparison = comparison.set_index("answer_model")
    assert len(comparison) == 3
    correctness = comparison["correctness"]
    assert correctness["oracle"] == 1.0
    assert correctness["null"] == 0.0
    # a retrieved sentence is never a short answer: bounded containment gives it no correctness,
    # token F1 gives it partial credit
    assert correctness["extractive-baseline"] == 0.0
    assert 0.0 < comparison.loc["extractive-baseline", "f1"] < 1.0
    assert (comparison["n_cases"] == 40).all() and (comparison["n_failed"] == 0).all()
    assert comparison["case_set"].nunique() == 1
    # retrieval does not depend on the answer model: same context metrics for all three
    assert comparison["context_recall"].nunique() == 1


def test_runs_partitions_and_lineage_are_recorded_in_the_instance(evaluated_on):
    instance = evaluated_on.instance
    assert sorted(instance.get_dynamic_partitions("answer_model")) == sorted(MODELS)
    for model in MODELS:
        for key in ("candidate_answers", "judge_scores", "metric_summary", "metric_history"):
            records = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=dg.AssetKey(key), asset_partitions=[model]), limit=1
            ).records
            assert records, f"{key} of {model} was never materialized"
        record = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("candidate_answers"), asset_partitions=[model]),
            limit=1,
        ).records[0]
        metadata = record.asset_materialization.metadata
        assert metadata["answer_config"].value == f"{model}@bm25-k4"
        assert metadata["cases"].value == 40
        assert metadata["provider"].value == "offline"


def test_every_check_of_every_partition_ran_and_passed(evaluated_on):
    instance = evaluated_on.instance
    for model in MODELS:
        run_id = (
            instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=dg.AssetKey("judge_scores"), asset_partitions=[model]),
                limit=1,
            )
            .records[0]
            .run_id
        )
        evaluations = [
            event.dagster_event.event_specific_data
            for event in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
        ]
        results = {(e.asset_key.to_user_string(), e.check_name): e.passed for e in evaluations}
        expected = [(asset, name) for asset, names in CHECKS.items() for name in names]
        assert results == dict.fromkeys(expected, True), model


def test_stored_artifacts_hold_per_case_detail(evaluated_on):
    instance = evaluated_on.instance
    answers = load_asset(instance, "candidate_answers", partition="extractive-baseline")
    assert len(answers) == 40
    first = answers.iloc[0]
    assert len(first["retrieved_ids"]) == 4
    assert list(first["retrieved_scores"]) == sorted(first["retrieved_scores"], reverse=True)
    assert first["prompt_version"] == "extractive-v1" and first["model_id"] == "extractive-baseline"
    summary = load_asset(instance, "metric_summary", partition="oracle")
    assert {"all", "type=bridge", "type=comparison"} <= set(summary["group"])


def test_candidate_answers_asset_directly(evaluated):
    """The asset body on its own, with a partition key, outside a run."""
    from rag_eval_pipeline.config import Settings
    from rag_eval_pipeline.definitions import build_resources
    from rag_eval_pipeline.defs.assets.evaluation import candidate_answers

    instance = evaluated.instance
    cases = load_asset(instance, "judgement_list").head(5)
    manifest = load_asset(instance, "kb_index")
    passages = load_asset(instance, "kb_passages")
    resources = build_resources(Settings())
    context = dg.build_asset_context(partition_key="oracle", instance=instance)
    answers = candidate_answers(
        context,
        judgement_list=cases,
        kb_index=manifest,
        kb_passages=passages,
        **{name: resources[name] for name in ("knowledge_base", "llm", "settings", "evaluation_lock")},
    )
    assert answers["answer"].tolist() == cases["answer"].tolist()


def test_semantic_partition_on_a_lexical_index_fails_with_the_remedy(evaluated_copy):
    from rag_eval_pipeline.retrieval.modes import ModeUnavailableError

    defs, instance = evaluated_copy.defs, evaluated_copy.instance
    add_models(instance, ["null@semantic-k4"], AnswerRegistry().resolve)
    with pytest.raises(ModeUnavailableError, match="--embedding-model"):
        defs.resolve_job_def("evaluation_job").execute_in_process(
            instance=instance, partition_key="null@semantic-k4"
        )


def test_a_partition_added_around_the_cli_is_refused_at_asset_start(evaluated_copy):
    """A key added straight to the instance (as the UI's 'add partition' can) never resolves:
    the run fails at its first asset with the grammar's message, and nothing lands outside."""
    from rag_eval_pipeline.answering.spec import InvalidNameError

    defs, instance = evaluated_copy.defs, evaluated_copy.instance
    key = "anthropic:../../../../tmp/x/PWNED"
    instance.add_dynamic_partitions("answer_model", [key])
    with pytest.raises(InvalidNameError, match="invalid answer model name"):
        defs.resolve_job_def("evaluation_job").execute_in_process(instance=instance, partition_key=key)
    artifacts = evaluated_copy.home / "storage" / "artifacts"
    assert not list(artifacts.rglob("*PWNED*")) and not list((artifacts.parent.parent.parent).glob("x"))


def test_a_bad_score_is_traced_from_the_asset_page(evaluated):
    """judge_scores carries the partition's worst cases, named by their model, one compact row
    each (rank, case, correctness, diagnosis, gold read, the question cut short), and each case
    in full as its own entry (answer, passages, rationales, run, the explain command); every
    stored asset's path metadata names the file as written."""
    instance = evaluated.instance

    def metadata(key, partition=None):
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(
                asset_key=dg.AssetKey(key), asset_partitions=[partition] if partition else None
            ),
            limit=1,
        ).records
        return records[0].asset_materialization.metadata

    scored = metadata("judge_scores", "extractive-baseline")
    assert scored["answer_model"].value == "extractive-baseline"
    worst = scored["worst cases of extractive-baseline"].value
    rows = [record.data for record in worst.records]
    assert 0 < len(rows) <= 10 and rows[0]["correct"] == 0.0
    assert [c.name for c in worst.schema.columns] == ["case", "correct", "diagnosis", "gold", "question"]
    assert any(row["gold"] in ("1/2", "2/2") for row in rows)
    assert all(len(row["question"]) <= 60 and "passages" not in row for row in rows)
    run_id = scored["path"].value.rsplit("/", 1)[1].removesuffix(".parquet")
    key = next(key for key in scored if key.startswith("extractive-baseline worst case 1: "))
    assert key.rsplit(": ", 1)[1] == rows[0]["case"]  # the row's case names its entry
    full = scored[key].value  # one click: the case in full, its whole id
    qid = full.split("- case: ", 1)[1].split("\n", 1)[0]
    assert qid.startswith(rows[0]["case"].rstrip("…"))
    assert "**Passages the model read**" in full and "\n1. **" in full  # what the model read
    assert run_id[:8] in full
    assert f"rag-eval explain {qid} --model extractive-baseline --run {run_id}" in full
    oracle = metadata("judge_scores", "oracle")
    # this materialization's own file, relative to the folder said once in full
    assert oracle["path"].value.startswith("history/judge_scores/oracle/")
    folder = Path(oracle["artifacts"].value)
    assert folder.is_absolute() and (folder / oracle["path"].value).is_file()
    assert oracle["path"].value.endswith(".parquet")
    assert oracle["latest_path"].value == "judge_scores/oracle.parquet"
    assert metadata("kb_index")["path"].value.endswith("/kb_index.json")
    assert metadata("eval_report")["latest_path"].value == "eval_report.html"


def test_summary_metadata_reads_well(evaluated):
    record = evaluated.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("metric_summary"), asset_partitions=["oracle"]), limit=1
    ).records[0]
    metadata = record.asset_materialization.metadata
    # narrow: each interval one cell, one judge named once, the count once (`cases`)
    assert metadata["summary"].value.splitlines()[0] == "| metric | mean | 95% CI |"
    assert "| correctness | 1.000 | 0.91–1.00 |" in metadata["summary"].value
    assert metadata["judged_by"].value == "reference" and metadata["cases"].value == 40
    # tokens and dollars under short headers, no cache column where nothing was cached
    assert metadata["usage"].value.splitlines()[0] == "| by | input | output | USD |"
    assert "| 0 | 0 | 0.000 |" in metadata["usage"].value
    assert metadata["reference/correctness"].value == 1.0
    comparison = (
        evaluated.instance.fetch_materializations(dg.AssetKey("model_comparison"), limit=1)
        .records[0]
        .asset_materialization.metadata
    )
    header = comparison["comparison"].value.splitlines()[0]
    # what decides first, narrow enough for the side panel (one judge here: no judge column)
    assert header == "| model | verdict | correctness | n |"  # where it stands first, at 1,440 px
    assert "context_precision" in comparison["all_metrics"].value.splitlines()[0]  # nothing lost


def test_every_reading_command_works_on_the_instance(evaluated_on, capsys):
    """gate, explain, worst and models on either storage, through the CLI."""
    from rag_eval_pipeline_tests.support.cli import in_process

    home = ["--dagster-home", str(evaluated_on.home)]
    code, out, err = in_process(capsys, *home, "gate", "--model", "oracle", "--min", "correctness=0.9")
    assert code == 0 and "oracle: all gates passed" in out, err
    qid = load_asset(evaluated_on.instance, "judgement_list")["qid"].iloc[0]
    code, out, err = in_process(capsys, *home, "explain", qid, "--model", "extractive-baseline")
    assert code == 0 and qid in out, err
    code, out, err = in_process(capsys, *home, "worst", "--model", "null", "-n", "3")
    assert code == 0 and out.count("\n| ") >= 3, err
    code, out, err = in_process(capsys, *home, "models", "list")
    assert code == 0 and all(model in out for model in MODELS), err
