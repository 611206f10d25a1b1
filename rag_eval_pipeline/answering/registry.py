"""The one place a partition key becomes an ``AnswerSpec``, and a spec an answer model.

A key is a name from the configuration file, or ``MODEL`` / ``MODEL@MODE-kK`` where MODEL is
claimed by one registered provider (``oracle``, ``claude-haiku-4-5``, ``anthropic:<id>``,
``openai:<model>``, ``local:smollm2``).
Adding a provider is one entry in ``PROVIDERS`` plus its own module.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag_eval_pipeline.answering.base import AnswerModel, AnswerProvider
from rag_eval_pipeline.answering.chat import ChatProvider
from rag_eval_pipeline.answering.offline import OFFLINE_ANSWER_MODELS, OfflineProvider
from rag_eval_pipeline.answering.settings import ModelEntry
from rag_eval_pipeline.answering.spec import AnswerSpec, InvalidNameError, check_name
from rag_eval_pipeline.llm.providers import LLM_PROVIDERS
from rag_eval_pipeline.llm.services import LLMServices
from rag_eval_pipeline.retrieval.base import DEFAULT_RETRIEVAL_MODE, DEFAULT_TOP_K, RetrievalMode

# a named answer model of the configuration file, whichever provider it names
AnswerModelSettings = ModelEntry

PROVIDERS: dict[str, AnswerProvider] = {
    provider.name: provider
    for provider in (OfflineProvider(), *(ChatProvider(name) for name in LLM_PROVIDERS))
}
_SUFFIX = re.compile(r"^(?P<mode>[a-z0-9_]+)-k(?P<k>[0-9]+)$")


class UnknownAnswerModelError(ValueError):
    pass


def provider_names() -> list[str]:
    return sorted(PROVIDERS)


def _split_key(key: str) -> tuple[str, RetrievalMode, int]:
    """``MODEL`` or ``MODEL@MODE-kK`` -> (model, mode, k); a bare model means bm25 and k = 4."""
    model, sep, suffix = key.partition("@")
    if not model:
        raise InvalidNameError(f"answer configuration '{key}' names no model")
    if not sep:
        return model, DEFAULT_RETRIEVAL_MODE, DEFAULT_TOP_K
    match = _SUFFIX.match(suffix)
    if not match:
        raise InvalidNameError(f"answer configuration '{key}': expected MODEL@MODE-kK, e.g. {model}@bm25-k4")
    try:
        mode = RetrievalMode.parse(match["mode"])
    except ValueError as err:
        raise InvalidNameError(f"answer configuration '{key}': {err}") from None
    k = int(match["k"])
    if k < 1:
        raise InvalidNameError(f"answer configuration '{key}': top-k must be at least 1")
    return model, mode, k


class AnswerRegistry:
    """Resolves partition keys (and the configuration file's named answer models) to specs."""

    def __init__(self, named: Sequence[AnswerModelSettings] = ()) -> None:
        self._named = {m.name: m for m in named}

    @property
    def named(self) -> list[str]:
        return list(self._named)

    def resolve(self, key: str) -> AnswerSpec:
        """The spec of ``key``; an invalid or unknown key raises a ValueError that says why."""
        check_name(key)
        if key in self._named:
            chosen = self._named[key]
            provider = PROVIDERS[chosen.provider]
            model = chosen.model if provider.claims(chosen.model) else f"{provider.name}:{chosen.model}"
            mode, k, prompt = RetrievalMode(chosen.retrieval_mode), chosen.top_k, chosen.prompt
            endpoint = provider.endpoint(model, chosen.base_url, chosen.api_key_env)
        else:
            model, mode, k = _split_key(key)
            provider = self._provider_of(model)
            prompt = None
            endpoint = provider.endpoint(model, None, None)
        return AnswerSpec(
            partition_key=key,
            provider=provider.name,
            model=model,
            model_id=provider.model_id(model),
            retrieval_mode=mode,
            top_k=k,
            prompt_version=provider.prompt_version(model, prompt),
            system_prompt=prompt,
            calibration=provider.calibration(model),
            source=provider.source(model),
            endpoint=endpoint,
        )

    def try_resolve(self, key: str) -> AnswerSpec | None:
        """The spec, or None for a stored partition that no longer resolves (a removed entry)."""
        try:
            return self.resolve(key)
        except ValueError:
            return None

    def build(self, spec: AnswerSpec, services: LLMServices) -> AnswerModel:
        return PROVIDERS[spec.provider].build(spec, services)

    def problems(self, spec: AnswerSpec) -> list[str]:
        """What the spec's provider finds wrong before any work (one line each, with the remedy)."""
        return PROVIDERS[spec.provider].problems(spec)

    def _provider_of(self, model: str) -> AnswerProvider:
        for provider in PROVIDERS.values():
            if provider.claims(model):
                return provider
        named = f"; named in the configuration file: {', '.join(self._named)}" if self._named else ""
        raise UnknownAnswerModelError(
            f"unknown answer model '{model}'; known: {', '.join(sorted(OFFLINE_ANSWER_MODELS))}, "
            f"claude-*, haiku, sonnet, anthropic:<model id>, openai:<model> and local:<model>{named}"
        )
