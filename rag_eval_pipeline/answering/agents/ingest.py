"""Planting documents in an agent's own index for a security probe, and taking them out again:
through an HTTP endpoint or a Python callable (``IngestSettings``). ``planted`` removes them
whatever happens between (a failed add, a failed probe, an interrupt), so the team's index is
left as it was found."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

import httpx

from rag_eval_pipeline.answering.agents.python_target import load_target
from rag_eval_pipeline.answering.agents.settings import IngestSettings


class IngestError(RuntimeError):
    """The agent's hook refused an add or a remove."""


class IngestHook(Protocol):
    def add(self, documents: Sequence[dict[str, Any]]) -> None: ...

    def remove(self, documents: Sequence[dict[str, Any]]) -> None: ...


class HttpIngest:
    """POST ``{"documents": [...]}`` adds; DELETE ``{"ids": [...]}`` removes."""

    def __init__(self, url: str, timeout_s: float, headers: dict[str, str] | None = None) -> None:
        self._url, self._timeout_s, self._headers = url, timeout_s, headers or {}

    def _send(self, method: str, body: dict[str, Any]) -> None:
        try:
            response = httpx.request(
                method, self._url, json=body, headers=self._headers, timeout=self._timeout_s
            )
        except httpx.HTTPError as err:
            raise IngestError(f"ingest {method} {self._url}: {type(err).__name__}: {err}") from None
        if response.status_code >= 400:
            excerpt = " ".join(response.text[:200].split())
            raise IngestError(f"ingest {method} {self._url}: HTTP {response.status_code}: {excerpt}")

    def add(self, documents: Sequence[dict[str, Any]]) -> None:
        self._send("POST", {"documents": list(documents)})

    def remove(self, documents: Sequence[dict[str, Any]]) -> None:
        self._send("DELETE", {"ids": [d["id"] for d in documents]})


class PythonIngest:
    """``function("add", documents)`` then ``function("remove", documents)``."""

    def __init__(self, target: str) -> None:
        self._function = load_target(target)

    def add(self, documents: Sequence[dict[str, Any]]) -> None:
        self._function("add", list(documents))

    def remove(self, documents: Sequence[dict[str, Any]]) -> None:
        self._function("remove", list(documents))


def ingest_hook(settings: IngestSettings, headers: dict[str, str] | None = None) -> IngestHook:
    if settings.url is not None:
        return HttpIngest(settings.url, settings.timeout_s, headers)
    assert settings.target is not None
    return PythonIngest(settings.target)


@contextmanager
def planted(hook: IngestHook, documents: Sequence[dict[str, Any]]) -> Iterator[None]:
    """The documents in the agent's index for the ``with`` block; removed after it, also when the
    add or the block failed (a remove of documents never added must be harmless to the hook)."""
    try:
        hook.add(documents)
        yield
    finally:
        hook.remove(documents)
