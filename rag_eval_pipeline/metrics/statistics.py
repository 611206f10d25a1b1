"""Honest numbers on small samples: intervals that keep their width, exact paired tests,
McNemar, judge agreement.

Pure functions over plain arrays. The default interval for a mean of scores in [0, 1] is the
Clopper-Pearson interval (Clopper & Pearson 1934, Biometrika 26(4)), whose coverage of a 0/1 mean
is at least nominal for every n and p. For scores that are not 0/1 (0/0.5/1 judgements, F1) it is
applied to n * mean "successes"; the binomial variance mu(1 - mu) is the largest any variable in
[0, 1] with mean mu can have (Bhatia & Davis 2000), so it stays conservative there too. The
Wilson score interval (Wilson 1927; Brown, Cai & DasGupta 2001, Statistical Science 16(2)) is
narrower but measured here at 0.91 coverage near the bounds for n = 10; the percentile bootstrap
collapses to zero width on identical scores whatever n is (measured at 0.05-0.18 coverage for
n = 10 near the bounds). Coverage is measured, not assumed (``metrics/coverage.py``, figures in
the README). Paired verdicts come from an exact sign-flip (randomization) test.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np
import pandas as pd
from scipy import stats

CONFIDENCE = 0.95
SIGNIFICANCE = 0.05
RESAMPLES = 2000
SEED = 0
MIN_CASES = 10  # below this many scored cases a summary or gate says "too few cases to conclude"
MONTE_CARLO_DRAWS = 20_000  # sign flips drawn when exact enumeration would be too large
EXACT_SUPPORT_LIMIT = 200_000  # distinct sums kept while enumerating sign flips exactly
TOO_FEW_CASES = "too few cases to conclude"
NO_DIFFERENCE = "no difference shown"


class IntervalMethod(str, Enum):
    """How a mean's interval is computed: ``clopper_pearson`` (default) or ``wilson`` for scores
    in [0, 1], or the seeded bootstrap (``percentile``, ``bca``), which collapses on identical
    values."""

    CLOPPER_PEARSON = "clopper_pearson"
    WILSON = "wilson"
    PERCENTILE = "percentile"
    BCA = "bca"


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float

    def excludes_zero(self) -> bool:
        return bool(self.low > 0 or self.high < 0)


_NAN_INTERVAL = Interval(float("nan"), float("nan"), float("nan"))


def _present(values: Sequence[float]) -> np.ndarray:
    return np.asarray([v for v in values if not pd.isna(v)], dtype=float)


def wilson_interval(mean: float, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval of a mean in [0, 1] over ``n`` cases (vectorizes over arrays)."""
    z = stats.norm.ppf(0.5 + confidence / 2)
    mean, n = np.asarray(mean, dtype=float), np.asarray(n, dtype=float)
    denominator = 1 + z**2 / n
    centre = (mean + z**2 / (2 * n)) / denominator
    half = z / denominator * np.sqrt(np.clip(mean * (1 - mean), 0, None) / n + z**2 / (4 * n**2))
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def clopper_pearson_interval(mean: float, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Clopper-Pearson interval of a mean in [0, 1] over ``n`` cases, with ``n * mean`` successes
    (continuous in the mean, so 0.5 scores need no rounding); vectorizes over arrays."""
    alpha = 1 - confidence
    mean, n = np.asarray(mean, dtype=float), np.asarray(n, dtype=float)
    successes = mean * n
    failures = n - successes
    with np.errstate(invalid="ignore"):
        low = stats.beta.ppf(alpha / 2, np.maximum(successes, 1e-300), failures + 1)
        high = stats.beta.ppf(1 - alpha / 2, successes + 1, np.maximum(failures, 1e-300))
    low = np.where(successes <= 0, 0.0, low)
    high = np.where(failures <= 0, 1.0, high)
    return low, high


_BOUNDED_INTERVALS = {
    "clopper_pearson": clopper_pearson_interval,
    "wilson": wilson_interval,
}


def bootstrap_mean(
    values: Sequence[float],
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    method: str = "percentile",
) -> Interval:
    """Mean with a seeded bootstrap interval (``percentile`` or ``bca``). One value or none:
    the interval is NaN; identical values: a zero-width interval (nothing varies to resample),
    which is why it is not the default for small samples."""
    data = _present(values)
    if len(data) == 0:
        return _NAN_INTERVAL
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
        method=method,
        rng=np.random.default_rng(seed),
    )
    return Interval(mean, float(result.confidence_interval.low), float(result.confidence_interval.high))


def mean_interval(
    values: Sequence[float],
    method: IntervalMethod | str = IntervalMethod.CLOPPER_PEARSON,
    confidence: float = CONFIDENCE,
) -> tuple[Interval, IntervalMethod]:
    """The mean of the present values with an interval, and the method actually used.

    No value: NaN. Clopper-Pearson and Wilson need scores in [0, 1]; values outside it (a cosine
    similarity below 0) fall back to the percentile bootstrap, and the returned method says so.
    """
    method = IntervalMethod(method)
    data = _present(values)
    if len(data) == 0:
        return _NAN_INTERVAL, method
    bounded = _BOUNDED_INTERVALS.get(method.value)
    if bounded is not None and data.min() >= 0.0 and data.max() <= 1.0:
        mean = float(data.mean())
        low, high = bounded(mean, len(data), confidence)
        return Interval(mean, float(low), float(high)), method
    fallback = IntervalMethod.PERCENTILE if bounded is not None else method
    return bootstrap_mean(data, confidence, method=fallback.value), fallback


def paired_difference(a: Sequence[float], b: Sequence[float], **kwargs) -> Interval:
    """Mean of a - b over the same cases, with a paired bootstrap interval (cases resampled
    together, so the between-case variance cancels). It collapses when every difference is the
    same: verdicts therefore rest on ``sign_flip_test``, not on this interval alone."""
    a_arr, b_arr = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a_arr.shape != b_arr.shape:
        raise ValueError("paired samples must have the same cases")
    keep = ~(np.isnan(a_arr) | np.isnan(b_arr))
    return bootstrap_mean(a_arr[keep] - b_arr[keep], **kwargs)


@dataclass(frozen=True)
class SignFlipResult:
    """A paired randomization test: two-sided p-value, how it was computed, and on how many
    non-zero differences (zeros carry no sign and change nothing)."""

    p_value: float
    method: str  # "exact" or "monte carlo (N draws)"
    n_nonzero: int


# Differences are counted on an integer grid of this resolution: every sum is then exact, so the
# observed assignment is never lost to floating-point error (a difference of 1e-7 or less is 0).
SIGN_FLIP_RESOLUTION = 10**6


def _grid(differences: Sequence[float]) -> np.ndarray:
    """The differences on the integer grid (rounded to the nearest millionth)."""
    return np.rint(_present(differences) * SIGN_FLIP_RESOLUTION).astype(np.int64)


def sign_flip_test(
    differences: Sequence[float], draws: int = MONTE_CARLO_DRAWS, seed: int = SEED
) -> SignFlipResult:
    """Exact paired sign-flip test of "mean difference = 0" (Fisher's randomization test).

    Under the null each case's difference is as likely positive as negative, so the reference
    distribution of the sum is that of every sign assignment; p = P(|sum| >= |observed sum|).
    Sums are counted on an integer grid (``SIGN_FLIP_RESOLUTION``), so the enumeration is exact
    for any scores, not only 0 / 0.5 / 1: no rounding drops the observed assignment. The
    distribution is enumerated while it has at most ``EXACT_SUPPORT_LIMIT`` distinct sums
    (always for 0/0.5/1 scores); above that ``draws`` seeded random sign assignments give a Monte
    Carlo p-value, (1 + hits) / (1 + draws) (Phipson & Smyth 2010). For 0/1 outcomes the
    non-zero differences are McNemar's discordant pairs and p equals the exact McNemar test.
    No non-zero difference: p = 1.
    """
    grid = _grid(differences)
    magnitudes = np.abs(grid[grid != 0])
    if len(magnitudes) == 0:
        return SignFlipResult(1.0, "exact", 0)
    observed = abs(int(grid.sum()))
    sums, probabilities = np.array([0], dtype=np.int64), np.array([1.0])
    for magnitude in magnitudes:
        sums = np.concatenate([sums + magnitude, sums - magnitude])
        probabilities = np.concatenate([probabilities, probabilities]) / 2
        sums, inverse = np.unique(sums, return_inverse=True)
        probabilities = np.bincount(inverse, weights=probabilities)
        if len(sums) > EXACT_SUPPORT_LIMIT:
            break
    else:
        p_value = float(probabilities[np.abs(sums) >= observed].sum())
        return SignFlipResult(min(1.0, p_value), "exact", len(magnitudes))
    rng = np.random.default_rng(seed)
    hits, done, chunk = 0, 0, max(1, 2_000_000 // len(magnitudes))
    while done < draws:
        size = min(chunk, draws - done)
        signs = rng.choice(np.array([-1, 1], dtype=np.int64), size=(size, len(magnitudes)))
        hits += int((np.abs(signs @ magnitudes) >= observed).sum())
        done += size
    return SignFlipResult((1 + hits) / (1 + draws), f"monte carlo ({draws} draws)", len(magnitudes))


def holm_adjusted(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment (Holm 1979): the i-th smallest p times (m - i + 1), made
    monotone and capped at 1. Rejecting where the adjusted p is below the level keeps the chance
    of any false rejection in the family at most the level, whatever the tests' dependence."""
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    adjusted = np.empty(m)
    adjusted[order] = stepped
    return adjusted.tolist()


POWER = 0.8


def detectable_difference(
    differences: Sequence[float], level: float = SIGNIFICANCE, power: float = POWER
) -> float:
    """The smallest true mean difference that ``len(differences)`` paired cases detect with
    ``power`` at a two-sided ``level``, for two models that disagree case by case as much as
    these did: the inverse of ``cases_needed``, the per-case differences keeping their observed
    mean square (for 0/1 scores, the discordance; at least one discordant case is assumed, a
    lower bound on what n cases can show) and taking the hypothesised mean. 1.0 when no
    difference these cases could show would be detected."""
    data = _present(differences)
    n = len(data)
    if n == 0:
        return float("nan")
    spread = max(float(np.mean(data**2)), 1.0 / n)

    def needed(difference: float) -> int:
        return cases_needed(difference, float(np.sqrt(max(spread - difference**2, 0.0))), level, power)

    low, high = 1e-4, 1.0
    if needed(high) > n:
        return 1.0
    for _ in range(40):  # bisection: fewer cases are needed for a larger difference
        middle = (low + high) / 2
        low, high = (middle, high) if needed(middle) > n else (low, middle)
    return float(high)


def cases_needed(difference: float, sd: float, level: float = SIGNIFICANCE, power: float = POWER) -> int:
    """Paired cases to detect a true mean difference ``difference`` with ``power`` at a
    two-sided ``level``, for per-case differences of standard deviation ``sd`` under that
    difference: McNemar's sample size (Connor 1987), whose test statistic has the variance of the
    null, sd**2 + difference**2, and the alternative's, sd**2. Two floors keep it honest: a
    difference of ``d`` on a 0-1 scale has an sd of at least sqrt(d(1 - d)) however alike the
    models looked when it was measured, and the exact test needs k discordant cases with
    2 / 2**k below the level before any verdict is possible at all."""
    if difference <= 0:
        raise ValueError("the difference to detect must be positive")
    sd = max(sd, float(np.sqrt(difference * (1 - difference))))
    null_sd = float(np.sqrt(sd**2 + difference**2))
    z_level, z_power = stats.norm.ppf(1 - level / 2), stats.norm.ppf(power)
    normal = int(np.ceil(((z_level * null_sd + z_power * sd) / difference) ** 2))
    discordant = int(np.ceil(np.log2(2 / level)))
    return max(normal, int(np.ceil(discordant / difference)))


def discordance_sd(discordance: float, difference: float) -> float:
    """The sd of per-case differences whose mean square is ``discordance`` (for 0/1 scores, the
    share of cases two models differ on) when their mean is ``difference``: a stated assumption,
    or measured on stored scores, for planning."""
    if not 0 < discordance <= 1:
        raise ValueError("discordance is a share of cases, above 0 and at most 1")
    variance = discordance - difference**2
    if variance <= 0:
        raise ValueError(f"a mean difference of {difference} needs a discordance above {difference**2:.3f}")
    return float(np.sqrt(variance))


def paired_verdict(
    name_a: str,
    name_b: str,
    difference: Interval,
    p_value: float,
    significance: float = SIGNIFICANCE,
) -> str:
    """``"<model> better"`` only when the exact test rejects at ``significance`` and the paired
    interval excludes 0; otherwise no difference is shown."""
    if p_value < significance and difference.excludes_zero():
        return f"{name_a} better" if difference.estimate > 0 else f"{name_b} better"
    return NO_DIFFERENCE


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


def weighted_kappa(
    a: Sequence[float], b: Sequence[float], levels: Sequence[float] = (0.0, 0.5, 1.0)
) -> float:
    """Cohen's kappa linearly weighted on an ordinal scale: a 0.5 against a 1 is half a
    disagreement, a 0 against a 1 a whole one. 1 - (weighted observed disagreement) / (weighted
    disagreement expected by chance from the two marginals). NaN when it is undefined: no pairs,
    or both sides use a single label (no disagreement is possible by chance)."""
    if len(a) != len(b):
        raise ValueError("kappa needs paired labels")
    if len(a) == 0:
        return float("nan")
    index = {level: i for i, level in enumerate(levels)}
    k = len(levels)
    observed = np.zeros((k, k))
    for x, y in zip(a, b):
        observed[index[float(x)], index[float(y)]] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    positions = np.arange(k)
    weights = np.abs(positions[:, None] - positions[None, :]) / (k - 1)
    chance = float((weights * expected).sum())
    if chance == 0.0:
        return float("nan")
    return 1.0 - float((weights * observed).sum()) / chance


def bootstrap_statistic(
    values: Sequence[Sequence[float]],
    statistic,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> tuple[float, float]:
    """A percentile bootstrap interval of ``statistic`` over paired rows (the cases are
    resampled together); resamples where the statistic is undefined (NaN) are left out."""
    columns = [np.asarray(v, dtype=float) for v in values]
    n = len(columns[0])
    if n < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(resamples):
        picked = rng.integers(0, n, n)
        value = statistic(*(c[picked] for c in columns))
        if not np.isnan(value):
            draws.append(value)
    if not draws:
        return float("nan"), float("nan")
    alpha = 1 - confidence
    return float(np.quantile(draws, alpha / 2)), float(np.quantile(draws, 1 - alpha / 2))


def confusion(a: Sequence[object], b: Sequence[object], labels: Sequence[object]) -> pd.DataFrame:
    """Counts of (a label, b label); rows are a, columns b."""
    table = pd.crosstab(
        pd.Categorical(list(a), categories=labels), pd.Categorical(list(b), categories=labels), dropna=False
    )
    table.index.name, table.columns.name = "reference", "judge"
    return table
