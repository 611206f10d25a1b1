"""The stored tables of a trajectory evaluation: sessions (a row each, turns as JSON), their
scores (a row per session, metrics as columns, as ``judge_scores`` holds an answer's) and the
summary (``metric_summary``'s layout, so gates and diffs read it as they read an evaluation's),
with pass^k per k over the tasks."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict

import pandas as pd

from rag_eval_pipeline.metrics.settings import OVERALL, IntervalMethod
from rag_eval_pipeline.metrics.statistics import bootstrap_mean, mean_interval
from rag_eval_pipeline.trajectories.reference import Task
from rag_eval_pipeline.trajectories.scoring import (
    EFFICIENCY_METRICS,
    TRAJECTORY_METRICS,
    score_session,
    task_pass_hat_k,
)
from rag_eval_pipeline.trajectories.sessions import Session, ToolCall, Turn

TRAJECTORY_JUDGE = "trajectory"  # the judge id of the reference-based figures (no LLM)
SESSION_COLUMNS = [
    "session_id",
    "agent_version",
    "key_source",
    "turns",
    "tool_calls",
    "span_ids",
    "where",
    "session",
]
SUMMARY_COLUMNS = ["judge_id", "metric", "group", "mean", "ci_low", "ci_high", "n", "ci_method", "note"]
PASS_HAT = "pass^"
COUNTS = ("steps", "repeated_calls", "forbidden_calls")


def sessions_frame(sessions: Sequence[Session]) -> pd.DataFrame:
    """A row per session; ``session`` holds it whole as JSON, to be read back exactly."""
    rows = [
        {
            "session_id": s.session_id,
            "agent_version": s.agent_version,
            "key_source": s.key_source,
            "turns": len(s.turns),
            "tool_calls": len(s.tool_calls),
            "span_ids": " ".join(s.span_ids),
            "where": s.where,
            "session": json.dumps(asdict(s), ensure_ascii=False),
        }
        for s in sessions
    ]
    return pd.DataFrame(rows, columns=SESSION_COLUMNS)


def sessions_of_frame(frame: pd.DataFrame) -> list[Session]:
    sessions = []
    for text in frame["session"]:
        data = json.loads(text)
        turns = tuple(
            Turn(
                **{
                    **t,
                    "tool_calls": tuple(ToolCall(**c) for c in t["tool_calls"]),
                    "span_ids": tuple(t["span_ids"]),
                }
            )
            for t in data["turns"]
        )
        sessions.append(Session(**{**data, "turns": turns}))
    return sessions


def _calls_text(calls: Sequence[object]) -> str:
    return "; ".join(f"{c.name}({getattr(c, 'arguments', '')})" for c in calls)  # type: ignore[attr-defined]


def score_frame(sessions: Sequence[Session], tasks: Sequence[Task]) -> tuple[pd.DataFrame, list[str]]:
    """A row per session the reference names, and the ids of sessions it does not (unscored).
    ``qid`` is the task and the trial's rank among the task's sessions held here, so two agent
    versions' scores pair trial by trial in a diff."""
    by_session = {sid: task for task in tasks for sid in task.session_ids}
    held = {s.session_id: s for s in sessions}
    rows = []
    for task in tasks:
        trials = [sid for sid in task.session_ids if sid in held]
        for trial, session_id in enumerate(trials, start=1):
            session = held[session_id]
            score = score_session(session, task)
            rows.append(
                {
                    "qid": f"{task.task_id}/trial-{trial}",
                    "session_id": session_id,
                    "task_id": task.task_id,
                    "trial": trial,
                    "agent_version": session.agent_version,
                    "judge_id": TRAJECTORY_JUDGE,
                    "prompt_version": "",
                    "match_mode": task.match_mode.value,
                    "succeeded": score.succeeded(task.match_mode),
                    **{m: float(getattr(score, m)) for m in TRAJECTORY_METRICS},
                    "tool_call_precision": score.tool_call_precision,
                    "tool_call_recall": score.tool_call_recall,
                    **{
                        m: None if getattr(score, m) is None else float(getattr(score, m))
                        for m in EFFICIENCY_METRICS
                    },
                    "made_calls": _calls_text(session.tool_calls),
                    "expected_calls": "; ".join(
                        f"{c.name}({c.canonical_arguments})" for c in task.expected_calls
                    ),
                    "span_ids": " ".join(session.span_ids),
                    "root_span_ids": " ".join(turn.span_id for turn in session.turns),
                }
            )
    unscored = sorted(sid for sid in held if sid not in by_session)
    return pd.DataFrame(rows), unscored


SCORE_METRICS = (*TRAJECTORY_METRICS, "tool_call_precision", "tool_call_recall", *EFFICIENCY_METRICS)


def pass_hat_k_rows(scores: pd.DataFrame) -> list[dict[str, object]]:
    """pass^k for k = 1..n (the most trials of a task), each the mean over the tasks with at
    least k trials, with a seeded bootstrap interval over those tasks."""
    if scores.empty:
        return []
    outcomes = [
        (int(group["succeeded"].sum()), len(group)) for _, group in scores.groupby("task_id", sort=True)
    ]
    rows = []
    for k in range(1, max(n for _, n in outcomes) + 1):
        values = task_pass_hat_k(outcomes, k)
        interval = bootstrap_mean(values)
        rows.append(
            {
                "judge_id": TRAJECTORY_JUDGE,
                "metric": f"{PASS_HAT}{k}",
                "group": OVERALL,
                "mean": interval.estimate,
                "ci_low": interval.low,
                "ci_high": interval.high,
                "n": len(values),
                "ci_method": "percentile bootstrap over tasks",
                "note": "",
            }
        )
    return rows


def summarize_scores(
    scores: pd.DataFrame,
    metrics: Sequence[str],
    method: IntervalMethod | str = IntervalMethod.CLOPPER_PEARSON,
) -> list[dict[str, object]]:
    """Each metric's mean over the sessions that measured it, with its interval, per judge."""
    rows = []
    for judge_id, rows_of_judge in scores.groupby("judge_id", sort=True):
        for metric in metrics:
            if metric not in rows_of_judge:
                continue
            values = pd.to_numeric(rows_of_judge[metric], errors="coerce").dropna().tolist()
            # a count is not a share: its interval is the bootstrap's, never a binomial one
            interval, used = mean_interval(values, IntervalMethod.PERCENTILE if metric in COUNTS else method)
            rows.append(
                {
                    "judge_id": str(judge_id),
                    "metric": metric,
                    "group": OVERALL,
                    "mean": interval.estimate,
                    "ci_low": interval.low,
                    "ci_high": interval.high,
                    "n": len(values),
                    "ci_method": used.value,
                    "note": "" if values else "not measured",
                }
            )
    return rows


def summarize_trajectories(
    scores: pd.DataFrame,
    judge_scores: pd.DataFrame | None = None,
    judge_metrics: Sequence[str] = (),
    method: IntervalMethod | str = IntervalMethod.CLOPPER_PEARSON,
) -> pd.DataFrame:
    """The summary: the reference figures, pass^k, and the session judges' means."""
    rows = summarize_scores(scores, SCORE_METRICS, method) if not scores.empty else []
    rows += pass_hat_k_rows(scores)
    if judge_scores is not None and not judge_scores.empty:
        rows += summarize_scores(judge_scores, judge_metrics, method)
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
