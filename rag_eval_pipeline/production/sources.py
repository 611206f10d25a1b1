"""The one table of production sources: a record per kind (a folder of logs, a Phoenix project,
files of exported spans) says how it is read, for one day or for every day, and what must be
there before a run. Nothing outside this table branches on a source's kind.

Adding a source is its settings model in ``production/settings.py`` (an entry of
``SOURCE_SETTINGS``), one ``SourceKind`` here, and its reader module."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

from rag_eval_pipeline.common.settings import Strict
from rag_eval_pipeline.production.interactions import Problem, ReadInteractions, json_documents
from rag_eval_pipeline.production.logs import read_logs
from rag_eval_pipeline.production.phoenix_spans import PhoenixSpansError, read_spans
from rag_eval_pipeline.production.settings import (
    LogsSource,
    PhoenixSource,
    ProductionSettings,
    SpansSource,
    kind_tag,
    source_name,
)
from rag_eval_pipeline.production.spans import interactions_of_spans, phoenix_spans, spans_of_document

SPAN_SUFFIXES = (".json", ".jsonl")
Window = tuple[dt.datetime, dt.datetime] | None  # a day's [start, end), or every day


def _span_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SPAN_SUFFIXES)


def read_span_files(source: SpansSource, zone: ZoneInfo, window: Window = None) -> ReadInteractions:
    """Every trace in the source's files: a JSON document per file, or one per line."""
    folder, name = Path(source.path), source_name(source)
    if not folder.exists():
        return ReadInteractions.of(
            [], [Problem(f"{folder}: no such file or folder (production source {name})")]
        )
    reads, problems = [], []
    for path in _span_files(folder):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            problems.append(Problem(f"{path}: not readable ({err})", str(path)))
            continue
        documents, unread = json_documents(path, text)
        problems += unread
        spans = [span for _, document in documents for span in spans_of_document(document)]
        reads.append(interactions_of_spans(spans, name, source.fields, zone, str(path)))
    read = ReadInteractions.combined(reads)
    return ReadInteractions(read.frame, problems + read.problems)


def read_phoenix(source: PhoenixSource, zone: ZoneInfo, window: Window = None) -> ReadInteractions:
    """The project's traces that started in the window, read through Phoenix's REST API."""
    key = os.environ.get(source.api_key_env)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    start, end = window if window is not None else (None, None)
    try:
        spans = list(phoenix_spans(read_spans(source.url, source.project, start, end, headers)))
    except PhoenixSpansError as err:
        return ReadInteractions.of([], [Problem(str(err))])
    return interactions_of_spans(spans, source_name(source), source.fields, zone)


def _path_missing(source: LogsSource | SpansSource) -> str | None:
    """A folder that does not exist is a mistake; an empty one is a day without traffic."""
    if Path(source.path).exists():
        return None
    return f"production source {source.kind}: {source.path} does not exist (create it, or fix its path)"


@dataclass(frozen=True)
class SourceKind:
    """One kind of production source: its settings model (one of ``SOURCE_SETTINGS``, whose
    ``kind`` names it), how it is read (``read(settings, zone, window)``; a reader may narrow to
    the day's window itself, the rest is filtered after) and what it lacks before a run (None:
    nothing; a Phoenix project that does not exist is a problem of the read, so the other
    sources are still scored)."""

    settings: type[Strict]
    read: Callable[[object, ZoneInfo, Window], ReadInteractions]
    missing: Callable[[object], str | None]

    @property
    def name(self) -> str:
        return kind_tag(self.settings)


SOURCE_KINDS: dict[str, SourceKind] = {
    kind.name: kind
    for kind in (
        SourceKind(LogsSource, lambda s, zone, window: read_logs(s, zone), _path_missing),
        SourceKind(SpansSource, read_span_files, _path_missing),
        SourceKind(PhoenixSource, read_phoenix, lambda s: None),
    )
}


def day_window(day: str, zone: ZoneInfo) -> tuple[dt.datetime, dt.datetime]:
    """[midnight, next midnight) of a day where days end at ``zone``'s midnight."""
    start = dt.datetime.combine(dt.date.fromisoformat(day), dt.time(), tzinfo=zone)
    return start, start + dt.timedelta(days=1)


def read_sources(settings: ProductionSettings, day: str | None = None) -> ReadInteractions:
    """Every source's interactions (of one day, or of every day), with every problem named."""
    zone = settings.zone
    window = day_window(day, zone) if day else None
    parts: list[ReadInteractions] = []
    for source in settings.sources:
        kind = SOURCE_KINDS[source.kind]
        read = kind.read(source, zone, window)
        parts.append(read.of_day(day) if day is not None else read)
    return ReadInteractions.combined(parts)


def source_problems(settings: ProductionSettings) -> list[str]:
    """What can be known before reading: sources whose folder or file does not exist."""
    return [p for s in settings.sources if (p := SOURCE_KINDS[s.kind].missing(s)) is not None]
