"""Resolve an answer-model name to an answer model."""

from __future__ import annotations

from rag_eval_pipeline.answering.base import AnswerModel
from rag_eval_pipeline.answering.claude import ANTHROPIC_PREFIX, is_anthropic_model
from rag_eval_pipeline.answering.offline import OFFLINE_ANSWER_MODELS


class UnknownAnswerModelError(ValueError):
    pass


def known_answer_models() -> list[str]:
    return sorted(OFFLINE_ANSWER_MODELS)


def validate_answer_model(name: str) -> None:
    """Offline names, ``claude-*`` and ``anthropic:<model id>`` are answer models."""
    if name in OFFLINE_ANSWER_MODELS or is_anthropic_model(name):
        if name == ANTHROPIC_PREFIX:
            raise UnknownAnswerModelError("'anthropic:' needs a model id, e.g. anthropic:claude-haiku-4-5")
        return
    raise UnknownAnswerModelError(
        f"unknown answer model '{name}'; known: {', '.join(known_answer_models())}, "
        "claude-* and anthropic:<model id>"
    )


def offline_answer_model(name: str) -> AnswerModel:
    """The offline model registered under ``name``; an unknown name lists the known ones."""
    try:
        return OFFLINE_ANSWER_MODELS[name]()
    except KeyError:
        raise UnknownAnswerModelError(
            f"unknown answer model '{name}'; known: {', '.join(known_answer_models())}"
        ) from None
