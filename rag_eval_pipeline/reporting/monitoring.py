"""Prometheus exposition of the latest scores, and the history of every summary."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest

from rag_eval_pipeline.metrics.schema import ANSWER_MODEL_ROW, USAGE
from rag_eval_pipeline.metrics.settings import OVERALL

# a model's mean of one metric by one judge, with its interval: what the history keeps of each
# summary and the report's full table shows
MEAN_COLUMNS = ["answer_model", "judge_id", "metric", "mean", "ci_low", "ci_high", "n"]
HISTORY_COLUMNS = [
    "materialized_at",
    *MEAN_COLUMNS,
    "kb_version",
    "cost_usd",
    "summary_run_id",
]
HISTORY_KEY = ["answer_model", "summary_run_id"]  # one summary materialization


def history_rows(
    answer_model: str, summary: pd.DataFrame, kb_version: str, at: pd.Timestamp, summary_run_id: str
) -> pd.DataFrame:
    """One history row per judge and overall metric of one summary, stamped with time, index
    version, the partition's total cost (answers and judges) and the run that made the summary."""
    overall = summary[summary["group"] == OVERALL]
    usage = summary[(summary["group"] == USAGE) & (summary["metric"] == "cost_usd")]
    cost = float(usage["total"].sum(min_count=1)) if len(usage) else float("nan")
    rows = overall.assign(
        materialized_at=at,
        answer_model=answer_model,
        kb_version=kb_version,
        cost_usd=cost,
        summary_run_id=summary_run_id,
    )
    return rows[HISTORY_COLUMNS].reset_index(drop=True)


def upsert_history(history: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """The history with ``rows`` replacing any earlier rows of the same summary materialization,
    so recording the same summary twice leaves one copy."""
    if history.empty:
        return rows.reset_index(drop=True)
    if "summary_run_id" not in history:  # written before summaries carried their run
        history = history.assign(summary_run_id=None)
    keys = set(map(tuple, rows[HISTORY_KEY].to_numpy()))
    keep = [tuple(k) not in keys for k in history[HISTORY_KEY].to_numpy()]
    return pd.concat([history[keep], rows], ignore_index=True)


def interval_gauges(
    name: str, description: str, labels: list[str], registry: CollectorRegistry
) -> tuple[Gauge, Gauge, Gauge]:
    """A score's gauge and the gauges of its 95% interval bounds (``<name>_ci_low``, ``_ci_high``)."""
    return (
        Gauge(name, description, labels, registry=registry),
        Gauge(f"{name}_ci_low", "Lower bound of the 95% interval", labels, registry=registry),
        Gauge(f"{name}_ci_high", "Upper bound of the 95% interval", labels, registry=registry),
    )


def prometheus_exposition(summaries: Mapping[str, pd.DataFrame]) -> bytes:
    """Gauges ``rag_eval_score{model,metric,judge}`` and counters of cases, failures and dollars,
    in the text exposition format (for node-exporter's textfile collector or a Pushgateway)."""
    registry = CollectorRegistry()
    score, score_low, score_high = interval_gauges(
        "rag_eval_score", "Mean score of a metric", ["model", "metric", "judge"], registry
    )
    cases = Counter("rag_eval_cases", "Cases evaluated", ["model", "judge"], registry=registry)
    failures = Counter(
        "rag_eval_failures", "Cases whose answer or judgement failed", ["model", "judge"], registry=registry
    )
    cost = Counter("rag_eval_cost_usd", "Dollars spent on API calls", ["model", "source"], registry=registry)
    for model, summary in sorted(summaries.items()):
        overall = summary[summary["group"] == OVERALL]
        for row in overall.itertuples():
            if pd.isna(row.mean):
                continue
            labels = {"model": model, "metric": row.metric, "judge": row.judge_id}
            score.labels(**labels).set(row.mean)
            if not pd.isna(row.ci_low):
                score_low.labels(**labels).set(row.ci_low)
                score_high.labels(**labels).set(row.ci_high)
        for judge_id, rows in overall.groupby("judge_id"):
            cases.labels(model=model, judge=judge_id).inc(int(rows["n_cases"].max()))
            failures.labels(model=model, judge=judge_id).inc(int(rows["n_failed"].max()))
        usage = summary[(summary["group"] == USAGE) & (summary["metric"] == "cost_usd")]
        for row in usage.itertuples():
            if not pd.isna(row.total):
                source = "answers" if row.judge_id == ANSWER_MODEL_ROW else row.judge_id
                cost.labels(model=model, source=source).inc(row.total)
    return generate_latest(registry)
