"""BM25 over title + passage with bm25s, each passage analysed in its own language and each
query in its case's (``language/analysis.py``: English as bm25s's own tokenizer, Chinese by
jieba, Japanese by Sudachi, Snowball stemmers and stop words ...), saved to a folder."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np
import pandas as pd

from rag_eval_pipeline.language.analysis import analyzer
from rag_eval_pipeline.language.table import ENGLISH
from rag_eval_pipeline.retrieval.base import InMemoryIndex, SearchHit, passage_languages

_PASSAGES_FILE = "passages.parquet"
_TERMS_FILE = "terms.json"  # the analysis's terms and their ids, and the index's languages
_COMPLETE_MARKER = "manifest.json"  # written last by the builder: its presence means complete
_EMPTY = ""  # the term of a passage with none (bm25s's own convention), so its length counts
_SAMPLE_STRIDE = 64  # every 64th score estimates the k-th best (a floor: the sample is a subset)
_SORT_AT_MOST = 4_096  # more candidates than this are narrowed by one partition before the sort


class IndexNotFoundError(FileNotFoundError):
    """The index a manifest points at is missing: rebuild it by materializing ``kb_index``."""


def _document_text(title: str, passage: str) -> str:
    return f"{title}\n{passage}"


class Bm25Index(InMemoryIndex):
    """A loaded BM25 index: the terms' ids, scores and the passages they point at. Passages
    sharing no term with the query are not returned. A query without a language is analysed in
    the index's most common one."""

    def __init__(
        self, retriever: bm25s.BM25, terms: dict[str, int], passages: pd.DataFrame, languages: dict[str, int]
    ) -> None:
        super().__init__(passages)
        self._retriever = retriever
        self._terms = terms
        self.languages = languages
        self.main_language = max(languages, key=languages.__getitem__) if languages else ENGLISH

    @classmethod
    def build(cls, passages: pd.DataFrame) -> Bm25Index:
        """Each passage's terms in its language, numbered as they first appear; the texts are
        analysed one at a time, so they never exist twice in full beside the frame."""
        terms: dict[str, int] = {}
        documents: list[list[int]] = []
        codes = passage_languages(passages)
        for title, passage, code in zip(passages["title"], passages["passage"], codes):
            found = analyzer(code).terms(_document_text(title, passage)) or [_EMPTY]
            documents.append([terms.setdefault(term, len(terms)) for term in found])
        terms.setdefault(_EMPTY, len(terms))
        retriever = bm25s.BM25()
        retriever.index((documents, terms), show_progress=False)
        counts = Counter(codes)
        return cls(retriever, terms, passages[["passage_id", "title", "passage"]], dict(counts))

    def save(self, folder: Path) -> None:
        self._retriever.save(str(folder), show_progress=False)
        (folder / _TERMS_FILE).write_text(
            json.dumps({"languages": self.languages, "terms": self._terms}, ensure_ascii=False)
        )
        pd.DataFrame({"passage_id": self._ids, "title": self._titles, "passage": self._texts}).to_parquet(
            folder / _PASSAGES_FILE, index=False
        )

    @classmethod
    def load(cls, folder: Path) -> Bm25Index:
        if not (folder / _COMPLETE_MARKER).is_file() or not (folder / _TERMS_FILE).is_file():
            raise IndexNotFoundError(
                f"No complete embedded index at {folder}; materialize kb_index to build it."
            )
        retriever = bm25s.BM25.load(str(folder), show_progress=False)
        saved = json.loads((folder / _TERMS_FILE).read_text())
        return cls(retriever, saved["terms"], read_passages(folder), saved["languages"])

    def passages(self) -> list[SearchHit]:
        """Every indexed passage (score 0), e.g. for the title catalog of two-hop retrieval."""
        return [SearchHit(i, t, p, 0.0) for i, t, p in zip(self._ids, self._titles, self._texts)]

    def query_ids(self, query: str, language: str | None = None) -> list[int]:
        """The ids of a query's terms that the index holds, analysed in ``language``."""
        terms = self._terms
        return [terms[t] for t in analyzer(language or self.main_language).terms(query) if t in terms]

    def _rank(self, queries: list[str], k: int, languages: Sequence[str | None]) -> list[list[SearchHit]]:
        results = []
        for query, language in zip(queries, languages):
            ids = self.query_ids(query, language)
            if not ids:  # every word unknown or a stop word: nothing matches
                results.append([])
                continue
            scores = self._retriever.get_scores(ids)
            results.append([self.hit(int(row), float(scores[row])) for row in top_k_positive(scores, k)])
        return results


def top_k_positive(scores: np.ndarray, k: int) -> np.ndarray:
    """Row numbers of the ``k`` highest positive scores, best first, equal scores by row number.

    bm25s selects with one ``argpartition`` over every score, which at a million passages full of
    equal scores (zeros, near-duplicate passages) takes up to 50 ms; the k-th best of a strided
    sample is a floor that leaves a few hundred candidates to sort, about 1 ms."""
    sample = scores[::_SAMPLE_STRIDE]
    floor = np.partition(sample, len(sample) - k)[len(sample) - k] if len(sample) > k else 0.0
    candidates = np.flatnonzero(scores >= floor) if floor > 0 else np.flatnonzero(scores > 0)
    if len(candidates) > _SORT_AT_MOST:
        kth_best = np.partition(scores[candidates], len(candidates) - k)[len(candidates) - k]
        candidates = candidates[scores[candidates] >= kth_best]
    best_first = np.lexsort((candidates, -scores[candidates]))[:k]
    return candidates[best_first]


def read_passages(folder: Path) -> pd.DataFrame:
    return pd.read_parquet(folder / _PASSAGES_FILE)
