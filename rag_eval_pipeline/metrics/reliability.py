"""How far a jury's jurors agree with one another: Krippendorff's alpha on the ordinal scale, per
axis, over the answers two jurors or more scored (alpha 1: they always agree; 0: no better than
chance; below 0: they disagree more than chance would have them)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from rag_eval_pipeline.metrics.schema import ANSWER_METRICS, metric_columns, per_answer

if TYPE_CHECKING:  # the judge registry names the jury from here: no pandas at its import
    import pandas as pd

JURY = "jury"
JURORS_KEY = "jurors"  # the jury rows' rationales name their jurors under this key
MODE_KEY = "jury"  # ... and how it combines them (median, weighted)
ALPHA_SUFFIX = "_juror_alpha"
ALPHA_NOTE = "Krippendorff's alpha (ordinal) between the jurors"


def ordinal_alpha(units: Sequence[Sequence[float]]) -> float:
    """Krippendorff's alpha with the ordinal distance, from each unit's values (one per coder
    that coded it; a unit with fewer than two is not pairable and left out). NaN when fewer than
    two values are pairable or every pairable value is the same."""
    pairable = [list(u) for u in units if len(u) >= 2]
    levels = sorted({v for u in pairable for v in u})
    if len(levels) < 2:
        return float("nan")
    index = {v: i for i, v in enumerate(levels)}
    coincidences = np.zeros((len(levels), len(levels)))
    for unit in pairable:
        counts = np.bincount([index[v] for v in unit], minlength=len(levels)).astype(float)
        pairs = np.outer(counts, counts) - np.diag(counts)  # ordered pairs of distinct coders
        coincidences += pairs / (len(unit) - 1)
    totals = coincidences.sum(axis=1)
    n = totals.sum()
    cumulative = np.cumsum(totals)
    # ordinal distance of levels c < k: (sum of n_g for g from c to k, minus (n_c + n_k) / 2) squared
    distance = np.zeros_like(coincidences)
    for c in range(len(levels)):
        for k in range(c + 1, len(levels)):
            between = cumulative[k] - (cumulative[c - 1] if c else 0.0)
            distance[c, k] = distance[k, c] = (between - (totals[c] + totals[k]) / 2) ** 2
    observed = float((coincidences * distance).sum())
    expected = float((np.outer(totals, totals) * distance).sum()) / (n - 1)
    return 1.0 - observed / expected if expected else float("nan")


def jurors_of(judge_scores: pd.DataFrame) -> list[str]:
    """The jurors a stored jury names (none without a jury)."""
    if "rationales" not in judge_scores:  # a table of scores alone (a test's, an old file's)
        return []
    jury = judge_scores[judge_scores["judge_id"] == JURY]
    for rationales in jury["rationales"].dropna():
        return [j for j in json.loads(rationales).get(JURORS_KEY, "").split(", ") if j]
    return []


def jury_mode_of(judge_scores: pd.DataFrame) -> str | None:
    """How a stored jury combines its jurors (None without a jury)."""
    if "rationales" not in judge_scores:
        return None
    jury = judge_scores[judge_scores["judge_id"] == JURY]
    for rationales in jury["rationales"].dropna():
        return json.loads(rationales).get(MODE_KEY, "median")
    return None


def juror_alpha(judge_scores: pd.DataFrame) -> dict[str, tuple[float, int]]:
    """Per axis of the jury (what its rows score): the jurors' alpha and the answers it was
    measured on (those two jurors or more scored)."""
    jurors = jurors_of(judge_scores)
    if not jurors:
        return {}
    jury = judge_scores[judge_scores["judge_id"] == JURY]
    axes = [m for m in metric_columns(jury) if m not in ANSWER_METRICS and jury[m].notna().any()]
    votes = per_answer(judge_scores[judge_scores["judge_id"].isin(jurors)])
    votes = votes[votes["status"] == "ok"]
    keys = ["qid", "repeat"] if "repeat" in votes else ["qid"]
    found = {}
    for axis in axes:
        if axis not in votes:
            continue
        units = [g[axis].dropna().tolist() for _, g in votes.groupby(keys, sort=False)]
        units = [u for u in units if len(u) >= 2]
        found[axis] = (ordinal_alpha(units), len(units))
    return found
