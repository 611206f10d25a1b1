"""The knowledge base as the language analysis reads it: each passage's index terms, an inverted
index over them and their inverse document frequencies, so "which passage holds this answer"
is asked of the whole knowledge base, not only of what a retriever returned."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import pandas as pd

from rag_eval_pipeline.health.documents import CURRENT, document_id
from rag_eval_pipeline.language.analysis import analyzer, split_sentences
from rag_eval_pipeline.language.table import ENGLISH

# a number of one digit standing alone ("5", "2 °C"): written with a leading zero so that every
# analysis keeps it (English index terms are two characters or more, and "5" is an answer)
_LONE_DIGIT = re.compile(r"(?<!\w)(\d)(?!\w)")


def terms_of(text: str, language: str) -> list[str]:
    """The index terms of ``text`` in its language (stems without stop words), the one place
    health reads words; an unknown code reads as English rather than not at all."""
    text = _LONE_DIGIT.sub(r"0\1", text)
    try:
        return analyzer(language or ENGLISH).terms(text)
    except Exception:  # noqa: BLE001 - a code the table lacks: English analysis, said by the loader
        return analyzer(ENGLISH).terms(text)


@dataclass
class KnowledgeView:
    """Passages with their terms, documents, titles and statuses; ``postings`` maps a term to
    the passages holding it."""

    passage_ids: list[str]
    documents: list[str]
    titles: list[str]
    texts: list[str]
    languages: list[str]
    statuses: list[str]
    terms: list[frozenset[str]]
    title_terms: list[frozenset[str]]
    sequences: list[str]  # each passage's terms in order, space-joined: where a phrase is looked for
    postings: dict[str, set[int]] = field(default_factory=dict)
    idf: dict[str, float] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.passage_ids)

    def weight(self, term: str) -> float:
        """A term's inverse document frequency (a term no passage has: the highest)."""
        known = self.idf.get(term)
        return known if known is not None else math.log(1 + len(self.passage_ids) / 0.5)

    def holding_phrase(self, phrase: list[str]) -> set[int]:
        """The passages holding ``phrase`` (terms in order, nothing between them but stop words
        and punctuation): "New York City" is not "New York Mets ... city"."""
        found = self.holding(set(phrase))
        joined = f" {' '.join(phrase)} "
        return {i for i in found if joined in self.sequences[i]}

    def holding(self, terms: set[str], share: float = 1.0) -> set[int]:
        """The passages holding at least ``share`` of ``terms``."""
        if not terms:
            return set()
        if share >= 1.0:
            found: set[int] | None = None
            for term in terms:
                found = (
                    set(self.postings.get(term, set()))
                    if found is None
                    else found & self.postings.get(term, set())
                )
                if not found:
                    return set()
            return found or set()
        counts: dict[int, int] = {}
        for term in terms:
            for i in self.postings.get(term, ()):
                counts[i] = counts.get(i, 0) + 1
        need = math.ceil(share * len(terms))
        return {i for i, n in counts.items() if n >= need}

    def coverage(self, i: int, terms: set[str]) -> float:
        """The idf-weighted share of ``terms`` passage ``i`` holds (0 for no terms)."""
        total = sum(self.weight(t) for t in terms)
        return sum(self.weight(t) for t in terms if t in self.terms[i]) / total if total else 0.0

    def best_covering(self, terms: set[str], limit: int = 5) -> list[tuple[int, float]]:
        """The passages covering most of ``terms`` (idf-weighted), best first."""
        # each term's weight once, added to the passages of its postings (in the order of
        # ``terms``, so each share is the very sum ``coverage`` takes): a walk of the postings,
        # not of every candidate's terms
        weights = [(t, self.weight(t)) for t in terms]
        total = sum(w for _, w in weights)
        held: dict[int, float] = {}
        for term, w in weights:
            for i in self.postings.get(term, ()):
                held[i] = held.get(i, 0.0) + w
        scored = sorted(((i, s / total) for i, s in held.items()), key=lambda x: (-x[1], x[0]))
        return scored[:limit]

    def sentence_with(self, i: int, terms: set[str]) -> str:
        """The sentence of passage ``i`` holding most of ``terms``: the evidence a reader checks."""
        sentences = split_sentences(self.texts[i]) or [self.texts[i]]
        language = self.languages[i]
        return max(sentences, key=lambda s: len(terms & set(terms_of(s, language))))

    def names(self, r: int, i: int) -> bool:
        """Passage ``r`` names passage ``i``: holds most (idf-weighted) of ``i``'s title."""
        title = self.title_terms[i]
        if not title:
            return False
        total = sum(self.weight(t) for t in title)
        return sum(self.weight(t) for t in title if t in self.terms[r]) / total >= 0.5

    def is_current(self, i: int) -> bool:
        return self.statuses[i] == CURRENT


def knowledge_view(passages: pd.DataFrame, statuses: dict[str, str] | None = None) -> KnowledgeView:
    """The view of a ``kb_passages`` table; a document's status from ``statuses`` (current
    when unsaid)."""
    statuses = statuses or {}
    ids = [str(p) for p in passages["passage_id"]]
    languages = [str(x) for x in passages["language"]] if "language" in passages else [ENGLISH] * len(ids)
    titles = [str(t) for t in passages["title"]]
    texts = [str(t) for t in passages["passage"]]
    ordered = [terms_of(f"{t}\n{p}", code) for t, p, code in zip(titles, texts, languages)]
    terms = [frozenset(found) for found in ordered]
    title_terms = [frozenset(terms_of(t, code)) for t, code in zip(titles, languages)]
    postings: dict[str, set[int]] = {}
    for i, found in enumerate(terms):
        for term in found:
            postings.setdefault(term, set()).add(i)
    n = len(ids)
    idf = {term: math.log(1 + (n - len(held) + 0.5) / (len(held) + 0.5)) for term, held in postings.items()}
    documents = [document_id(p) for p in ids]
    return KnowledgeView(
        ids,
        documents,
        titles,
        texts,
        languages,
        [statuses.get(d, CURRENT) for d in documents],
        terms,
        title_terms,
        [f" {' '.join(found)} " for found in ordered],
        postings,
        idf,
    )
