"""Rank fusion: combine rankings from several retrievers without calibrating their scores."""

from __future__ import annotations

from collections.abc import Sequence

DEFAULT_RRF_K = 60


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], rrf_k: int = DEFAULT_RRF_K
) -> list[tuple[str, float]]:
    """Cormack et al.'s RRF: score(d) = sum over rankings of 1 / (rrf_k + rank of d), ranks from 1.

    Returns (id, score), best first; ties keep the order in which ids were first seen. Empty
    rankings give an empty list.
    """
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (rrf_k + rank)
    order = {item: position for position, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda pair: (-pair[1], order[pair[0]]))
