"""How well a corrected mean covers the truth for each way a review queue picks its cases, by
simulation: a biased judge scores every case, a second judge disagrees with it where it tends to
be wrong, people label a queue, and ``metrics.agreement.corrected_mean`` corrects the judge's
mean from the labels. What the tests assert and ``benchmarks/corrected_means.py`` tabulates."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rag_eval_pipeline.metrics.agreement import corrected_mean
from rag_eval_pipeline.review.sampling import DISAGREEMENT_FLOOR, random_draw, systematic_draw

HUMAN = {0.0: 0.35, 0.5: 0.15, 1.0: 0.50}  # people's scores: true mean 0.575
# how a queue is drawn, and whether the correction weights by the draw's probabilities
STRATEGIES = ("random", "disagreement (weighted)", "disagreement, first n (unweighted)")


@dataclass(frozen=True)
class Coverage:
    strategy: str
    labels: int
    coverage: float
    mean_error: float  # corrected estimate minus the truth, averaged
    width: float


def _lenient(human: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A judge biased by about +0.15: it passes a share of what people fail."""
    judged = human.copy()
    flip = rng.random(len(human))
    judged[(human == 0.0) & (flip < 0.3)] = 1.0
    judged[(human == 0.5) & (flip < 0.5)] = 1.0
    return judged


def _second_judge(human: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Another judge, right on 80% of the cases: where it and the first disagree, the first is
    often wrong (what a disagreement queue exploits)."""
    judged = human.copy()
    noisy = rng.random(len(human)) < 0.2
    judged[noisy] = rng.choice(list(HUMAN), size=int(noisy.sum()))
    return judged


def simulated_coverage(strategy: str, labels: int, draws: int, seed: int = 0, cases: int = 400) -> Coverage:
    """Coverage of the 95% corrected interval over ``draws`` evaluations of ``cases`` cases, of
    which ``labels`` are labelled by people as ``strategy`` picks them."""
    rng = np.random.default_rng(seed)
    truth = sum(value * p for value, p in HUMAN.items())
    covered, error, width = 0, 0.0, 0.0
    qids = [str(i) for i in range(cases)]
    for draw in range(draws):
        human = rng.choice(list(HUMAN), size=cases, p=list(HUMAN.values()))
        judged, other = _lenient(human, rng), _second_judge(human, rng)
        spread = np.abs(judged - other)
        if strategy == "random":
            picked = random_draw(qids, labels, seed + draw)
            inclusion = picked.inclusion
        elif strategy == "disagreement (weighted)":
            picked = systematic_draw(qids, (DISAGREEMENT_FLOOR + spread).tolist(), labels, seed + draw)
            inclusion = picked.inclusion
        else:  # the old queue: the widest disagreements first, corrected as if drawn at random
            order = np.lexsort((rng.random(cases), -spread))[:labels]
            picked, inclusion = None, None
            chosen = order
        if picked is not None:
            chosen = np.asarray([int(q) for q in picked.qids])
        weights = None if inclusion is None else [inclusion[str(i)] for i in chosen]
        result = corrected_mean(judged, judged[chosen], human[chosen], weights).interval
        covered += result.low <= truth <= result.high
        error += result.estimate - truth
        width += result.high - result.low
    return Coverage(strategy, labels, covered / draws, error / draws, width / draws)
