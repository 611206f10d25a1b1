"""Judges measured against people: agreement on the 0 / 0.5 / 1 scale, the pass/fail rates at
0.5, reviewers against each other, and a judge's mean corrected by the human labels
(prediction-powered inference: the judge on every case, plus the mean human-minus-judge
difference where people labelled)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from rag_eval_pipeline.metrics.schema import OVERALL, per_case
from rag_eval_pipeline.metrics.statistics import (
    Interval,
    bootstrap_statistic,
    clopper_pearson_interval,
    confusion,
    weighted_kappa,
)

PASS_AT = 0.5  # a score at or above it passes
SCALE = (0.0, 0.5, 1.0)
LABELLED_METRICS = ("correctness", "faithfulness", "context_relevance")  # the STRICT rubric's axes
Z95 = 1.959964


@dataclass(frozen=True)
class AgreementBars:
    """Below either, a judge is flagged: do not publish its numbers unchecked."""

    min_kappa: float = 0.5
    min_rate: float = 0.8


AGREEMENT_COLUMNS = [
    "judge_id",
    "metric",
    "n",
    "accuracy",
    "kappa",
    "kappa_low",
    "kappa_high",
    "kappa_note",
    "true_positive_rate",
    "tpr_low",
    "tpr_high",
    "true_negative_rate",
    "tnr_low",
    "tnr_high",
    "flagged",
    "why",
]


def _rate(hits: int, n: int) -> tuple[float, float, float]:
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    low, high = clopper_pearson_interval(hits / n, n)
    return hits / n, float(low), float(high)


def agreement_row(human: Sequence[float], judged: Sequence[float], bars: AgreementBars) -> dict[str, object]:
    """One judge on one metric against people: accuracy, linearly weighted kappa with a
    bootstrap interval, and the pass/fail rates at 0.5 with exact intervals (a judge that passes
    what people fail is a different danger from one that fails what they pass)."""
    human_a, judged_a = np.asarray(human, dtype=float), np.asarray(judged, dtype=float)
    kappa = weighted_kappa(human_a, judged_a, SCALE)
    low, high = bootstrap_statistic([list(human_a), list(judged_a)], lambda a, b: weighted_kappa(a, b, SCALE))
    positive, negative = human_a >= PASS_AT, human_a < PASS_AT
    tpr = _rate(int((judged_a[positive] >= PASS_AT).sum()), int(positive.sum()))
    tnr = _rate(int((judged_a[negative] < PASS_AT).sum()), int(negative.sum()))
    why = []
    if not np.isnan(kappa) and kappa < bars.min_kappa:
        why.append(f"kappa {kappa:.2f} < {bars.min_kappa}")
    for name, (rate, _, _) in (("true-positive rate", tpr), ("true-negative rate", tnr)):
        if not np.isnan(rate) and rate < bars.min_rate:
            why.append(f"{name} {rate:.2f} < {bars.min_rate}")
    return {
        "n": len(human_a),
        "accuracy": float(np.mean(human_a == judged_a)) if len(human_a) else float("nan"),
        "kappa": kappa,
        "kappa_low": low,
        "kappa_high": high,
        "kappa_note": "" if not np.isnan(kappa) else "undefined: one label only on both sides",
        "true_positive_rate": tpr[0],
        "tpr_low": tpr[1],
        "tpr_high": tpr[2],
        "true_negative_rate": tnr[0],
        "tnr_low": tnr[1],
        "tnr_high": tnr[2],
        "flagged": bool(why),
        "why": "; ".join(why),
    }


def labelled_pairs(labels: pd.DataFrame, scores_by_model: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Every label beside the score each judge gave the same answer on the same metric: one row
    per (reviewer, answer model, case, judge, metric). A label on a case a judge did not score
    (an answer that failed, a judge error) has no pair."""
    rows = []
    for model, scores in scores_by_model.items():
        mine = labels[labels["answer_model"] == model]
        if mine.empty:
            continue
        cases = per_case(scores)
        cases = cases[cases["status"] == "ok"]
        for metric, by_metric in mine.groupby("metric"):
            if metric not in cases:
                continue
            judged = cases[["qid", "judge_id", metric]].dropna().rename(columns={metric: "judge"})
            pairs = by_metric[["qid", "reviewer", "label"]].merge(judged, on="qid")
            rows.append(pairs.assign(answer_model=model, metric=metric))
    if not rows:
        return pd.DataFrame(
            columns=["answer_model", "qid", "reviewer", "judge_id", "metric", "label", "judge"]
        )
    return pd.concat(rows, ignore_index=True)


def judge_agreement(
    labels: pd.DataFrame, scores_by_model: Mapping[str, pd.DataFrame], bars: AgreementBars = AgreementBars()
) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Per judge and metric, pooled over every answer model: each reviewer's label is one pair
    with the judge's score of that answer. With the confusion tables (rows: people)."""
    pairs = labelled_pairs(labels, scores_by_model)
    rows, tables = [], {}
    for (judge_id, metric), group in pairs.groupby(["judge_id", "metric"], sort=True):
        human, judged = group["label"].tolist(), group["judge"].tolist()
        on_scale = all(float(v) in SCALE for v in judged)
        if not on_scale:  # a continuous metric (F1, a lexical proxy): rates only, no kappa
            judged = [min(SCALE, key=lambda level, v=v: abs(level - float(v))) for v in judged]
        rows.append({"judge_id": judge_id, "metric": metric, **agreement_row(human, judged, bars)})
        table = confusion(human, judged, list(SCALE))
        table.index.name, table.columns.name = "people", "judge"
        tables[f"{judge_id} / {metric}"] = table
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS), tables


REVIEWER_COLUMNS = ["metric", "cases", "pairs", "accuracy", "kappa", "kappa_low", "kappa_high"]


def reviewer_agreement(labels: pd.DataFrame) -> pd.DataFrame:
    """People against each other, where a case has two or more reviewers: every pair of their
    labels of one answer and metric."""
    rows = []
    for metric, by_metric in labels.groupby("metric", sort=True):
        first, second, cases = [], [], 0
        for _, case in by_metric.groupby(["answer_model", "qid"]):
            values = case.sort_values("reviewer")["label"].tolist()
            if len(values) < 2:
                continue
            cases += 1
            for i in range(len(values)):
                for j in range(i + 1, len(values)):
                    first.append(values[i])
                    second.append(values[j])
        if not first:
            continue
        kappa = weighted_kappa(first, second, SCALE)
        low, high = bootstrap_statistic([first, second], lambda a, b: weighted_kappa(a, b, SCALE))
        rows.append(
            {
                "metric": metric,
                "cases": cases,
                "pairs": len(first),
                "accuracy": float(np.mean(np.asarray(first) == np.asarray(second))),
                "kappa": kappa,
                "kappa_low": low,
                "kappa_high": high,
            }
        )
    return pd.DataFrame(rows, columns=REVIEWER_COLUMNS)


@dataclass(frozen=True)
class CorrectedMean:
    interval: Interval
    n_labels: int


def corrected_mean(
    judged_all: Sequence[float], judged_labelled: Sequence[float], human: Sequence[float]
) -> CorrectedMean:
    """Prediction-powered inference: the judge's mean over every case plus the mean of
    (human - judge) over the labelled cases, with a 95% interval from both parts' variances
    (the judge's over all N cases, the differences' over the n labelled ones) and Student's t
    with n - 1 degrees of freedom (few labels: the normal quantile under-covers), clipped to
    [0, 1]. A biased judge is corrected by as much as people show it is off; with
    few labels the interval says so by its width. NaN with fewer than two labels."""
    f_all = np.asarray(judged_all, dtype=float)
    f_lab, h_lab = np.asarray(judged_labelled, dtype=float), np.asarray(human, dtype=float)
    n, big_n = len(h_lab), len(f_all)
    if n < 2 or big_n < 2:
        nan = float("nan")
        return CorrectedMean(Interval(nan, nan, nan), n)
    differences = h_lab - f_lab
    estimate = float(f_all.mean() + differences.mean())
    sd = float(np.sqrt(f_all.var(ddof=1) / big_n + differences.var(ddof=1) / n))
    critical = float(stats.t.ppf(0.975, n - 1))
    low, high = max(0.0, estimate - critical * sd), min(1.0, estimate + critical * sd)
    return CorrectedMean(Interval(min(max(estimate, 0.0), 1.0), low, high), n)


CORRECTED_COLUMNS = ["corrected_mean", "corrected_low", "corrected_high", "n_labels"]
# a judge's mean beside its correction, as the asset page and `review import` show them
CORRECTED_TABLE = ["judge_id", "metric", "mean", *CORRECTED_COLUMNS]


def with_corrected_means(
    summary: pd.DataFrame, judge_scores: pd.DataFrame, labels: pd.DataFrame
) -> pd.DataFrame:
    """The summary with each judge's overall mean corrected by this model's human labels
    (``corrected_mean`` with its 95% interval, ``n_labels``: the labelled cases it rests on).
    Where a case has several reviewers their mean label is its human value. NaN (and 0 labels)
    where people labelled fewer than two of the cases a judge scored on that metric.

    Unbiased when the labelled cases are a random sample of the evaluated ones (a `random`
    review queue); a queue that picks disagreements first measures the judge where it matters
    but over-weights those cases here."""
    out = summary.copy()
    out[CORRECTED_COLUMNS[:3]] = float("nan")
    out["n_labels"] = 0
    if labels is None or labels.empty or judge_scores.empty:
        return out
    human = labels.groupby(["metric", "qid"])["label"].mean()
    cases = per_case(judge_scores)
    cases = cases[cases["status"] == "ok"]
    for index, row in out.iterrows():
        metric = row["metric"]
        if row["group"] != OVERALL or metric not in LABELLED_METRICS or metric not in human.index.levels[0]:
            continue
        if metric not in cases:
            continue
        judged = cases.loc[cases["judge_id"] == row["judge_id"], ["qid", metric]].dropna()
        people = human.loc[metric].rename("label").reset_index()
        paired = judged.merge(people, on="qid")
        corrected = corrected_mean(judged[metric], paired[metric], paired["label"])
        if np.isnan(corrected.interval.estimate):
            continue
        out.loc[index, CORRECTED_COLUMNS] = [
            corrected.interval.estimate,
            corrected.interval.low,
            corrected.interval.high,
            corrected.n_labels,
        ]
    out["n_labels"] = out["n_labels"].astype(int)
    return out


AGREEMENT_HISTORY_COLUMNS = [
    "labels_version",
    "recorded_at",
    "judge_id",
    "metric",
    "n",
    "kappa",
    "true_positive_rate",
    "true_negative_rate",
    "flagged",
]


def agreement_history_rows(agreement: pd.DataFrame, labels_version: str, recorded_at: str) -> pd.DataFrame:
    """One set of labels' agreement, as rows of the calibration history."""
    rows = agreement.assign(labels_version=labels_version, recorded_at=recorded_at)
    return rows[AGREEMENT_HISTORY_COLUMNS].reset_index(drop=True)


def upsert_agreement_history(history: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """The history with ``rows`` replacing earlier rows of the same labels (an agreement
    recomputed on the same labels is one point of the chart, not two)."""
    if history.empty:
        return rows.reset_index(drop=True)
    versions = set(rows["labels_version"])
    return pd.concat([history[~history["labels_version"].isin(versions)], rows], ignore_index=True)


FLAG_COLUMN = "flagged_by_people"


def with_judge_flags(summary: pd.DataFrame, agreement: pd.DataFrame | None) -> pd.DataFrame:
    """The summary with each overall row of a judge and metric that people flagged saying why
    (``flagged_by_people``; empty where the judge clears the bars or nobody labelled)."""
    out = summary.assign(**{FLAG_COLUMN: ""})
    if agreement is None or agreement.empty:
        return out
    flagged = agreement[agreement["flagged"]]
    why = {(r["judge_id"], r["metric"]): r["why"] for r in flagged.to_dict(orient="records")}
    overall = out["group"] == OVERALL
    out.loc[overall, FLAG_COLUMN] = [
        why.get((judge, metric), "") for judge, metric in out.loc[overall, ["judge_id", "metric"]].to_numpy()
    ]
    return out
