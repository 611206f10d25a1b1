"""Aggregation, kept apart from per-case scoring: means per judge, metric and question group."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from rag_eval_pipeline.metrics.judges import SCORE_ID_COLUMNS

SUMMARY_COLUMNS = ["judge_id", "metric", "group", "mean", "n", "n_cases", "n_failed", "case_set"]
OVERALL = "all"
GROUP_BY = ("type", "level")


def metric_columns(judge_scores: pd.DataFrame) -> list[str]:
    return [c for c in judge_scores.columns if c not in SCORE_ID_COLUMNS]


def case_set_id(qids: Iterable[str]) -> str:
    """Short hash of the evaluated question ids: models are comparable only on equal case sets."""
    digest = hashlib.sha256("\n".join(sorted(set(qids))).encode()).hexdigest()
    return digest[:12]


def _summarize_group(
    rows: pd.DataFrame, judge_id: str, group: str, metrics: Sequence[str]
) -> list[dict[str, object]]:
    case_set = case_set_id(rows["qid"])
    failed = int((rows["status"] != "ok").sum())
    out = []
    for metric in metrics:
        values = rows.loc[rows["status"] == "ok", metric].dropna()
        out.append(
            {
                "judge_id": judge_id,
                "metric": metric,
                "group": group,
                "mean": float(values.mean()) if len(values) else float("nan"),
                "n": int(len(values)),
                "n_cases": int(len(rows)),
                "n_failed": failed,
                "case_set": case_set,
            }
        )
    return out


def summarize(judge_scores: pd.DataFrame) -> pd.DataFrame:
    """Mean of each metric over the cases where it is present, overall and per type and level.

    ``n`` counts cases with a value, ``n_cases`` all cases, ``n_failed`` cases whose answer or
    judgement failed, ``case_set`` identifies which questions were evaluated. A metric absent
    on every case has mean NaN and n 0, never 0.0.
    """
    metrics = metric_columns(judge_scores)
    rows: list[dict[str, object]] = []
    for judge_id, by_judge in judge_scores.groupby("judge_id", sort=True):
        rows += _summarize_group(by_judge, str(judge_id), OVERALL, metrics)
        for column in GROUP_BY:
            for value, group_rows in by_judge.groupby(column, sort=True):
                rows += _summarize_group(group_rows, str(judge_id), f"{column}={value}", metrics)
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def compare_models(summaries: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per answer model and judge, the overall mean of every metric side by side."""
    frames = []
    for answer_model, summary in sorted(summaries.items()):
        overall = summary[summary["group"] == OVERALL]
        for judge_id, rows in overall.groupby("judge_id", sort=True):
            record: dict[str, object] = {
                "answer_model": answer_model,
                "judge_id": judge_id,
                "n_cases": int(rows["n_cases"].max()),
                "n_failed": int(rows["n_failed"].max()),
                # summaries written before case_set existed lack it
                "case_set": rows["case_set"].iloc[0] if "case_set" in rows else None,
            }
            record.update(dict(zip(rows["metric"], rows["mean"])))
            frames.append(record)
    return pd.DataFrame(frames)


def to_markdown(frame: pd.DataFrame, float_format: str = "{:.3f}") -> str:
    """A plain markdown table (Dagster metadata, CLI output) without the tabulate dependency."""
    if frame.empty:
        return "_no rows_"
    headers = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for record in frame.itertuples(index=False):
        cells = []
        for value in record:
            if isinstance(value, float):
                cells.append("–" if pd.isna(value) else float_format.format(value))
            else:
                cells.append(str(value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
