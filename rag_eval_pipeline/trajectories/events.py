"""A trajectory's scores as evaluation events on the agent's own spans: each session's scores
(the reference figures, each session judge's verdicts) parented to the root span of the
session's first turn, the span the conversation started from in the agent's traces."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from rag_eval_pipeline.tracing.events import AttributeValue, EvaluationEvent, SpanRef, evaluation_events
from rag_eval_pipeline.trajectories.sessions import Session

KEPT = ("status", "error", "rationales")


def session_parents(sessions: Sequence[Session]) -> dict[tuple[str, int], SpanRef | None]:
    """Each session (keyed as a case: its id, repeat 0) to its first turn's root span."""
    return {
        (s.session_id, 0): SpanRef.of(s.turns[0].trace_id, s.turns[0].span_id) if s.turns else None
        for s in sessions
    }


def session_events(
    scores: pd.DataFrame,
    sessions: Sequence[Session],
    metrics: Sequence[str],
    provenance: Mapping[str, AttributeValue],
) -> list[EvaluationEvent]:
    """One event per session, judge and metric among ``metrics`` (``rag_eval.qid`` is the
    session id); a session judge that failed gives ``error.type`` and no score."""
    if scores.empty:
        return []
    present = [m for m in metrics if m in scores]
    frame = scores[["session_id", "judge_id", *[c for c in KEPT if c in scores], *present]].rename(
        columns={"session_id": "qid"}
    )
    frame = frame.assign(repeat=0).drop_duplicates(["qid", "judge_id"])  # a session's trials: one
    declared = {str(judge): present for judge in frame["judge_id"].unique()}
    return evaluation_events(frame, session_parents(sessions), provenance, declared)
