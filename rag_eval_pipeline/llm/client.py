"""The LLM call as plain data: a request that can be hashed and cached, a response with its usage."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol

from rag_eval_pipeline.llm.images import keyed_images


@dataclass(frozen=True)
class Usage:
    """Tokens of one call (or a sum of calls), as the Messages API reports them."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class Tool:
    """A tool the model is forced to call: its input_schema is the output schema the API enforces."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class LLMRequest:
    """One Messages-API call. ``cached_system`` is a static prefix marked for prompt caching."""

    model: str
    messages: tuple[dict[str, Any], ...]
    system: str = ""
    cached_system: str = ""
    max_tokens: int = 512
    temperature: float | None = 0.0
    tool: Tool | None = None
    # which independent asking of the same prompt (a judge's re-score): never sent, part of the
    # cache key where above 0, so K re-scores are K calls and a re-run of them none
    sample: int = 0

    def api_kwargs(self) -> dict[str, Any]:
        """The Messages-API body. Sampling parameters left the SDK's signature in anthropic 1.0;
        the API still takes ``temperature`` for Haiku 4.5 and Sonnet 4.6, so it rides in the body
        (``extra_body``); None leaves it out, for models that reject it."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": [dict(m) for m in self.messages],
        }
        if self.temperature is not None:
            kwargs["extra_body"] = {"temperature": self.temperature}
        blocks = []
        if self.cached_system:
            blocks.append(
                {"type": "text", "text": self.cached_system, "cache_control": {"type": "ephemeral"}}
            )
        if self.system:
            blocks.append({"type": "text", "text": self.system})
        if blocks:
            kwargs["system"] = blocks
        if self.tool is not None:
            kwargs["tools"] = [
                {
                    "name": self.tool.name,
                    "description": self.tool.description,
                    "input_schema": self.tool.input_schema,
                }
            ]
            kwargs["tool_choice"] = {"type": "tool", "name": self.tool.name}
        return kwargs

    def cache_key(self) -> str:
        """Content address: model, parameters and the full prompt, nothing else."""
        canonical = json.dumps(self.keyed_kwargs(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def keyed_kwargs(self) -> dict[str, Any]:
        """What a cache key is made of: the body, and the sample where it is not the first (the
        keys of every single call stay what they always were)."""
        kwargs = keyed_images(self.api_kwargs())  # an image by its sha256, not its bytes
        return {**kwargs, "sample": self.sample} if self.sample else kwargs


@dataclass(frozen=True)
class LLMResponse:
    text: str
    tool_input: dict[str, Any] | None
    usage: Usage
    model: str
    stop_reason: str | None = None
    from_cache: bool = False
    raw_content: list[dict[str, Any]] = field(default_factory=list)
    batch: bool = False  # answered through the Message Batches API (half price)
    # how long the call took when it was made: a cached response keeps its first latency
    latency_s: float | None = None
    # the provider's id of the reply (Anthropic's ``msg_...``, OpenAI's ``chatcmpl-...``): a
    # cached response keeps its first one; None where the server gives none
    response_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "tool_input": self.tool_input,
            "usage": self.usage.to_dict(),
            "model": self.model,
            "stop_reason": self.stop_reason,
            "raw_content": self.raw_content,
            "batch": self.batch,
            "latency_s": self.latency_s,
            "response_id": self.response_id,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], from_cache: bool = False) -> LLMResponse:
        return cls(
            text=data["text"],
            tool_input=data.get("tool_input"),
            usage=Usage(**data["usage"]),
            model=data["model"],
            stop_reason=data.get("stop_reason"),
            from_cache=from_cache,
            raw_content=list(data.get("raw_content") or []),
            batch=bool(data.get("batch", False)),
            latency_s=data.get("latency_s"),  # None: cached before latencies were kept
            response_id=data.get("response_id"),  # None: cached before reply ids were kept
        )


class LLMCallError(RuntimeError):
    """The call failed after the client's retries; recorded on the case, never scored."""


class FatalLLMError(LLMCallError):
    """A call that no retry and no other case can fix (bad key, no permission, unknown model):
    the partition fails at once instead of making the same futile call for every case."""


FATAL_HTTP_STATUSES = (401, 403, 404)


class LLMClient(Protocol):
    async def complete(
        self, request: LLMRequest, accept: Callable[[LLMResponse], bool] | None = None
    ) -> LLMResponse:
        """One call. ``accept`` says whether a response is usable (a judge's validation): a
        client that keeps responses (the cache) keeps only those; others may ignore it."""
        ...


@dataclass(frozen=True)
class AtTemperature:
    """A client whose every request is sampled at ``temperature`` (judges asked at the configured
    ``judge_temperature``): the temperature is in the body, so in every cache key too."""

    inner: LLMClient
    temperature: float

    async def complete(
        self, request: LLMRequest, accept: Callable[[LLMResponse], bool] | None = None
    ) -> LLMResponse:
        return await self.inner.complete(replace(request, temperature=self.temperature), accept=accept)
