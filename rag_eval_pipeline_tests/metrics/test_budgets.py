"""Latency and cost budgets per case: the summary's figures, `rag-eval gate --max` on a real HTTP
agent of the tests' own that takes 0.5 s per answer, and a re-run from the cache that counts each
case at its first latency (never 0 s) and at its first cost. No elapsed time is asserted: the
thresholds lie far below what the agent takes, and the re-run must give the very same figures."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.metrics.budgets import budget_rows, check_budgets, parse_budget
from rag_eval_pipeline.metrics.summary import summarize
from rag_eval_pipeline_tests.support.cli import in_process

P95_LINE = re.compile(r"latency p95 (\S+) s is greater than the threshold 0\.2 s \(worst: (.+)\)")
COST_LINE = re.compile(r"cost per case \$(\S+) is greater than the threshold \$1e-07 \(worst: ")


def _answers(latencies, costs, cached=None) -> pd.DataFrame:
    n = len(latencies)
    return pd.DataFrame(
        {
            "qid": [f"q{i}" for i in range(n)],
            "latency_s": latencies,
            "cost_usd": costs,
            "status": ["ok"] * n,
            "from_cache": cached or [False] * n,
        }
    )


def test_the_figures_their_worst_cases_and_what_is_absent_rather_than_zero():
    answers = _answers([0.1, 0.2, 0.3, 0.4, 2.0, float("nan")], [0.01, 0.02, None, 0.01, 0.03, 0.0])
    scores = pd.DataFrame(
        {"qid": answers["qid"], "judge_id": "reference", "type": ["a", "a", "b", "b", "b", "b"]}
    )
    rows = pd.DataFrame(budget_rows(answers, scores, ("type",)))
    overall = rows[rows["group"] == "budget"].set_index("metric")
    known = [0.1, 0.2, 0.3, 0.4, 2.0]  # the case without a recorded latency is left out, not 0
    assert overall.loc["latency_p95_s", "mean"] == pytest.approx(np.quantile(known, 0.95))
    assert overall.loc["latency_max_s", "mean"] == 2.0 and overall.loc["latency_p95_s", "n"] == 5
    assert overall.loc["cost_per_case_usd", "mean"] == pytest.approx(0.07 / 5)  # unknown cost: out
    assert overall.loc["latency_p95_s", "note"].startswith("worst: q4 2 s, q3 0.4 s, q2 0.3 s")
    by_type = rows[rows["group"] == "budget:type=a"].set_index("metric")
    assert by_type.loc["latency_max_s", "mean"] == 0.2

    summary = pd.DataFrame(rows)
    held = check_budgets(
        summary,
        [
            parse_budget("latency_p95_s", 1),
            parse_budget("type:a/cost_max_usd", 0.05),
            parse_budget("cost_max_usd", 0.01),
        ],
    )
    assert [r.passed for r in held] == [False, True, False]
    assert held[0].line.startswith("latency p95 1.68 s is greater than the threshold 1 s (worst: q4 2 s")
    assert held[2].line.startswith("cost max $0.03 is greater than the threshold $0.01")
    agent = _answers([0.5, 0.6], [None, None])  # an agent that does not report its spending
    unknown = check_budgets(
        pd.DataFrame(budget_rows(agent, None, ())), [parse_budget("cost_per_case_usd", 1)]
    )
    assert not unknown[0].passed and "not measured" in unknown[0].line
    older = summary[~summary["group"].str.startswith("budget")]  # a summary from before budgets
    assert "made before budgets were kept" in check_budgets(older, [parse_budget("latency_p95_s", 1)])[0].line
    with pytest.raises(ValueError, match="a figure among latency_p50_s"):
        parse_budget("claude/latency_p95_s", 1)


def test_the_summary_carries_the_budget_rows_beside_the_means():
    answers = _answers([0.5, 0.7], [0.001, 0.002])
    scores = pd.DataFrame(
        {
            "qid": ["q0", "q1"],
            "repeat": 0,
            "judge_id": "reference",
            "status": "ok",
            "error": None,
            "f1": [1.0, 0.5],
        }
    )
    summary = summarize(scores, answers.assign(input_tokens=1, output_tokens=1))
    figures = summary[summary["group"] == "budget"].set_index("metric")["mean"]
    assert figures["latency_max_s"] == 0.7 and figures["cost_max_usd"] == 0.002
    assert set(summary[summary["group"] == "all"]["judge_id"]) == {"reference"}  # no judge of its own


@pytest.mark.slow  # two runs against a real agent that sleeps 0.5 s per answer (CI runs it)
def test_a_budget_gate_on_a_slow_agent_fails_naming_its_worst_cases_and_a_cached_rerun_agrees(
    shared_hotpotqa, tmp_path, capsys, monkeypatch
):
    from rag_eval_pipeline_tests.support.agent import HTTP_BODY, HTTP_RESPONSE, agent_service
    from stand_ins.anthropic_api import FakeAnthropic

    config = tmp_path / "rag_eval.yaml"
    home = ["--config", str(config), "--dagster-home", str(tmp_path / "home")]
    run = ["run", "--dataset", str(shared_hotpotqa), "--sample", "10", "--models", "bot,haiku"]
    gate = ["gate", "--model", "bot", "--max", "latency_p95_s=0.2", "--max", "latency_p50_s=60"]
    priced = ["gate", "--model", "haiku", "--max", "cost_per_case_usd=0.0000001"]
    with agent_service(latency_s=0.5) as agent, FakeAnthropic() as claude:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        bot = {
            "name": "bot",
            "provider": "http",
            "url": agent.url,
            "body": HTTP_BODY,
            "response": HTTP_RESPONSE,
        }
        config.write_text(json.dumps({"answer_models": [{**bot, "version": "b1"}]}))
        code, out, err = in_process(capsys, *home, *run)
        assert code == 0, out + err
        code, first, err = in_process(capsys, *home, *gate)
        assert code == 1, first + err
        code, first_cost, _ = in_process(capsys, *home, *priced)
        assert code == 1
        calls = len(claude.requests)
    line = P95_LINE.search(first)
    assert line, first
    assert float(line[1]) > 0.2 and len(line[2].split(", ")) == 3  # the p95, and the three worst named
    assert "latency_p50_s | all" in first and "| pass |" in first  # a generous budget passes beside it
    cost = COST_LINE.search(first_cost)
    assert cost and float(cost[1]) > 0, first_cost

    # the agent is gone: the re-run answers every case from the cache, at its first latency
    with FakeAnthropic() as claude:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        code, out, err = in_process(capsys, *home, *run)
        assert code == 0, out + err
        assert not claude.requests and calls  # no answer asked again
    answers = load_asset(open_instance(str(tmp_path / "home")), "candidate_answers", "bot")
    assert answers["from_cache"].all() and (answers["latency_s"] > 0.2).all()  # never 0 s
    code, again, err = in_process(capsys, *home, *gate)
    assert code == 1
    rerun = P95_LINE.search(again)
    assert rerun and rerun[1] == line[1]  # the same figure
    assert "(cached: first latency)" in rerun[2]
    code, again_cost, _ = in_process(capsys, *home, *priced)
    assert code == 1 and COST_LINE.search(again_cost)[1] == cost[1]  # the first run's cost


@pytest.mark.slow  # a partition re-materialized on the evaluated instance (CI runs it)
def test_the_blocking_quality_gates_check_fails_on_a_budget_with_the_gates_line(evaluated_copy):
    """A configuration with budgets and no thresholds: the evaluation's blocking check holds the
    budget (here no answer can take 0 s) and blocks the summary, its description the line
    `rag-eval gate` prints."""
    import dagster as dg

    from rag_eval_pipeline.config import Settings
    from rag_eval_pipeline.definitions import build_definitions

    defs = build_definitions(settings=Settings(budgets={"latency_max_s": 0.0, "latency_p50_s": 60}))
    instance = evaluated_copy.instance
    before = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("metric_summary"), asset_partitions=["oracle"]), limit=10
    ).records
    result = defs.resolve_job_def("evaluation_job").execute_in_process(
        instance=instance, partition_key="oracle", raise_on_error=False
    )
    assert not result.success
    check = instance.event_log_storage.get_latest_asset_check_execution_by_key(
        [dg.AssetCheckKey(dg.AssetKey("judge_scores"), "quality_gates")]
    )
    evaluation = next(iter(check.values())).event.dagster_event.event_specific_data
    assert evaluation.passed is False
    assert re.fullmatch(
        r"latency max \S+ s is greater than the threshold 0 s \(worst: .+\)", evaluation.description
    )
    assert "latency_p50_s" in evaluation.metadata["budgets"].value  # the generous one, passed, listed
    after = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("metric_summary"), asset_partitions=["oracle"]), limit=10
    ).records
    assert len(after) == len(before)  # blocked: no new summary
