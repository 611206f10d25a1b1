"""Answer models that need no network: a weak real baseline and the two calibration bounds."""

from __future__ import annotations

import re
from collections.abc import Callable

from rag_eval_pipeline.answering.base import AnswerModel, AnswerRequest, AnswerResult
from rag_eval_pipeline.metrics.reference import content_tokens

UNKNOWN = "unknown"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def split_sentences(passage: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(passage) if s.strip()]


class ExtractiveBaseline:
    """Answers with the retrieved sentence sharing most content words with the question.

    Ties go to the higher-ranked passage, then the earlier sentence; no overlap at all -> "unknown".
    """

    name = "extractive-baseline"

    def answer(self, request: AnswerRequest) -> AnswerResult:
        question_tokens = set(content_tokens(request.question))
        best, best_overlap = UNKNOWN, 0
        for hit in request.passages:
            for sentence in split_sentences(hit.passage):
                overlap = len(question_tokens & set(content_tokens(sentence)))
                if overlap > best_overlap:
                    best, best_overlap = sentence, overlap
        return AnswerResult(answer=best, model_id=self.name, prompt_version="extractive-v1")


class OracleAnswerer:
    """Returns the ground truth: the upper bound a sound judge scores 1.0 on correctness."""

    name = "oracle"

    def answer(self, request: AnswerRequest) -> AnswerResult:
        return AnswerResult(answer=request.reference_answer, model_id=self.name, prompt_version="none")


class NullAnswerer:
    """Always abstains: the lower bound a sound judge scores 0.0 on correctness."""

    name = "null"

    def answer(self, request: AnswerRequest) -> AnswerResult:
        return AnswerResult(answer=UNKNOWN, model_id=self.name, prompt_version="none")


OFFLINE_ANSWER_MODELS: dict[str, Callable[[], AnswerModel]] = {
    "extractive-baseline": ExtractiveBaseline,
    "baseline": ExtractiveBaseline,
    "oracle": OracleAnswerer,
    "null": NullAnswerer,
}
