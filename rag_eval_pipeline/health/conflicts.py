"""Two current documents that disagree: documents nearly alike (cosine of their idf-weighted
vectors over the language analysis's terms) whose differing sentences say the same thing with another
value ("opened in 1911" beside "opened in 1913"). A lexical scan, not an entailment model: it
finds an edited fact, not a contradiction written in other words."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rag_eval_pipeline.health.knowledge import KnowledgeView, terms_of
from rag_eval_pipeline.language.analysis import split_sentences

SIMILAR = 0.6  # documents at least this alike (cosine) are compared sentence by sentence ...
SHARED_SENTENCES = 0.5  # ... when this share of the shorter one's sentences is the other's too,
# or both have one title: two documents about one subject, not two alike subjects (1951's season
# and 1952's)
SAME_CLAIM = 0.5  # two differing sentences sharing this much of their terms state one claim ...
MAX_CHANGED = 3  # ... and differing in at most this many terms each: one fact edited


@dataclass(frozen=True)
class Conflict:
    first: str
    second: str
    first_sentence: str
    second_sentence: str
    similarity: float
    terms: frozenset[str]  # what the two sentences are about (the terms they share)


def _differing(
    first: str, second: str, language: str, same_subject: bool, titles_differ: frozenset[str] = frozenset()
) -> tuple[str, str, frozenset[str]] | None:
    """The pair of sentences, one of each text, that state one claim with another value."""
    a = {s: frozenset(terms_of(s, language)) for s in split_sentences(first)}
    b = {s: frozenset(terms_of(s, language)) for s in split_sentences(second)}
    only_a = {s: t for s, t in a.items() if t not in set(b.values())}
    only_b = {s: t for s, t in b.items() if t not in set(a.values())}
    shared = min(len(a) - len(only_a), len(b) - len(only_b))
    if not same_subject and shared < SHARED_SENTENCES * min(len(a), len(b)):
        return None
    best = None
    for sa, ta in only_a.items():
        for sb, tb in only_b.items():
            if not ta or not tb or ta == tb or len(ta - tb) > MAX_CHANGED or len(tb - ta) > MAX_CHANGED:
                continue
            if (ta ^ tb) & titles_differ:  # what changed is what tells their subjects apart
                continue
            shared = ta & tb
            score = len(shared) / len(ta | tb)
            if score >= SAME_CLAIM and (best is None or score > best[0]):
                best = (score, sa, sb, frozenset(shared))
    return None if best is None else (best[1], best[2], best[3])


def _vectors(view: KnowledgeView, passages: list[int], kept: set[str] | None = None):
    """Unit-length idf-weighted term vectors of ``passages`` (only ``kept`` terms when given)."""
    from scipy.sparse import csr_matrix

    columns: dict[str, int] = {}
    rows, cols, weights = [], [], []
    for row, i in enumerate(passages):
        for term in view.terms[i]:
            if kept is None or term in kept:
                rows.append(row)
                cols.append(columns.setdefault(term, len(columns)))
                weights.append(view.weight(term))
    vectors = csr_matrix((weights, (rows, cols)), shape=(len(passages), max(1, len(columns))))
    norms = np.sqrt(np.asarray(vectors.multiply(vectors).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return csr_matrix(vectors.multiply(1 / norms[:, None])), columns


def _alike_pairs(view: KnowledgeView, current: list[int], block: int = 1000) -> list[tuple[int, int, float]]:
    """Pairs (a, b, cosine), a < b indices into ``current``, at least ``SIMILAR`` alike. Candidates
    come from the rarer terms only (a term in more than 2% of the passages cannot tell two
    documents apart, and would make the product dense), a block of rows at a time, so memory
    stays bounded at any size; each candidate's cosine is then taken over all its terms."""
    rare = {t for t, held in view.postings.items() if len(held) <= max(2, 0.02 * len(view))}
    pruned, _ = _vectors(view, current, rare)
    full, _ = _vectors(view, current)
    pairs = []
    for start in range(0, len(current), block):
        product = (pruned[start : start + block] @ pruned.T).tocoo()
        rows = product.row + start
        keep = (rows < product.col) & (product.data >= SIMILAR / 2)
        for a, b in zip(rows[keep], product.col[keep]):
            score = float(full[a].multiply(full[b]).sum())
            if score >= SIMILAR:
                pairs.append((int(a), int(b), score))
    return pairs


def find_conflicts(view: KnowledgeView, superseding: set[frozenset[str]] = frozenset()) -> list[Conflict]:
    """Pairs of current documents of one language that nearly repeat each other but for a fact
    (``superseding``: pairs where one replaces the other, which are versions, not conflicts)."""
    current = [i for i in range(len(view)) if view.is_current(i)]
    if len(current) < 2:
        return []
    found = []
    for a, b, score in _alike_pairs(view, current):
        i, j = current[a], current[b]
        first, second = view.documents[i], view.documents[j]
        if (
            first == second
            or view.languages[i] != view.languages[j]
            or frozenset({first, second}) in superseding
        ):
            continue
        same_subject = bool(view.title_terms[i]) and view.title_terms[i] == view.title_terms[j]
        titles_differ = view.title_terms[i] ^ view.title_terms[j]
        pair = _differing(view.texts[i], view.texts[j], view.languages[i], same_subject, titles_differ)
        if pair is not None:
            found.append(Conflict(first, second, pair[0], pair[1], float(score), pair[2]))
    return sorted(found, key=lambda c: (c.first, c.second))
