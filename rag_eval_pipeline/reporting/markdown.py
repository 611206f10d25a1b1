"""The one Markdown table writer: Dagster metadata, the command line's tables, check results."""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

from rag_eval_pipeline.metrics.settings import ASR_PREFIX
from rag_eval_pipeline.metrics.summary import BREAKDOWN_METRICS, INTERVAL_METRICS

ABSENT = "–"  # an absent value (NaN): never printed as 0


def markdown_cell(value: object, float_format: str = "{:.3f}") -> str:
    """One cell: floats rounded, absent values as a dash, and a ``|`` or a line break inside a
    question, title or model name escaped, so it can never shift the columns after it."""
    if isinstance(value, float):
        return ABSENT if pd.isna(value) else float_format.format(value)
    text = str(value)
    return " ".join(text.replace("\\", "\\\\").replace("|", "\\|").splitlines())


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-!|<>~])")


def markdown_text(value: object, limit: int | None = None) -> str:
    """Text shown inside Markdown as written: every character Markdown would read as markup
    escaped (an answer cannot make a heading, a link or a table of its own), line breaks as
    spaces, and at most ``limit`` characters (the cut marked with the length)."""
    text = " ".join(str(value).splitlines())
    if limit is not None and len(text) > limit:
        text = f"{text[:limit]} [...{len(text):,} characters]"
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def to_markdown(frame: pd.DataFrame, float_format: str = "{:.3f}") -> str:
    """A plain Markdown table without the tabulate dependency; "_no rows_" when empty."""
    if frame.empty:
        return "_no rows_"
    headers = [markdown_cell(c) for c in frame.columns]
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for record in frame.itertuples(index=False):
        lines.append("| " + " | ".join(markdown_cell(v, float_format) for v in record) + " |")
    return "\n".join(lines)


def markdown_list(items: Iterable[object]) -> str:
    """Each item a line of a Markdown list, its text shown as written (``markdown_text``)."""
    return "\n".join(f"- {markdown_text(item)}" for item in items)


def with_intervals(
    comparison: pd.DataFrame,
    metrics: tuple[str, ...] = (*INTERVAL_METRICS, *BREAKDOWN_METRICS),
    digits: int = 3,
) -> pd.DataFrame:
    """Each headline mean with its 95% interval, ``0.743 [0.560, 0.870]``: a number without its
    interval claims more than a small sample says."""
    shown = comparison.copy()
    f = f".{digits}f"
    probed = [c for c in shown.columns if str(c).startswith(ASR_PREFIX)]  # a probe's attack success
    for metric in dict.fromkeys([*metrics, *probed]):
        low, high = f"{metric}_ci_low", f"{metric}_ci_high"
        if metric not in shown or low not in shown:
            continue
        shown[metric] = [
            ABSENT if pd.isna(m) else format(m, f) if pd.isna(lo) else f"{m:{f}} [{lo:{f}}, {hi:{f}}]"
            for m, lo, hi in zip(shown[metric], shown[low], shown[high])
        ]
        shown = shown.drop(columns=[low, high])
    return shown


def means_with_intervals(rows: pd.DataFrame) -> pd.DataFrame:
    """Summary rows (``mean``, ``ci_low``, ``ci_high``) with each mean shown with its interval in
    one column, ``0.743 [0.560, 0.870]``."""
    shown = rows.copy()
    shown["mean"] = [
        ABSENT if pd.isna(m) else f"{m:.3f}" if pd.isna(lo) else f"{m:.3f} [{lo:.3f}, {hi:.3f}]"
        for m, lo, hi in zip(rows["mean"], rows["ci_low"], rows["ci_high"])
    ]
    return shown.drop(columns=["ci_low", "ci_high"])
