"""Which of a day's interactions are scored: those the filters keep, then a seeded random sample
of at most N, in proportion to each agent version's traffic when several versions are live.

The sample is drawn by ranking each interaction by a hash of (seed, day, its id) and keeping the
lowest ranks ("bottom-k"): a uniform random sample without replacement that the same seed draws
again exactly, and that late rows disturb only where they rank below the cut, so re-scoring a
day after late logs repeats almost no paid call."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

import pandas as pd

from rag_eval_pipeline.production.settings import ProductionFilters

SAMPLE_COLUMNS = ["rank", "population", "stratum_size", "stratum_sampled"]


def sample_rank(seed: int, day: str, interaction_id: str) -> str:
    """An interaction's place in its day's random order: the same seed, the same order."""
    return hashlib.sha256(f"{seed}:{day}:{interaction_id}".encode()).hexdigest()


def _metadata_matches(metadata: str, wanted: Mapping[str, str | list[str]]) -> bool:
    try:
        values = json.loads(metadata) if metadata else {}
    except ValueError:
        values = {}
    for key, allowed in wanted.items():
        choices = allowed if isinstance(allowed, list) else [allowed]
        if str(values.get(key)) not in {str(c) for c in choices}:
            return False
    return True


def filtered(interactions: pd.DataFrame, filters: ProductionFilters) -> pd.DataFrame:
    """The interactions the filters keep (every one when none is set)."""
    keep = pd.Series(True, index=interactions.index)
    if filters.agent_versions is not None:
        keep &= interactions["agent_version"].isin(filters.agent_versions)
    if filters.user_feedback is not None:
        keep &= interactions["user_feedback"].isin(filters.user_feedback)
    if filters.metadata:
        keep &= interactions["metadata"].map(lambda m: _metadata_matches(m, filters.metadata))
    return interactions[keep]


def allocation(sizes: Mapping[str, int], n: int) -> dict[str, int]:
    """Cases per stratum, proportional to its size (largest remainder; ties to the larger
    stratum, then by name), never more than it holds: the sample stays self-weighting."""
    total = sum(sizes.values())
    if total <= n:
        return dict(sizes)
    exact = {k: n * v / total for k, v in sizes.items()}
    counts = {k: int(q) for k, q in exact.items()}
    order = sorted(sizes, key=lambda k: (-(exact[k] - counts[k]), -sizes[k], k))
    for key in order[: n - sum(counts.values())]:
        counts[key] += 1
    return counts


def draw_sample(
    interactions: pd.DataFrame, day: str, n: int, seed: int, stratify: bool = True
) -> pd.DataFrame:
    """At most ``n`` of the day's interactions, each with its rank, the day's population, and its
    stratum's size and share of the sample; stratified by agent version when ``stratify`` and
    several versions are present. Ordered by rank, so the first cases are the sample's first."""
    if interactions.empty:
        return interactions.assign(**{c: pd.Series(dtype=object) for c in SAMPLE_COLUMNS})
    ranked = interactions.assign(
        rank=[sample_rank(seed, day, i) for i in interactions["interaction_id"]]
    ).sort_values(["rank", "interaction_id"])
    strata = ranked["agent_version"] if stratify else pd.Series("all", index=ranked.index)
    sizes = strata.value_counts().to_dict()
    counts = allocation({str(k): int(v) for k, v in sizes.items()}, n)
    picked = [rows.head(counts[str(key)]) for key, rows in ranked.groupby(strata, sort=True)]
    sample = pd.concat(picked).sort_values(["rank", "interaction_id"])
    stratum = strata.loc[sample.index].astype(str)
    return sample.assign(
        population=len(interactions),
        stratum_size=stratum.map(sizes).astype(int),
        stratum_sampled=stratum.map(counts).astype(int),
    ).reset_index(drop=True)
