"""The one table of LLM providers: a record per API says how its model names read, how a client
for it is made, whether its calls cost money or can go as a batch, what a run needs before it
starts and what must be installed. Answer models and judges resolve every LLM name through
``parse_llm_name``; nothing outside this table branches on a provider's name.

Adding an API is one record here plus its client module (an ``LLMClient``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rag_eval_pipeline.llm.cache import ResponseCache
from rag_eval_pipeline.llm.client import LLMClient
from rag_eval_pipeline.llm.llamacpp_server import LocalServers, LocalServerSettings
from rag_eval_pipeline.llm.settings import LLMSettings, _Section
from rag_eval_pipeline.llm.targets import (
    ANTHROPIC_ALIASES,
    ANTHROPIC_PREFIX,
    LLMEndpoint,
    LLMTarget,
    LocalModelNotFoundError,
    local_model_path,
    local_projector_path,
)

if TYPE_CHECKING:  # the batches adapter imports the SDK: only when a run asks for batches
    from rag_eval_pipeline.llm.batches import BatchPrefetcher

ANTHROPIC_KEY_ENV = "ANTHROPIC_API_KEY"
OPENAI_DEFAULT_URL = "https://api.openai.com/v1"
# one sentence of rationale (the rubric asks for one); a small model under a grammar otherwise
# rambles inside a string until max_tokens and never closes the JSON
LOCAL_MAX_STRING_CHARS = 160


class MissingApiKeyError(RuntimeError):
    """A client asked for without its key (said before a run by ``LLMProvider.missing``)."""


@dataclass
class LLMEnvironment:
    """What a provider's client factory and preflight read: the settings, the keys (a bound
    ``EnvVar`` or the environment) and the local servers a run started."""

    settings: LLMSettings
    secret: Callable[[str], str | None]
    local_servers: LocalServers


@dataclass(frozen=True)
class LLMProvider:
    """One LLM API. ``model_id`` claims a bare name (None: not this provider's); ``endpoint``
    says where a model's calls go (``base_url`` and ``api_key_env`` from a named entry, for
    providers with ``named_endpoint``); ``client`` makes its SDK client; ``shared_limit`` names
    the limit every run of the instance shares (None: each run has its own server);
    ``missing`` says, before a run, what an endpoint lacks, with its remedy; ``calls_at_once``
    is what the server itself takes at once (None: no bound beyond ``concurrency``)."""

    name: str
    model_id: Callable[[str], str | None]
    endpoint: Callable[[str, str | None, str | None], LLMEndpoint]
    client: Callable[[LLMEndpoint, LLMEnvironment], LLMClient]
    section: Callable[[LLMSettings], _Section]
    shared_limit: Callable[[LLMEndpoint, LLMEnvironment], str | None]
    missing: Callable[[LLMEndpoint, LLMEnvironment], str | None]
    # a stage's calls as one batch at half price, when the settings ask for it (None: never)
    batches: Callable[[LLMEnvironment, ResponseCache, Path], BatchPrefetcher | None] = lambda *_: None
    # a call beyond what the server decodes at once only waits in its queue, its timeout running
    calls_at_once: Callable[[LLMSettings], int | None] = lambda settings: None
    # whether its model is shown images (a chat answer model is shown the retrieved ones)
    sees_images: Callable[[LLMEndpoint, LLMSettings], bool] = lambda endpoint, settings: True
    free: bool = False  # runs here: tokens counted, dollars 0
    records_served_model: bool = True  # the id the server reports (not a local file path)
    named_endpoint: bool = False
    requires: tuple[str, ...] = ()  # modules that must be importable
    extra: str | None = None  # the pip extra that brings them


# Anthropic: claude-*, the aliases haiku and sonnet, anthropic:<id>


def _anthropic_model_id(name: str) -> str | None:
    prefixed = name.startswith(ANTHROPIC_PREFIX) and len(name) > len(ANTHROPIC_PREFIX)
    if not (prefixed or name.startswith("claude-") or name in ANTHROPIC_ALIASES):
        return None
    model = name[len(ANTHROPIC_PREFIX) :] if prefixed else name
    return ANTHROPIC_ALIASES.get(model, model)


def _anthropic_client(endpoint: LLMEndpoint, env: LLMEnvironment) -> LLMClient:
    from rag_eval_pipeline.llm.anthropic_client import AnthropicClient

    key = env.secret(ANTHROPIC_KEY_ENV)
    if not key:
        raise MissingApiKeyError(
            f"A Claude answer model or judge needs {ANTHROPIC_KEY_ENV} in the environment of the "
            "Dagster process (the resource binds it with EnvVar)."
        )
    section = env.settings.anthropic
    return AnthropicClient(
        key, section.base_url, section.timeout_s, section.max_retries, section.send_temperature
    )


def _anthropic_batches(env: LLMEnvironment, cache: ResponseCache, state: Path) -> BatchPrefetcher | None:
    import anthropic

    from rag_eval_pipeline.llm.batches import BatchPrefetcher

    section = env.settings.anthropic
    if not section.use_batches:
        return None
    client = anthropic.Anthropic(
        api_key=env.secret(ANTHROPIC_KEY_ENV),
        base_url=section.base_url,
        timeout=section.timeout_s,
        max_retries=section.max_retries,
    )
    return BatchPrefetcher(client, cache, state, section.batch_poll_interval_s)


def _anthropic_missing(endpoint: LLMEndpoint, env: LLMEnvironment) -> str | None:
    if env.secret(ANTHROPIC_KEY_ENV):
        return None
    return f"{ANTHROPIC_KEY_ENV}: export it, or evaluate offline models only"


# OpenAI-compatible: openai:<model>, or a named entry with its own base_url and key variable


def _prefixed(prefix: str) -> Callable[[str], str | None]:
    def model_id(name: str) -> str | None:
        head, sep, model = name.partition(":")
        return model if sep and head == prefix and model else None

    return model_id


def _openai_base_url(endpoint: LLMEndpoint, env: LLMEnvironment) -> str | None:
    return endpoint.base_url or env.settings.openai.base_url or os.environ.get("OPENAI_BASE_URL")


def _openai_key(endpoint: LLMEndpoint, env: LLMEnvironment) -> str | None:
    return env.secret(endpoint.api_key_env or env.settings.openai.api_key_env)


def _openai_client(endpoint: LLMEndpoint, env: LLMEnvironment) -> LLMClient:
    from rag_eval_pipeline.llm.openai_client import OpenAICompatibleClient, StructuredOutput

    base_url, key = _openai_base_url(endpoint, env), _openai_key(endpoint, env)
    section = env.settings.openai
    if not key and not base_url:
        raise MissingApiKeyError(
            f"An openai: answer model or judge needs {endpoint.api_key_env or section.api_key_env} "
            "in the environment of the Dagster process (or a base_url of a server that takes no key)."
        )
    return OpenAICompatibleClient(
        key,
        base_url,
        section.timeout_s,
        section.max_retries,
        StructuredOutput(section.structured_output),
        cache_identity=f"openai|{base_url or OPENAI_DEFAULT_URL}",
    )


def _openai_limit(endpoint: LLMEndpoint, env: LLMEnvironment) -> str:
    server = _openai_base_url(endpoint, env) or OPENAI_DEFAULT_URL
    return f"openai-{hashlib.sha256(server.encode()).hexdigest()[:12]}"


def _openai_missing(endpoint: LLMEndpoint, env: LLMEnvironment) -> str | None:
    if _openai_key(endpoint, env) or _openai_base_url(endpoint, env):
        return None
    variable = endpoint.api_key_env or env.settings.openai.api_key_env
    return f"{variable}: export it, or give the server's base_url"


# Local GGUF models: local:<name> or local:<path>.gguf, served by llama.cpp for the run


def _local_client(endpoint: LLMEndpoint, env: LLMEnvironment) -> LLMClient:
    from rag_eval_pipeline.llm.openai_client import OpenAICompatibleClient, StructuredOutput

    section = env.settings.local
    model_file = local_model_path(endpoint.model_file or "")
    projector = local_projector_path(endpoint.model_file or "", section.mmproj)
    server = LocalServerSettings(section.n_ctx, section.n_parallel, section.threads, projector)
    # the files, not the server's port (new every run), are what the answers depend on
    identity = f"local|{model_file.name}|{model_file.stat().st_size}"
    if projector is not None:
        identity += f"|{projector.name}|{projector.stat().st_size}"
    return OpenAICompatibleClient(
        None,
        env.local_servers.base_url(model_file, server),
        section.timeout_s,
        section.max_retries,
        StructuredOutput.JSON_SCHEMA,  # llama.cpp turns the schema into a grammar
        cache_identity=identity,
        max_string_chars=LOCAL_MAX_STRING_CHARS,
    )


def _local_missing(endpoint: LLMEndpoint, env: LLMEnvironment) -> str | None:
    if importlib.util.find_spec("xllamacpp") is None:
        return "llama.cpp: pip install 'rag-eval-pipeline[local]'"
    model = endpoint.model_file or ""
    try:
        local_model_path(model)
        projector = local_projector_path(model, env.settings.local.mmproj)
    except LocalModelNotFoundError as err:
        return f"its model file: {err}"
    if endpoint.images and projector is None:
        return (
            f"its vision projector: local model '{model}' sees images only with llama.cpp's mmproj "
            f"file: set local.mmproj: {{'{model}': <its mmproj .gguf>}} in rag_eval.yaml"
        )
    return None


def _local_sees_images(endpoint: LLMEndpoint, settings: LLMSettings) -> bool:
    return (endpoint.model_file or "") in settings.local.mmproj


LLM_PROVIDERS: dict[str, LLMProvider] = {
    provider.name: provider
    for provider in (
        LLMProvider(
            "anthropic",
            model_id=_anthropic_model_id,
            endpoint=lambda model, base_url, key_env: LLMEndpoint("anthropic"),
            client=_anthropic_client,
            section=lambda settings: settings.anthropic,
            shared_limit=lambda endpoint, env: "anthropic",
            missing=_anthropic_missing,
            batches=_anthropic_batches,
        ),
        LLMProvider(
            "openai",
            model_id=_prefixed("openai"),
            endpoint=lambda model, base_url, key_env: LLMEndpoint("openai", base_url, key_env),
            client=_openai_client,
            section=lambda settings: settings.openai,
            shared_limit=_openai_limit,
            missing=_openai_missing,
            named_endpoint=True,
        ),
        LLMProvider(
            "local",
            model_id=_prefixed("local"),
            endpoint=lambda model, base_url, key_env: LLMEndpoint("local", model_file=model),
            client=_local_client,
            section=lambda settings: settings.local,
            shared_limit=lambda endpoint, env: None,  # each run starts its own server
            missing=_local_missing,
            calls_at_once=lambda settings: settings.local.n_parallel,  # its slots
            sees_images=_local_sees_images,  # with its mmproj file only
            free=True,
            records_served_model=False,
            requires=("xllamacpp",),
            extra="local",
        ),
    )
}


# a bare model id after a judge's prefix (``ragas:claude-opus-4-5``) is this provider's, as it
# always was
DEFAULT_LLM_PROVIDER = "anthropic"


def llm_provider(endpoint: LLMEndpoint) -> LLMProvider:
    return LLM_PROVIDERS[endpoint.provider]


def parse_llm_name(
    name: str, base_url: str | None = None, api_key_env: str | None = None
) -> LLMTarget | None:
    """The target an LLM name means, or None if no provider claims it. ``base_url`` and
    ``api_key_env`` come from a named entry of the configuration file."""
    for provider in LLM_PROVIDERS.values():
        model_id = provider.model_id(name)
        if model_id is not None:
            return LLMTarget(provider.name, model_id, provider.endpoint(model_id, base_url, api_key_env))
    return None
