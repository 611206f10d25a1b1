"""The Anthropic Messages API behind the LLMClient protocol, with the SDK's retries."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import anthropic

from rag_eval_pipeline.llm.client import (
    FATAL_HTTP_STATUSES,
    FatalLLMError,
    LLMCallError,
    LLMRequest,
    LLMResponse,
    Usage,
)


class AnthropicClient:
    """Async client: 429/529 wait for ``retry-after``; 5xx, timeouts and connection errors back off
    exponentially with jitter (the SDK's policy), at most ``max_retries`` times."""

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        send_temperature: bool = True,
    ) -> None:
        self._settings = {
            "api_key": api_key,
            "base_url": base_url,
            "timeout": timeout_s,
            "max_retries": max_retries,
        }
        self._send_temperature = send_temperature
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: anthropic.AsyncAnthropic | None = None

    def _client_for_this_loop(self) -> anthropic.AsyncAnthropic:
        """A new SDK client whenever the event loop changes: its connection pool belongs to the
        loop that opened it, and each stage runs in its own ``asyncio.run``."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._loop, self._client = loop, anthropic.AsyncAnthropic(**self._settings)
        return self._client

    async def aclose(self) -> None:
        """Closes the connections of this loop's SDK client (before the loop itself closes)."""
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.close()
            self._client = None

    async def complete(
        self, request: LLMRequest, accept: Callable[[LLMResponse], bool] | None = None
    ) -> LLMResponse:
        """One Messages-API call (``accept`` concerns caches; this client keeps nothing)."""
        kwargs = request.api_kwargs()
        if not self._send_temperature:
            kwargs.pop("extra_body", None)
        try:
            message = await self._client_for_this_loop().messages.create(**kwargs)
        except anthropic.APIStatusError as err:
            error = FatalLLMError if err.status_code in FATAL_HTTP_STATUSES else LLMCallError
            raise error(f"{type(err).__name__} (HTTP {err.status_code}): {err.message}") from err
        except anthropic.APIError as err:  # connection errors and timeouts after retries
            raise LLMCallError(f"{type(err).__name__}: {err}") from err
        return _to_response(message)


def _to_response(message: Any, batch: bool = False) -> LLMResponse:
    texts, tool_input, raw = [], None, []
    for block in message.content:
        raw.append(block.model_dump(mode="json"))
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use" and tool_input is None:
            tool_input = block.input if isinstance(block.input, dict) else None
    usage = message.usage
    return LLMResponse(
        text="".join(texts).strip(),
        tool_input=tool_input,
        usage=Usage(
            input_tokens=usage.input_tokens or 0,
            output_tokens=usage.output_tokens or 0,
            cache_write_tokens=usage.cache_creation_input_tokens or 0,
            cache_read_tokens=usage.cache_read_input_tokens or 0,
        ),
        model=message.model,
        stop_reason=message.stop_reason,
        raw_content=raw,
        batch=batch,
        response_id=getattr(message, "id", None) or None,
    )
