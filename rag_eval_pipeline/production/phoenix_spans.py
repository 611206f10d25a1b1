"""A Phoenix project's spans through its REST API (``GET /v1/projects/{project}/spans``, paged,
within a time window): the adapter the production ``phoenix`` source reads from."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping
from typing import Any

import httpx

PAGE = 1000
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
    params: dict[str, Any] = {"limit": PAGE}
    if start is not None:
        params["start_time"] = start.isoformat()
    if end is not None:
        params["end_time"] = end.isoformat()
    try:
        with httpx.Client(base_url=url.rstrip("/"), headers=dict(headers or {}), timeout=TIMEOUT_S) as client:
            cursor = None
            while True:
                response = client.get(
                    f"/v1/projects/{project}/spans",
                    params={**params, **({"cursor": cursor} if cursor else {})},
                )
                if response.status_code == 404:
                    raise PhoenixSpansError(f"{where}: not found ({response.text.strip()[:200]})")
                response.raise_for_status()
                page = response.json()
                yield from page.get("data", [])
                cursor = page.get("next_cursor")
                if not cursor:
                    return
    except httpx.HTTPError as err:
        raise PhoenixSpansError(f"{where}: {type(err).__name__}: {err}") from None
