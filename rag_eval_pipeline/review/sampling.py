"""How a review queue draws its cases, with each case's probability of being drawn, so that the
labels can correct a judge's mean without bias (``metrics/agreement.py``): a simple random
sample, or a draw weighted towards the cases the judges disagree on (systematic sampling with
probability proportional to a weight that is never 0). Deterministic orders ("lowest first")
have no such probability: their labels measure a judge, but cannot correct its mean."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# every case keeps a chance to be drawn: the weight of a case the judges agree on, against 1 for
# one they disagree on completely (0 against 1)
DISAGREEMENT_FLOOR = 0.2


@dataclass(frozen=True)
class Draw:
    """The drawn cases in review order, and each one's inclusion probability (None where the
    queue is an order, not a probability draw)."""

    qids: list[str]
    inclusion: dict[str, float] | None


def inclusion_probabilities(weights: Sequence[float], n: int) -> np.ndarray:
    """Probabilities proportional to ``weights`` summing to ``n`` (at most the number of cases),
    none above 1: a case whose share would exceed 1 is certain, and the rest share what is left."""
    w = np.asarray(weights, dtype=float)
    n = min(n, len(w))
    pi = np.zeros(len(w))
    certain = np.zeros(len(w), dtype=bool)
    while True:
        left = n - certain.sum()
        rest = ~certain
        total = w[rest].sum()
        pi[rest] = left * w[rest] / total if total > 0 else left / max(1, rest.sum())
        over = rest & (pi >= 1.0)
        if not over.any():
            break
        certain |= over
        pi[certain] = 1.0
    return np.clip(pi, 0.0, 1.0)


def systematic_draw(qids: Sequence[str], weights: Sequence[float], n: int, seed: int) -> Draw:
    """Exactly ``min(n, cases)`` cases, each drawn with probability proportional to its weight
    (``inclusion_probabilities``): systematic sampling over a seeded random order, so every
    case's inclusion probability is exactly its share. Review order: a random order of its own,
    drawn after the cases, so the first k reviewed are a random k of the draw and a queue
    labelled only in part is still a draw (each case's chance times k / n); heaviest first
    would make a half-labelled queue a biased one."""
    rng = np.random.default_rng(seed)
    pi = inclusion_probabilities(weights, n)
    order = rng.permutation(len(qids))
    cumulative = np.cumsum(pi[order])
    points = rng.uniform() + np.arange(int(round(pi.sum())))
    picked = order[np.minimum(np.searchsorted(cumulative, points, side="right"), len(order) - 1)]
    picked = np.asarray(list(dict.fromkeys(picked.tolist())))
    picked = picked[rng.permutation(len(picked))]
    return Draw([qids[i] for i in picked], {qids[i]: float(pi[i]) for i in picked})


def random_draw(qids: Sequence[str], n: int, seed: int) -> Draw:
    """A simple random sample of ``min(n, cases)`` cases: each drawn with probability n / N."""
    rng = np.random.default_rng(seed)
    order = [qids[i] for i in rng.permutation(len(qids))][:n]
    share = min(1.0, n / len(qids)) if qids else 1.0
    return Draw(order, {qid: share for qid in order})
