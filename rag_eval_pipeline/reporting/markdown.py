"""The one Markdown table writer: Dagster metadata, the command line's tables, check results."""

from __future__ import annotations

import pandas as pd

ABSENT = "–"  # an absent value (NaN): never printed as 0


def markdown_cell(value: object, float_format: str = "{:.3f}") -> str:
    """One cell: floats rounded, absent values as a dash, and a ``|`` or a line break inside a
    question, title or model name escaped, so it can never shift the columns after it."""
    if isinstance(value, float):
        return ABSENT if pd.isna(value) else float_format.format(value)
    text = str(value)
    return " ".join(text.replace("\\", "\\\\").replace("|", "\\|").splitlines())


def to_markdown(frame: pd.DataFrame, float_format: str = "{:.3f}") -> str:
    """A plain Markdown table without the tabulate dependency; "_no rows_" when empty."""
    if frame.empty:
        return "_no rows_"
    headers = [markdown_cell(c) for c in frame.columns]
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for record in frame.itertuples(index=False):
        lines.append("| " + " | ".join(markdown_cell(v, float_format) for v in record) + " |")
    return "\n".join(lines)
