"""Resolve an answer-model name to an answer model."""

from __future__ import annotations

from collections.abc import Mapping

from rag_eval_pipeline.answering.base import AnswerConfig, AnswerModel
from rag_eval_pipeline.answering.claude import ANTHROPIC_PREFIX, is_anthropic_model
from rag_eval_pipeline.answering.offline import OFFLINE_ANSWER_MODELS
from rag_eval_pipeline.config import AnswerModelSettings


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


def resolve_answer_config(
    key: str, named: Mapping[str, AnswerModelSettings]
) -> tuple[AnswerConfig, str | None]:
    """A partition key -> (answer configuration, system prompt override). Names from the
    configuration file come first; otherwise the key is read as MODEL or MODEL@MODE-kK."""
    if key in named:
        chosen = named[key]
        model = chosen.model
        if chosen.provider == "anthropic" and not is_anthropic_model(model):
            model = f"{ANTHROPIC_PREFIX}{model}"
        return AnswerConfig(model, chosen.retrieval_mode, chosen.top_k), chosen.prompt
    return AnswerConfig.parse(key), None
