"""The agent behind an HTTP endpoint, through ``httpx``: the request built from the body
template, each attempt bounded as a whole (a server that trickles bytes cannot hold a run),
retries with backoff on 429, 5xx, timeouts and lost connections (honouring ``Retry-After``),
401/403/404 fatal at once, any other failure recorded on its case with the status and the
first 200 characters of the body."""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import Mapping
from typing import Any

import httpx

from rag_eval_pipeline.answering.agents.calls import (
    AgentCallError,
    ConversationTurn,
    FatalAgentError,
)
from rag_eval_pipeline.answering.agents.mapping import KEPT_HEADERS, REPLY_HEADERS
from rag_eval_pipeline.answering.agents.settings import HttpAgentEntry
from rag_eval_pipeline.common.secrets import Redactor

BODY_EXCERPT = 200  # characters of an error body kept on the failed case
MAX_RETRY_AFTER_S = 60.0
FATAL_STATUSES = (401, 403, 404)


PASSAGES = "{passages}"


def takes_passages(template: Any) -> bool:
    """Whether a body template asks for the passages (``{passages}`` in any of its strings)."""
    if isinstance(template, str):
        return PASSAGES in template
    if isinstance(template, Mapping):
        return any(takes_passages(v) for v in template.values())
    if isinstance(template, list):
        return any(takes_passages(v) for v in template)
    return False


def render_template(
    template: Any,
    qid: str,
    question: str,
    turn: ConversationTurn | None = None,
    passages: list[dict[str, str]] | None = None,
) -> Any:
    """The body template with ``{question}`` and ``{qid}`` replaced inside its strings (not by
    formatting: braces of the template's own JSON stay as they are, and a question with quotes
    stays valid JSON). In a conversation also ``{message}`` (the latest user message),
    ``{session}`` and ``{messages}`` (the history, OpenAI chat format). ``{passages}`` is the
    passages given to the agent, a list of ``title`` and ``text``. A string that is exactly
    ``{messages}`` or ``{passages}`` becomes the list itself, inside a longer string its JSON text."""
    if isinstance(template, str):
        if turn is not None and template == "{messages}":
            return [dict(m) for m in turn.messages]
        if template == PASSAGES:
            return list(passages or [])
        text = template.replace("{question}", question).replace("{qid}", qid)
        if turn is not None:
            history = json.dumps([dict(m) for m in turn.messages], ensure_ascii=False)
            text = text.replace("{message}", turn.message).replace("{session}", turn.session)
            text = text.replace("{messages}", history)
        if PASSAGES in text:
            text = text.replace(PASSAGES, json.dumps(list(passages or []), ensure_ascii=False))
        return text
    if isinstance(template, Mapping):
        return {k: render_template(v, qid, question, turn, passages) for k, v in template.items()}
    if isinstance(template, list):
        return [render_template(v, qid, question, turn, passages) for v in template]
    return template


def retry_after_s(value: str | None) -> float | None:
    """``Retry-After`` as seconds (a number, or an HTTP date), capped; None when absent."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError):
            return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


def backoff_s(attempt: int) -> float:
    return min(0.5 * 2**attempt, 8.0) + random.uniform(0, 0.25)


def _excerpt(response: httpx.Response) -> str:
    return " ".join(response.text[:BODY_EXCERPT].split())


class HttpTransport:
    """One call per (qid, question), with the entry's headers (secret ones read from the
    environment when the transport is made)."""

    def __init__(self, entry: HttpAgentEntry, secret_headers: Mapping[str, str]) -> None:
        self._entry = entry
        self._headers = {**entry.headers, **secret_headers}
        # a server that echoes a header in its error body must not put the secret in a reason
        self.redact = Redactor.of(secret_headers.values())
        # made once: building the TLS context is most of what a new client costs (about 20 ms)
        self._tls = httpx.create_ssl_context()
        self._clients: dict[asyncio.AbstractEventLoop, httpx.AsyncClient] = {}
        self._reached = False  # any call got an HTTP answer: a later refused connection is one case's

    def _client(self) -> httpx.AsyncClient:
        """One client per event loop (a stage runs on its own): its connections are kept alive
        between calls; ``aclose`` closes it on the loop that made it."""
        loop = asyncio.get_running_loop()
        if loop not in self._clients:
            timeout = httpx.Timeout(self._entry.timeout_s)
            limits = httpx.Limits(max_connections=self._entry.concurrency)
            self._clients[loop] = httpx.AsyncClient(
                timeout=timeout, follow_redirects=True, verify=self._tls, limits=limits
            )
        return self._clients[loop]

    async def aclose(self) -> None:
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()

    def request(
        self,
        qid: str,
        question: str,
        turn: ConversationTurn | None = None,
        passages: list[dict[str, str]] | None = None,
    ) -> dict[str, Any]:
        """The arguments of the ``httpx`` request for one question (what `agents check` shows),
        or for one turn of a conversation."""
        body = render_template(self._entry.body, qid, question, turn, passages)
        if self._entry.method == "GET":
            return {"method": "GET", "url": self._entry.url, "params": body, "headers": self._headers}
        content = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
        headers = {"Content-Type": "application/json", **self._headers}
        return {"method": self._entry.method, "url": self._entry.url, "content": content, "headers": headers}

    async def _attempt(
        self,
        qid: str,
        question: str,
        turn: ConversationTurn | None,
        passages: list[dict[str, str]] | None,
    ) -> httpx.Response:
        return await self._client().request(**self.request(qid, question, turn, passages))

    async def converse(self, turn: ConversationTurn) -> Any:
        """One turn of a conversation: ``{question}`` is the latest message, ``{qid}`` the session."""
        return await self._ask(turn.session, turn.message, turn, None)

    async def __call__(self, qid: str, question: str, passages: list[dict[str, str]] | None = None) -> Any:
        return await self._ask(qid, question, None, passages)

    async def _ask(
        self,
        qid: str,
        question: str,
        turn: ConversationTurn | None,
        passages: list[dict[str, str]] | None,
    ) -> Any:
        entry, last, wait, timed_out = self._entry, "", None, False
        attempts = entry.max_retries + 1
        for attempt in range(attempts):
            try:
                # the whole attempt, not each read: httpx's timeout restarts with every byte
                response = await asyncio.wait_for(
                    self._attempt(qid, question, turn, passages), entry.timeout_s
                )
            except (TimeoutError, httpx.TimeoutException):
                last, wait, timed_out = f"no response within {entry.timeout_s:g} s", None, True
            except httpx.ConnectError as err:
                last, wait, timed_out = (
                    self.redact(f"connection failed ({type(err).__name__}: {err})"),
                    None,
                    False,
                )
                if not self._reached and attempt + 1 == attempts:  # never reached: no call can be
                    said = f"agent {entry.name} cannot be reached at {entry.url}: {type(err).__name__}: {err}"
                    raise FatalAgentError(self.redact(said)) from None
            except httpx.TransportError as err:
                last, wait, timed_out = (
                    self.redact(f"connection failed ({type(err).__name__}: {err})"),
                    None,
                    False,
                )
            else:
                timed_out = False
                self._reached = True
                status = response.status_code
                if status in FATAL_STATUSES:
                    raise FatalAgentError(
                        self.redact(
                            f"agent {entry.name}: HTTP {status} from {entry.url}: {_excerpt(response)}"
                        )
                    )
                if status == 429 or status >= 500:
                    last, wait = (
                        self.redact(f"HTTP {status}: {_excerpt(response)}"),
                        retry_after_s(response.headers.get("retry-after")),
                    )
                elif status >= 400:
                    raise AgentCallError(self.redact(f"HTTP {status}: {_excerpt(response)}"))
                else:
                    return _json(response, self.redact)
            if attempt + 1 < attempts:
                await asyncio.sleep(wait if wait is not None else backoff_s(attempt))
        raise AgentCallError(f"{last} (after {attempts} attempt{'s' if attempts > 1 else ''})", timed_out)


def _json(response: httpx.Response, redact: Redactor) -> Any:
    """The body, with the response headers the mapping reads (a W3C ``traceparent``) kept
    beside it when the body is an object, so a cached reply keeps them too."""
    try:
        document = redact.document(response.json())
    except ValueError:
        kind = response.headers.get("content-type", "no content type")
        raise AgentCallError(redact(f"the response is not JSON ({kind}): {_excerpt(response)}")) from None
    kept = {name: response.headers[name] for name in KEPT_HEADERS if name in response.headers}
    if kept and isinstance(document, dict):
        document = {**document, REPLY_HEADERS: kept}
    return document
