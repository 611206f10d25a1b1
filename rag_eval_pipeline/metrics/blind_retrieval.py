"""When retrieval is blind, say so: a knowledge base analysed one way and questions another (a
Chinese list over an index that splits words at spaces) find nothing, and every retrieval metric
reads 0 as if the passages were merely poor. Each check gives one warning line naming the likely
cause, or None."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import pandas as pd

# how each of a model's retrieval warnings begins (these, and the reranker's): a command that
# evaluates several models says each once, naming the models, rather than once a model
EMPTY_RETRIEVAL = "retrieval found no passage for"
ZERO_RECALL = "context_recall is 0 on every one of the"
RERANKER_UNREAD = "the reranker"
MODEL_WARNINGS = (EMPTY_RETRIEVAL, ZERO_RECALL, RERANKER_UNREAD)

BLIND_SHARE = 0.5  # more questions than this retrieving nothing at all is no chance
MIN_LABELLED = 3  # a recall of 0 on fewer labelled cases than this may be chance


def _languages(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{code} ({count})" for code, count in sorted(counts.items(), key=lambda kv: -kv[1]))


def empty_retrieval_warning(
    answers: pd.DataFrame, questions: pd.DataFrame, index_languages: Mapping[str, int]
) -> str | None:
    """One line when most questions retrieved no passage at all: their words share no term with
    the index. Agents' cases (their own retrieval) are not counted."""
    ours = answers[answers["retrieval_mode"] != "agent"] if "retrieval_mode" in answers else answers
    ours = ours.drop_duplicates("qid")
    if ours.empty:
        return None
    empty = int(ours["retrieved_ids"].map(len).eq(0).sum())
    if empty <= BLIND_SHARE * len(ours):
        return None
    asked = Counter(questions["language"]) if "language" in questions else Counter()
    cause = (
        f"the questions are in {_languages(asked)} and the index holds {_languages(index_languages)}"
        if asked and index_languages and set(asked) != set(index_languages)
        else "the questions' words share no term with the knowledge base as it was analysed "
        "(set the language of the documents or questions if detection got it wrong)"
    )
    return f"{EMPTY_RETRIEVAL} {empty} of {len(ours)} questions: {cause}"


def zero_recall_warning(scores: pd.DataFrame) -> str | None:
    """One line when context recall is 0 on every case that has relevance labels (the reference
    judge's, over scored cases): retrieval finds none of the passages the labels name."""
    if "context_recall" not in scores:
        return None
    rows = scores[(scores["judge_id"] == "reference") & (scores["status"] == "ok")]
    recall = rows.drop_duplicates("qid")["context_recall"].dropna()
    if len(recall) < MIN_LABELLED or (recall > 0).any():
        return None
    languages = Counter(rows.drop_duplicates("qid")["language"]) if "language" in rows else Counter()
    named = f" (cases in {_languages(languages)})" if languages else ""
    return (
        f"{ZERO_RECALL} {len(recall)} cases with relevance labels{named}: "
        "retrieval finds none of the labelled passages; likely the knowledge base is analysed in "
        "another language than the questions, or the labels name passages it does not hold"
    )


def is_model_warning(message: str) -> bool:
    """Whether a logged warning is one of a model's retrieval warnings, which a command
    evaluating several models says once for all of them (``said_once``)."""
    return message.startswith(MODEL_WARNINGS)


def said_once(warnings: Mapping[str, Sequence[str]]) -> list[str]:
    """Each distinct warning of the models (model -> its warnings) once, naming the models it
    concerns, in the order first said."""
    models: dict[str, list[str]] = {}
    for model, said in warnings.items():
        for warning in dict.fromkeys(said):
            models.setdefault(warning, []).append(model)
    return [f"{warning} (models: {', '.join(names)})" for warning, names in models.items()]
