"""Where a case fails: retrieval, reasoning, hallucination, or answering what cannot be answered,
from one judge's axes and what the case was."""

from __future__ import annotations

import math
from enum import Enum

DIAGNOSES = (
    "ok",
    "retrieval_miss",
    "reasoning_error",
    "hallucination",
    "unsupported_words",
    "parametric_answer",
    "correct_from_non_gold",
    "false_answer",
    "over_abstention",
)
# a vision judge's (judges/vision.py): the retrieved images contradict the answer
IMAGE_DIAGNOSES = ("image_contradiction",)
ALL_DIAGNOSES = (*DIAGNOSES, *IMAGE_DIAGNOSES)


class AnswerSource(Enum):
    """Where an answer model's answers come from, which decides what a correct answer despite
    irrelevant context means: a generative model (an LLM, an agent) may answer from memory; an
    extractive one copies retrieved text; a reference model (the calibration bounds) knows the
    truth or always abstains, and its answers say nothing about retrieval."""

    GENERATIVE = "generative"
    EXTRACTIVE = "extractive"
    REFERENCE = "reference"


def _present(value: float | None) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def diagnose(
    correctness: float | None,
    faithfulness: float | None,
    context_relevance: float | None,
    source: AnswerSource = AnswerSource.GENERATIVE,
    answerable: bool = True,
    abstained: bool = False,
    faithfulness_judged: bool = True,
    unsupported_claims: int | None = None,
    contexts_known: bool = True,
) -> str | None:
    """One label per scored case, checked in this order:

    - a question the documents cannot answer: ``ok`` when the answer abstains, ``false_answer``
      when it answers anyway;
    - an abstention on an answerable question: ``over_abstention`` when everything needed was
      retrieved, ``retrieval_miss`` when it was not;
    - correct (>= 0.5) although the context was irrelevant (0): for a generative model
      ``parametric_answer``, it answered from memory, the red flag of the Elastic
      LLM-as-a-judge article; for an extractive one ``correct_from_non_gold``, the answer stood
      in a non-gold passage; for a reference model ``ok`` (it answers without the passages);
    - unfaithful to the passages (faithfulness < 0.5): ``hallucination`` when a judge read the
      claims (``faithfulness_judged``), ``unsupported_words`` when only the lexical proxy says
      so (words of the answer are not in the passages: not proof of a claim outside them); never
      for a reference model, whose answer is the ground truth whatever was retrieved;
    - ``ok``: correct (>= 0.5);
    - ``retrieval_miss``: wrong, and the gold passages were not all retrieved (relevance < 1);
    - ``reasoning_error``: wrong although everything needed was retrieved.

    Where a claim judge read the answer (``unsupported_claims`` not None), ``hallucination``
    means at least one claim no context states, whatever the faithfulness score says. None when
    correctness is absent (an unscored case). An absent faithfulness (an abstention) counts as
    faithful; an absent context relevance counts as relevant. Where the answer model returns no
    contexts (``contexts_known`` false: an agent that does not say what it retrieved) nothing
    can be said of retrieval: a wrong or declined answer to an answerable question has no
    diagnosis (None), never ``reasoning_error``.
    """
    if not _present(correctness):
        return None
    if not answerable:
        return "ok" if abstained else "false_answer"
    if not contexts_known:
        return "ok" if not abstained and correctness >= 0.5 else None  # type: ignore[operator]
    relevance = context_relevance if _present(context_relevance) else 1.0
    if abstained:
        return "over_abstention" if relevance == 1.0 else "retrieval_miss"
    correct = correctness >= 0.5  # type: ignore[operator]
    if correct and relevance == 0.0:
        return {
            AnswerSource.GENERATIVE: "parametric_answer",
            AnswerSource.EXTRACTIVE: "correct_from_non_gold",
            AnswerSource.REFERENCE: "ok",
        }[source]
    if source is not AnswerSource.REFERENCE and unsupported_claims is not None:
        if unsupported_claims > 0:
            return "hallucination"
    elif source is not AnswerSource.REFERENCE and _present(faithfulness) and faithfulness < 0.5:  # type: ignore[operator]
        return "hallucination" if faithfulness_judged else "unsupported_words"
    if correct:
        return "ok"
    if relevance < 1.0:
        return "retrieval_miss"
    return "reasoning_error"
