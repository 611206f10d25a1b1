"""Quality gates: metric thresholds checked against a metric summary (asset checks, `rag-eval gate`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from rag_eval_pipeline.metrics.schema import OVERALL
from rag_eval_pipeline.metrics.statistics import MIN_CASES, TOO_FEW_CASES


@dataclass(frozen=True)
class GateResult:
    metric: str
    judge_id: str | None
    mean: float | None
    threshold: float
    passed: bool
    note: str = ""


def parse_threshold(text: str) -> tuple[str, float]:
    """``faithfulness=0.7`` or ``claude-sonnet-4-6/faithfulness=0.7`` -> (key, 0.7)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"expected METRIC=VALUE, got '{text}'")
    try:
        threshold = float(value)
    except ValueError:
        raise ValueError(f"threshold of '{key}' is not a number: '{value}'") from None
    return key.strip(), threshold


def check_gates(
    summary: pd.DataFrame,
    thresholds: Mapping[str, float],
    judge: str | None = None,
    min_cases: int = MIN_CASES,
) -> list[GateResult]:
    """Every (judge, metric) mean at least its threshold. A key ``judge/metric`` names one judge;
    a bare metric applies to every judge that measured it (or to ``judge`` when given). A metric
    nobody measured fails: a gate must not pass on a number that does not exist; nor does one
    measured on fewer than ``min_cases`` cases ("too few cases to conclude")."""
    overall = summary[summary["group"] == OVERALL]
    results = []
    for key, threshold in thresholds.items():
        wanted_judge, _, metric = key.rpartition("/")
        wanted_judge = wanted_judge or judge
        rows = overall[overall["metric"] == metric]
        if wanted_judge:
            rows = rows[rows["judge_id"] == wanted_judge]
        rows = rows[rows["n"] > 0]
        if rows.empty:
            results.append(GateResult(metric, wanted_judge, None, threshold, False, "not measured"))
            continue
        for row in rows.itertuples():
            if row.n < min_cases:
                note = f"{TOO_FEW_CASES}: n = {row.n} < {min_cases}"
                results.append(GateResult(metric, row.judge_id, float(row.mean), threshold, False, note))
                continue
            results.append(
                GateResult(metric, row.judge_id, float(row.mean), threshold, bool(row.mean >= threshold))
            )
    return results


def gate_table(results: list[GateResult]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "metric": r.metric,
                "judge_id": r.judge_id or "–",
                "mean": r.mean if r.mean is not None else float("nan"),
                "threshold": r.threshold,
                "result": "pass" if r.passed else f"FAIL{' (' + r.note + ')' if r.note else ''}",
            }
            for r in results
        ]
    )


def failed_gates_line(results: list[GateResult], stale: list[str] = ()) -> str:
    """What failed, in one line a run page shows: each failing metric with its judge, value and
    threshold (or why it has none), and why the results are stale; empty when all pass."""
    parts = []
    for r in results:
        if r.passed:
            continue
        judge = f" ({r.judge_id})" if r.judge_id else ""
        value = "not measured" if r.mean is None else f"{r.mean:.3f} < {r.threshold:g}"
        parts.append(f"{r.metric}{judge} {value}{' - ' + r.note if r.note and r.mean is not None else ''}")
    parts += [f"stale: {reason}" for reason in stale]
    return "; ".join(parts)
