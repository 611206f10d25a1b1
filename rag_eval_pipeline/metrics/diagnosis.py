"""Where a case fails: retrieval, reasoning or hallucination, from the judge's three axes."""

from __future__ import annotations

import math

DIAGNOSES = (
    "ok",
    "retrieval_miss",
    "reasoning_error",
    "hallucination",
    "parametric_answer",
    "correct_from_non_gold",
)


def _present(value: float | None) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def diagnose(
    correctness: float | None,
    faithfulness: float | None,
    context_relevance: float | None,
    generative: bool = True,
) -> str | None:
    """One label per scored case, checked in this order:

    - correct (>= 0.5) although the context was irrelevant (0): for a generative model
      ``parametric_answer``, it answered from memory, the red flag of the Elastic
      LLM-as-a-judge article; for a model with no memory (the extractive baseline copies a
      retrieved sentence) ``correct_from_non_gold``, the answer stood in a non-gold passage;
    - ``hallucination``: the answer is unfaithful to the passages (faithfulness < 0.5);
    - ``ok``: correct (>= 0.5) and not unfaithful;
    - ``retrieval_miss``: wrong, and the gold passages were not all retrieved (relevance < 1);
    - ``reasoning_error``: wrong although everything needed was retrieved, and faithful.

    None when correctness is absent (an unscored case). An absent faithfulness (an abstention)
    counts as faithful; an absent context relevance counts as relevant.
    """
    if not _present(correctness):
        return None
    relevance = context_relevance if _present(context_relevance) else 1.0
    correct = correctness >= 0.5  # type: ignore[operator]
    if correct and relevance == 0.0:
        return "parametric_answer" if generative else "correct_from_non_gold"
    if _present(faithfulness) and faithfulness < 0.5:  # type: ignore[operator]
        return "hallucination"
    if correct:
        return "ok"
    if relevance < 1.0:
        return "retrieval_miss"
    return "reasoning_error"
