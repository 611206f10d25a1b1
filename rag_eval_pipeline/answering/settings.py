"""A named answer model of the configuration file (``answer_models:``): its name is the partition
key. Each answer provider declares the entry it takes; ``answering/registry.py`` joins them into
the one type the configuration validates against."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from rag_eval_pipeline.answering.spec import check_name
from rag_eval_pipeline.common.settings import Strict
from rag_eval_pipeline.llm.providers import LLM_PROVIDERS
from rag_eval_pipeline.retrieval.base import DEFAULT_RETRIEVAL_MODE, DEFAULT_TOP_K, RetrievalMode

OFFLINE = "offline"
# the models of the offline provider (answering/offline.py implements each): named here so that
# the configuration refuses another name before any work, without importing the answerers
OFFLINE_MODELS = ("extractive-baseline", "baseline", "oracle", "null")
# the providers of ``ModelEntry``: the offline models and every LLM API of the provider table
MODEL_PROVIDERS = (OFFLINE, *LLM_PROVIDERS)
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
    def _a_known_offline_model(self) -> ModelEntry:
        if self.provider == OFFLINE and self.model not in OFFLINE_MODELS:
            raise ValueError(
                f"answer model '{self.name}': no offline model '{self.model}' "
                f"(the offline models: {', '.join(OFFLINE_MODELS)})"
            )
        return self

    @model_validator(mode="after")
    def _endpoint_where_the_provider_takes_one(self) -> ModelEntry:
        takes = self.provider in LLM_PROVIDERS and LLM_PROVIDERS[self.provider].named_endpoint
        if (self.base_url or self.api_key_env) and not takes:
            allowed = ", ".join(n for n, p in LLM_PROVIDERS.items() if p.named_endpoint)
            raise ValueError(
                f"answer model '{self.name}': base_url and api_key_env are for provider {allowed}"
            )
        return self
