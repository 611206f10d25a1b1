"""An agent's sessions as a review queue: the same draw, page and label rows as an answer
model's, with the conversation in place of the question, the replies in place of the answer,
the expected outcome as the truth and each tool call as a passage. People's labels of
``trajectories:<version>`` (or ``simulation:<version>``, its simulated sessions) then measure
the session judges beside the answer judges."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from rag_eval_pipeline.metrics.agreement import SESSION_PREFIX
from rag_eval_pipeline.review.queue import (
    QueueSpec,
    judge_verdicts,
    labelled_metrics,
    placed_in_queue,
    select_cases,
)
from rag_eval_pipeline.trajectories.sessions import Session, ToolCall


def session_model(version: str, source: str = SESSION_PREFIX) -> str:
    """The name an agent version's sessions (traced, or simulated) are reviewed under."""
    return f"{source}{version}"


def as_scores(judged: pd.DataFrame) -> pd.DataFrame:
    """Session judge scores in the layout the queue and the agreement read (a session a case)."""
    return judged.rename(columns={"session_id": "qid"})


def _conversation(session: Session) -> str:
    return "\n".join(f"[turn {n}] {turn.user or ''}" for n, turn in enumerate(session.turns, start=1))


def _replies(session: Session) -> str:
    return "\n".join(f"[turn {n}] {turn.answer or ''}" for n, turn in enumerate(session.turns, start=1))


def _outcome(call: ToolCall) -> str:
    return f"error: {call.error}" if call.error else str(call.result or "")


def session_queue(spec: QueueSpec, sessions: Sequence[Session], judged: pd.DataFrame) -> list[dict[str, Any]]:
    """The sessions of one queue in review order, as the labelling page shows them."""
    scores = as_scores(judged)
    if spec.judge is not None and spec.judge not in set(scores["judge_id"]):
        raise ValueError(f"judge {spec.judge!r} did not judge {spec.model}'s sessions")
    metrics = labelled_metrics(scores, spec.judge, spec.model)
    draw = select_cases(scores, spec)
    held = {s.session_id: s for s in sessions}
    outcome = scores.drop_duplicates("qid").set_index("qid")["expected_outcome"] if len(scores) else None
    records = []
    for qid in draw.qids:
        session = held.get(qid)
        if session is None:
            continue
        verdicts = judge_verdicts(scores, qid, metrics, spec.judge) if spec.show_judge else {}
        expected = outcome.get(qid) if outcome is not None else None
        records.append(
            {
                "qid": qid,
                "answer_model": spec.model,
                "question": _conversation(session),
                "answer": _replies(session),
                "failed": None,
                "truth": None if expected is None or pd.isna(expected) else str(expected),
                "truth_is_abstention": False,
                "passages": [
                    {
                        "title": f"turn {n}: {call.name}",
                        "text": f"{call.arguments} -> {_outcome(call)}",
                        "gold": False,
                    }
                    for n, turn in enumerate(session.turns, start=1)
                    for call in turn.tool_calls
                ],
                "metrics": metrics,
                "judge": verdicts,
                "selection": spec.strategy.value,
                "inclusion_probability": None if draw.inclusion is None else draw.inclusion[qid],
            }
        )
    return placed_in_queue(records, scores)
