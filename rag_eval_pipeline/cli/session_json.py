"""The parts of the JSON both session commands (`trajectories`, `simulate`) print that are the
same: pass^k with its intervals, the session judges' scores, each version's run and summary, and
the gates' results."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from rag_eval_pipeline.common.plain import plain
from rag_eval_pipeline.metrics.gates import GateResult
from rag_eval_pipeline.trajectories.tables import PASS_HAT


def pass_hat_k(rows: Iterable[Mapping[str, Any]]) -> tuple[dict[str, Any], dict[str, list]]:
    """pass^k by k, and its 95% interval by k, from the summary's ``pass^k`` rows."""
    rows = list(rows)
    values = {str(r["metric"])[len(PASS_HAT) :]: plain(r["mean"]) for r in rows}
    intervals = {str(r["metric"])[len(PASS_HAT) :]: [plain(r["ci_low"]), plain(r["ci_high"])] for r in rows}
    return values, intervals


def add_session_judges(by_session: dict[str, dict[str, Any]], judged: pd.DataFrame | None) -> None:
    """Each session's LLM-judge figures, by session then judge, added to ``by_session``."""
    for row in judged.to_dict("records") if judged is not None else []:
        figures = {k: plain(v) for k, v in row.items() if k not in ("session_id", "judge_id")}
        by_session.setdefault(row["session_id"], {})[row["judge_id"]] = figures


def version_record(
    run_id: str, error: str | None, failed_checks: list[str], summary: pd.DataFrame | None
) -> dict[str, Any]:
    """An agent version's run: its id, why it failed, the checks that failed, its summary rows."""
    return {
        "run_id": run_id,
        "error": error,
        "failed_checks": failed_checks,
        "summary": [{k: plain(v) for k, v in r.items()} for r in summary.to_dict("records")]
        if summary is not None
        else None,
    }


def gate_records(gates: list[GateResult]) -> list[dict[str, Any]]:
    return [
        {
            "gate": f"{g.judge_id or ''}/{g.metric}".lstrip("/"),
            "mean": g.mean,
            "threshold": g.threshold,
            "passed": g.passed,
            "note": g.note,
        }
        for g in gates
    ]
