"""Answers an agent already gave, from a file (JSONL, CSV or parquet; exported from logs or
traces): each row read through the entry's column mapping, joined to the judgement list by qid
or exact question text. Rows of one question are its repeats."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from rag_eval_pipeline.answering.agents.mapping import (
    INLINE,
    ResponseMapping,
    UnreadableReplyError,
    compile_path,
)
from rag_eval_pipeline.answering.agents.settings import AnswersFileEntry
from rag_eval_pipeline.data.rows import RowFileError, read_rows

SHOWN = 5  # unmatched rows and questions named in the error, beside their counts
_FIRST_FIELD = re.compile(r"^\$?\.?(?:'([^']+)'|\"([^\"]+)\"|([^.\[\]]+))")


class AnswersFileError(ValueError):
    """What keeps a file of answers from being joined to the questions, in one message."""


def _column(path: str) -> str:
    """The top-level column a mapping path reads (``retrieved[*].content`` reads ``retrieved``)."""
    match = _FIRST_FIELD.match(path.strip())
    return next((g for g in match.groups() if g), path) if match else path


def _lists_in_text(row: dict[str, Any]) -> dict[str, Any]:
    """CSV cells are text: a cell holding a JSON array or object is read as one."""
    out = {}
    for key, value in row.items():
        if isinstance(value, str) and value[:1] in ("[", "{"):
            with contextlib.suppress(ValueError):  # text that only looks like JSON stays text
                value = json.loads(value)
        elif hasattr(value, "tolist") and not isinstance(value, str):  # parquet arrays
            value = value.tolist()
        out[key] = value
    return out


class AnswersFile:
    """The file's rows by qid and by question, read once."""

    def __init__(self, entry: AnswersFileEntry) -> None:
        self.entry = entry
        self.path = Path(entry.path)
        columns = entry.columns
        mapping = columns.compiled()
        # a heat map's relative path is the file's own neighbour, wherever rag-eval runs
        folder = self.path.resolve().parent
        self.mapping: ResponseMapping = replace(mapping, visual=mapping.visual.relative_to(folder))
        self._qid = compile_path(columns.qid) if columns.qid else None
        self._question = compile_path(columns.question) if columns.question else None
        try:
            rows, problems = read_rows(self.path)
        except RowFileError as err:
            raise AnswersFileError(str(err)) from None
        except OSError as err:
            raise AnswersFileError(f"answers file {self.path}: {err.strerror or err}") from None
        self.locations: list[str] = []
        self.rows: list[dict[str, Any]] = []
        for location, row in rows:
            self.locations.append(location)
            self.rows.append(_lists_in_text(row))
        bad = [f"{self.path}, {p}" for p in problems]
        for location, row in zip(self.locations, self.rows):
            try:
                self.mapping.read(row)
            except UnreadableReplyError as err:
                bad.append(f"{self.path}, {location}: {err}")
        if bad:
            raise AnswersFileError(
                "; ".join(bad[:SHOWN]) + (f" (and {len(bad) - SHOWN} more)" if len(bad) > SHOWN else "")
            )
        self.columns = sorted({c for row in self.rows for c in row})

    def unread_columns(self) -> list[str]:
        """Columns of the file no mapping path reads: said, so a misnamed column is noticed."""
        columns = self.entry.columns
        paths = [
            columns.qid,
            columns.question,
            columns.answer,
            columns.contexts,
            columns.context_ids,
            columns.context_titles,
            columns.citations,
            columns.images,
            columns.boxes,
            columns.heatmaps,
        ]
        read = {_column(p) for p in paths if p and p != INLINE}
        return [c for c in self.columns if c not in read]

    def _key(self, path: Any, row: dict[str, Any]) -> str | None:
        if path is None:
            return None
        found = [m.value for m in path.find(row)]
        return None if not found or found[0] is None else str(found[0]).strip()

    def join(self, cases: Sequence[tuple[str, str]]) -> dict[str, list[dict[str, Any]]]:
        """Each question's rows (by qid where the file has one, else by exact question text);
        rows without a question and questions without a row fail together, with their counts
        and the first few, unless the entry is ``partial``."""
        by_qid = {qid: [] for qid, _ in cases}
        qid_of_question = {question.strip(): qid for qid, question in cases}
        orphans = []
        for location, row in zip(self.locations, self.rows):
            qid = self._key(self._qid, row)
            if qid is None or qid not in by_qid:
                question = self._key(self._question, row)
                qid = qid_of_question.get(question) if question is not None else None
            if qid is None:
                orphans.append(
                    f"{location} ({self._key(self._qid, row) or self._key(self._question, row) or '?'})"
                )
            else:
                by_qid[qid].append(row)
        unanswered = [qid for qid, rows in by_qid.items() if not rows]
        if (orphans or unanswered) and not self.entry.partial:
            said = []
            if unanswered:
                said.append(f"{len(unanswered)} questions have no row (e.g. {', '.join(unanswered[:SHOWN])})")
            if orphans:
                said.append(f"{len(orphans)} rows match no question (e.g. {', '.join(orphans[:SHOWN])})")
            raise AnswersFileError(
                f"answers file {self.path}: {'; '.join(said)}: join by qid or exact question text, or set "
                "partial: true to evaluate the questions it answers"
            )
        return by_qid
