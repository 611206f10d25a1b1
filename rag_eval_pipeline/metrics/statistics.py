"""Honest numbers: bootstrap intervals, paired model comparison, McNemar, judge agreement.

Pure functions over plain arrays. Interval methods come from scipy where scipy has them
(``scipy.stats.bootstrap``, ``scipy.stats.binomtest``); Cohen's kappa is three lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

CONFIDENCE = 0.95
RESAMPLES = 2000
SEED = 0


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float

    def excludes_zero(self) -> bool:
        return bool(self.low > 0 or self.high < 0)


def bootstrap_mean(
    values: Sequence[float], confidence: float = CONFIDENCE, resamples: int = RESAMPLES, seed: int = SEED
) -> Interval:
    """Mean with a seeded percentile-bootstrap interval. One value or none: the interval is NaN;
    identical values: a zero-width interval (nothing varies to resample)."""
    data = np.asarray([v for v in values if not pd.isna(v)], dtype=float)
    if len(data) == 0:
        return Interval(float("nan"), float("nan"), float("nan"))
    mean = float(data.mean())
    if len(data) == 1:
        return Interval(mean, float("nan"), float("nan"))
    if np.all(data == data[0]):
        return Interval(mean, mean, mean)
    result = stats.bootstrap(
        (data,),
        np.mean,
        confidence_level=confidence,
        n_resamples=resamples,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return Interval(mean, float(result.confidence_interval.low), float(result.confidence_interval.high))


def paired_difference(a: Sequence[float], b: Sequence[float], **kwargs) -> Interval:
    """Mean of a - b over the same cases, with a paired bootstrap interval (cases resampled
    together, so the between-case variance cancels)."""
    a_arr, b_arr = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a_arr.shape != b_arr.shape:
        raise ValueError("paired samples must have the same cases")
    keep = ~(np.isnan(a_arr) | np.isnan(b_arr))
    return bootstrap_mean(a_arr[keep] - b_arr[keep], **kwargs)


def mcnemar_exact(a_correct: Sequence[bool], b_correct: Sequence[bool]) -> tuple[int, int, float]:
    """Exact McNemar test: (cases only a got right, cases only b got right, two-sided p).
    With no discordant case p = 1."""
    a_arr, b_arr = np.asarray(a_correct, dtype=bool), np.asarray(b_correct, dtype=bool)
    only_a = int(np.sum(a_arr & ~b_arr))
    only_b = int(np.sum(~a_arr & b_arr))
    if only_a + only_b == 0:
        return only_a, only_b, 1.0
    return only_a, only_b, float(stats.binomtest(only_a, only_a + only_b, 0.5).pvalue)


def cohen_kappa(a: Sequence[object], b: Sequence[object]) -> float:
    """Agreement beyond chance: (p_o - p_e) / (1 - p_e). Perfect agreement on a single label
    (p_e = 1) is 1.0; no pairs is NaN."""
    if len(a) != len(b):
        raise ValueError("kappa needs paired labels")
    if len(a) == 0:
        return float("nan")
    a_s, b_s = pd.Series(list(a)), pd.Series(list(b))
    observed = float((a_s.values == b_s.values).mean())
    labels = set(a_s) | set(b_s)
    expected = sum(float((a_s == label).mean()) * float((b_s == label).mean()) for label in labels)
    if expected == 1.0:
        return 1.0
    return (observed - expected) / (1.0 - expected)


def confusion(a: Sequence[object], b: Sequence[object], labels: Sequence[object]) -> pd.DataFrame:
    """Counts of (a label, b label); rows are a, columns b."""
    table = pd.crosstab(
        pd.Categorical(list(a), categories=labels), pd.Categorical(list(b), categories=labels), dropna=False
    )
    table.index.name, table.columns.name = "reference", "judge"
    return table
