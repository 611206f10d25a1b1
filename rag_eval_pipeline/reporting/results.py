"""Scored cases as flat documents: what goes to the ``eval-results`` index for dashboards."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from rag_eval_pipeline.metrics.schema import case_key, metric_columns

_CASE_FIELDS = [
    "qid",
    "question",
    "answer",
    "retrieved_titles",
    "retrieval_mode",
    "top_k",
    "model_id",
    "prompt_version",
]


def _plain(value: Any) -> Any:
    if hasattr(value, "tolist") and not isinstance(value, str):
        value = value.tolist()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def eval_result_documents(
    answer_model: str,
    candidate_answers: pd.DataFrame,
    judge_scores: pd.DataFrame,
    judgement_list: pd.DataFrame,
    index_version: str,
) -> list[dict[str, Any]]:
    """One document per case per judge: the case, its ground truth, every score (absent = null)."""
    fields = [*_CASE_FIELDS, "repeat"] if "repeat" in candidate_answers else _CASE_FIELDS
    cases = candidate_answers[fields].merge(
        judgement_list[["qid", "answer", "gold_titles"]].rename(columns={"answer": "ground_truth"}), on="qid"
    )
    by_answer = {case_key(row): row for row in cases.to_dict(orient="records")}
    metrics = metric_columns(judge_scores)
    documents = []
    for score in judge_scores.to_dict(orient="records"):
        case = by_answer[case_key(score)]
        document = {key: _plain(value) for key, value in case.items()}
        document.update(
            answer_model=answer_model,
            judge_id=score["judge_id"],
            type=score["type"],
            level=score["level"],
            status=score["status"],
            error=_plain(score["error"]),
            index_version=index_version,
            scores={m: _plain(score[m]) for m in metrics if _plain(score[m]) is not None},
        )
        documents.append(document)
    return documents
