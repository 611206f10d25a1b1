"""How often a verdict is wrong, simulated rather than assumed: equal models give no real
difference, so any 'better' is a false verdict; a known true difference measures power. The
benchmarks print the tables (``benchmarks/comparison_errors.py``), a test holds the bound."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from rag_eval_pipeline.metrics.settings import SIGNIFICANCE
from rag_eval_pipeline.metrics.statistics import (
    holm_adjusted,
    paired_difference,
    paired_verdict,
    sign_flip_test,
)

SCORE_LEVELS = np.array([0.0, 0.5, 1.0])
# a model right on about half the cases, on the judges' three-point scale
EQUAL_MODEL = (0.4, 0.2, 0.4)


def _family_verdicts(scores: list[np.ndarray], level: float, adjust: bool) -> list[str]:
    """The verdict of every pair of models in one family (one judge and metric)."""
    pairs = list(combinations(range(len(scores)), 2))
    tests = [sign_flip_test(scores[a] - scores[b]) for a, b in pairs]
    raw = [t.p_value for t in tests]
    p_values = holm_adjusted(raw) if adjust else raw
    verdicts = []
    for (a, b), p in zip(pairs, p_values):
        if p >= level:  # the interval cannot make a verdict without the test
            verdicts.append("no difference shown")
            continue
        verdicts.append(paired_verdict(str(a), str(b), paired_difference(scores[a], scores[b]), p, level))
    return verdicts


@dataclass(frozen=True)
class Draws:
    """How a verdict's error is simulated: ``count`` random draws from ``seed``, each compared at
    the significance ``level``."""

    count: int = 1000
    seed: int = 0
    level: float = SIGNIFICANCE

    def share(self, happens: Callable[[np.random.Generator], bool]) -> float:
        """The share of the draws in which ``happens`` is true."""
        rng = np.random.default_rng(self.seed)
        return sum(bool(happens(rng)) for _ in range(self.count)) / self.count


def false_verdict_rate(
    models: int,
    n: int,
    families: Draws = Draws(count=2000),
    adjust: bool = True,
    probabilities: tuple[float, float, float] = EQUAL_MODEL,
) -> float:
    """The share of ``families`` of ``models`` equal models on ``n`` cases with at least one false
    'better' verdict (the family-wise error rate of the comparison)."""

    def a_false_verdict(rng: np.random.Generator) -> bool:
        scores = [rng.choice(SCORE_LEVELS, size=n, p=probabilities) for _ in range(models)]
        return any(v != "no difference shown" for v in _family_verdicts(scores, families.level, adjust))

    return families.share(a_false_verdict)


def power(difference: float, n: int, trials: Draws = Draws(), discordance: float = 0.4) -> float:
    """The share of ``trials`` two-model comparisons on ``n`` cases that call the better model
    better, when it is right on ``difference`` more of the cases (0/1 outcomes, a share
    ``discordance`` of the cases on which the two differ)."""
    better_only = (discordance + difference) / 2
    worse_only = (discordance - difference) / 2
    if worse_only < 0:
        raise ValueError("discordance must be at least the difference")

    def detected(rng: np.random.Generator) -> bool:
        kind = rng.choice(3, size=n, p=[better_only, worse_only, 1 - discordance])
        a = np.where(kind == 0, 1.0, np.where(kind == 1, 0.0, 0.5))
        b = np.where(kind == 0, 0.0, np.where(kind == 1, 1.0, 0.5))
        return _family_verdicts([a, b], trials.level, adjust=False) == ["0 better"]

    return trials.share(detected)
