"""How well a corrected mean covers the truth for each way a review queue picks its cases and is
labelled, by simulation: a biased judge scores every case, a second judge disagrees with it where
it tends to be wrong, a queue is drawn as ``rag-eval review export`` draws it, people label it
(whole, its first half in review order, or as the old queue was labelled), and the labels go
through the product's own path (``metrics.agreement.with_corrected_means``), which corrects the
mean or says why not. What the tests assert and ``benchmarks/corrected_means.py`` tabulates."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from rag_eval_pipeline.metrics.agreement import corrected_mean, with_corrected_means
from rag_eval_pipeline.metrics.schema import case_set_id
from rag_eval_pipeline.metrics.settings import OVERALL
from rag_eval_pipeline.metrics.statistics import Interval
from rag_eval_pipeline.review.sampling import DISAGREEMENT_FLOOR, Draw, random_draw, systematic_draw

HUMAN = {0.0: 0.35, 0.5: 0.15, 1.0: 0.50}  # people's scores: true mean 0.575
RANDOM = "random"
WEIGHTED = "disagreement (weighted)"
HALF_LABELLED = "disagreement, queue of 2n, first n labelled"
HALF_HEAVIEST = "disagreement, queue of 2n, heaviest n labelled (before)"
REUSED = "random, labels of a run on a third of the cases"
UNWEIGHTED = "disagreement, first n (unweighted)"
# how a queue is drawn and labelled; the last is the old queue corrected as if drawn at random,
# outside the product's path (which refuses it), to show what it did
STRATEGIES = (RANDOM, WEIGHTED, HALF_LABELLED, HALF_HEAVIEST, REUSED, UNWEIGHTED)


@dataclass(frozen=True)
class Coverage:
    strategy: str
    labels: int
    coverage: float  # over the draws where a correction was reported (NaN where none was)
    mean_error: float  # corrected estimate minus the truth, averaged over the same draws
    width: float
    corrected: float  # the share of draws where the product reported a correction


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


def _label_rows(draw: Draw, labelled: list[str], human: np.ndarray, selection: str, case_set: str | None):
    """The rows a reviewer's file holds for ``labelled`` cases of the queue ``draw``, as the
    labelling page writes them (without the queue's order where ``case_set`` is None: a file
    written before queues recorded it)."""
    position = {q: i for i, q in enumerate(draw.qids)}
    placed = case_set is not None
    return pd.DataFrame(
        {
            "qid": labelled,
            "answer_model": "m",
            "metric": "correctness",
            "label": [human[int(q)] for q in labelled],
            "reviewer": "r",
            "queue": "q",
            "selection": selection,
            "inclusion_probability": [draw.inclusion[q] for q in labelled],
            "queue_position": [float(position[q]) if placed else float("nan") for q in labelled],
            "queue_size": float(len(draw.qids)) if placed else float("nan"),
            "case_set": case_set or "",
        }
    )


def _labels(strategy: str, n: int, human: np.ndarray, spread: np.ndarray, seed: int) -> pd.DataFrame:
    """The labels people give under ``strategy``: which queue, which of its cases."""
    qids = [str(i) for i in range(len(human))]
    weights = (DISAGREEMENT_FLOOR + spread).tolist()
    evaluated = case_set_id(qids)
    if strategy == RANDOM:
        draw = random_draw(qids, n, seed)
        return _label_rows(draw, draw.qids, human, "random", evaluated)
    if strategy == WEIGHTED:
        draw = systematic_draw(qids, weights, n, seed)
        return _label_rows(draw, draw.qids, human, "disagreement", evaluated)
    if strategy == HALF_LABELLED:
        draw = systematic_draw(qids, weights, 2 * n, seed)
        return _label_rows(draw, draw.qids[:n], human, "disagreement", evaluated)
    if strategy == HALF_HEAVIEST:  # the old page: heaviest first, no place recorded
        draw = systematic_draw(qids, weights, 2 * n, seed)
        heaviest = sorted(draw.qids, key=lambda q: -weights[int(q)])[:n]
        return _label_rows(draw, heaviest, human, "disagreement", None)
    if strategy == REUSED:  # a queue of an earlier run on the first third of the cases
        earlier = qids[: len(qids) // 3]
        draw = random_draw(earlier, n, seed)
        return _label_rows(draw, draw.qids, human, "random", case_set_id(earlier))
    raise ValueError(f"unknown strategy {strategy!r}")


def simulated_coverage(strategy: str, labels: int, draws: int, seed: int = 0, cases: int = 400) -> Coverage:
    """Coverage of the 95% corrected interval over ``draws`` evaluations of ``cases`` cases, of
    which ``labels`` are labelled by people as ``strategy`` picks them, counted where the product
    reports a correction."""
    rng = np.random.default_rng(seed)
    truth = sum(value * p for value, p in HUMAN.items())
    covered, corrected, error, width = 0, 0, 0.0, 0.0
    qids = [str(i) for i in range(cases)]
    for draw in range(draws):
        human = rng.choice(list(HUMAN), size=cases, p=list(HUMAN.values()))
        judged, other = _lenient(human, rng), _second_judge(human, rng)
        spread = np.abs(judged - other)
        if strategy == UNWEIGHTED:  # the old queue: the widest disagreements first, as if random
            chosen = np.lexsort((rng.random(cases), -spread))[:labels]
            result = corrected_mean(judged, judged[chosen], human[chosen]).interval
        else:
            scores = pd.DataFrame({"qid": qids, "judge_id": "j", "status": "ok", "correctness": judged})
            summary = pd.DataFrame(
                {"group": [OVERALL], "judge_id": ["j"], "metric": ["correctness"], "mean": [judged.mean()]}
            )
            row = with_corrected_means(summary, scores, _labels(strategy, labels, human, spread, seed + draw))
            row = row.iloc[0]
            if np.isnan(row["corrected_mean"]):
                continue
            result = Interval(row["corrected_mean"], row["corrected_low"], row["corrected_high"])
        corrected += 1
        covered += result.low <= truth <= result.high
        error += result.estimate - truth
        width += result.high - result.low
    if not corrected:
        nan = float("nan")
        return Coverage(strategy, labels, nan, nan, nan, 0.0)
    return Coverage(
        strategy, labels, covered / corrected, error / corrected, width / corrected, corrected / draws
    )
