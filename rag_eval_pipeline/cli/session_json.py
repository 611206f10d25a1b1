"""The parts both session commands (`trajectories`, `simulate`) print that are the same: in their
JSON, pass^k with its intervals, the session judges' scores, each version's run and summary, and
the gates' results; on stderr, why the command fails."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from rag_eval_pipeline.cli.errors import error
from rag_eval_pipeline.common.plain import plain
from rag_eval_pipeline.metrics.gates import GateResult, failed_gates_line
from rag_eval_pipeline.trajectories.tables import PASS_HAT

if TYPE_CHECKING:
    from rag_eval_pipeline.metrics.diff import RunDiff


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


def exit_status(
    failures: Iterable[str],
    gates: list[GateResult],
    kind: str,
    run_diff: RunDiff | None,
    fail_on_regression: bool,
    worse: str,
) -> int:
    """1, with an ``error:`` line for each reason, when a version failed, a ``kind`` threshold
    failed, or ``run_diff`` holds a significant regression (``worse`` says which) and the command
    was asked to fail on one; else 0."""
    reasons = list(failures)
    line = failed_gates_line(gates)
    if line:
        reasons.append(f"{kind} threshold failed: {line}")
    if run_diff is not None and fail_on_regression and not run_diff.significant_regressions().empty:
        reasons.append(f"{worse} (Holm-adjusted)")
    for reason in reasons:
        error(reason)
    return 1 if reasons else 0
