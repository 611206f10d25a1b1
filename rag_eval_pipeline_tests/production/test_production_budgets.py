"""Latency and cost budgets on production traffic: a day's summary gains the agent's latency
p50 / p95 / max and cost per interaction from the log's own fields (absent where a row says
none, never 0), and `rag-eval production run` and the day's blocking check fail on a budget with
the line `rag-eval gate` prints for the same budget."""

import re

import dagster as dg
import pandas as pd
import pytest
import yaml

from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.metrics.budgets import parse_budget
from rag_eval_pipeline.production.interactions import InteractionError, interaction
from rag_eval_pipeline.production.scoring import day_budgets, summarize_day
from rag_eval_pipeline_tests.support.cli import in_process
from rag_eval_pipeline_tests.support.production import log_row, production_config, shared_questions, write_day

DAY = "2026-11-27"
# seconds each interaction took, as the agent logged them: v2 is the slow build
LATENCIES = [0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 3.5, 2.5]
P95 = re.compile(r"latency p95 (\S+) s is greater than the threshold 2 s \(worst: (.+)\)")


def _sample(latencies, costs, versions) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "interaction_id": [f"i{n}" for n in range(len(latencies))],
            "latency_s": latencies,
            "cost_usd": costs,
            "agent_version": versions,
        }
    )


def test_a_days_summary_has_the_budget_figures_per_version_and_unknown_is_left_out():
    sample = _sample([0.5, 1.0, None, 4.0], [0.01, None, 0.01, 0.03], ["v1", "v1", "v1", "v2"])
    scores = pd.DataFrame(
        {
            "qid": sample["interaction_id"],
            "repeat": 0,
            "judge_id": "reference",
            "status": "ok",
            "error": None,
            "faithfulness_lexical": [1.0, 0.5, 1.0, 0.0],
            "agent_version": sample["agent_version"],
        }
    )
    summary = summarize_day(scores, {"reference": ("faithfulness_lexical",)}, "wilson", 1, sample)
    overall = summary[summary["group"] == "budget"].set_index("metric")
    assert overall.loc["latency_max_s", "mean"] == 4.0 and overall.loc["latency_max_s", "n"] == 3  # None: out
    assert overall.loc["cost_per_case_usd", "mean"] == pytest.approx(0.05 / 3)  # unknown cost: out, not 0
    v1 = summary[summary["group"] == "budget:agent_version=v1"].set_index("metric")
    assert v1.loc["latency_max_s", "mean"] == 1.0
    held = day_budgets(
        summary,
        [
            parse_budget("latency_max_s", 2),
            parse_budget("agent_version:v1/latency_max_s", 2),
            parse_budget("agent_version:v9/latency_max_s", 2),  # not live this day: left out
        ],
    )
    assert [h.passed for h in held] == [False, True]
    assert held[0].line.startswith("latency max 4 s is greater than the threshold 2 s (worst: i3 4 s")
    assert summarize_day(scores, {}, "wilson", 1)["group"].str.startswith("budget").sum() == 0  # no sample


def test_a_logged_latency_or_cost_that_is_not_a_number_is_the_rows_error():
    row = {"source": "logs:x", "location": "x.jsonl, line 1", "question": "q", "answer": "a"}
    row |= {"timestamp": "2026-11-27T09:00:00Z", "zone": __import__("zoneinfo").ZoneInfo("UTC")}
    assert interaction(**row, latency_s="1.5", cost_usd=None)["latency_s"] == 1.5
    with pytest.raises(InteractionError, match="latency_s: 'slow' is not a number"):
        interaction(**row, latency_s="slow")
    with pytest.raises(InteractionError, match="cost_usd: -1 is not a number of 0 or more"):
        interaction(**row, cost_usd=-1)


@pytest.mark.slow  # a production day through the CLI (CI runs it)
def test_production_run_fails_a_day_over_its_latency_budget_with_the_gates_line(tmp_path, capsys):
    questions = shared_questions(len(LATENCIES))
    rows = []
    for n, (question, latency) in enumerate(zip(questions, LATENCIES)):
        row = log_row(question, DAY, n, grounded=True, build="v2" if latency > 2 else "v1")
        rows.append({**row, "latency_s": latency, **({"cost_usd": 0.002} if n % 2 else {})})
    write_day(tmp_path / "logs", DAY, rows)
    budgets = {"latency_p95_s": 2, "agent_version:v1/latency_max_s": 1, "cost_per_case_usd": 0.01}
    settings = {
        "production": production_config(
            tmp_path / "logs", sample_per_day=len(rows), thresholds={}, budgets=budgets
        )
    }
    config = tmp_path / "rag_eval.yaml"
    config.write_text(yaml.safe_dump(settings))
    home = tmp_path / "home"
    args = ["--dagster-home", str(home), "--config", str(config)]
    code, out, err = in_process(capsys, *args, "production", "run", "--day", DAY)
    assert code == 1, out + err
    line = P95.search(out)
    assert line, out
    assert float(line[1]) > 2 and len(line[2].split(", ")) == 3  # the p95 and the three worst named
    assert re.search(r"\| cost_per_case_usd \| all \| 0\.002 \| 0\.010 \| pass \|", out), out  # known costs
    assert re.search(r"\| latency_max_s \| agent_version=v1 \| 0\.900 \| 1\.000 \| pass \|", out), out
    assert f"{DAY} FAILED: latency p95 {line[1]} s is greater than the threshold 2 s" in out
    assert f"error: {DAY} failed a production threshold" in err

    # the day's blocking check failed with the same line, and the verdict was not materialized
    instance = open_instance(str(home))
    check = instance.event_log_storage.get_latest_asset_check_execution_by_key(
        [dg.AssetCheckKey(dg.AssetKey("production_summary"), "quality_gates")]
    )
    evaluation = next(iter(check.values())).event.dagster_event.event_specific_data
    assert evaluation.passed is False and line[0] in evaluation.description
    verdicts = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("production_verdict"), asset_partitions=[DAY]), limit=1
    ).records
    assert verdicts == []
