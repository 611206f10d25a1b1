"""The layout of the stored tables the metrics read: the identifying columns of ``judge_scores``
(every other column is a metric), the groups of ``metric_summary`` and the case-set hash. The
bottom of ``metrics``: summaries, freshness and the judges that write the scores all read it."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from rag_eval_pipeline.metrics.stability import (
    collapse_rescores,
    flipped_metric,
    has_rescores,
    is_flip_column,
)

if TYPE_CHECKING:  # tables pass through; pandas is imported where a function needs it
    import pandas as pd


REFERENCE_JUDGE_ID = "reference"  # the judge id under which the reference metrics are recorded
TOKEN_COLUMNS = ["input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens"]
SCORE_ID_COLUMNS = [
    "qid",
    "repeat",
    "judge_repeat",
    "judge_id",
    "judge_kind",
    "answer_config",
    "type",
    "level",
    "tags",
    "language",
    "status",
    "error",
    "prompt_version",
    "answerable",
    "abstained",
    "rationales",
    "notes",
    "item_verdicts",  # JSON: metric -> item -> verdict, for a metric that aggregates verdicts
    *TOKEN_COLUMNS,
    "cost_usd",
    "diagnosis",
]

ITEM_VERDICTS = "item_verdicts"

# what the answers did, the same for every judge, beside the judges' metrics (which are over the
# scored cases only): the error rate over every case, the others over the cases that got a reply
ANSWER_METRICS = ("error_rate", "answer_rate", "false_answer_rate", "over_abstention_rate")

# the figures of a judge's agreement with a reference (people, or a judge's definition), in the
# order every agreement table shows them
AGREEMENT_FIGURES = ("accuracy", "kappa", "kappa_low", "kappa_high", "kappa_note")


USAGE = "usage"  # rows whose ``total`` sums tokens or dollars instead of averaging a metric
DIAGNOSIS = "diagnosis"  # rows whose ``total`` counts the cases of one diagnosis
ANSWER_MODEL_ROW = "answer_model"  # the usage rows of the answer model (not of a judge)


def metric_columns(judge_scores: pd.DataFrame) -> list[str]:
    """The metric columns of a ``judge_scores`` table: every column that does not identify."""
    return [c for c in judge_scores.columns if c not in SCORE_ID_COLUMNS]


def case_set_id(qids: Iterable[str]) -> str:
    """Short hash of the evaluated question ids: models are comparable only on equal case sets."""
    # a column's values at once (an Arrow-backed column yields one boxed scalar at a time)
    values = qids.tolist() if hasattr(qids, "tolist") else qids
    digest = hashlib.sha256("\n".join(sorted(set(values))).encode()).hexdigest()
    return digest[:12]


# the share of cases whose repeated answers scored differently (an agent asked several times)
ANSWER_VARIABILITY = "answer_variability"
CASE_KEYS = ["qid", "judge_id"]


def per_answer(judge_scores: pd.DataFrame) -> pd.DataFrame:
    """One row per answer and judge: a judge's re-scores collapsed to their median, with a
    flip indicator per metric (``metrics.stability``); a table without re-scores as it is."""
    return collapse_rescores(judge_scores, metric_columns(judge_scores), steady=ANSWER_METRICS)


def unstable_cases(judge_scores: pd.DataFrame) -> dict[tuple[str, int], list[str]]:
    """(question, answer repeat) -> the ``judge/metric`` whose re-scores disagree on it."""
    if not has_rescores(judge_scores):
        return {}
    collapsed = per_answer(judge_scores)
    found: dict[tuple[str, int], list[str]] = {}
    for column in [c for c in collapsed.columns if is_flip_column(c)]:
        for row in collapsed[collapsed[column] == 1.0].itertuples():
            key = (str(row.qid), int(getattr(row, "repeat", 0) or 0))
            found.setdefault(key, []).append(f"{row.judge_id}/{flipped_metric(column)}")
    return found


def per_case(judge_scores: pd.DataFrame) -> pd.DataFrame:
    """One row per case and judge: a judge's re-scores of an answer first collapsed to their
    median, with flip indicators (``metrics.stability``); then the repeated answers of an agent
    asked several times averaged (each metric over the repeats that have it; the case is scored
    when any repeat was), with
    ``answer_variability`` 1 where the scored repeats' values differ, 0 where they agree, absent
    with fewer than two. The question, not the answer, is the unit every interval and paired
    test counts. A table without repeats is returned as it is."""
    judge_scores = per_answer(judge_scores)
    if "repeat" not in judge_scores or not (judge_scores["repeat"] > 0).any():
        return judge_scores
    metrics = metric_columns(judge_scores)
    ok = judge_scores[judge_scores["status"] == "ok"]
    by_case = ok.groupby(CASE_KEYS, sort=False)
    means = by_case[metrics].mean()
    scores = [m for m in metrics if not is_flip_column(m)]  # a judge's flip is not the answer's
    differs = by_case[scores].agg(lambda v: v.dropna().nunique() > 1).any(axis=1).astype("float64")
    scored = by_case.size()
    cases = judge_scores.sort_values("status", key=lambda s: s != "ok", kind="stable").drop_duplicates(
        CASE_KEYS
    )
    cases = cases.set_index(CASE_KEYS)
    cases.loc[means.index, metrics] = means
    cases[ANSWER_VARIABILITY] = differs.where(scored >= 2).reindex(cases.index)
    flips = [m for m in metrics if is_flip_column(m)]  # flipped on any of the answers
    cases[flips] = cases[flips].gt(0).astype("float64").where(cases[flips].notna())
    order = judge_scores.drop_duplicates(CASE_KEYS).set_index(CASE_KEYS).index
    return cases.loc[order].reset_index()


def case_key(row: Mapping[str, Any]) -> tuple[str, int]:
    """Which answer a row is about: its question and repeat (0 where there are no repeats, and
    in tables stored before repeats existed)."""
    import pandas as pd

    repeat = row.get("repeat", 0)
    return str(row["qid"]), 0 if repeat is None or pd.isna(repeat) else int(repeat)


def answer_keys(frame: pd.DataFrame) -> list[str]:
    """The columns that identify an answer in ``frame``: the question, and its repeat if stored."""
    return ["qid", "repeat"] if "repeat" in frame else ["qid"]
