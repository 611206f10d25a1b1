"""What the production assets show of users' feedback in the UI: how much there is and how
negative, per agent version, what each source gave (so a file's records are accounted for), and
the judges against it; every figure beside the warning that feedback is self-selected."""

from typing import Any

import dagster as dg
import pandas as pd

from rag_eval_pipeline.production.feedback import (
    SELECTION_WARNING,
    chance_lines,
    disagreements,
    feedback_agreement,
    feedback_by_topic,
    feedback_counts,
    judge_pairs,
    topic_lines,
)
from rag_eval_pipeline.production.feedback_sources import Feedback
from rag_eval_pipeline.production.settings import USERS
from rag_eval_pipeline.reporting.markdown import means_with_intervals, to_markdown


def feedback_interactions_metadata(feedback: Feedback, negative_below: float) -> dict[str, Any]:
    """The day's feedback on ``production_interactions``: counts, per source, per version."""
    frame = feedback.interactions
    counts = feedback_counts(frame, negative_below)
    sources = pd.DataFrame(feedback.sources).drop(columns=["left_out"], errors="ignore")
    return {
        "feedback_interactions": counts["with_feedback"],
        "feedback_negative": counts["negative"],
        "feedback_rate": counts["with_feedback"] / counts["interactions"] if counts["interactions"] else 0.0,
        "feedback_sources": dg.MetadataValue.md(to_markdown(sources)),
        "feedback_warning": SELECTION_WARNING,
    }


def feedback_summary_metadata(
    summary: pd.DataFrame,
    scores: pd.DataFrame,
    sample: pd.DataFrame,
    metrics: dict[str, tuple[str, ...]],
    negative_below: float,
    interactions: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """On ``production_summary``: the users' figures with intervals, per agent version and per
    topic of the day's ``interactions`` (knowledge-base health's topics), and each
    judge against users on the sampled interactions that have feedback (kappa with its interval,
    the worst disagreements), with the warning, and a line for a judge worse than chance."""
    rows = summary[summary["judge_id"] == USERS]
    if rows.empty or "feedback" not in sample:
        return {}
    pairs = judge_pairs(scores, sample, metrics)
    agreement = feedback_agreement(pairs, negative_below)
    shown = rows[["metric", "group", "mean", "ci_low", "ci_high", "n"]]
    metadata = {
        "users": dg.MetadataValue.md(to_markdown(means_with_intervals(shown))),
        "judges_vs_users": dg.MetadataValue.md(
            to_markdown(agreement) if len(agreement) else "no sampled interaction has feedback"
        ),
        "feedback_warning": SELECTION_WARNING,
    }
    by_topic = feedback_by_topic(interactions, negative_below) if interactions is not None else None
    if by_topic is not None and len(by_topic):
        metadata["users_by_topic"] = dg.MetadataValue.md(to_markdown(topic_lines(by_topic)))
    worst = disagreements(pairs, negative_below)
    if len(worst):
        metadata["judges_vs_users_worst"] = dg.MetadataValue.md(
            to_markdown(worst.assign(question=worst["question"].str.slice(0, 70)))
        )
    lines = chance_lines(agreement)
    if lines:
        metadata["worse_than_chance"] = "; ".join(lines)
    return metadata
