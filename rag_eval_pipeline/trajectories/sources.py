"""Where the agent's spans come from: the configured files and folders (OTLP/JSON), and a
Phoenix project when one is named; the spans kept as a table (a row a span, where it was read)
so the sessions' lineage reaches the spans they were rebuilt from."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from rag_eval_pipeline.production.phoenix_spans import PhoenixSpansError, read_spans
from rag_eval_pipeline.production.spans import Span
from rag_eval_pipeline.trajectories.sessions import Session
from rag_eval_pipeline.trajectories.settings import TrajectorySettings
from rag_eval_pipeline.trajectories.traces import (
    LocatedSpan,
    TraceInputError,
    located_phoenix_spans,
    read_trace_file,
)

TRACE_SUFFIXES = (".json", ".jsonl")
SPAN_COLUMNS = [
    "trace_id", "span_id", "parent_id", "name", "start", "end", "error", "session_id", "where",
    "attributes", "resource",
]  # fmt: skip


def trace_files(paths: Sequence[str]) -> list[Path]:
    """The files named, and the .json / .jsonl files under the folders named, in name order."""
    files: list[Path] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in TRACE_SUFFIXES)
        else:
            files.append(path)
    return files


def read_traces(settings: TrajectorySettings) -> list[LocatedSpan]:
    """Every span of the configured files and Phoenix project; a file that is not traces, or a
    Phoenix that does not answer, is an error in one line."""
    if not settings.traces and settings.phoenix is None:
        raise TraceInputError("no traces given: --traces FILE, or trajectories.traces in rag_eval.yaml")
    spans = [span for path in trace_files(settings.traces) for span in read_trace_file(path)]
    if settings.phoenix is not None:
        phoenix = settings.phoenix
        key = os.environ.get(phoenix.api_key_env)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        try:
            rows = list(read_spans(phoenix.url, phoenix.project, headers=headers))
        except PhoenixSpansError as err:
            raise TraceInputError(str(err)) from None
        spans += located_phoenix_spans(rows, f"Phoenix project {phoenix.project}")
    return spans


def spans_frame(spans: Sequence[LocatedSpan], sessions: Sequence[Session]) -> pd.DataFrame:
    """A row per span, with the session it was placed in (none: an orphan)."""
    placed = {span_id: s.session_id for s in sessions for span_id in s.span_ids}
    rows = [
        {
            "trace_id": s.span.trace_id,
            "span_id": s.span.span_id,
            "parent_id": s.span.parent_id,
            "name": s.span.name,
            "start": None if s.span.start is None else str(s.span.start),
            "end": None if s.span.end is None else str(s.span.end),
            "error": s.span.error,
            "session_id": placed.get(s.span.span_id),
            "where": s.where,
            "attributes": json.dumps(s.span.attributes, ensure_ascii=False),
            "resource": json.dumps(s.span.resource, ensure_ascii=False),
        }
        for s in spans
    ]
    return pd.DataFrame(rows, columns=SPAN_COLUMNS)


def spans_of_frame(frame: pd.DataFrame) -> list[LocatedSpan]:
    """The stored spans, as they were read."""
    return [
        LocatedSpan(
            Span(
                row.trace_id,
                row.span_id,
                row.parent_id if isinstance(row.parent_id, str) and row.parent_id else None,
                row.start,
                json.loads(row.attributes),
                json.loads(row.resource),
                row.name,
                row.end,
                row.error if isinstance(row.error, str) else None,
            ),
            row.where,
        )
        for row in frame.itertuples(index=False)
    ]
