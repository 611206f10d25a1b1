"""The whole graph with claude-haiku-4-5 answering and claude-sonnet-4-6 judging, against the
tests' Messages-API server, through a real Dagster instance."""

import dagster as dg
import pytest

from rag_eval_pipeline import cli
from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.definitions import build_definitions
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.instance.runs import run_evaluation
from stand_ins.anthropic_api import FakeAnthropic

MODELS = ["claude-haiku-4-5", "oracle"]
JUDGES = ["reference", "claude-sonnet-4-6", "ragas:claude-sonnet-4-6"]


@pytest.fixture(scope="module")
def claude_run(shared_hotpotqa, tmp_path_factory, monkeypatch_module):
    with FakeAnthropic() as server:
        monkeypatch_module.setenv("ANTHROPIC_API_KEY", "test-key")
        settings = Settings.model_validate({"anthropic": {"base_url": server.url}, "concurrency": 8})
        defs = build_definitions(settings)
        with dg.instance_for_test(temp_dir=str(tmp_path_factory.mktemp("home"))) as instance:

            def evaluate():
                return run_evaluation(
                    defs,
                    instance,
                    MODELS,
                    dataset=str(shared_hotpotqa),
                    sample=12,
                    judges=JUDGES,
                    echo=lambda _: None,
                )

            report = evaluate()
            first_requests = len(server.requests)
            server.reset_counts()
            rerun = evaluate()
            yield defs, instance, report, rerun, first_requests, list(server.requests)


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_claude_answers_and_judges_every_case(claude_run):
    defs, instance, report, _, first_requests, _ = claude_run
    answers = load_asset(instance, "candidate_answers", "claude-haiku-4-5")
    assert (answers["status"] == "ok").all() and (answers["prompt_version"] == "answer-v1").all()
    scores = load_asset(instance, "judge_scores", "claude-haiku-4-5")
    assert sorted(scores["judge_id"].unique()) == sorted(JUDGES)
    assert len(scores) == 12 * 3
    strict = scores[scores["judge_id"] == "claude-sonnet-4-6"]
    assert strict["correctness"].isin([0.0, 0.5, 1.0]).all()
    # 12 answers; strict: one call per case per model; ragas: precision and recall calls per
    # case, plus statement extraction and verdicts when the answer makes a claim (no embedder)
    assert 12 + 24 + 2 * 24 <= first_requests <= 12 + 24 + 4 * 24


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_calibration_holds_for_the_llm_judge(claude_run):
    _, _, report, _, _, _ = claude_run
    comparison = report.comparison.set_index(["answer_model", "judge_id"])
    assert comparison.loc[("oracle", "claude-sonnet-4-6"), "correctness"] == 1.0
    assert comparison.loc[("oracle", "reference"), "correctness"] == 1.0


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_second_materialization_sends_zero_requests(claude_run):
    _, _, report, rerun, _, requests_on_rerun = claude_run
    assert requests_on_rerun == []
    assert rerun.comparison.equals(report.comparison)


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_tokens_and_cost_reach_the_summary_and_its_metadata(claude_run):
    defs, instance, _, _, _, _ = claude_run
    answers = load_asset(instance, "candidate_answers", "claude-haiku-4-5")
    summary = load_asset(instance, "metric_summary", "claude-haiku-4-5")
    usage = summary[summary["group"] == "usage"].set_index(["judge_id", "metric"])["total"]
    assert usage[("answer_model", "cost_usd")] == pytest.approx(answers["cost_usd"].sum())
    assert usage[("answer_model", "input_tokens")] == answers["input_tokens"].sum() > 0
    assert usage[("claude-sonnet-4-6", "cost_usd")] > 0
    assert usage[("claude-sonnet-4-6", "cache_read_tokens")] > 0  # the rubric was cached
    record = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("metric_summary"), asset_partitions=["claude-haiku-4-5"]),
        limit=1,
    ).records[0]
    assert record.asset_materialization.metadata["cost_usd"].value > 0


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_ragas_judge_notes_answer_relevancy_absent_without_embedder(claude_run):
    defs, instance, _, _, _, _ = claude_run
    scores = load_asset(instance, "judge_scores", "claude-haiku-4-5")
    ragas = scores[scores["judge_id"] == "ragas:claude-sonnet-4-6"]
    assert ragas["answer_relevancy"].isna().all()
    assert ragas["notes"].str.contains("no embedder configured").all()
    assert ragas["context_precision"].notna().any() and ragas["faithfulness"].between(0, 1).any()


def test_missing_api_key_is_a_clear_error(shared_hotpotqa, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    code = cli.main(
        [
            "--dagster-home",
            str(tmp_path),
            "run",
            "--dataset",
            str(shared_hotpotqa),
            "--sample",
            "2",
            "--models",
            "claude-haiku-4-5",
        ]
    )
    assert code == 2  # bad configuration, found before any work
    assert capsys.readouterr().err.splitlines() == [
        "error: claude-haiku-4-5 needs ANTHROPIC_API_KEY: export it, or evaluate offline models only"
    ]


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_batch_mode_through_the_graph(shared_hotpotqa, tmp_path, monkeypatch):
    """use_batches: answers and STRICT judgements each go out as one Message Batch."""
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        anthropic = {"base_url": server.url, "use_batches": True, "batch_poll_interval_s": 0.01}
        defs = build_definitions(Settings.model_validate({"anthropic": anthropic}))
        with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
            report = run_evaluation(
                defs,
                instance,
                ["claude-haiku-4-5"],
                dataset=str(shared_hotpotqa),
                sample=6,
                judges=["reference", "claude-sonnet-4-6"],
                echo=lambda _: None,
            )
            answers = load_asset(instance, "candidate_answers", "claude-haiku-4-5")
    assert len(server.batches) == 2 and server.requests == []  # no single call at all
    assert answers["from_cache"].all() and (answers["status"] == "ok").all()
    comparison = report.comparison.set_index("judge_id")
    assert comparison.loc["claude-sonnet-4-6", "n_cases"] == 6
