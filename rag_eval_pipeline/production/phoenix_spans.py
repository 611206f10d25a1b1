"""A Phoenix project's spans through its REST API (``GET /v1/projects/{project}/spans``, paged,
within a time window): the adapter the production ``phoenix`` source reads from."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping
from typing import Any

import httpx

from rag_eval_pipeline.review.phoenix import PhoenixNotFoundError, phoenix_pages, span_annotations

TIMEOUT_S = 30


class PhoenixSpansError(RuntimeError):
    """Phoenix could not be read: down, or no such project; said in one line."""


def read_spans(
    url: str,
    project: str,
    start: dt.datetime | None = None,
    end: dt.datetime | None = None,
    headers: Mapping[str, str] | None = None,
) -> Iterator[dict[str, Any]]:
    """Every span of the project that started in [start, end) (all of them without a window)."""
    where = f"Phoenix {url.rstrip('/')} project {project}"
    window = {
        **({"start_time": start.isoformat()} if start is not None else {}),
        **({"end_time": end.isoformat()} if end is not None else {}),
    }
    try:
        with httpx.Client(base_url=url.rstrip("/"), headers=dict(headers or {}), timeout=TIMEOUT_S) as client:
            yield from phoenix_pages(client, f"/v1/projects/{project}/spans", window)
    except PhoenixNotFoundError as err:
        raise PhoenixSpansError(f"{where}: not found ({err})") from None
    except httpx.HTTPError as err:
        raise PhoenixSpansError(f"{where}: {type(err).__name__}: {err}") from None


def read_span_annotations(
    url: str, project: str, span_ids: list[str], headers: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """Every annotation on the given spans of the project (``/v1/projects/{project}/span_annotations``):
    what users' feedback, logged as annotations on the agent's root spans, is read from."""
    where = f"Phoenix {url.rstrip('/')} project {project}"
    try:
        with httpx.Client(base_url=url.rstrip("/"), headers=dict(headers or {}), timeout=TIMEOUT_S) as client:
            return span_annotations(client, project, span_ids)
    except PhoenixNotFoundError as err:
        raise PhoenixSpansError(f"{where}: not found ({err})") from None
    except httpx.HTTPError as err:
        raise PhoenixSpansError(f"{where}: {type(err).__name__}: {err}") from None
