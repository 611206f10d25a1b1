"""A content-addressed response cache on disk: unchanged prompts never cost a second call."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from rag_eval_pipeline.common.files import write_text_atomically
from rag_eval_pipeline.limits.in_flight import LoopSemaphore
from rag_eval_pipeline.limits.slot_files import SharedLimit
from rag_eval_pipeline.llm.budget import SpendingLimit
from rag_eval_pipeline.llm.client import LLMCallError, LLMClient, LLMRequest, LLMResponse

T = TypeVar("T")


class JsonFiles:
    """``<folder>/<key[:2]>/<key>.json``: one JSON document a key, written aside and renamed (a
    reader never sees half a file); a torn or foreign file reads as a miss."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def read(self, key: str, parse: Callable[[Any], T]) -> T | None:
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            return parse(json.loads(path.read_text()))
        except (ValueError, KeyError, TypeError):  # a torn or foreign file: treat as a miss
            return None

    def write(self, key: str, text: str) -> None:
        write_text_atomically(self._path(key), text)


class ResponseCache(JsonFiles):
    """The LLM responses by request; only successful responses are stored."""

    def get(self, key: str) -> LLMResponse | None:
        return self.read(key, lambda data: LLMResponse.from_dict(data, from_cache=True))

    def put(self, key: str, response: LLMResponse) -> None:
        self.write(key, json.dumps(response.to_dict(), ensure_ascii=False))


MAX_RESPONSE_CHARS = 100_000  # a server that answers with megabytes: kept this much, and cached so


def capped(response: LLMResponse, max_chars: int = MAX_RESPONSE_CHARS) -> LLMResponse:
    """The response with its text cut at ``max_chars`` (its raw text blocks too), so one
    misbehaving server cannot fill the cache, the run's memory and every report."""
    if len(response.text) <= max_chars:
        return response
    text = f"{response.text[:max_chars]} [...cut: {len(response.text):,} characters]"
    blocks = [b for b in response.raw_content if b.get("type") != "text"] + [{"type": "text", "text": text}]
    return dataclasses.replace(response, text=text, raw_content=blocks)


def is_complete(response: LLMResponse) -> bool:
    """A response the model finished (not cut off at max_tokens)."""
    return response.stop_reason != "max_tokens"


class CachedClient:
    """Serves repeated requests from the cache and counts the calls it really makes.

    Only responses that are complete and that ``accept`` takes (a judge passes its validation)
    enter the cache, and a cached response ``accept`` refuses is asked again: a re-run repeats
    exactly the calls that did not give a usable answer. ``refresh`` asks every call again (and
    stores the new answers) for one run. With a ``budget``, a real call is made only when what
    it could cost still fits (cache hits are free).
    """

    def __init__(
        self,
        inner: LLMClient,
        cache: ResponseCache | None,
        refresh: bool = False,
        max_in_flight: int | None = None,
        shared: SharedLimit | None = None,
        deadline_s: float | None = None,
        budget: SpendingLimit | None = None,
    ) -> None:
        self._inner = inner
        self._budget = budget
        self._deadline_s = deadline_s
        self._shared = shared
        self._cache = cache
        self._refresh = refresh
        self._max_in_flight = max_in_flight
        self._in_flight = LoopSemaphore(max_in_flight) if max_in_flight is not None else None
        self.api_calls = 0
        self.cache_hits = 0

    async def aclose(self) -> None:
        """Closes the inner client's connections of this loop, where it keeps any: before the
        loop closes, or their clean-up fails after it."""
        close = getattr(self._inner, "aclose", None)
        if close is not None:
            await close()

    def cache_key(self, request: LLMRequest) -> str:
        """The inner client's key where it has one (an endpoint that must be part of it), else the
        request's own content address (Anthropic's keys, unchanged since the first version)."""
        key_of = getattr(self._inner, "cache_key", None)
        return key_of(request) if key_of is not None else request.cache_key()

    def _limit(self) -> asyncio.Semaphore | None:
        """At most ``max_in_flight`` real calls at once across every judge and case of a stage
        (cache hits take no slot); one semaphore per event loop, as each stage runs its own."""
        return self._in_flight.here() if self._in_flight is not None else None

    @property
    def limit_where(self) -> str | None:
        """Which limit its calls share with other runs (for the run's metadata)."""
        return self._shared.where if self._shared is not None else None

    def _shared_slot(self) -> contextlib.AbstractAsyncContextManager:
        """A slot of the provider's limit shared with the other runs (a
        backfill's partitions run side by side), if there is one."""
        return self._shared.hold() if self._shared is not None else contextlib.nullcontext()

    async def _within_deadline(self, call: Awaitable[LLMResponse]) -> LLMResponse:
        """The call, or an ``LLMCallError`` once ``deadline_s`` has passed: the SDKs' timeouts
        restart with every byte, so a server that trickles its answer would hold a run forever."""
        if self._deadline_s is None:
            return await call
        try:
            return await asyncio.wait_for(call, self._deadline_s)
        except TimeoutError:
            raise LLMCallError(
                f"no complete response within {self._deadline_s:g} s (the call's deadline: "
                "timeout_s x attempts, or call_deadline_s)"
            ) from None

    async def complete(
        self,
        request: LLMRequest,
        accept: Callable[[LLMResponse], bool] | None = None,
        cut_off_ok: bool = False,
    ) -> LLMResponse:
        """The response, from the cache where it holds a usable one. ``cut_off_ok``: a response
        cut off at max_tokens is usable too (a caller that uses whatever came, such as a
        simulated user's message, must get the same on a re-run, not a new call)."""
        finished = (lambda r: True) if cut_off_ok else is_complete
        usable = (lambda r: finished(r) and accept(r)) if accept is not None else finished
        key = self.cache_key(request)
        if self._cache is not None and not self._refresh:
            cached = self._cache.get(key)
            if cached is not None and usable(cached):
                self.cache_hits += 1
                return cached
        reserved = await self._budget.reserve(request) if self._budget is not None else 0.0
        self.api_calls += 1
        response = None
        try:
            async with self._limit() or contextlib.nullcontext(), self._shared_slot():
                started = time.perf_counter()  # the call alone: waiting for a slot is ours, not its
                response = capped(await self._within_deadline(self._inner.complete(request)))
                if response.latency_s is None:
                    response = dataclasses.replace(response, latency_s=time.perf_counter() - started)
        finally:
            if self._budget is not None:
                await self._budget.settle(reserved, request, response)
        if self._cache is not None and usable(response):
            self._cache.put(key, response)
        return response
