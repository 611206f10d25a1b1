"""Rows of a user's table file (JSONL, CSV or parquet), each with its location (line or row),
so every problem can name the file and the line."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from rag_eval_pipeline.common.text import FileEncodingError, nfc, nfc_values, read_text

ROW_FILE_TYPES = (".jsonl", ".csv", ".parquet")


class RowFileError(ValueError):
    """Every problem of a file, each naming the file and the line or row."""

    def __init__(self, path: str | Path, problems: list[str]) -> None:
        self.path = path
        self.bare_problems = list(problems)
        self.problems = [f"{path}, {problem}" for problem in problems]
        listed = "\n".join(f"  {p}" for p in problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        super().__init__(f"{path}: {len(problems)} problem(s)\n{listed}{more}")


def empty_cell(value: Any) -> bool:
    """A cell that holds nothing: absent, empty text, or a missing value (NaN) of CSV or parquet."""
    return value is None or (isinstance(value, float) and pd.isna(value)) or value == ""


def cell_list(value: Any) -> list[str]:
    """A list cell: a list in JSON or parquet, or ';'-separated text in CSV."""
    if empty_cell(value):
        return []
    if hasattr(value, "tolist") and not isinstance(value, str):
        value = value.tolist()
    if isinstance(value, str):
        return [v.strip() for v in value.split(";") if v.strip()]
    return [str(v) for v in value]


def jsonl_objects(
    text: str, expected: str = "an object"
) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """The JSON object of each line with its number, every string in NFC (blank lines skipped),
    and a problem per line that is not JSON or not an object (``line N: ...``)."""
    rows: list[tuple[int, dict[str, Any]]] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            problems.append(f"line {number}: invalid JSON ({err.msg})")
            continue
        if not isinstance(row, dict):
            problems.append(f"line {number}: expected {expected}, got {type(row).__name__}")
            continue
        rows.append((number, nfc_values(row)))  # a \u escape may spell NFD
    return rows, problems


def _text(path: Path, encoding: str | None) -> str:
    """The file's text in NFC (UTF-8, a BOM accepted, unless ``encoding`` says otherwise); a file
    in another encoding is one problem naming the encoding it looks like."""
    try:
        return read_text(path, encoding)
    except FileEncodingError as err:
        raise RowFileError(path, [err.reason]) from None


def read_rows(
    path: Path, expected: str = "an object", encoding: str | None = None
) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """The rows with their location, every string in NFC, and the problems of rows that could
    not be read at all (checking goes on past them, so every problem of the file is reported at
    once). Text files are UTF-8 (a byte-order mark accepted) unless ``encoding`` says otherwise."""
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        objects, problems = jsonl_objects(_text(path, encoding), expected)
        return [(f"line {number}", row) for number, row in objects], problems
    if suffix == ".csv":
        return csv_rows(path, _text(path, encoding))
    if suffix == ".parquet":
        frame = pd.read_parquet(path)
        records = frame.to_dict(orient="records")
        return [(f"row {i + 1}", nfc_values(r)) for i, r in enumerate(records)], []
    raise RowFileError(path, [f"unsupported file type '{suffix}' (use .jsonl, .csv or .parquet)"])


def csv_rows(path: Path, text: str) -> tuple[list[tuple[str, dict[str, str]]], list[str]]:
    """A CSV file's rows by its header, each with the line it starts on (a quoted cell may hold
    line breaks), empty cells as ``""`` and a short row's missing cells empty; a row with more
    cells than the header names is a problem of its line, never read shifted. A quote left open
    ends the reading at the line it opened on, said as a problem."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[tuple[str, dict[str, str]]] = []
    problems: list[str] = []
    header: list[str] | None = None
    while True:
        start = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as err:
            problems.append(f"line {start}: not read as CSV ({err}); nothing after it is read")
            break
        if not any(cell.strip() for cell in cells):
            continue  # a blank line
        if header is None:
            header = [cell.strip() for cell in cells]
            twice = sorted({name for name in header if header.count(name) > 1})
            if twice:
                raise RowFileError(path, [f"line {start}: the header names {', '.join(twice)} twice"])
            continue
        if len(cells) > len(header):
            problems.append(
                f"line {start}: {len(cells)} cells where the header names {len(header)} (a comma "
                "outside quotes?)"
            )
            continue
        rows.append((f"line {start}", dict(zip(header, [*cells, *[""] * (len(header) - len(cells))]))))
    return rows, problems


def _first_object_keys(lines: Iterable[str]) -> set[str]:
    """The keys of the first line that is a JSON object (an unreadable line is skipped, as
    ``read_rows`` skips it); nothing after it is read."""
    for line in lines:
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict):
            return {nfc(key) for key in row}
    return set()


def first_row_columns(path: Path, encoding: str | None = None) -> set[str]:
    """The columns of a table file's first row, reading no further than that row: what the file
    is can be told from a 100 MB file without holding it (``read_rows`` reads it whole)."""
    suffix = path.suffix.lower()
    text_encoding = encoding or "utf-8-sig"  # a BOM accepted
    if suffix == ".jsonl" and encoding:  # a line at a time in its own encoding
        with path.open(encoding=encoding) as text_lines:
            return _first_object_keys(text_lines)
    if suffix == ".jsonl":
        with path.open("rb") as lines:  # decoded a line at a time: never past the row that tells
            return _first_object_keys(line.decode("utf-8-sig") for line in lines)
    if suffix == ".csv":
        with path.open(encoding=text_encoding, newline="") as text_lines:
            first = next((cells for cells in csv.reader(text_lines) if any(c.strip() for c in cells)), [])
        return {nfc(cell.strip()) for cell in first}
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        return set(pq.read_schema(path).names)
    raise RowFileError(path, [f"unsupported file type '{suffix}' (use .jsonl, .csv or .parquet)"])
