"""The weighted jury (``jury: weighted``): each juror weighed by its agreement with people's
labels, fitted on one half of the labelled cases and measured on the other, so the figure it
reports is never of the labels its weights were fitted on."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from rag_eval_pipeline.metrics.statistics import weighted_kappa

WEIGHTED_JURY = "jury:weighted"
SCALE = (0.0, 0.5, 1.0)


def held_out(answer_model: str, qid: str) -> bool:
    """Which half a labelled case falls in, by a hash of the case: the same on every run and
    machine, independent of label order, about half the cases each side."""
    return hashlib.sha256(f"{answer_model}\n{qid}".encode()).digest()[0] % 2 == 1


def weighted_median(values: Sequence[float], weights: Sequence[float]) -> float:
    """The lower weighted median: the smallest value at which the weights reach half their sum
    (equal weights: the lower median, as the median jury's)."""
    order = np.argsort(values, kind="stable")
    ordered, cumulative = np.asarray(values, float)[order], np.cumsum(np.asarray(weights, float)[order])
    return float(ordered[np.searchsorted(cumulative, cumulative[-1] / 2 - 1e-12)])


def juror_weights(fit: pd.DataFrame, jurors: Sequence[str]) -> dict[str, float]:
    """Each juror's weighted kappa with the labels of the fitting half, floored at 0 (a juror no
    better than chance gets no say); equal weights where none beats chance."""
    weights = {}
    for juror in jurors:
        mine = fit[fit["judge_id"] == juror]
        kappa = weighted_kappa(mine["label"].to_numpy(float), mine["judge"].to_numpy(float), SCALE)
        weights[juror] = 0.0 if np.isnan(kappa) else max(float(kappa), 0.0)
    return weights if sum(weights.values()) > 0 else dict.fromkeys(jurors, 1.0)


def weighted_jury_pairs(
    pairs: pd.DataFrame, jurors: Sequence[str]
) -> tuple[pd.DataFrame, dict[str, float], int]:
    """The held-out half's label pairs with the weighted jury's score in ``judge`` (one per label,
    where every juror scored the case), the weights fitted on the other half, and the number of
    cases they were fitted on. ``pairs``: one metric's label pairs (``labelled_pairs``)."""
    mine = pairs[pairs["judge_id"].isin(jurors)]
    half = [held_out(m, q) for m, q in zip(mine["answer_model"], mine["qid"])]
    fit, test = mine[[not h for h in half]], mine[half]
    weights = juror_weights(fit, jurors)
    rows = []
    keys = ["answer_model", "qid", "reviewer", "label"]
    for key, votes in test.groupby(keys, sort=True):
        if set(votes["judge_id"]) != set(jurors):
            continue
        score = weighted_median(votes["judge"].tolist(), [weights[j] for j in votes["judge_id"]])
        rows.append({**dict(zip(keys, key)), "judge_id": WEIGHTED_JURY, "judge": score})
    fitted_on = fit[["answer_model", "qid"]].drop_duplicates().shape[0]
    return pd.DataFrame(rows, columns=[*keys, "judge_id", "judge"]), weights, fitted_on
