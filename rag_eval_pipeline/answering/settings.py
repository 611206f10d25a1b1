"""A named answer model of the configuration file (``answer_models:``): its name is the partition
key. Each answer provider declares the entry it takes; ``answering/registry.py`` joins them into
the one type the configuration validates against."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import Field, field_validator, model_validator

from rag_eval_pipeline.answering.spec import check_name
from rag_eval_pipeline.common.settings import Strict
from rag_eval_pipeline.llm.providers import LLM_PROVIDERS
from rag_eval_pipeline.retrieval.base import DEFAULT_RETRIEVAL_MODE, DEFAULT_TOP_K, RetrievalMode

OFFLINE = "offline"
# the models of the offline provider (answering/offline.py implements each): named here so that
# the configuration refuses another name before any work, without importing the answerers
OFFLINE_MODELS = ("extractive-baseline", "baseline", "oracle", "null", "compliant")


@dataclass(frozen=True)
class ModelProvider:
    """What a ``ModelEntry``'s provider accepts: which model names (why one is refused, else
    None) and whether it takes an endpoint of its own (``base_url``, ``api_key_env``)."""

    name: str
    refuses: Callable[[str], str | None]
    named_endpoint: bool


def _offline_model(model: str) -> str | None:
    if model in OFFLINE_MODELS:
        return None
    return f"no offline model '{model}' (the offline models: {', '.join(OFFLINE_MODELS)})"


# the providers of ``ModelEntry``, one row each: the offline models and every LLM API of the
# LLM provider table (which checks its own model names when a client is made)
MODEL_PROVIDERS: dict[str, ModelProvider] = {
    OFFLINE: ModelProvider(OFFLINE, _offline_model, named_endpoint=False),
    **{
        name: ModelProvider(name, lambda model: None, provider.named_endpoint)
        for name, provider in LLM_PROVIDERS.items()
    },
}
# the team's own agent: behind an HTTP endpoint, a Python callable, a file of its answers
HTTP, PYTHON, FILE = "http", "python", "file"
AGENT_PROVIDERS = (HTTP, PYTHON, FILE)


class NamedEntry(Strict):
    """What every named answer model has: a name that is its partition key (storage paths are
    built from it, so the grammar is strict) and its provider."""

    name: str
    provider: str

    @field_validator("name")
    @classmethod
    def _safe_name(cls, name: str) -> str:
        return check_name(name)


class ModelEntry(NamedEntry):
    """A model behind this project's retriever and prompt: an offline model, Claude, an
    OpenAI-compatible server or a local GGUF model."""

    provider: str = Field(description="offline, anthropic, openai or local")
    model: str
    base_url: str | None = Field(
        default=None, description="openai: the server's API root, e.g. http://localhost:8000/v1"
    )
    api_key_env: str | None = Field(
        default=None,
        description="openai: the variable holding its key (default OPENAI_API_KEY; none for local servers)",
    )
    retrieval_mode: RetrievalMode = DEFAULT_RETRIEVAL_MODE
    top_k: int = Field(default=DEFAULT_TOP_K, ge=1)
    prompt: str | None = Field(
        default=None,
        description="the answer model's system prompt (default: answer from the numbered passages "
        "only, 'unknown' when they do not say; versioned by its content)",
    )

    @field_validator("provider")
    @classmethod
    def _a_model_provider(cls, provider: str) -> str:
        if provider not in MODEL_PROVIDERS:
            registered = ", ".join(sorted((*MODEL_PROVIDERS, *AGENT_PROVIDERS)))
            raise ValueError(f"unknown provider '{provider}' (registered: {registered})")
        return provider

    @model_validator(mode="after")
    def _a_model_its_provider_has(self) -> ModelEntry:
        refused = MODEL_PROVIDERS[self.provider].refuses(self.model)
        if refused:
            raise ValueError(f"answer model '{self.name}': {refused}")
        return self

    @model_validator(mode="after")
    def _endpoint_where_the_provider_takes_one(self) -> ModelEntry:
        if (self.base_url or self.api_key_env) and not MODEL_PROVIDERS[self.provider].named_endpoint:
            allowed = ", ".join(n for n, p in MODEL_PROVIDERS.items() if p.named_endpoint)
            raise ValueError(
                f"answer model '{self.name}': base_url and api_key_env are for provider {allowed}"
            )
        return self
