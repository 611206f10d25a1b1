"""The layout of the stored tables the metrics read: the identifying columns of ``judge_scores``
(every other column is a metric), the groups of ``metric_summary`` and the case-set hash. The
bottom of ``metrics``: summaries, freshness and the judges that write the scores all read it."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import pandas as pd

TOKEN_COLUMNS = ["input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens"]
SCORE_ID_COLUMNS = [
    "qid",
    "judge_id",
    "judge_kind",
    "answer_config",
    "type",
    "level",
    "tags",
    "status",
    "error",
    "prompt_version",
    "answerable",
    "abstained",
    "rationales",
    "notes",
    *TOKEN_COLUMNS,
    "cost_usd",
    "diagnosis",
]

# what the answers did, the same for every judge: summarized over every case (a failed answer
# did not answer), beside the judges' metrics, which are over the scored cases only
ANSWER_METRICS = ("answer_rate", "false_answer_rate", "over_abstention_rate")

OVERALL = "all"  # the summary group over every case
USAGE = "usage"  # rows whose ``total`` sums tokens or dollars instead of averaging a metric
DIAGNOSIS = "diagnosis"  # rows whose ``total`` counts the cases of one diagnosis
ANSWER_MODEL_ROW = "answer_model"  # the usage rows of the answer model (not of a judge)


def metric_columns(judge_scores: pd.DataFrame) -> list[str]:
    """The metric columns of a ``judge_scores`` table: every column that does not identify."""
    return [c for c in judge_scores.columns if c not in SCORE_ID_COLUMNS]


def case_set_id(qids: Iterable[str]) -> str:
    """Short hash of the evaluated question ids: models are comparable only on equal case sets."""
    digest = hashlib.sha256("\n".join(sorted(set(qids))).encode()).hexdigest()
    return digest[:12]
