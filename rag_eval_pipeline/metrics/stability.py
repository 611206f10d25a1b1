"""How steady a judge is: a judge asked K times per case (``judge_repeat`` 0..K-1 in
``judge_scores``) gives each case the median of its K scores, and each metric a flip indicator
(its K scores not all equal) whose mean over cases is the judge's flip rate on that metric. The
bottom of ``metrics``, under ``schema``, whose ``per_answer`` collapses re-scores with it for
every reader of per-case scores."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # tables pass through; pandas is imported where a function needs it
    import pandas as pd

JUDGE_REPEAT = "judge_repeat"
FLIP_SUFFIX = "_flip_rate"
ANSWER_KEYS = ["qid", "repeat", "judge_id"]
UNSTABLE = "unstable"  # a case whose verdict flips between re-scores (worst cases, the report)
# summed over a case's re-scores: what the case cost is every call made for it
SUMMED = ("input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens", "cost_usd")


def flip_column(metric: str) -> str:
    return f"{metric}{FLIP_SUFFIX}"


def is_flip_column(column: str) -> bool:
    return column.endswith(FLIP_SUFFIX)


def flipped_metric(column: str) -> str:
    return column[: -len(FLIP_SUFFIX)]


def has_rescores(judge_scores: pd.DataFrame) -> bool:
    return JUDGE_REPEAT in judge_scores and bool((judge_scores[JUDGE_REPEAT] > 0).any())


def lower_median(values: Sequence[float]) -> float:
    """The median, the lower of the two middle values when their number is even: a verdict on
    the judge's own scale (never 0.75 of 0.5 and 1), and of two that disagree the stricter."""
    ordered = sorted(values)
    return float(ordered[(len(ordered) - 1) // 2]) if ordered else float("nan")


def collapse_rescores(
    judge_scores: pd.DataFrame, metrics: Sequence[str], steady: Sequence[str] = ()
) -> pd.DataFrame:
    """One row per answer and judge: each metric the lower median of its scored re-scores, a
    ``<metric>_flip_rate`` column 1 where they are not all equal and 0 where they are (absent
    with fewer than two), tokens and dollars summed over the re-scores, the diagnosis the most
    common of the scored re-scores' (the first on a tie), the row scored (``ok``) when any
    re-score was; ``steady`` metrics (what the answer did) get no flip column. A table without
    re-scores is returned as it is."""
    import pandas as pd

    if not has_rescores(judge_scores):
        return judge_scores.drop(columns=[JUDGE_REPEAT], errors="ignore")
    keys = [k for k in ANSWER_KEYS if k in judge_scores]
    ordered = judge_scores.sort_values([*keys, JUDGE_REPEAT], kind="stable")
    ok = ordered[ordered["status"] == "ok"]
    grouped = ok.groupby(keys, sort=False)
    medians = grouped[list(metrics)].agg(lambda v: lower_median(v.dropna().tolist()))
    scored = grouped[list(metrics)].count()
    judged = [m for m in metrics if m not in steady]  # ``steady``: what cannot flip (the answer's)
    flips = grouped[judged].agg(lambda v: float(v.dropna().nunique() > 1))
    flips = flips.where(scored[judged] >= 2).rename(columns=flip_column)
    diagnoses = grouped["diagnosis"].agg(_most_common) if "diagnosis" in ok else None
    first = ordered.sort_values("status", key=lambda s: s != "ok", kind="stable").drop_duplicates(keys)
    rows = first.set_index(keys)
    rows.loc[medians.index, list(metrics)] = medians
    rows = rows.join(flips)
    if diagnoses is not None:
        rows["diagnosis"] = rows["diagnosis"].astype(object)
        rows.loc[diagnoses.index, "diagnosis"] = diagnoses
    summed = [c for c in SUMMED if c in ordered]
    totals = ordered.groupby(keys, sort=False)[summed].sum(min_count=1)
    rows.loc[totals.index, summed] = totals
    order = ordered.drop_duplicates(keys).set_index(keys).index
    out = rows.loc[order].reset_index().drop(columns=[JUDGE_REPEAT])
    for column in summed:
        out[column] = out[column].astype(judge_scores[column].dtype)
    return pd.DataFrame(out)


def _most_common(values: pd.Series) -> object:
    present = values.dropna()
    if present.empty:
        return None
    counts = present.value_counts(sort=False)
    return counts.index[int(counts.to_numpy().argmax())]  # first of the most common, in repeat order


def rescore_spread(a: pd.DataFrame, b: pd.DataFrame, metric: str, qids: Sequence[str]) -> float | None:
    """How far a judge's instability alone moves the mean difference of two models on ``qids``:
    the range of the differences its re-scores give one at a time (re-score r of A's answers
    against re-score r of B's, each averaged over an agent's repeated answers). None when the
    judge was asked once on either side."""
    if not (has_rescores(a) and has_rescores(b)):
        return None
    differences = []
    by_repeat = [_by_rescore(rows, metric, qids) for rows in (a, b)]
    for r in sorted(set(by_repeat[0].columns) & set(by_repeat[1].columns)):
        both = (by_repeat[0][r] - by_repeat[1][r]).dropna()
        if len(both):
            differences.append(float(both.mean()))
    return max(differences) - min(differences) if len(differences) >= 2 else None


def _by_rescore(rows: pd.DataFrame, metric: str, qids: Sequence[str]) -> pd.DataFrame:
    """qid x re-score index -> the metric (mean over an agent's repeated answers)."""
    scored = rows[(rows["status"] == "ok") & rows["qid"].isin(set(qids))]
    return scored.pivot_table(index="qid", columns=JUDGE_REPEAT, values=metric, aggfunc="mean")
