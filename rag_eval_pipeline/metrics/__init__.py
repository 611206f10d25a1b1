"""Formulas and aggregation, no judges: reference metrics (HotpotQA's definitions), statistics,
summaries, comparisons, diagnoses, quality gates and the validators behind the asset checks."""

__all__ = [
    "comparison",
    "coverage",
    "diagnosis",
    "gates",
    "reference",
    "statistics",
    "summary",
    "validation",
]
