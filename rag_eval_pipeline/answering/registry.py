"""The one place a partition key becomes an ``AnswerSpec``, and a spec an answer model.

A key is a name from the configuration file, or ``MODEL`` / ``MODEL@MODE-kK`` where MODEL is
claimed by one registered provider (``oracle``, ``claude-haiku-4-5``, ``anthropic:<id>``,
``openai:<model>``, ``local:smollm2``).
Adding a provider is one entry in ``PROVIDERS`` plus its own module.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from rag_eval_pipeline.answering.agents.provider import AGENT_PROVIDERS
from rag_eval_pipeline.answering.base import AnswerModel, AnswerProvider, model_spec
from rag_eval_pipeline.answering.chat import ChatProvider
from rag_eval_pipeline.answering.entries import AnswerModelSettings
from rag_eval_pipeline.answering.offline import OFFLINE_ANSWER_MODELS, OfflineProvider
from rag_eval_pipeline.answering.spec import AnswerSpec, InvalidNameError, check_name
from rag_eval_pipeline.llm.providers import LLM_PROVIDERS
from rag_eval_pipeline.llm.services import LLMServices
from rag_eval_pipeline.retrieval.base import DEFAULT_RETRIEVAL_MODE, DEFAULT_TOP_K, RetrievalMode

PROVIDERS: dict[str, AnswerProvider] = {
    provider.name: provider
    for provider in (OfflineProvider(), *(ChatProvider(name) for name in LLM_PROVIDERS), *AGENT_PROVIDERS)
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
    """Resolves partition keys (and the configuration file's named answer models) to specs.
    ``default_prompt`` is the answer prompt of LLM answer models that name none (a neutral one
    for the team's own data; None: the HotpotQA article's)."""

    def __init__(
        self,
        named: Sequence[AnswerModelSettings] = (),
        default_prompt: str | None = None,
        retrieval_identities: Mapping[RetrievalMode, str] | None = None,
    ) -> None:
        self._named = {m.name: m for m in named}
        self._default_prompt = default_prompt
        # a mode's own settings (rerank's first stage and model): part of what answers depend on
        self._retrieval_identities = dict(retrieval_identities or {})

    @property
    def named(self) -> list[str]:
        return list(self._named)

    def resolve(self, key: str) -> AnswerSpec:
        """The spec of ``key``; an invalid or unknown key raises a ValueError that says why."""
        check_name(key)
        if key in self._named:
            entry = self._named[key]
            spec = PROVIDERS[entry.provider].named_spec(entry, self._default_prompt)
        else:
            model, mode, k = _split_key(key)
            spec = model_spec(self._provider_of(model), key, model, mode, k, self._default_prompt)
        identity = self._retrieval_identities.get(spec.retrieval_mode) if spec.retrieval_mode else None
        return dataclasses.replace(spec, retrieval_identity=identity) if identity else spec

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

    def notes(self, spec: AnswerSpec) -> list[str]:
        """What the user should know before the run that is not an error."""
        return PROVIDERS[spec.provider].notes(spec)

    def _provider_of(self, model: str) -> AnswerProvider:
        for provider in PROVIDERS.values():
            if provider.claims(model):
                return provider
        named = f"; named in the configuration file: {', '.join(self._named)}" if self._named else ""
        raise UnknownAnswerModelError(
            f"unknown answer model '{model}'; known: {', '.join(sorted(OFFLINE_ANSWER_MODELS))}, "
            f"claude-*, haiku, sonnet, anthropic:<model id>, openai:<model> and local:<model>{named}"
        )
