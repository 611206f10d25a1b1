"""How often an interval method covers the true mean: simulated, not assumed.

Samples of n scores are drawn from known distributions over the judges' 0 / 0.5 / 1 scale; the
share of samples whose interval contains the true mean is the method's coverage. A test holds
the default method to its promise and ``benchmarks/interval_coverage.py`` prints the README table.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from rag_eval_pipeline.metrics.settings import CONFIDENCE, IntervalMethod
from rag_eval_pipeline.metrics.statistics import clopper_pearson_interval, wilson_interval

SCORE_LEVELS = np.array([0.0, 0.5, 1.0])

# P(0), P(0.5), P(1): binary outcomes from near the lower bound to near the upper one, and
# three-point judgements (a mostly-correct model, a weak one, a hedging judge, a spread).
SCORE_DISTRIBUTIONS: Mapping[str, tuple[float, float, float]] = {
    "0/1, mean 0.02": (0.98, 0.0, 0.02),
    "0/1, mean 0.10": (0.90, 0.0, 0.10),
    "0/1, mean 0.50": (0.50, 0.0, 0.50),
    "0/1, mean 0.90": (0.10, 0.0, 0.90),
    "0/1, mean 0.98": (0.02, 0.0, 0.98),
    "0/0.5/1, mostly right": (0.10, 0.10, 0.80),
    "0/0.5/1, mostly wrong": (0.70, 0.20, 0.10),
    "0/0.5/1, hedging": (0.05, 0.90, 0.05),
    "0/0.5/1, spread": (0.30, 0.40, 0.30),
}


def simulated_coverage(
    probabilities: tuple[float, float, float],
    n: int,
    method: IntervalMethod | str,
    samples: int = 4000,
    seed: int = 0,
    confidence: float = CONFIDENCE,
    resamples: int = 400,
) -> float:
    """Share of ``samples`` simulated samples of ``n`` scores whose interval covers the true mean.

    Vectorized: a sample is its counts of 0, 0.5 and 1; the bootstrap resamples those counts.
    """
    method = IntervalMethod(method)
    rng = np.random.default_rng(seed)
    p = np.asarray(probabilities, dtype=float)
    true_mean = float(p @ SCORE_LEVELS)
    counts = rng.multinomial(n, p, size=samples)
    means = counts @ SCORE_LEVELS / n
    if method is IntervalMethod.CLOPPER_PEARSON:
        low, high = clopper_pearson_interval(means, n, confidence)
    elif method is IntervalMethod.WILSON:
        low, high = wilson_interval(means, n, confidence)
    elif method is IntervalMethod.PERCENTILE:
        resampled = rng.multinomial(n, np.repeat((counts / n)[:, None, :], resamples, axis=1))
        boot = resampled @ SCORE_LEVELS / n
        alpha = 1 - confidence
        low, high = np.quantile(boot, alpha / 2, axis=1), np.quantile(boot, 1 - alpha / 2, axis=1)
    else:
        raise ValueError(f"coverage of {method.value} is not simulated (too slow to vectorize)")
    tolerance = 1e-12
    return float(np.mean((low <= true_mean + tolerance) & (true_mean - tolerance <= high)))


def coverage_table(
    sizes: tuple[int, ...] = (5, 10, 35, 150),
    methods: tuple[IntervalMethod, ...] = (
        IntervalMethod.CLOPPER_PEARSON,
        IntervalMethod.WILSON,
        IntervalMethod.PERCENTILE,
    ),
    samples: int = 4000,
) -> list[dict[str, object]]:
    """For each method and n: the lowest coverage over ``SCORE_DISTRIBUTIONS`` and which one."""
    rows = []
    for method in methods:
        for n in sizes:
            by_distribution = {
                name: simulated_coverage(p, n, method, samples=samples, seed=n)
                for name, p in SCORE_DISTRIBUTIONS.items()
            }
            worst = min(by_distribution, key=by_distribution.__getitem__)
            rows.append(
                {
                    "method": method.value,
                    "n": n,
                    "min_coverage": by_distribution[worst],
                    "mean_coverage": float(np.mean(list(by_distribution.values()))),
                    "worst_distribution": worst,
                }
            )
    return rows
