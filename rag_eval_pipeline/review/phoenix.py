"""Labels from Phoenix: the HUMAN span annotations reviewers put on the case traces this project
exported (one root span per case and answer model, ``rag_eval.qid`` and
``rag_eval.answer_model`` on it), read through Phoenix's REST API. The annotation's name is the
metric; its score (else its label read as a number) is the label."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import httpx
import pandas as pd

from rag_eval_pipeline.common.mappings import dotted_value
from rag_eval_pipeline.review.labels import checked_labels

PAGE = 1000
SPAN_IDS_PER_REQUEST = 100  # annotations are asked for by span id: keep the query string short


class PhoenixLabelsError(RuntimeError):
    """Phoenix could not be read (down, no such project): said in one line."""


class PhoenixNotFoundError(LookupError):
    """Phoenix answered 404: no such project (its own words, cut)."""


def phoenix_pages(client: httpx.Client, path: str, params: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every item of a paged Phoenix REST listing (``data``, ``next_cursor``)."""
    cursor = None
    while True:
        response = client.get(
            path, params={**params, "limit": PAGE, **({"cursor": cursor} if cursor else {})}
        )
        if response.status_code == 404:
            raise PhoenixNotFoundError(response.text.strip()[:200])
        response.raise_for_status()
        page = response.json()
        yield from page.get("data", [])
        cursor = page.get("next_cursor")
        if not cursor:
            return


def span_annotations(client: httpx.Client, project: str, span_ids: list[str]) -> list[dict[str, Any]]:
    """Every annotation on the given spans of the project (``/v1/projects/{project}/span_annotations``),
    asked for ``SPAN_IDS_PER_REQUEST`` span ids at a time."""
    found: list[dict[str, Any]] = []
    for start in range(0, len(span_ids), SPAN_IDS_PER_REQUEST):
        chunk = span_ids[start : start + SPAN_IDS_PER_REQUEST]
        found += list(phoenix_pages(client, f"/v1/projects/{project}/span_annotations", {"span_ids": chunk}))
    return found


def case_spans(client: httpx.Client, project: str) -> dict[str, tuple[str, str]]:
    """span id -> (answer model, question id) of every case's root span in the project."""
    cases = {}
    for span in phoenix_pages(client, f"/v1/projects/{project}/spans", {}):
        if span.get("parent_id"):
            continue
        attributes = span.get("attributes") or {}
        qid, model = (
            dotted_value(attributes, "rag_eval.qid"),
            dotted_value(attributes, "rag_eval.answer_model"),
        )
        span_id = (span.get("context") or {}).get("span_id") or span.get("span_id")
        if qid is not None and model is not None and span_id:
            cases[str(span_id)] = (str(model), str(qid))
    return cases


def _reviewer(annotation: Mapping[str, Any]) -> str:
    metadata = annotation.get("metadata") or {}
    for candidate in (metadata.get("reviewer"), annotation.get("identifier"), annotation.get("user_id")):
        if candidate not in (None, ""):
            return str(candidate)
    return "phoenix"


def _label(result: Mapping[str, Any]) -> Any:
    score = result.get("score")
    return score if score is not None else result.get("label")


def read_phoenix_labels(
    url: str,
    project: str,
    known_cases: Mapping[str, set[str]] | None = None,
    headers: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Every HUMAN annotation on the project's case spans as label rows, checked as a label
    file's rows are (each named by its span and annotation); LLM and CODE annotations are not
    people's and are left out."""
    where = f"Phoenix {url.rstrip('/')} project {project}"
    try:
        with httpx.Client(base_url=url.rstrip("/"), headers=dict(headers or {}), timeout=30) as client:
            cases = case_spans(client, project)
            annotations = span_annotations(client, project, sorted(cases))
    except PhoenixNotFoundError as err:
        raise PhoenixLabelsError(f"{where}: not found ({err})") from None
    except httpx.HTTPError as err:
        raise PhoenixLabelsError(f"{where}: {type(err).__name__}: {err}") from None
    rows = []
    for annotation in annotations:
        if str(annotation.get("annotator_kind", "")).upper() != "HUMAN":
            continue
        span_id = str(annotation.get("span_id"))
        model, qid = cases[span_id]
        result = annotation.get("result") or {}
        rows.append(
            (
                f"span {span_id} annotation {annotation.get('name')!r}",
                {
                    "qid": qid,
                    "answer_model": model,
                    "metric": annotation.get("name"),
                    "label": _label(result),
                    "reviewer": _reviewer(annotation),
                    "note": result.get("explanation"),
                    "labelled_at": annotation.get("updated_at") or annotation.get("created_at"),
                },
            )
        )
    return checked_labels(where, f"phoenix:{project}", rows, [], known_cases)
