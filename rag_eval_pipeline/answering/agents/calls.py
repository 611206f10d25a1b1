"""Calling an agent like any paid model: a bound on calls in flight, the response cache keyed by
(agent, version, question, repeat), and the errors that stop a partition or only a case."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from rag_eval_pipeline.common.secrets import NO_SECRETS, Redactor
from rag_eval_pipeline.limits.in_flight import LoopSemaphore
from rag_eval_pipeline.llm.cache import MAX_RESPONSE_CHARS, JsonFiles
from rag_eval_pipeline.llm.client import FatalLLMError
from rag_eval_pipeline.llm.services import CallCount


@dataclass(frozen=True)
class ConversationTurn:
    """One turn of a conversation the agent is in: the latest user message, the whole history
    (OpenAI chat format, that message last) and the session it belongs to. A request template
    reads them as ``{message}``, ``{messages}`` and ``{session}``; a Python agent as arguments."""

    session: str
    message: str
    messages: tuple[dict[str, str], ...]

    def as_fields(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "message": self.message,
            "messages": [dict(m) for m in self.messages],
        }


class Transport(Protocol):
    """How one agent is reached: a call per (qid, question) gives its response document;
    ``passages`` (title and text each) go to an agent that takes them from the caller."""

    async def __call__(
        self, qid: str, question: str, passages: list[dict[str, str]] | None = None
    ) -> Any: ...

    async def aclose(self) -> None:
        """Close what it keeps open on the running loop (an HTTP client's connections)."""
        ...


class AgentCallError(RuntimeError):
    """One call failed after its retries: recorded on the case, the run goes on. ``timed_out``:
    the agent gave no answer within its timeout (a conversation ends saying so)."""

    def __init__(self, message: str, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


class FatalAgentError(FatalLLMError):
    """A failure every call would share (401, 403, 404): the partition stops at its first calls."""


class AgentCache(JsonFiles):
    """``<folder>/<agent>/<key[:2]>/<key>.json``: the agent's response documents, by
    (version, question, repeat). Only responses the mapping could read, of at most
    ``MAX_RESPONSE_CHARS`` characters, are kept."""

    def __init__(self, folder: Path, agent: str, version: str) -> None:
        super().__init__(folder / agent)
        self._version = version

    def key(self, question: str, repeat: int) -> str:
        identity = json.dumps([self._version, question, repeat], ensure_ascii=False)
        return hashlib.sha256(identity.encode()).hexdigest()

    def turn_key(self, turn: ConversationTurn) -> str:
        """A conversation's turn: the session (scenario and trial) and the history so far, so a
        re-run of the same conversation is served and a changed one asked again."""
        identity = json.dumps([self._version, turn.session, list(turn.messages)], ensure_ascii=False)
        return hashlib.sha256(identity.encode()).hexdigest()

    def get(self, key: str) -> tuple[Any, float | None] | None:
        """The document and the latency of the call that fetched it (None: kept before
        latencies were)."""
        return self.read(key, lambda data: (data["document"], data.get("latency_s")))

    def put(self, key: str, document: Any, latency_s: float | None = None) -> bool:
        """Keeps a reply of at most ``MAX_RESPONSE_CHARS`` characters (a larger one is asked
        again by the next run rather than filling the cache) with its call's latency, so a
        re-run counts the case at its first latency; whether it was kept."""
        text = json.dumps({"document": document, "latency_s": latency_s}, ensure_ascii=False, default=str)
        if len(text) > MAX_RESPONSE_CHARS:
            return False
        self.write(key, text)
        return True


class CachedAgent:
    """The agent's transport behind the cache and a bound of ``concurrency`` calls in flight
    (cache hits take no slot). ``refresh`` asks every call again and stores the new responses;
    without a cache (no version) every run asks every question."""

    def __init__(
        self,
        transport: Transport,
        cache: AgentCache | None,
        concurrency: int,
        refresh: bool = False,
        counter: CallCount | None = None,
        redact: Redactor = NO_SECRETS,
    ) -> None:
        self._transport = transport
        self._redact = redact
        self._cache = cache
        self._refresh = refresh
        self._in_flight = LoopSemaphore(concurrency)
        self.counter = counter or CallCount()

    def _limit(self) -> asyncio.Semaphore:
        return self._in_flight.here()

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def document(
        self,
        qid: str,
        question: str,
        repeat: int,
        usable: Callable[[Any], bool],
        passages: list[dict[str, str]] | None = None,
    ) -> tuple[Any, bool, float | None]:
        """The response document, whether it came from the cache and the call's latency (a
        cached one's first; None when the cache did not record it); a document ``usable``
        refuses is returned but not kept, so a re-run asks that call again. A call given
        ``passages`` is never cached: the cache is keyed by the question alone."""
        key = self._cache.key(question, repeat) if self._cache is not None and passages is None else None
        if self._cache is not None and key is not None and not self._refresh:
            cached = self._cache.get(key)
            if cached is not None and usable(cached[0]):
                self.counter.cache_hits += 1
                return cached[0], True, cached[1]
        async with self._limit():
            self.counter.calls += 1
            started = time.perf_counter()  # the call alone, not the wait for a slot
            reply = await self._transport(qid, question, passages)
            latency = time.perf_counter() - started
            # a reply that echoes a secret header is masked before anything keeps it
            document = self._redact.document(reply)
        if self._cache is not None and key is not None and usable(document):
            self._cache.put(key, document, latency)
        return document, False, latency

    async def converse(self, turn: ConversationTurn, usable: Callable[[Any], bool]) -> tuple[Any, bool]:
        """The agent's reply to one turn of a conversation, and whether it came from the cache
        (keyed by version, session and history); as ``document`` otherwise."""
        key = self._cache.turn_key(turn) if self._cache is not None else None
        if self._cache is not None and key is not None and not self._refresh:
            cached = self._cache.get(key)
            if cached is not None and usable(cached[0]):
                self.counter.cache_hits += 1
                return cached[0], True
        converse = getattr(self._transport, "converse", None)
        if converse is None:
            raise FatalAgentError("this agent cannot hold a conversation (an http or python agent can)")
        async with self._limit():
            self.counter.calls += 1
            started = time.perf_counter()
            reply = await converse(turn)
            latency = time.perf_counter() - started
            document = self._redact.document(reply)
        if self._cache is not None and key is not None and usable(document):
            self._cache.put(key, document, latency)
        return document, False
