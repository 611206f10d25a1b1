"""Rows of a user's table file (JSONL, CSV or parquet), each with its location (line or row),
so every problem can name the file and the line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

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


def read_rows(path: Path, expected: str = "an object") -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """The rows with their location, and the problems of rows that could not be read at all
    (checking goes on past them, so every problem of the file is reported at once)."""
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        rows, problems = [], []
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as err:
            raise RowFileError(path, [f"not UTF-8 text (byte {err.start}): is it a binary file?"]) from None
        for line_no, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                problems.append(f"line {line_no}: invalid JSON ({err.msg})")
                continue
            if not isinstance(row, dict):
                problems.append(f"line {line_no}: expected {expected}, got {type(row).__name__}")
                continue
            rows.append((f"line {line_no}", row))
        return rows, problems
    if suffix == ".csv":
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        return [(f"line {i + 2}", r) for i, r in enumerate(frame.to_dict(orient="records"))], []  # 1: header
    if suffix == ".parquet":
        frame = pd.read_parquet(path)
        return [(f"row {i + 1}", r) for i, r in enumerate(frame.to_dict(orient="records"))], []
    raise RowFileError(path, [f"unsupported file type '{suffix}' (use .jsonl, .csv or .parquet)"])


def first_row_columns(path: Path) -> set[str]:
    """The columns of a table file's first row, reading no further than that row: what the file
    is can be told from a 100 MB file without holding it (``read_rows`` reads it whole)."""
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        with path.open("rb") as lines:  # decoded a line at a time: never past the row that tells
            for line in lines:
                if not line.strip():
                    continue
                try:
                    row = json.loads(line.decode("utf-8"))
                except json.JSONDecodeError:
                    continue  # as read_rows: a row that cannot be read is skipped
                if isinstance(row, dict):
                    return set(row)
        return set()
    if suffix == ".csv":
        return set(pd.read_csv(path, nrows=0).columns)
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        return set(pq.read_schema(path).names)
    raise RowFileError(path, [f"unsupported file type '{suffix}' (use .jsonl, .csv or .parquet)"])
