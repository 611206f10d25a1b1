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

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist
from typing import TYPE_CHECKING

import numpy as np

from rag_eval_pipeline.metrics.settings import (
    CONFIDENCE,
    MONTE_CARLO_DRAWS,
    SIGNIFICANCE,
    IntervalMethod,
)

if TYPE_CHECKING:
    import pandas as pd

RESAMPLES = 2000
SEED = 0
EXACT_SUPPORT_LIMIT = 200_000  # distinct sums kept while enumerating sign flips exactly
NO_DIFFERENCE = "no difference shown"


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float

    def excludes_zero(self) -> bool:
        return bool(self.low > 0 or self.high < 0)


_NAN_INTERVAL = Interval(float("nan"), float("nan"), float("nan"))


def _absent(value: object) -> bool:
    """None, NaN or pandas' NA (pandas itself not imported: `rag-eval plan` does without it)."""
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN is the one value unequal to itself
    except TypeError:  # pandas' NA has no truth value
        return True


def _present(values: Sequence[float]) -> np.ndarray:
    return np.asarray([v for v in values if not _absent(v)], dtype=float)


def wilson_interval(mean: float, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval of a mean in [0, 1] over ``n`` cases (vectorizes over arrays)."""
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    mean, n = np.asarray(mean, dtype=float), np.asarray(n, dtype=float)
    denominator = 1 + z**2 / n
    centre = (mean + z**2 / (2 * n)) / denominator
    half = z / denominator * np.sqrt(np.clip(mean * (1 - mean), 0, None) / n + z**2 / (4 * n**2))
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def clopper_pearson_interval(mean: float, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Clopper-Pearson interval of a mean in [0, 1] over ``n`` cases, with ``n * mean`` successes
    (continuous in the mean, so 0.5 scores need no rounding); vectorizes over arrays."""
    # the beta quantile itself (stats.beta.ppf checks its arguments for a millisecond a call)
    from scipy.special import betaincinv  # imported when used: 1 s at import otherwise

    alpha = 1 - confidence
    mean, n = np.asarray(mean, dtype=float), np.asarray(n, dtype=float)
    successes = mean * n
    failures = n - successes
    with np.errstate(invalid="ignore"):
        low = betaincinv(np.maximum(successes, 1e-300), failures + 1, alpha / 2)
        high = betaincinv(successes + 1, np.maximum(failures, 1e-300), 1 - alpha / 2)
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
    if method == "percentile":
        low, high = _percentile_bootstrap(data, confidence, resamples, seed)
        return Interval(mean, low, high)
    from scipy import stats  # BCa only: 1 s at import otherwise

    result = stats.bootstrap(
        (data,),
        np.mean,
        confidence_level=confidence,
        n_resamples=resamples,
        method=method,
        rng=np.random.default_rng(seed),
    )
    return Interval(mean, float(result.confidence_interval.low), float(result.confidence_interval.high))


BOOTSTRAP_BATCH = 4_000_000  # resampled values held at once: memory stays bounded on large lists


def _percentile_bootstrap(
    data: np.ndarray, confidence: float, resamples: int, seed: int
) -> tuple[float, float]:
    """The percentile interval of the means of ``resamples`` seeded resamples with replacement
    (what scipy's ``bootstrap(method="percentile")`` computes, without importing scipy.stats)."""
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    batch = max(1, BOOTSTRAP_BATCH // len(data))
    for start in range(0, resamples, batch):
        stop = min(resamples, start + batch)
        means[start:stop] = data[rng.integers(0, len(data), size=(stop - start, len(data)))].mean(axis=1)
    alpha = 1 - confidence
    low, high = np.percentile(means, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(low), float(high)


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


# Differences are summed exactly where they are fractions of a small common denominator (0/0.5/1
# scores, their means over repeats, F1 of short answers): then ties between sums are exact ties.
MAX_DENOMINATOR = 10**4  # a difference is read as a fraction of at most this denominator
MAX_COMMON_DENOMINATOR = 10**9  # beyond this, sums are floats compared with a tolerance
RELATIVE_TOLERANCE = 1e-9  # of the sum of magnitudes: float sums this close are one sum


def _as_integers(differences: np.ndarray) -> np.ndarray | None:
    """The differences as integers over their common denominator, when every one is exactly (to
    a float's precision) a fraction of a small denominator and the sums stay well inside int64;
    None otherwise (continuous scores)."""
    values, where = np.unique(differences, return_inverse=True)  # scores repeat: few distinct values
    fractions = [Fraction(d).limit_denominator(MAX_DENOMINATOR) for d in values.tolist()]
    if any(abs(float(f) - d) > 1e-12 * max(1.0, abs(d)) for f, d in zip(fractions, values.tolist())):
        return None
    common = math.lcm(*(f.denominator for f in fractions)) if fractions else 1
    if common > MAX_COMMON_DENOMINATOR:
        return None
    numerators = [int(f * common) for f in fractions]
    if sum(abs(numerators[i]) for i in where.tolist()) >= 2**62:
        return None
    return np.asarray(numerators, dtype=np.int64)[where]


def _merged(sums: np.ndarray, probabilities: np.ndarray, tolerance: float) -> tuple[np.ndarray, np.ndarray]:
    """Equal sums as one (exactly for integers; within ``tolerance`` for floats, whose order of
    addition moves a sum by a few units in the last place)."""
    sums, inverse = np.unique(sums, return_inverse=True)
    probabilities = np.bincount(inverse, weights=probabilities)
    if tolerance > 0 and len(sums) > 1:
        group = np.concatenate([[0], np.cumsum(np.diff(sums) > tolerance)])
        probabilities = np.bincount(group, weights=probabilities)
        sums = sums[np.concatenate([[0], np.flatnonzero(np.diff(group)) + 1])]
    return sums, probabilities


DENSE_SUM_LIMIT = 2_000_000  # integer sums up to this large are counted on a dense grid


SHIFTED_AT_MOST = 64  # copies of a magnitude added shift by shift; more: one FFT convolution


def _binomial_weights(count: int) -> np.ndarray:
    """P(k of ``count`` fair signs positive) for k = 0..count, computed in log space: the plain
    binom(count, k) * 0.5**count overflows to nan past about 1,030 copies."""
    from scipy.special import gammaln  # imported when used

    k = np.arange(count + 1)
    logs = gammaln(count + 1) - gammaln(k + 1) - gammaln(count - k + 1) - count * math.log(2)
    return np.exp(logs)


def _two_sided_binomial(count: int, steps: int) -> float:
    """P(|2K - count| >= steps) for K ~ Binomial(count, 1/2): both tails from the regularized
    incomplete beta function (exact to a float's precision at any count)."""
    from scipy.special import bdtr  # imported when used

    if steps <= 0:
        return 1.0
    lowest = math.floor((count - steps) / 2)  # K at most this: 2K - count <= -steps
    return min(1.0, 2.0 * float(bdtr(lowest, count, 0.5))) if lowest >= 0 else 0.0


def _dense_p(magnitudes: np.ndarray, observed: int) -> float:
    """P(|sum of random signs times magnitudes| >= observed) for integer magnitudes. One size of
    difference (every changed case 0 -> 1 or 1 -> 0): the exact two-sided binomial tail. Several
    sizes (0 / 0.5 / 1 scores): the distribution on a grid of every possible sum, each size's
    copies adding a binomial (k of c copies positive) with weights computed in log space; many
    copies of one size are added by an FFT convolution, so 100,000 changed cases take moments."""
    values, counts = np.unique(magnitudes, return_counts=True)
    if len(values) == 1:
        magnitude, count = int(values[0]), int(counts[0])
        return _two_sided_binomial(count, -(-observed // magnitude))
    total = int(magnitudes.sum())
    probabilities = np.ones(1)  # the sum of no copies: 0, on a grid from -reach to +reach
    reach = 0
    for magnitude, count in zip(values.tolist(), counts.tolist()):
        weights = _binomial_weights(count)
        width = 2 * magnitude * count + 1  # this size's sums: magnitude * (2k - count)
        if count <= SHIFTED_AT_MOST:
            grown = np.zeros(len(probabilities) + width - 1)
            for k, weight in enumerate(weights.tolist()):
                shift = 2 * magnitude * k
                grown[shift : shift + len(probabilities)] += weight * probabilities
        else:
            component = np.zeros(width)
            component[:: 2 * magnitude] = weights
            grown = np.clip(_fft_convolution(probabilities, component), 0.0, None)
        probabilities, reach = grown, reach + magnitude * count
    sums = np.abs(np.arange(-reach, reach + 1))
    assert reach == total, (reach, total)
    return float(probabilities[sums >= observed].sum())


def _fft_convolution(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The full linear convolution of ``a`` and ``b`` through numpy's real FFT (scipy.signal's
    fftconvolve computes the same, but importing it cost a fresh process 0.5 to 1.2 s)."""
    length = len(a) + len(b) - 1
    size = 1 << (length - 1).bit_length()
    return np.fft.irfft(np.fft.rfft(a, size) * np.fft.rfft(b, size), size)[:length]


def sign_flip_test(
    differences: Sequence[float], draws: int = MONTE_CARLO_DRAWS, seed: int = SEED
) -> SignFlipResult:
    """Exact paired sign-flip test of "mean difference = 0" (Fisher's randomization test).

    Under the null each case's difference is as likely positive as negative, so the reference
    distribution of the sum is that of every sign assignment; p = P(|sum| >= |observed sum|).
    Differences that are fractions of a small common denominator (0 / 0.5 / 1 scores, means of
    repeats in thirds or sixths, F1 of short answers) are summed as integers over it, so a tie
    between two sums is an exact tie and counts; continuous differences are summed as floats and
    compared with a tolerance of ``RELATIVE_TOLERANCE`` of their total. The distribution is
    enumerated while it has at most ``EXACT_SUPPORT_LIMIT`` distinct sums (always for 0/0.5/1
    scores); above that ``draws`` seeded random sign assignments give a Monte Carlo p-value,
    (1 + hits) / (1 + draws) (Phipson & Smyth 2010). For 0/1 outcomes the non-zero differences
    are McNemar's discordant pairs and p equals the exact McNemar test. No non-zero difference:
    p = 1.
    """
    data = _present(differences)
    integers = _as_integers(data)
    values = integers if integers is not None else data
    magnitudes = np.abs(values[values != 0])
    if len(magnitudes) == 0:
        return SignFlipResult(1.0, "exact", 0)
    tolerance = 0.0 if integers is not None else RELATIVE_TOLERANCE * float(magnitudes.sum())
    observed = abs(values.sum())
    threshold = observed - tolerance  # a sum this large in magnitude is as extreme as the observed
    if integers is not None and int(magnitudes.sum()) <= DENSE_SUM_LIMIT:
        p_value = _dense_p(magnitudes, int(observed))
        return SignFlipResult(min(1.0, p_value), "exact", len(magnitudes))
    # continuous differences of many distinct sizes have about 2**sizes distinct sums: past the
    # limit at once, so they are drawn without building the part of the distribution that fits
    enumerable = integers is not None or len(np.unique(magnitudes)) <= math.log2(EXACT_SUPPORT_LIMIT)
    sums, probabilities = np.zeros(1, dtype=values.dtype), np.array([1.0])
    for magnitude in magnitudes if enumerable else ():
        sums = np.concatenate([sums + magnitude, sums - magnitude])
        probabilities = np.concatenate([probabilities, probabilities]) / 2
        sums, probabilities = _merged(sums, probabilities, tolerance)
        if len(sums) > EXACT_SUPPORT_LIMIT:
            break
    else:
        if not enumerable:
            return _monte_carlo(magnitudes, threshold, draws, seed)
        p_value = float(probabilities[np.abs(sums) >= threshold].sum())
        return SignFlipResult(min(1.0, p_value), "exact", len(magnitudes))
    return _monte_carlo(magnitudes, threshold, draws, seed)


def _monte_carlo(magnitudes: np.ndarray, threshold: float, draws: int, seed: int) -> SignFlipResult:
    """``draws`` seeded random sign assignments: p = (1 + hits) / (1 + draws). Each assignment
    is a row of random bits (a set bit flips that difference's sign), drawn as bytes and unpacked:
    2.5 times the speed of drawing each sign alone, which at 20,000 pairs was most of a diff."""
    rng = np.random.default_rng(seed)
    n, total = len(magnitudes), magnitudes.sum()
    hits, done, chunk = 0, 0, max(1, 2_000_000 // n)
    while done < draws:
        size = min(chunk, draws - done)
        flipped = np.unpackbits(
            rng.integers(0, 256, size=(size, (n + 7) // 8), dtype=np.uint8), axis=1, count=n
        )
        hits += int((np.abs(total - 2 * (flipped @ magnitudes)) >= threshold).sum())
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
DETECTABLE_STEPS = 17  # bisection steps of the detectable difference: to 1e-5, below what is shown
POWER_SEARCH_MARGIN = 1.05  # the planned n keeps its power up to this multiple of it (and 20 more)


def _discordance_model(difference: float, discordance: float) -> float:
    """The chance that a discordant case favours the first model, when two models differ on a
    share ``discordance`` of the cases by ``difference`` on average (0/1 scores: each differing
    case is +1 or -1)."""
    if not 0 < discordance <= 1:
        raise ValueError("discordance is a share of cases, above 0 and at most 1")
    if not 0 < difference <= discordance:
        raise ValueError(f"a mean difference of {difference} needs a discordance of at least {difference}")
    return (discordance + difference) / (2 * discordance)


@functools.lru_cache(maxsize=4096)
def _critical_splits(n: int, level: float) -> np.ndarray:
    """For every count k of discordant cases out of n, the largest split c whose two-sided
    binomial p is below ``level`` (P(X <= c) < level / 2 under a fair coin; -1 where none is):
    the same for every difference, so a search over differences computes it once."""
    from scipy.special import bdtr  # imported when used: 1 s at import otherwise

    k = np.arange(n + 1)
    c = np.full(n + 1, -1.0)
    for _ in range(2):  # c grows with k: start from the normal approximation, then correct
        guess = np.floor(k / 2 - 1.96 * np.sqrt(np.maximum(k, 1)) / 2) if _ == 0 else c
        c = np.clip(guess, -1, None)
        while True:  # up while the next split still rejects, down while this one does not
            up = (c + 1 < k / 2) & (2 * bdtr(c + 1, k, 0.5) < level)
            down = (c >= 0) & ~(2 * bdtr(np.maximum(c, 0), k, 0.5) < level)
            if not up.any() and not down.any():
                break
            c = c + up - down
    return c


def exact_power(n: int, difference: float, discordance: float, level: float = SIGNIFICANCE) -> float:
    """The power of this project's paired test (the exact sign-flip test, which on 0/1 scores is
    the exact McNemar test) at a two-sided ``level`` on ``n`` cases, computed exactly: the
    number of discordant cases is binomial (n, discordance), and among them the test rejects
    when the two-sided binomial p of the split is below the level. Scores on 0/0.5/1 with the
    same mean square difference have at least this power (measured in benchmarks/)."""
    from scipy.special import bdtr, bdtrc, gammaln  # imported when used: 1 s at import otherwise

    favours_first = _discordance_model(difference, discordance)
    # the counts of discordant cases that carry the probability (beyond 9 sd: below 1e-18)
    spread = 9 * np.sqrt(n * discordance * (1 - discordance)) + 2
    k = np.arange(max(0, int(n * discordance - spread)), min(n, int(n * discordance + spread)) + 1)
    c = _critical_splits(n, level)[k]
    with np.errstate(divide="ignore", invalid="ignore"):
        rejects = np.where(
            c >= 0,
            bdtr(np.maximum(c, 0), k, favours_first) + bdtrc(np.maximum(k - c - 1, 0), k, favours_first),
            0.0,
        )
        if discordance >= 1.0:
            chance = (k == n).astype(float)
        else:
            chance = np.exp(
                gammaln(n + 1)
                - gammaln(k + 1)
                - gammaln(n - k + 1)
                + k * np.log(discordance)
                + (n - k) * np.log1p(-discordance)
            )
    return float(np.sum(chance * rejects))


def _normal_cases(difference: float, discordance: float, level: float, power: float) -> int:
    """McNemar's normal-approximation sample size (Connor 1987): where the exact search starts."""
    sd = float(np.sqrt(discordance - difference**2))
    null_sd = float(np.sqrt(discordance))
    z_level, z_power = NormalDist().inv_cdf(1 - level / 2), NormalDist().inv_cdf(power)
    return max(1, int(np.ceil(((z_level * null_sd + z_power * sd) / difference) ** 2)))


def cases_needed(
    difference: float, discordance: float, level: float = SIGNIFICANCE, power: float = POWER
) -> int:
    """Paired cases for the exact test to detect a true mean difference ``difference`` with
    ``power`` at a two-sided ``level``, for two models that differ on a share ``discordance``
    of the cases: the smallest n whose exact power (``exact_power``) reaches ``power`` and stays
    there for every larger n up to ``POWER_SEARCH_MARGIN`` times it (the exact power is a saw
    in n, so the first n over the line can be followed by ones below it). The normal
    approximation alone sized about 5% short (312 for 330 at 0.1 and 40%)."""
    start = _normal_cases(difference, discordance, level, power)
    powers: dict[int, float] = {}

    def at(n: int) -> float:
        if n not in powers:
            powers[n] = exact_power(n, difference, discordance, level)
        return powers[n]

    low, high = max(1, start // 2), start * 2
    while at(high) < power:
        low, high = high, high * 2
    while low + 1 < high:  # bisection to the first crossing, as if the power rose steadily
        middle = (low + high) // 2
        low, high = (low, middle) if at(middle) >= power else (middle, high)
    n = high
    while True:  # then the saw: no n in the margin above may fall back below the line
        below = next((m for m in range(n + 1, int(n * POWER_SEARCH_MARGIN) + 21) if at(m) < power), None)
        if below is None:
            return n
        n = below + 1
        while at(n) < power:
            n += 1


def power_curve(
    planned: int, difference: float, discordance: float, level: float = SIGNIFICANCE
) -> list[tuple[int, float]]:
    """The exact power at fractions of the planned n (60% to 140%): what fewer or more cases buy."""
    sizes = sorted({max(1, round(planned * f)) for f in (0.6, 0.8, 0.9, 1.0, 1.1, 1.2, 1.4)})
    return [(n, exact_power(n, difference, discordance, level)) for n in sizes]


def detectable_difference(
    differences: Sequence[float], level: float = SIGNIFICANCE, power: float = POWER
) -> float:
    """The smallest true mean difference that ``len(differences)`` paired cases detect with
    ``power`` at a two-sided ``level`` (the exact power of ``exact_power``), for two models
    that disagree case by case as much as these did: their mean square difference taken as the
    discordance (for 0/1 scores, the share of cases they differ on), or the difference itself
    where that is larger (a difference of d needs a share d of cases to differ). 1.0 when no
    difference these cases could show would be detected."""
    data = _present(differences)
    n = len(data)
    if n == 0:
        return float("nan")
    observed = float(np.mean(data**2))

    def detected(difference: float) -> bool:  # a difference of d needs at least d discordance
        return exact_power(n, difference, min(1.0, max(observed, difference)), level) >= power

    if not detected(1.0):
        return 1.0
    low, high = 0.0, 1.0
    for _ in range(DETECTABLE_STEPS):  # bisection: the power grows with the difference
        middle = (low + high) / 2
        low, high = (low, middle) if middle > 0 and detected(middle) else (middle, high)
    return float(high)


def paired_verdict(
    name_a: str,
    name_b: str,
    difference: Interval,
    p_value: float,
    significance: float = SIGNIFICANCE,
    lower_is_better: bool = False,
) -> str:
    """``"<model> better"`` only when the exact test rejects at ``significance`` and the paired
    interval excludes 0 (of a metric better lower, the model with the lower mean); otherwise no
    difference is shown."""
    if p_value < significance and difference.excludes_zero():
        a_higher = difference.estimate > 0
        return f"{name_a} better" if a_higher != lower_is_better else f"{name_b} better"
    return NO_DIFFERENCE


def mcnemar_exact(a_correct: Sequence[bool], b_correct: Sequence[bool]) -> tuple[int, int, float]:
    """Exact McNemar test: (cases only a got right, cases only b got right, two-sided p).
    With no discordant case p = 1: for p = 1/2 the binomial is symmetric, so the two-sided p is
    twice the smaller tail (what scipy's ``binomtest`` gives), capped at 1."""
    from scipy.special import bdtr  # imported when used

    a_arr, b_arr = np.asarray(a_correct, dtype=bool), np.asarray(b_correct, dtype=bool)
    only_a = int(np.sum(a_arr & ~b_arr))
    only_b = int(np.sum(~a_arr & b_arr))
    if only_a + only_b == 0:
        return only_a, only_b, 1.0
    return only_a, only_b, min(1.0, 2 * float(bdtr(min(only_a, only_b), only_a + only_b, 0.5)))


def cohen_kappa(a: Sequence[object], b: Sequence[object]) -> float:
    """Agreement beyond chance: (p_o - p_e) / (1 - p_e). Perfect agreement on a single label
    (p_e = 1) is 1.0; no pairs is NaN."""
    if len(a) != len(b):
        raise ValueError("kappa needs paired labels")
    if len(a) == 0:
        return float("nan")
    import pandas as pd

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
    or either side uses a single label (then agreement beyond chance cannot be told from none:
    a judge that says 1 on every case would read 0, whatever people said)."""
    if len(a) != len(b):
        raise ValueError("kappa needs paired labels")
    if len(a) == 0:
        return float("nan")
    if len(set(map(float, a))) < 2 or len(set(map(float, b))) < 2:
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


def weighted_kappa_interval(
    a: Sequence[float],
    b: Sequence[float],
    levels: Sequence[float] = (0.0, 0.5, 1.0),
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> tuple[float, float]:
    """The percentile bootstrap interval of ``weighted_kappa``, computed from the k x k table
    of label pairs: resampling n pairs with replacement is drawing the table's counts from a
    multinomial on its cell shares, so every resample is one row of a vectorised draw instead
    of a Python loop over the pairs (milliseconds at any n). Undefined resamples (one side
    gives one label) are left out, as ``bootstrap_statistic`` does."""
    if len(a) != len(b):
        raise ValueError("kappa needs paired labels")
    n = len(a)
    if n < 2:
        return float("nan"), float("nan")
    index = {level: i for i, level in enumerate(levels)}
    k = len(levels)
    cells = np.asarray([index[float(x)] * k + index[float(y)] for x, y in zip(a, b)])
    shares = np.bincount(cells, minlength=k * k) / n
    counts = np.random.default_rng(seed).multinomial(n, shares, size=resamples).reshape(-1, k, k) / n
    rows, columns = counts.sum(axis=2), counts.sum(axis=1)
    positions = np.arange(k)
    weights = np.abs(positions[:, None] - positions[None, :]) / (k - 1)
    chance = np.einsum("ij,ri,rj->r", weights, rows, columns)
    observed = np.einsum("ij,rij->r", weights, counts)
    defined = ((rows > 0).sum(axis=1) >= 2) & ((columns > 0).sum(axis=1) >= 2) & (chance > 0)
    if not defined.any():
        return float("nan"), float("nan")
    draws = 1.0 - observed[defined] / chance[defined]
    alpha = 1 - confidence
    return float(np.quantile(draws, alpha / 2)), float(np.quantile(draws, 1 - alpha / 2))


def confusion(a: Sequence[object], b: Sequence[object], labels: Sequence[object]) -> pd.DataFrame:
    """Counts of (a label, b label); rows are a, columns b."""
    import pandas as pd

    table = pd.crosstab(
        pd.Categorical(list(a), categories=labels), pd.Categorical(list(b), categories=labels), dropna=False
    )
    table.index.name, table.columns.name = "reference", "judge"
    return table
