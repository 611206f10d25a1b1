"""The report's "Knowledge base" section: per model, the health rates, the topics the failures
gather in, the documents not current and the cases with a gap, from the stored ``kb_health``
records (plain data: this package does not import the health package above it)."""

from __future__ import annotations

import html
from collections.abc import Mapping

import pandas as pd

SHOWN_RATES = (
    "knowledge_gap_rate",
    "knowledge_gap_unsure_rate",
    "retrieval_miss_rate",
    "outdated_rate",
    "conflict_rate",
    "stale_retrieval_rate",
)
SHOWN_CASES = 15


def shown_label(case: Mapping) -> str:
    """A case's label as readers see it: "knowledge_gap (unsure)" for a gap the words alone
    could not tell (its ``confidence``; a record from before it was kept says nothing)."""
    return f"{case['label']} (unsure)" if case.get("confidence") == "unsure" else str(case["label"])


def _table(rows: list[dict], columns: list[str]) -> str:
    if not rows:
        return '<p class="note">none</p>'
    frame = pd.DataFrame(rows).reindex(columns=columns)
    for column in frame.columns:
        frame[column] = frame[column].map(
            lambda v: (
                "–"
                if v is None or (isinstance(v, float) and pd.isna(v))
                else (", ".join(v) if isinstance(v, list) else v)
            )
        )
    return f'<div class="wide">{frame.to_html(index=False, float_format=lambda v: f"{v:.3f}")}</div>'


def _rates(record: dict) -> str:
    rates = record.get("rates") or {}
    shown = {name: "–" if rates.get(name) is None else f"{rates[name]:.0%}" for name in SHOWN_RATES}
    said = "; ".join(f"{name.removesuffix('_rate').replace('_', ' ')} {v}" for name, v in shown.items())
    signal = record.get("gap_signal")
    read_by = f' <span class="note">Gaps read by {html.escape(signal)}.</span>' if signal else ""
    return f"<p>As of {html.escape(str(record.get('as_of')))}: {html.escape(said)}.{read_by}</p>"


def knowledge_health_html(records: Mapping[str, dict] | None) -> str:
    """The section; empty when no model has a ``kb_health`` record (an older instance)."""
    if not records:
        return ""
    parts = [
        '<section id="knowledge-base"><h2>Knowledge base</h2>',
        '<p class="note">Which questions the documents cannot answer (knowledge_gap), which they answer '
        "but the retriever missed (retrieval_miss), which rest on superseded or expired documents "
        "(outdated) or on documents that disagree (conflict): `rag-eval kb health`.</p>",
    ]
    for model, record in sorted(records.items()):
        flagged = [
            {**c, "label": shown_label(c)} for c in record.get("cases", []) if c.get("label") != "covered"
        ][:SHOWN_CASES]
        old = [d for d in record.get("documents", []) if d.get("status") != "current" or d.get("ghost")]
        parts += [
            f"<h3>{html.escape(model)}</h3>",
            _rates(record),
            "<h4>Topics, most pressing first</h4>",
            _table(record.get("topics", []), ["topic", "terms", "size", "finding"]),
            "<h4>Documents not current, or gone from the source</h4>",
            _table(old, ["document", "title", "status", "reason", "retrieved", "ghost"]),
            "<h4>Cases</h4>",
            _table(flagged, ["qid", "label", "question", "evidence_passage", "reason"]),
        ]
    return "".join(parts) + "</section>"
