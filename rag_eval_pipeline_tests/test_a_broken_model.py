"""One broken model among good ones, as a new user would meet it: a Python agent whose module
raises at import. No case is tried against an agent that cannot start: its answers, scores and
summary are stored with the reason (so the cross-model assets can follow, as in a backfill) and
its run fails on the summary's `answered` check in those words; the good models are evaluated
and compared without it, and the comparison, the report and the command line name it."""

import dagster as dg
import pandas as pd
import pytest

from rag_eval_pipeline.config import load_settings
from rag_eval_pipeline.definitions import build_definitions
from rag_eval_pipeline.defs.partitions import failed_checks
from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import NotMaterializedError, load_asset
from rag_eval_pipeline_tests.support.cli import in_process
from rag_eval_pipeline_tests.support.processes import free_port

BROKEN_AGENT = """
import pathlib
pathlib.Path(__file__).with_name("imports.log").open("a").write("imported\\n")
raise RuntimeError("the vector store is not configured")


def answer(question):
    return {"answer": "never"}
"""


@pytest.fixture(scope="module")
def broken(tmp_path_factory, shared_hotpotqa):
    folder = tmp_path_factory.mktemp("broken")
    nobody = free_port()  # an agent's address where nothing listens
    (folder / "broken_agent.py").write_text(BROKEN_AGENT)
    (folder / "rag_eval.yaml").write_text(
        f"dataset: {{source: '{shared_hotpotqa}', sample_size: 12}}\n"
        "answer_models:\n"
        "  - {name: oracle, provider: offline, model: oracle}\n"
        '  - {name: "null", provider: offline, model: "null"}\n'
        "  - {name: extractive-baseline, provider: offline, model: extractive-baseline}\n"
        "  - {name: broken, provider: python, target: 'broken_agent:answer'}\n"
        f"  - {{name: down, provider: http, url: 'http://127.0.0.1:{nobody}/chat', max_retries: 0,\n"
        "     response: {answer: $.answer}}\n"
    )
    return folder


def _evaluate_as_the_daemon_would(folder) -> dg.DagsterInstance:
    """What a backfill of every model runs, in this process: the knowledge base, one evaluation
    run per partition (the broken one fails), then the cross-model run."""
    settings = load_settings(folder / "rag_eval.yaml")
    defs = build_definitions(settings)
    instance = open_instance(str(folder / "home"))
    instance.add_dynamic_partitions("answer_model", settings.configured_models())
    assert defs.resolve_job_def("knowledge_base_job").execute_in_process(instance=instance).success
    evaluation = defs.resolve_job_def("evaluation_job")
    for model in settings.configured_models():
        result = evaluation.execute_in_process(instance=instance, partition_key=model, raise_on_error=False)
        assert result.success == (model not in ("broken", "down")), model
    assert defs.resolve_job_def("comparison_job").execute_in_process(instance=instance).success
    return instance


REASON = (  # the words `rag-eval agents check` and the pre-flight say, with the remedy
    "target broken_agent:answer: cannot import broken_agent (RuntimeError: the vector store is not "
    "configured); it must be importable from the current folder or the environment"
)
GOOD = ["extractive-baseline", "null", "oracle"]


def test_a_broken_agent_fails_at_once_with_its_reason_and_sinks_no_other_model(broken, monkeypatch):
    monkeypatch.chdir(broken)
    instance = _evaluate_as_the_daemon_would(broken)
    comparison = load_asset(instance, "model_comparison").set_index("answer_model")
    assert set(comparison.index) == {*GOOD, "broken", "down"}
    assert not comparison.loc[GOOD, "missing"].any() and comparison.loc["broken", "missing"]
    assert REASON in comparison.loc["broken", "note"]
    for model in GOOD:
        assert len(load_asset(instance, "metric_summary", model))
    # its chain is stored with the reason and its run fails on the summary's `answered` check,
    # which says the reason in its own words; no case was tried: the agent never started
    run_id = _run_of(instance, "broken")
    assert instance.get_run_by_id(run_id).status == dg.DagsterRunStatus.FAILURE
    assert failed_checks(instance, run_id) == [("metric_summary answered", REASON)]
    for asset in ("candidate_answers", "judge_scores", "metric_summary"):
        record = instance.fetch_materializations(
            dg.AssetRecordsFilter(dg.AssetKey(asset), asset_partitions=["broken"]), limit=1
        ).records[0]
        assert (
            record.run_id == run_id
            and record.asset_materialization.metadata["evaluation_failed"].value == REASON
        )
    # ... as that run's own file, never as the latest value a reader or a command sees
    with pytest.raises(NotMaterializedError, match="no metric_summary of broken stored yet"):
        load_asset(instance, "metric_summary", "broken")
    kept = next((broken / "home" / "storage").rglob(f"history/candidate_answers/broken/{run_id}.*"))
    answers = pd.read_parquet(kept)
    assert len(answers) == 12 and set(answers["status"]) == {"failed"} and set(answers["error"]) == {REASON}
    assert (broken / "imports.log").read_text().count("imported") == 1  # one worker, no case
    report = next((broken / "home" / "storage").rglob("eval_report.html")).read_text()
    assert 'id="missing"' in report and "the vector store is not configured" in report
    record = instance.fetch_materializations(dg.AssetKey("model_comparison"), limit=1).records[0]
    said = record.asset_materialization.metadata["missing_models"].value
    assert said.startswith("broken: missing: evaluation run") and REASON in said
    # an agent that cannot be reached at all stops at its first calls, said in one line too
    [(_, down)] = failed_checks(instance, _run_of(instance, "down"))
    assert down.startswith("agent down cannot be reached at http://127.0.0.1:")
    assert "cannot be reached" in comparison.loc["down", "note"]


def test_the_command_line_refuses_a_model_that_cannot_start_before_any_work(broken, monkeypatch, capsys):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    monkeypatch.chdir(broken)
    home = broken / "cli-home"
    code, _, err = in_process(capsys, "--config", "rag_eval.yaml", "--dagster-home", str(home), "run")
    assert code == 2 and err.splitlines() == [f"error: agent broken: {REASON}"]


def _run_of(instance, partition: str) -> str:
    runs = instance.get_runs(dg.RunsFilter(tags={"dagster/partition": partition}), limit=1)
    return runs[0].run_id


WOBBLY_AGENT = """
import pathlib
if pathlib.Path(__file__).with_name("broken.flag").exists():
    raise RuntimeError("the vector store is not configured")


def answer(question):
    return {"answer": "unknown"}
"""


@pytest.mark.slow  # three evaluations and two comparisons
def test_a_model_that_breaks_after_a_good_evaluation_keeps_its_last_values_marked_stale(
    tmp_path, shared_hotpotqa, monkeypatch
):
    """Its failed run records the failure but never replaces its last good summary: the
    comparison keeps those values, marked stale with the failed run named, and every reader of
    the stored summary still sees the good one."""
    (tmp_path / "wobbly_agent.py").write_text(WOBBLY_AGENT)
    (tmp_path / "rag_eval.yaml").write_text(
        f"dataset: {{source: '{shared_hotpotqa}', sample_size: 12}}\n"
        "answer_models:\n"
        "  - {name: oracle, provider: offline, model: oracle}\n"
        "  - {name: wobbly, provider: python, target: 'wobbly_agent:answer'}\n"
        # a gate every evaluated model passes; a model that answered nothing is not gated (the
        # summary's `answered` check says why, once) and its chain still reaches the summary
        "thresholds: {correctness: 0.0}\n"
    )
    monkeypatch.chdir(tmp_path)
    settings = load_settings(tmp_path / "rag_eval.yaml")
    defs = build_definitions(settings)
    instance = open_instance(str(tmp_path / "home"))
    instance.add_dynamic_partitions("answer_model", settings.configured_models())
    assert defs.resolve_job_def("knowledge_base_job").execute_in_process(instance=instance).success
    evaluation, comparison_job = (
        defs.resolve_job_def("evaluation_job"),
        defs.resolve_job_def("comparison_job"),
    )
    for model in ("oracle", "wobbly"):
        assert evaluation.execute_in_process(instance=instance, partition_key=model).success
    assert comparison_job.execute_in_process(instance=instance).success
    good = load_asset(instance, "metric_summary", "wobbly")
    before = load_asset(instance, "model_comparison").set_index("answer_model").loc["wobbly"]

    (tmp_path / "broken.flag").write_text("")
    failed = evaluation.execute_in_process(instance=instance, partition_key="wobbly", raise_on_error=False)
    assert not failed.success
    assert failed_checks(instance, failed.run_id) == [
        ("metric_summary answered", REASON.replace("broken", "wobbly"))
    ]
    assert comparison_job.execute_in_process(instance=instance).success
    row = load_asset(instance, "model_comparison").set_index("answer_model").loc["wobbly"]
    assert not row.get("missing", False) and row["stale"]
    assert (
        f"evaluation run {failed.run_id[:8]}" in row["note"] and row["correctness"] == before["correctness"]
    )
    pd.testing.assert_frame_equal(load_asset(instance, "metric_summary", "wobbly"), good)
