"""Users' feedback as a measure of quality, on a simulated population whose true quality is known
and whose users answer more often when the answer was bad: the naive feedback mean against the
truth, against a random sample of human labels (the review queue's draw), and against a
propensity-weighted mean (only possible when the response propensity is known); plus what
reading and joining feedback costs as it grows.

    .venv/bin/python benchmarks/feedback_bias.py
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from rag_eval_pipeline.metrics.statistics import clopper_pearson_interval
from rag_eval_pipeline.production.feedback import JudgePairs, agreement_of
from rag_eval_pipeline.production.feedback_sources import read_feedback
from rag_eval_pipeline.production.settings import FeedbackSettings, LangfuseFeedback

TRAFFIC = 2_000  # interactions a day
DAYS = 500  # simulated days (replications)
TRUE_QUALITY = 0.80  # the share of good answers
RESPOND_IF_GOOD, RESPOND_IF_BAD = 0.05, 0.30  # unhappy users answer six times as often
USERS_AGREE = 0.95  # a user's thumb matches the truth this often
JUDGE_RIGHT = 0.90  # the judge's pass matches the truth this often
REVIEWED = 50  # random human labels a day (the review queue)


def simulate(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(DAYS):
        good = rng.random(TRAFFIC) < TRUE_QUALITY
        responded = rng.random(TRAFFIC) < np.where(good, RESPOND_IF_GOOD, RESPOND_IF_BAD)
        thumb = np.where(rng.random(TRAFFIC) < USERS_AGREE, good, ~good)
        judge = np.where(rng.random(TRAFFIC) < JUDGE_RIGHT, good, ~good)
        reviewed = rng.choice(TRAFFIC, REVIEWED, replace=False)
        naive = thumb[responded].mean()
        low, high = clopper_pearson_interval(naive, int(responded.sum()))
        label_mean = good[reviewed].mean()
        label_low, label_high = clopper_pearson_interval(label_mean, REVIEWED)
        # inverse-propensity weighting: each response weighs 1 / P(respond | its own thumb)
        weights = 1 / np.where(thumb[responded], RESPOND_IF_GOOD, RESPOND_IF_BAD)
        ipw = float((weights * thumb[responded]).sum() / weights.sum())
        on_feedback = agreement_of(_pairs(judge[responded], thumb[responded]), 0.5)["kappa"]
        on_labels = agreement_of(_pairs(judge[reviewed], good[reviewed]), 0.5)["kappa"]
        rows.append(
            {
                "true": good.mean(),
                "feedback_rate": responded.mean(),
                "naive": naive,
                "naive_covers": low <= good.mean() <= high,
                "labels": label_mean,
                "labels_covers": label_low <= good.mean() <= label_high,
                "ipw": ipw,
                "kappa_feedback": on_feedback,
                "kappa_labels": on_labels,
            }
        )
    return pd.DataFrame(rows)


def _pairs(judge: np.ndarray, truth: np.ndarray) -> JudgePairs:
    frame = pd.DataFrame({"judge": judge.astype(float), "feedback": truth.astype(float)})
    return JudgePairs("judge", "faithfulness", frame.assign(interaction_id="i", question="q"))


def join_cost(count: int) -> float:
    """Seconds to read and join ``count`` Langfuse score records to ``count`` interactions."""
    interactions = pd.DataFrame(
        {
            "interaction_id": [f"i{n}" for n in range(count)],
            "day": "2026-11-28",
            "timestamp": pd.Timestamp("2026-11-28T10:00:00Z"),
            "trace_id": [f"trace-{n}" for n in range(count)],
            "span_id": None,
            "agent_version": "v1",
            "user_feedback": None,
            "metadata": "{}",
            "location": "x",
        }
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "scores.jsonl"
        path.write_text(
            "".join(
                json.dumps(
                    {"name": "user-feedback", "value": n % 2, "dataType": "BOOLEAN", "traceId": f"trace-{n}"}
                )
                + "\n"
                for n in range(count)
            )
        )
        settings = FeedbackSettings(sources=[LangfuseFeedback(path=str(path))])
        start = time.perf_counter()
        read = read_feedback(settings, interactions)
        elapsed = time.perf_counter() - start
    assert read.sources[0]["joined"] == count
    return elapsed


def main() -> None:
    start = time.perf_counter()
    days = simulate()
    print(f"{DAYS} simulated days of {TRAFFIC} interactions in {time.perf_counter() - start:.1f} s")
    print(f"true quality (mean over days)           {days['true'].mean():.3f}")
    print(f"feedback rate                           {days['feedback_rate'].mean():.3f}")
    print(
        f"naive feedback mean                     {days['naive'].mean():.3f} "
        f"(bias {days['naive'].mean() - days['true'].mean():+.3f}; its 95% interval covers the truth on "
        f"{days['naive_covers'].mean():.1%} of days)"
    )
    print(
        f"{REVIEWED} random human labels a day          {days['labels'].mean():.3f} "
        f"(bias {days['labels'].mean() - days['true'].mean():+.3f}; "
        f"covers on {days['labels_covers'].mean():.1%})"
    )
    print(
        f"propensity-weighted feedback (known p)  {days['ipw'].mean():.3f} "
        f"(bias {days['ipw'].mean() - days['true'].mean():+.3f})"
    )
    print(
        f"judge kappa against feedback {days['kappa_feedback'].mean():.3f}, against random labels "
        f"{days['kappa_labels'].mean():.3f}"
    )
    small, large = join_cost(10_000), join_cost(100_000)
    print(f"read and join 10,000 scores {small:.2f} s, 100,000 {large:.2f} s (ratio {large / small:.1f})")


if __name__ == "__main__":
    main()
