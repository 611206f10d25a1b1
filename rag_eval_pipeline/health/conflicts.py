"""Two current documents that disagree: documents nearly alike (cosine of their idf-weighted
vectors over the language analysis's terms) whose differing sentences say the same thing with another
value ("opened in 1911" beside "opened in 1913"). A lexical scan, not an entailment model: it
finds an edited fact, not a contradiction written in other words."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rag_eval_pipeline.health.knowledge import KnowledgeView, terms_of
from rag_eval_pipeline.language.analysis import split_sentences

SIMILAR = 0.6  # documents at least this alike (cosine) are compared sentence by sentence
SAME_CLAIM = 0.5  # two differing sentences sharing this much of their terms state one claim


@dataclass(frozen=True)
class Conflict:
    first: str
    second: str
    first_sentence: str
    second_sentence: str
    similarity: float
    terms: frozenset[str]  # what the two sentences are about (the terms they share)


def _differing(first: str, second: str, language: str) -> tuple[str, str, frozenset[str]] | None:
    """The pair of sentences, one of each text, that state one claim with another value."""
    a = {s: frozenset(terms_of(s, language)) for s in split_sentences(first)}
    b = {s: frozenset(terms_of(s, language)) for s in split_sentences(second)}
    only_a = {s: t for s, t in a.items() if t not in set(b.values())}
    only_b = {s: t for s, t in b.items() if t not in set(a.values())}
    best = None
    for sa, ta in only_a.items():
        for sb, tb in only_b.items():
            if not ta or not tb or ta == tb:
                continue
            shared = ta & tb
            score = len(shared) / len(ta | tb)
            if score >= SAME_CLAIM and (best is None or score > best[0]):
                best = (score, sa, sb, frozenset(shared))
    return None if best is None else (best[1], best[2], best[3])


def find_conflicts(view: KnowledgeView, superseding: set[frozenset[str]] = frozenset()) -> list[Conflict]:
    """Pairs of current documents of one language that nearly repeat each other but for a fact
    (``superseding``: pairs where one replaces the other, which are versions, not conflicts)."""
    from scipy.sparse import csr_matrix

    current = [i for i in range(len(view)) if view.is_current(i)]
    if len(current) < 2:
        return []
    columns: dict[str, int] = {}
    rows, cols, weights = [], [], []
    for row, i in enumerate(current):
        for term in view.terms[i]:
            rows.append(row)
            cols.append(columns.setdefault(term, len(columns)))
            weights.append(view.weight(term))
    vectors = csr_matrix((weights, (rows, cols)), shape=(len(current), len(columns)))
    norms = np.sqrt(np.asarray(vectors.multiply(vectors).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    vectors = csr_matrix(vectors.multiply(1 / norms[:, None]))
    similar = (vectors @ vectors.T).tocoo()
    found = []
    for a, b, score in zip(similar.row, similar.col, similar.data):
        if a >= b or score < SIMILAR:
            continue
        i, j = current[a], current[b]
        first, second = view.documents[i], view.documents[j]
        if (
            first == second
            or view.languages[i] != view.languages[j]
            or frozenset({first, second}) in superseding
        ):
            continue
        pair = _differing(view.texts[i], view.texts[j], view.languages[i])
        if pair is not None:
            found.append(Conflict(first, second, pair[0], pair[1], float(score), pair[2]))
    return sorted(found, key=lambda c: (c.first, c.second))
