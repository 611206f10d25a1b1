"""Interactions from a folder of logs: JSONL or parquet rows ``{question, answer, contexts,
timestamp}`` (optional ``context_ids``, ``context_titles``, ``trace_id``, ``user_feedback``,
``agent_version``, ``metadata``, ``latency_s``, ``cost_usd``), each field read through the
source's column mapping, as an answers file's are. A row that cannot be read is named by file
and line; the others are kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from rag_eval_pipeline.answering.agents.mapping import compile_path
from rag_eval_pipeline.data.rows import RowFileError, read_rows
from rag_eval_pipeline.production.interactions import (
    InteractionError,
    Problem,
    ReadInteractions,
    interaction,
)
from rag_eval_pipeline.production.settings import LogColumns, LogsSource, source_name

LOG_SUFFIXES = (".jsonl", ".parquet")
REQUIRED = ("question", "answer", "timestamp")
OPTIONAL = (
    "contexts",
    "context_ids",
    "context_titles",
    "trace_id",
    "user_feedback",
    "agent_version",
    "metadata",
    "latency_s",
    "cost_usd",
)


def log_files(path: Path) -> list[Path]:
    """The log files of a folder (its subfolders too, hidden ones left out), or the one file."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        return []
    return sorted(
        p
        for p in path.rglob("*")
        if p.is_file()
        and p.suffix.lower() in LOG_SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(path).parts)
    )


class _Columns:
    """The mapping's paths, compiled once."""

    def __init__(self, columns: LogColumns) -> None:
        self.paths = {
            name: (getattr(columns, name), compile_path(getattr(columns, name)))
            for name in (*REQUIRED, *OPTIONAL)
            if getattr(columns, name) is not None
        }

    def read(self, row: dict[str, Any]) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for name, (text, path) in self.paths.items():
            found = [m.value for m in path.find(row)]
            if not found:
                if name in REQUIRED:
                    raise InteractionError(f"{name}: {text} found nothing in the row")
                continue
            # a path through a list (retrieved[*].content) finds each item; a column finds one
            values[name] = found if len(found) > 1 or "[*]" in text else found[0]
        return values


def read_logs(source: LogsSource, zone: ZoneInfo) -> ReadInteractions:
    """Every interaction of the source's files, with the problems of rows it could not read."""
    folder = Path(source.path)
    name = source_name(source)
    if not folder.exists():
        return ReadInteractions.of(
            [], [Problem(f"{folder}: no such file or folder (production source {name})")]
        )
    columns = _Columns(source.columns)
    rows, problems = [], []
    for path in log_files(folder):
        try:
            records, unreadable = read_rows(path, "an object (one interaction)")
        except RowFileError as err:
            problems += [Problem(p, str(path)) for p in err.problems]
            continue
        except (OSError, ValueError) as err:  # a truncated parquet file, say
            problems.append(Problem(f"{path}: not readable ({type(err).__name__}: {err})", str(path)))
            continue
        problems += [Problem(f"{path}, {problem}", str(path)) for problem in unreadable]
        for location, record in records:
            try:
                fields = columns.read(record)
                rows.append(
                    interaction(
                        source=name, location=f"{path}, {location}", zone=zone, file=str(path), **fields
                    )
                )
            except InteractionError as err:
                problems.append(Problem(f"{path}, {location}: {err}", str(path)))
    return ReadInteractions.of(rows, problems)
