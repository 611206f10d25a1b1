"""Stage 1: retrieve passages for every question and ask the answer model, case by case."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import pandas as pd

from rag_eval_pipeline.answering.base import AnswerConfig, AnswerModel, AnswerRequest
from rag_eval_pipeline.retrieval.base import SearchHit

CANDIDATE_COLUMNS = [
    "qid",
    "question",
    "answer_config",
    "model_id",
    "prompt_version",
    "retrieval_mode",
    "top_k",
    "retrieved_ids",
    "retrieved_titles",
    "retrieved_scores",
    "retrieved_passages",
    "answer",
    "latency_s",
    "status",
    "error",
]

Retriever = Callable[[Sequence[str], int], list[list[SearchHit]]]
ProgressCallback = Callable[[int, int], None]


def answer_cases(
    judgement_list: pd.DataFrame,
    config: AnswerConfig,
    model: AnswerModel,
    retrieve: Retriever,
    on_progress: ProgressCallback | None = None,
) -> pd.DataFrame:
    """One row per question: the retrieved passages in rank order, the answer and its timing.

    A model error on one case is recorded on that case (status ``failed`` with the error), never
    turned into an answer; the other cases go on.
    """
    questions = judgement_list["question"].tolist()
    hits_per_case = retrieve(questions, config.top_k)
    rows = []
    total = len(judgement_list)
    for done, (case, hits) in enumerate(
        zip(judgement_list.to_dict(orient="records"), hits_per_case), start=1
    ):
        request = AnswerRequest(
            qid=case["qid"],
            question=case["question"],
            passages=tuple(hits),
            reference_answer=case["answer"],
        )
        started = time.perf_counter()
        try:
            result = model.answer(request)
            answer, model_id, prompt_version = result.answer, result.model_id, result.prompt_version
            status, error = "ok", None
        except Exception as err:  # recorded on the case; the run goes on
            answer, model_id, prompt_version = None, model.name, None
            status, error = "failed", f"{type(err).__name__}: {err}"
        rows.append(
            {
                "qid": case["qid"],
                "question": case["question"],
                "answer_config": config.key,
                "model_id": model_id,
                "prompt_version": prompt_version,
                "retrieval_mode": config.retrieval_mode,
                "top_k": config.top_k,
                "retrieved_ids": [h.passage_id for h in hits],
                "retrieved_titles": [h.title for h in hits],
                "retrieved_scores": [h.score for h in hits],
                "retrieved_passages": [h.passage for h in hits],
                "answer": answer,
                "latency_s": time.perf_counter() - started,
                "status": status,
                "error": error,
            }
        )
        if on_progress is not None:
            on_progress(done, total)
    return pd.DataFrame(rows, columns=CANDIDATE_COLUMNS)
