"""Any OpenAI-compatible Chat Completions API (OpenAI, vLLM, Ollama, llama.cpp, a LiteLLM proxy)
behind the LLMClient protocol, through the official ``openai`` SDK and its retries.

Requests stay in the provider-neutral ``LLMRequest`` shape the prompts are written in (system
blocks, messages, a forced tool for structured output) and are translated here. A judge's
structured output goes out as ``response_format`` with a strict JSON schema where the server
takes it, else as a forced function call, else as JSON asked for in the prompt; in ``auto`` mode
a server that refuses one (HTTP 400) is asked the next way, and the client remembers.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Callable
from enum import Enum
from typing import Any

import openai

from rag_eval_pipeline.llm.client import (
    FATAL_HTTP_STATUSES,
    FatalLLMError,
    LLMCallError,
    LLMRequest,
    LLMResponse,
    Tool,
    Usage,
)
from rag_eval_pipeline.llm.images import openai_content


class StructuredOutput(str, Enum):
    """How a judge's schema reaches the server."""

    AUTO = "auto"  # json_schema, then tools, then text: each after the server refused the last
    JSON_SCHEMA = "json_schema"
    TOOLS = "tools"
    TEXT = "text"


_FALLBACKS = (StructuredOutput.JSON_SCHEMA, StructuredOutput.TOOLS, StructuredOutput.TEXT)
# the finish reasons of Chat Completions in the Messages API's words, so one completeness rule
# (``cache.is_complete``: not cut at max_tokens) serves every provider
_STOP_REASONS = {"length": "max_tokens", "stop": "end_turn", "tool_calls": "tool_use"}
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def is_strict_schema(schema: dict[str, Any]) -> bool:
    """Whether OpenAI's strict mode takes the schema: every object closed (no additional
    properties) and every property required; sending strict otherwise is refused."""
    if schema.get("type") == "object" or "properties" in schema:
        props = schema.get("properties", {})
        if schema.get("additionalProperties", True) is not False or set(schema.get("required", [])) != set(
            props
        ):
            return False
        if not all(is_strict_schema(p) for p in props.values()):
            return False
    if "items" in schema and not is_strict_schema(schema["items"]):
        return False
    return all(is_strict_schema(d) for d in schema.get("$defs", {}).values())


def bounded_strings(schema: Any, max_chars: int) -> Any:
    """The schema with every string between 1 and ``max_chars`` characters (where it says
    nothing else). Under a grammar a small model can ramble inside a string until max_tokens;
    a bound makes it close the string and finish the JSON."""
    if isinstance(schema, list):
        return [bounded_strings(item, max_chars) for item in schema]
    if not isinstance(schema, dict):
        return schema
    bounded = {key: bounded_strings(value, max_chars) for key, value in schema.items()}
    if schema.get("type") == "string" and "enum" not in schema:
        bounded.setdefault("minLength", 1)
        bounded.setdefault("maxLength", max_chars)
    return bounded


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def chat_messages(request: LLMRequest, mode: StructuredOutput) -> list[dict[str, Any]]:
    """System blocks and messages as Chat Completions messages; a tool call and its result
    (a judge's re-ask) become ``tool_calls`` and a ``tool`` message."""
    system = "\n\n".join(part for part in (request.cached_system, request.system) if part)
    if request.tool is not None and mode is StructuredOutput.TEXT:
        system += (
            f"\n\nReply with one JSON object only ({request.tool.name}), no other text, "
            f"matching this JSON schema:\n{json.dumps(request.tool.input_schema)}"
        )
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in request.messages:
        content = message["content"]
        blocks = content if isinstance(content, list) else []
        tool_uses = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        tool_results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        if tool_uses:
            messages.append(
                {
                    "role": "assistant",
                    "content": _text_of(content) or None,
                    "tool_calls": [
                        {
                            "id": b["id"],
                            "type": "function",
                            "function": {"name": b["name"], "arguments": json.dumps(b["input"])},
                        }
                        for b in tool_uses
                    ],
                }
            )
        elif tool_results:
            for block in tool_results:
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": block["tool_use_id"],
                        "content": _text_of(block["content"]),
                    }
                )
        else:
            # images as image_url data URLs before the text (llm/images.py)
            messages.append({"role": message["role"], "content": openai_content(content, _text_of(content))})
    return messages


def chat_kwargs(
    request: LLMRequest, mode: StructuredOutput, max_string_chars: int | None = None
) -> dict[str, Any]:
    """The Chat Completions body of ``request`` when structured output goes ``mode``'s way
    (``max_string_chars``: bound the schema's strings, for servers that decode under a grammar)."""
    kwargs: dict[str, Any] = {
        "model": request.model,
        "messages": chat_messages(request, mode),
        "max_tokens": request.max_tokens,
    }
    if request.temperature is not None:
        kwargs["temperature"] = request.temperature
    tool = request.tool
    if tool is not None and mode is StructuredOutput.JSON_SCHEMA:
        schema = tool.input_schema
        kwargs["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": tool.name,
                "description": tool.description,
                "schema": bounded_strings(schema, max_string_chars) if max_string_chars else schema,
                "strict": is_strict_schema(schema),
            },
        }
    elif tool is not None and mode is StructuredOutput.TOOLS:
        kwargs["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.input_schema,
                },
            }
        ]
        kwargs["tool_choice"] = {"type": "function", "function": {"name": tool.name}}
    return kwargs


def _json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in a reply (the whole text, or its outermost braces), else None."""
    for candidate in (text, *(m.group(0) for m in [_JSON_OBJECT.search(text)] if m)):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def to_response(completion: Any, tool: Tool | None, mode: StructuredOutput) -> LLMResponse:
    """A Chat Completions result as an ``LLMResponse``: the structured output, wherever the mode
    put it, as ``tool_input``; cached prompt tokens apart from the rest, as Anthropic counts them."""
    choice = completion.choices[0]
    message = choice.message
    text = (message.content or "").strip()
    tool_input, raw = None, []
    calls = list(message.tool_calls or [])
    if text:
        raw.append({"type": "text", "text": text})
    for call in calls:
        arguments = _json_object(call.function.arguments or "")
        raw.append({"type": "tool_use", "id": call.id, "name": call.function.name, "input": arguments or {}})
        if tool_input is None and arguments is not None:
            tool_input = arguments
    if tool is not None and tool_input is None and not calls:
        tool_input = _json_object(text)
    usage = completion.usage
    details = getattr(usage, "prompt_tokens_details", None) if usage is not None else None
    cached = (getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    prompt_tokens = (usage.prompt_tokens or 0) if usage is not None else 0
    return LLMResponse(
        text=text,
        tool_input=tool_input,
        usage=Usage(
            input_tokens=max(prompt_tokens - cached, 0),
            output_tokens=(usage.completion_tokens or 0) if usage is not None else 0,
            cache_read_tokens=cached,
        ),
        model=completion.model or "",
        stop_reason=_STOP_REASONS.get(choice.finish_reason, choice.finish_reason),
        raw_content=raw,
        response_id=getattr(completion, "id", None) or None,
    )


class OpenAICompatibleClient:
    """Async client: 429 waits for ``retry-after``; 5xx, timeouts and connection errors back off
    (the SDK's policy), at most ``max_retries`` times; 401/403/404 are fatal."""

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        structured_output: StructuredOutput = StructuredOutput.AUTO,
        cache_identity: str | None = None,
        max_string_chars: int | None = None,
    ) -> None:
        # the SDK wants a key even where the server takes none (a local llama.cpp, vLLM, Ollama)
        self._settings = {
            "api_key": api_key or "not-needed",
            "base_url": base_url,
            "timeout": timeout_s,
            "max_retries": max_retries,
        }
        self._modes = list(_FALLBACKS) if structured_output is StructuredOutput.AUTO else [structured_output]
        self._identity = cache_identity or f"openai|{base_url or 'default'}"
        self._max_string_chars = max_string_chars
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: openai.AsyncOpenAI | None = None
        self._retired: list[openai.AsyncOpenAI] = []

    @property
    def structured_output(self) -> StructuredOutput:
        """The way structured output goes now (in ``auto`` mode: the first the server took)."""
        return self._modes[0]

    def cache_key(self, request: LLMRequest) -> str:
        """Provider, endpoint and the Messages-shaped request: the same prompt sent to another
        server (or another local model file) is another call."""
        key: dict[str, Any] = {"endpoint": self._identity, "request": request.keyed_kwargs()}
        if request.tool is not None and self._max_string_chars:  # another schema, another request
            key["max_string_chars"] = self._max_string_chars
        canonical = json.dumps(key, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def _client_for_this_loop(self) -> openai.AsyncOpenAI:
        """A new SDK client whenever the event loop changes: its connection pool belongs to the
        loop that opened it, and each stage runs in its own ``asyncio.run``."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            if self._client is not None:
                # kept, not dropped: collected now, the SDK would schedule closing its pool on
                # this new loop, and that pool belongs to the old, closed one
                self._retired.append(self._client)
            self._loop, self._client = loop, openai.AsyncOpenAI(**self._settings)
        return self._client

    async def complete(
        self, request: LLMRequest, accept: Callable[[LLMResponse], bool] | None = None
    ) -> LLMResponse:
        """One Chat Completions call (``accept`` concerns caches; this client keeps nothing)."""
        while True:
            mode = self._modes[0] if request.tool is not None else StructuredOutput.TEXT
            try:
                completion = await self._client_for_this_loop().chat.completions.create(
                    **chat_kwargs(request, mode, self._max_string_chars)
                )
            except openai.BadRequestError as err:
                if request.tool is not None:
                    if self._modes[0] is mode and len(self._modes) > 1:
                        self._modes.pop(0)  # the server refused this way of structured output
                    if self._modes[0] is not mode:  # (calls in flight learn it from the first)
                        continue
                raise LLMCallError(f"BadRequestError (HTTP 400): {err.message}") from err
            except openai.APIStatusError as err:
                error = FatalLLMError if err.status_code in FATAL_HTTP_STATUSES else LLMCallError
                raise error(f"{type(err).__name__} (HTTP {err.status_code}): {err.message}") from err
            except openai.APIError as err:  # connection errors and timeouts after retries
                raise LLMCallError(f"{type(err).__name__}: {err}") from err
            if not completion.choices:
                raise LLMCallError("the server returned no choices")
            return to_response(completion, request.tool, mode)
