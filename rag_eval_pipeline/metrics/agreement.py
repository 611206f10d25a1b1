"""Judges measured against people: agreement on the 0 / 0.5 / 1 scale, the pass/fail rates at
0.5, reviewers against each other, and a judge's mean corrected by the human labels
(prediction-powered inference: the judge on every case, plus the mean human-minus-judge
difference where people labelled)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rag_eval_pipeline.metrics.reliability import JURY, jurors_of, jury_mode_of
from rag_eval_pipeline.metrics.schema import AGREEMENT_FIGURES, case_set_id, per_case
from rag_eval_pipeline.metrics.settings import MIN_CASES, OVERALL
from rag_eval_pipeline.metrics.statistics import (
    Interval,
    clopper_pearson_interval,
    confusion,
    weighted_kappa,
    weighted_kappa_interval,
)
from rag_eval_pipeline.metrics.weighted_jury import WEIGHTED_JURY, weighted_jury_pairs

PASS_AT = 0.5  # a score at or above it passes
SCALE = (0.0, 0.5, 1.0)
LABELLED_METRICS = ("correctness", "faithfulness", "context_relevance")  # the STRICT rubric's axes
# an agent's sessions, reviewed and gated as the pseudo-model ``<source>:<agent version>``: its
# traced sessions (``trajectories:``) or its simulated ones (``simulation:``); what the session
# judges score (``trajectories.judges``, ``simulation.session_judges``), on the 0 / 0.5 / 1 scale
SESSION_PREFIX = "trajectories:"
SIMULATION_PREFIX = "simulation:"
SESSION_SOURCES = (SESSION_PREFIX, SIMULATION_PREFIX)
SESSION_METRICS = ("goal_completion", "turn_relevancy", "knowledge_retention", "trajectory_quality")


def session_source(model: str) -> tuple[str, str] | None:
    """(source prefix, agent version) of a sessions pseudo-model; None for an answer model."""
    prefix = next((p for p in SESSION_SOURCES if model.startswith(p)), None)
    return None if prefix is None else (prefix, model.removeprefix(prefix))


def labellable_metrics(answer_model: str) -> tuple[str, ...]:
    """The metrics people may label on a case of ``answer_model`` (an answer, or a session)."""
    return SESSION_METRICS if session_source(answer_model) else LABELLED_METRICS


Z95 = 1.959964


@dataclass(frozen=True)
class AgreementBars:
    """Below either, a judge is flagged: do not publish its numbers unchecked."""

    min_kappa: float = 0.5
    min_rate: float = 0.8
    min_labels: int = MIN_CASES  # fewer label pairs: said to be too few to conclude


AGREEMENT_COLUMNS = [
    "judge_id",
    "metric",
    "n",
    *AGREEMENT_FIGURES,
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


def _kappa_note(human: np.ndarray, judged: np.ndarray, kappa: float, min_labels: int) -> str:
    """Why kappa or the flags say little: too few labels to conclude, or kappa undefined (and
    which side gives one label only)."""
    notes = []
    if len(human) < min_labels:
        notes.append(f"too few labels to conclude (n = {len(human)} < {min_labels})")
    if np.isnan(kappa) and len(human):
        constant = [
            side for side, values in (("people", human), ("the judge", judged)) if len(set(values)) < 2
        ]
        notes.append(
            f"kappa undefined: {' and '.join(constant)} give{'s' if len(constant) == 1 else ''} "
            "one label on every case"
        )
    return "; ".join(notes)


def agreement_row(human: Sequence[float], judged: Sequence[float], bars: AgreementBars) -> dict[str, object]:
    """One judge on one metric against people: accuracy, linearly weighted kappa with a
    bootstrap interval, and the pass/fail rates at 0.5 with exact intervals (a judge that passes
    what people fail is a different danger from one that fails what they pass)."""
    human_a, judged_a = np.asarray(human, dtype=float), np.asarray(judged, dtype=float)
    kappa = weighted_kappa(human_a, judged_a, SCALE)
    low, high = weighted_kappa_interval(human_a, judged_a, SCALE)
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
        "kappa_note": _kappa_note(human_a, judged_a, kappa, bars.min_labels),
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
    rows += _weighted_jury_rows(pairs, scores_by_model, bars)
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS), tables


def _weighted_jury_rows(
    pairs: pd.DataFrame, scores_by_model: Mapping[str, pd.DataFrame], bars: AgreementBars
) -> list[dict[str, object]]:
    """Where a jury sat with ``jury: weighted``: per metric, the jurors weighed by their kappa
    on one half of the labelled cases, measured on the other half, beside the median jury on
    that same half (its note says both, and the weights)."""
    weighted = [s for s in scores_by_model.values() if jury_mode_of(s) == "weighted"]
    if not weighted:
        return []
    jurors = jurors_of(weighted[0])
    rows = []
    for metric, by_metric in pairs.groupby("metric", sort=True):
        test, weights, fitted_on = weighted_jury_pairs(by_metric, jurors)
        if test.empty:
            continue
        row = agreement_row(test["label"].tolist(), test["judge"].tolist(), bars)
        median = by_metric[(by_metric["judge_id"] == JURY)].merge(
            test[["answer_model", "qid", "reviewer"]], on=["answer_model", "qid", "reviewer"]
        )
        plain = weighted_kappa(median["label"].to_numpy(float), median["judge"].to_numpy(float), SCALE)
        shown = ", ".join(f"{j} {w:.2f}" for j, w in weights.items())
        note = (
            f"weights fitted on {fitted_on} other labelled cases ({shown}); on these held-out cases "
            f"the median jury's kappa is {plain:.2f}"
        )
        row["kappa_note"] = "; ".join(n for n in (str(row["kappa_note"]), note) if n)
        rows.append({"judge_id": WEIGHTED_JURY, "metric": metric, **row})
    return rows


REVIEWER_COLUMNS = ["metric", "cases", "pairs", "accuracy", "kappa", "kappa_low", "kappa_high"]


def _pair_kappa(pairs: np.ndarray) -> float:
    """Weighted kappa of a symmetric table of label pairs (rows and columns on ``SCALE``)."""
    total = pairs.sum()
    if total == 0:
        return float("nan")
    observed = pairs / total
    marginal = observed.sum(axis=1)
    if np.count_nonzero(marginal) < 2:
        return float("nan")  # one label only: agreement beyond chance cannot be told
    positions = np.arange(len(SCALE))
    weights = np.abs(positions[:, None] - positions[None, :]) / (len(SCALE) - 1)
    chance = float((weights * np.outer(marginal, marginal)).sum())
    return 1.0 - float((weights * observed).sum()) / chance if chance else float("nan")


def _case_pairs(counts: np.ndarray) -> np.ndarray:
    """A case's label pairs from how many of its reviewers gave each label: c_i c_j pairs of
    labels i and j (i != j), c_i (c_i - 1) / 2 of label i with itself, as a symmetric table."""
    table = np.outer(counts, counts).astype(float)
    table[np.diag_indices_from(table)] = counts * (counts - 1)
    return table / 2


def reviewer_agreement(labels: pd.DataFrame, resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """People against each other, where a case has two or more reviewers: every pair of their
    labels of one answer and metric, counted from each case's label counts (linear in the labels,
    however many reviewers a case has), kappa with an interval from resampling the cases."""
    rows = []
    index = {level: i for i, level in enumerate(SCALE)}
    for metric, by_metric in labels.groupby("metric", sort=True):
        positions = by_metric["label"].astype(float).map(index)
        counts = (
            pd.crosstab([by_metric["answer_model"], by_metric["qid"]], positions)
            .reindex(columns=range(len(SCALE)), fill_value=0)
            .to_numpy()
        )
        counts = counts[counts.sum(axis=1) >= 2]
        if not len(counts):
            continue
        tables = np.stack([_case_pairs(c) for c in counts])
        pooled = tables.sum(axis=0)
        rng = np.random.default_rng(seed)
        draws = [
            _pair_kappa(
                np.tensordot(
                    np.bincount(rng.integers(0, len(tables), len(tables)), minlength=len(tables)), tables, 1
                )
            )
            for _ in range(resamples if len(tables) > 1 else 0)
        ]
        draws = [d for d in draws if not np.isnan(d)]
        low, high = (np.quantile(draws, 0.025), np.quantile(draws, 0.975)) if draws else (np.nan, np.nan)
        rows.append(
            {
                "metric": metric,
                "cases": len(counts),
                "pairs": int(round(pooled.sum())),
                "accuracy": float(np.trace(pooled) / pooled.sum()),
                "kappa": _pair_kappa(pooled),
                "kappa_low": float(low),
                "kappa_high": float(high),
            }
        )
    return pd.DataFrame(rows, columns=REVIEWER_COLUMNS)


@dataclass(frozen=True)
class CorrectedMean:
    interval: Interval
    n_labels: int
    judge_weight: float = 0.0  # how much of the judge's scores the estimate borrows (0: the labels alone)


# from this many labels the corrected interval covers at least 94% of the time whatever the
# judge (simulated: benchmarks/ppi_tuning.py and corrected_means.py); at 30, 93% to 96%
MIN_LABELS_VALID = 60


def corrected_mean(
    judged_all: Sequence[float],
    judged_labelled: Sequence[float],
    human: Sequence[float],
    inclusion: Sequence[float] | None = None,
) -> CorrectedMean:
    """The mean people would give over every case, from the judge's scores of all N cases and
    people's labels of n of them: power-tuned prediction-powered inference (PPI++). The judge's
    scores are borrowed with the weight that makes the interval narrowest, which, the labelled
    cases being among the N, is the regression slope of the labels on the judge's scores
    (clipped to [0, 1]): lambda times the judge's mean over every case plus the mean of
    (label - lambda judge) over the labelled ones. Its variance: the residuals' over the n
    labelled cases (without the finite-population factor 1 - n/N: a little wide rather than too
    narrow, which kept the coverage at 30 labels) plus the N cases' own mean's; Student's t on
    n - 2 degrees of freedom (the slope is estimated). A judge that tells little gets lambda
    near 0, and the interval is never wider than the labels' alone: where it would be, the
    labels alone are the estimate (their mean, t on n - 1). Labelled cases drawn with unequal
    probabilities (``inclusion``) are weighted by their inverse (Hajek, with the linearised
    variance), so a queue that favours disagreements corrects without bias. Clipped to [0, 1];
    NaN with fewer than two labels."""
    from scipy.special import stdtrit  # Student's t quantile; scipy.stats costs 1 s to import

    f_all = np.asarray(judged_all, dtype=float)
    f_lab, h_lab = np.asarray(judged_labelled, dtype=float), np.asarray(human, dtype=float)
    n, big_n = len(h_lab), len(f_all)
    if n < 2 or big_n < 2:
        nan = float("nan")
        return CorrectedMean(Interval(nan, nan, nan), n)
    weights = np.ones(n) if inclusion is None else 1.0 / np.asarray(inclusion, dtype=float)
    share = weights / weights.sum()

    def spread(values: np.ndarray, ddof: int) -> float:
        """The Hajek mean's variance of ``values`` (its linearisation, n / (n - ddof))."""
        centred = values - share @ values
        return n / (n - ddof) * float(np.sum(share**2 * centred**2))

    labels_mean = float(share @ h_lab)
    labels_half = float(stdtrit(n - 1, 0.975)) * np.sqrt(spread(h_lab, 1))
    labels_alone = CorrectedMean(_clipped(labels_mean, labels_half), n)
    if n < 3:
        return labels_alone
    judge_centred = f_lab - share @ f_lab
    judge_variance = float(share @ judge_centred**2)
    covariance = float(share @ ((h_lab - labels_mean) * judge_centred))
    weight = float(np.clip(covariance / judge_variance, 0.0, 1.0)) if judge_variance > 0 else 0.0
    residual = h_lab - weight * f_lab
    estimate = weight * float(f_all.mean()) + float(share @ residual)
    people_variance = n * spread(h_lab, 1)  # the labels' variance, for the N cases' own mean
    variance = spread(residual, 2) + people_variance / big_n
    half = float(stdtrit(n - 2, 0.975)) * np.sqrt(variance)
    if weight == 0.0 or half >= labels_half:
        return labels_alone
    return CorrectedMean(_clipped(estimate, half), n, weight)


def _clipped(estimate: float, half: float) -> Interval:
    return Interval(min(max(estimate, 0.0), 1.0), max(0.0, estimate - half), min(1.0, estimate + half))


CORRECTED_COLUMNS = ["corrected_mean", "corrected_low", "corrected_high", "n_labels"]
CORRECTION_NOTE = "correction_note"  # what the correction rests on, or why there is none
# a judge's mean beside its correction, as the asset page and `review import` show them
CORRECTED_TABLE = ["judge_id", "metric", "mean", *CORRECTED_COLUMNS, CORRECTION_NOTE]


@dataclass(frozen=True)
class LabelledDraw:
    """The labels a correction may rest on: those of one probability draw (the queue with the
    most labelled cases; of a queue labelled in part, its labelled prefix in review order), each
    case's mean label and inclusion probability."""

    human: pd.Series  # qid -> mean label
    inclusion: pd.Series  # qid -> the case's chance of being drawn (and of being labelled)
    queue: str
    selection: str
    left_out: int  # labelled cases of other queues, of no draw or past the prefix: they measure
    prefix_of: int = 0  # the queue's size, where only its first cases were labelled


RANDOM_SELECTION = "random"


def _prefix(used: pd.DataFrame, queue: str) -> tuple[pd.DataFrame, int] | str:
    """The labels of the queue's longest labelled prefix in review order, and the queue's size
    (0 where it was labelled whole or its order is unknown), or why none is a valid draw. The
    review order is random, so its first k cases are a random k of the draw; a labelled case
    after a gap may have been chosen for being easy or hard, and is left out."""
    places = used.get("queue_position")
    if places is None or places.isna().any():
        if str(used["selection"].iloc[0]) == RANDOM_SELECTION:
            return used, 0  # any part of a random sample is a random sample
        return (
            f"not corrected: queue {queue}'s labels do not say their place in the queue (labels "
            "written before queues recorded it), so a weighted queue labelled in part cannot be "
            "told from a whole one: export a queue again (rag-eval review export) and label it"
        )
    size = int(used["queue_size"].max())
    labelled = set(places.astype(int))
    prefix = next(k for k in range(size + 1) if k not in labelled)
    if prefix == size:
        return used, 0
    return used[places < prefix], size


def labelled_draw(labels: pd.DataFrame, metric: str, case_set: str | None = None) -> LabelledDraw | str:
    """The probability draw a metric's correction rests on, or why there is none: labels of
    another set of cases than ``case_set`` (the evaluation's) were drawn without the others'
    chance, and a weighted queue labelled in part corrects only from its labelled prefix."""
    mine = labels[labels["metric"] == metric]
    if "inclusion_probability" not in mine:
        mine = mine.assign(inclusion_probability=float("nan"), queue="", selection="unknown")
    drawn = mine[mine["inclusion_probability"].notna()]
    if drawn.empty:
        chosen = ", ".join(sorted(set(mine["selection"]))) or "unknown"
        return (
            f"not corrected: the labelled cases were not drawn at random (selection: {chosen}); labels "
            "of a random or disagreement queue (rag-eval review export) correct the mean"
        )
    counts = drawn.groupby("queue")["qid"].nunique().sort_values(ascending=False, kind="stable")
    queue = str(counts.index[0])
    used = drawn[drawn["queue"] == queue]
    drawn_from = {c for c in used.get("case_set", pd.Series(dtype=str)).fillna("") if c}
    if case_set is not None and drawn_from and drawn_from != {case_set}:
        return (
            f"not corrected: queue {queue or '(unnamed)'} was drawn from another set of cases "
            f"({', '.join(sorted(drawn_from))}) than this evaluation's ({case_set}): its other cases "
            "had no chance of being labelled; export a queue of this evaluation and label it"
        )
    part = _prefix(used, queue or "(unnamed)")
    if isinstance(part, str):
        return part
    used, size = part
    if used["qid"].nunique() < 2:
        return (
            f"not corrected: queue {queue or '(unnamed)'} was labelled out of order: fewer than two of "
            "its first cases in review order are labelled (a correction rests on a prefix of the queue)"
        )
    share = used["qid"].nunique() / size if size else 1.0
    return LabelledDraw(
        used.groupby("qid")["label"].mean(),
        used.groupby("qid")["inclusion_probability"].first() * share,
        queue,
        str(used["selection"].iloc[0]),
        int(mine["qid"].nunique() - used["qid"].nunique()),
        size,
    )


def _correction_note(draw: LabelledDraw, corrected: CorrectedMean) -> str:
    n = corrected.n_labels
    weighted = (
        "weighted by each case's chance of being drawn"
        if draw.selection != RANDOM_SELECTION
        else "a random draw"
    )
    queue = draw.queue or "(unnamed)"
    note = f"corrected from {n} labelled cases of queue {queue} ({draw.selection}: {weighted})"
    if corrected.judge_weight > 0:
        note += f"; the judge's scores of every case borrowed with weight {corrected.judge_weight:.2f}"
    else:
        note += "; from the labels alone (the judge's scores would not narrow it)"
    if n < MIN_LABELS_VALID:
        note += (
            f"; indicative below {MIN_LABELS_VALID} labels (its interval covered 93% to 96% at 30 in "
            "simulation, 94% or more from 60)"
        )
    if draw.prefix_of:
        note += f"; the first {n} of its {draw.prefix_of} in review order, itself a random part of the draw"
    if draw.left_out:
        note += (
            f"; {draw.left_out} cases labelled otherwise measure the judge but do not enter the correction"
        )
    return note


def with_corrected_means(
    summary: pd.DataFrame, judge_scores: pd.DataFrame, labels: pd.DataFrame
) -> pd.DataFrame:
    """The summary with each judge's overall mean corrected by this model's human labels
    (``corrected_mean`` with its 95% interval, ``n_labels``: the labelled cases it rests on,
    ``correction_note``: which draw, or why none). Where a case has several reviewers their mean
    label is its human value. Only labels whose cases were drawn with a known probability (a
    ``random`` or ``disagreement`` queue) correct a mean, weighted by it; labels of an order
    (``low``, ``failed``) or of unknown origin would bias it, so the mean stays uncorrected and
    the note says why; so do labels drawn from another set of cases, and a weighted queue
    labelled in part corrects from its labelled prefix in review order only (``labelled_draw``).
    NaN (and 0 labels) where fewer than two drawn cases were labelled."""
    out = summary.copy()
    out[CORRECTED_COLUMNS[:3]] = float("nan")
    out["n_labels"] = 0
    out[CORRECTION_NOTE] = ""
    if labels is None or labels.empty or judge_scores.empty:
        return out
    cases = per_case(judge_scores)
    evaluated = case_set_id(judge_scores["qid"])
    cases = cases[cases["status"] == "ok"]
    draws = {metric: labelled_draw(labels, metric, evaluated) for metric in set(labels["metric"])}
    for index, row in out.iterrows():
        metric = row["metric"]
        if row["group"] != OVERALL or metric not in LABELLED_METRICS or metric not in draws:
            continue
        if metric not in cases:
            continue
        draw = draws[metric]
        if isinstance(draw, str):
            out.loc[index, CORRECTION_NOTE] = draw
            continue
        judged = cases.loc[cases["judge_id"] == row["judge_id"], ["qid", metric]].dropna()
        people = pd.DataFrame({"label": draw.human, "inclusion": draw.inclusion}).reset_index()
        paired = judged.merge(people, on="qid")
        corrected = corrected_mean(judged[metric], paired[metric], paired["label"], paired["inclusion"])
        if np.isnan(corrected.interval.estimate):
            continue
        out.loc[index, CORRECTED_COLUMNS] = [
            corrected.interval.estimate,
            corrected.interval.low,
            corrected.interval.high,
            corrected.n_labels,
        ]
        out.loc[index, CORRECTION_NOTE] = _correction_note(draw, corrected)
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


CORRECTIONS_COLUMNS = [
    "answer_model",
    "judge_id",
    "metric",
    "mean",
    *CORRECTED_COLUMNS,
    CORRECTION_NOTE,
    FLAG_COLUMN,
]


def corrections(
    summaries: Mapping[str, pd.DataFrame],
    scores: Mapping[str, pd.DataFrame],
    labels: pd.DataFrame | None,
    agreement: pd.DataFrame | None,
) -> pd.DataFrame:
    """Across the models: each judge's overall mean of each metric beside its correction by
    people's labels of that model's cases (``with_corrected_means``) and the flag people raised
    on that judge, pooled over the models (``with_judge_flags``). A model's summary never waits
    on another model's labels: this is the cross-model view of them."""
    frames = []
    for model, summary in sorted(summaries.items()):
        if model not in scores:
            continue
        overall = summary[summary["group"] == OVERALL]
        mine = labels[labels["answer_model"] == model] if labels is not None and len(labels) else None
        corrected = with_judge_flags(with_corrected_means(overall, scores[model], mine), agreement)
        frames.append(corrected.assign(answer_model=model)[CORRECTIONS_COLUMNS])
    if not frames:
        return pd.DataFrame(columns=CORRECTIONS_COLUMNS)
    return pd.concat(frames, ignore_index=True)
