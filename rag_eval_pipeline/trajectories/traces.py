"""Trace files as spans: an OTLP/JSON export (``{"resourceSpans": [...]}``) per file or one per
line (the OpenTelemetry Collector's file exporter), or Phoenix's span pages; every span keeps
where it was read, so a problem names file and line."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_eval_pipeline.production.spans import Span, phoenix_spans, spans_of_document


class TraceInputError(ValueError):
    """A trace file that cannot be read as spans, said in one line with file and line."""


@dataclass(frozen=True)
class LocatedSpan:
    """A span and where it was read (``FILE`` or ``FILE, line N``)."""

    span: Span
    where: str


def _documents(path: Path) -> Iterator[tuple[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TraceInputError(
            f"{path}: no such file (give the OTLP/JSON export of the agent's traces)"
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        raise TraceInputError(f"{path}: not readable ({err})") from None
    stripped = text.strip()
    if not stripped:
        raise TraceInputError(f"{path}: empty (no span to read)")
    try:
        yield str(path), json.loads(stripped)
        return
    except json.JSONDecodeError:
        pass
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield f"{path}, line {number}", json.loads(line)
        except json.JSONDecodeError as err:
            raise TraceInputError(
                f"{path}, line {number}: not JSON ({err.msg}): expected an OTLP/JSON export per line"
            ) from None


def _is_spans(document: Any) -> bool:
    if isinstance(document, Mapping):
        return "resourceSpans" in document or isinstance(document.get("data"), list)
    return isinstance(document, list) and all(isinstance(d, Mapping) for d in document)


def read_trace_file(path: Path) -> list[LocatedSpan]:
    """Every span of the file, each with where it was read. A document that is not an OTLP/JSON
    export (nor Phoenix's spans) is an error naming file and line: nothing is read from a file
    that is not traces."""
    spans: list[LocatedSpan] = []
    for where, document in _documents(path):
        if not _is_spans(document):
            raise TraceInputError(
                f"{where}: not an OTLP/JSON trace export (no resourceSpans): export the agent's "
                "traces with the OTLP file exporter, or Phoenix's spans"
            )
        spans += [LocatedSpan(span, where) for span in spans_of_document(document)]
    return spans


def read_trace_files(paths: Iterable[Path]) -> list[LocatedSpan]:
    return [span for path in paths for span in read_trace_file(Path(path))]


def located_phoenix_spans(rows: Iterable[Mapping[str, Any]], where: str) -> list[LocatedSpan]:
    """Spans read through Phoenix's REST API, named by the project they came from."""
    return [LocatedSpan(span, where) for span in phoenix_spans(rows)]
