"""Resolve an answer-model name to an answer model."""

from __future__ import annotations

from rag_eval_pipeline.answering.base import AnswerModel
from rag_eval_pipeline.answering.offline import OFFLINE_ANSWER_MODELS


class UnknownAnswerModelError(ValueError):
    pass


def known_answer_models() -> list[str]:
    return sorted(OFFLINE_ANSWER_MODELS)


def offline_answer_model(name: str) -> AnswerModel:
    """The offline model registered under ``name``; an unknown name lists the known ones."""
    try:
        return OFFLINE_ANSWER_MODELS[name]()
    except KeyError:
        raise UnknownAnswerModelError(
            f"unknown answer model '{name}'; known: {', '.join(known_answer_models())}"
        ) from None
