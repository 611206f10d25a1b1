"""Which way each metric improves, in one table that diffs, gates, paired verdicts and the
report all read: a share of cases that went wrong (a failed call, a false answer, a needless
decline, a judge that flipped between re-scores, answers that varied) is better lower; every
score is better higher."""

from __future__ import annotations

from enum import Enum

from rag_eval_pipeline.metrics.schema import ANSWER_VARIABILITY
from rag_eval_pipeline.metrics.stability import FLIP_SUFFIX


class Direction(str, Enum):
    HIGHER = "higher is better"
    LOWER = "lower is better"


# the metrics a summary can hold that are better lower, by name
LOWER_IS_BETTER = frozenset(
    {
        "error_rate",
        "thumbs_down_rate",  # users' feedback (production.feedback): the share of it that is negative
        "false_answer_rate",
        "over_abstention_rate",
        ANSWER_VARIABILITY,
        # an agent's trajectory: tool calls made, identical calls repeated, calls to forbidden tools
        "steps",
        "repeated_calls",
        "forbidden_calls",
        # what a case took and cost (metrics.budgets), and the per-case columns they are read from
        "latency_s",
        "cost_usd",
        "latency_p50_s",
        "latency_p95_s",
        "latency_max_s",
        "cost_per_case_usd",
        "cost_max_usd",
        # knowledge-base health (health/): shares of cases the knowledge base failed
        "knowledge_gap_rate",
        "knowledge_gap_unsure_rate",
        "retrieval_miss_rate",
        "outdated_rate",
        "conflict_rate",
        "stale_retrieval_rate",
    }
)
# ... and by how their name ends: every judge's flip rate, every rate of errors or failures
LOWER_IS_BETTER_SUFFIXES = (FLIP_SUFFIX, "_error_rate", "_failure_rate")
# ... and by how it begins: a security probe's attack success rate (asr_injection, ...)
LOWER_IS_BETTER_PREFIXES = ("asr_",)


def direction(metric: str) -> Direction:
    """The way ``metric`` improves (a score, an agreement, a share answered: higher)."""
    if (
        metric in LOWER_IS_BETTER
        or metric.endswith(LOWER_IS_BETTER_SUFFIXES)
        or metric.startswith(LOWER_IS_BETTER_PREFIXES)
    ):
        return Direction.LOWER
    return Direction.HIGHER


def lower_is_better(metric: str) -> bool:
    return direction(metric) is Direction.LOWER


def harm(metric: str, change: float) -> float:
    """How much worse a change made things (positive: worse), whichever way the metric improves."""
    return change if lower_is_better(metric) else -change
