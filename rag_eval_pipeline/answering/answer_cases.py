"""Stage 1: retrieve passages for every question and ask the answer model, case by case."""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Any

import pandas as pd

from rag_eval_pipeline.answering.base import AnswerModel, AnswerRequest, AnswerResult
from rag_eval_pipeline.answering.spec import AnswerSpec
from rag_eval_pipeline.llm.client import FatalLLMError
from rag_eval_pipeline.llm.concurrency import run_bounded
from rag_eval_pipeline.retrieval.base import SearchHit
from rag_eval_pipeline.retrieval.knowledge_base import Retriever

CANDIDATE_COLUMNS = [
    "qid",
    "question",
    "answer_config",
    "model_id",
    "prompt_version",
    "answer_spec",
    "retrieval_mode",
    "top_k",
    "retrieved_ids",
    "retrieved_titles",
    "retrieved_scores",
    "retrieved_passages",
    "answer",
    "answer_length",
    "latency_s",
    "status",
    "error",
    "input_tokens",
    "output_tokens",
    "cache_write_tokens",
    "cache_read_tokens",
    "cost_usd",
    "from_cache",
]


DEFAULT_MAX_ANSWER_CHARS = 20_000


def capped_answer(answer: str, max_chars: int) -> str:
    """The answer as stored: at most ``max_chars`` characters, a cut one marked with its length."""
    if len(answer) <= max_chars:
        return answer
    return f"{answer[:max_chars]} [...cut: {len(answer):,} characters]"


class AllCasesFailedError(RuntimeError):
    """Not one case was answered: the partition failed (its rows would only be dashes)."""


ProgressCallback = Callable[[int, int], None]


async def _call(model: AnswerModel, request: AnswerRequest) -> AnswerResult:
    answer_async = getattr(model, "answer_async", None)
    if answer_async is not None and inspect.iscoroutinefunction(answer_async):
        return await answer_async(request)
    return model.answer(request)


def answer_cases(
    judgement_list: pd.DataFrame,
    spec: AnswerSpec,
    model: AnswerModel,
    retrieve: Retriever,
    on_progress: ProgressCallback | None = None,
    concurrency: int = 8,
    prefill: Callable[[list[AnswerRequest]], None] | None = None,
    max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS,
) -> pd.DataFrame:
    """One row per question: the retrieved passages in rank order, the answer, its tokens and cost.

    Asynchronous models run with at most ``concurrency`` calls in flight. A model error on one
    case is recorded on that case (status ``failed`` with the error), never turned into an
    answer; the other cases go on. An error no retry can fix (FatalLLMError: bad key, unknown
    model) is raised at once, and a run in which every case failed raises AllCasesFailedError:
    either way the partition fails instead of storing a table of failures. ``prefill`` sees
    every request before any is answered (the Message Batches API fills the response cache
    through it). An answer longer than ``max_answer_chars`` is stored cut, its full length in
    ``answer_length``: a model that answers with megabytes must not fill every later report.
    """
    cases = judgement_list.to_dict(orient="records")
    hits_per_case = retrieve([c["question"] for c in cases], spec.top_k)
    if prefill is not None:
        prefill(
            [
                AnswerRequest(c["qid"], c["question"], tuple(h), c["answer"])
                for c, h in zip(cases, hits_per_case)
            ]
        )

    async def one(pair: tuple[dict[str, Any], list[SearchHit]]) -> dict[str, Any]:
        case, hits = pair
        request = AnswerRequest(case["qid"], case["question"], tuple(hits), case["answer"])
        started = time.perf_counter()
        row: dict[str, Any] = {
            "qid": case["qid"],
            "question": case["question"],
            "answer_config": spec.answer_config,
            "answer_spec": spec.fingerprint,
            "retrieval_mode": spec.retrieval_mode.value,
            "top_k": spec.top_k,
            "retrieved_ids": [h.passage_id for h in hits],
            "retrieved_titles": [h.title for h in hits],
            "retrieved_scores": [h.score for h in hits],
            "retrieved_passages": [h.passage for h in hits],
        }
        try:
            result = await _call(model, request)
        except FatalLLMError:
            raise  # the same for every case: the partition fails now
        except Exception as err:  # recorded on the case; the run goes on
            row.update(
                model_id=getattr(model, "model_id", model.name),
                prompt_version=None,
                answer=None,
                status="failed",
                error=f"{type(err).__name__}: {err}",
                cost_usd=None,
                from_cache=False,
            )
        else:
            row.update(
                model_id=result.model_id,
                prompt_version=result.prompt_version,
                answer=capped_answer(result.answer, max_answer_chars),
                answer_length=len(result.answer),
                status="ok",
                error=None,
                cost_usd=result.cost_usd,
                from_cache=result.from_cache,
                **result.usage.to_dict(),
            )
        row["latency_s"] = time.perf_counter() - started
        return row

    rows = run_bounded(list(zip(cases, hits_per_case)), one, concurrency, on_progress)
    if rows and all(row["status"] != "ok" for row in rows):
        raise AllCasesFailedError(f"all {len(rows)} cases failed; the first: {rows[0]['error']}")
    frame = pd.DataFrame(rows, columns=CANDIDATE_COLUMNS)
    token_columns = ["input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens"]
    frame[token_columns] = frame[token_columns].fillna(0).astype("int64")
    frame["cost_usd"] = frame["cost_usd"].astype("float64")
    return frame
