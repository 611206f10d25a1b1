"""BM25 over title + passage with bm25s (English stop words, Snowball stemming), saved to a folder."""

from __future__ import annotations

from pathlib import Path

import bm25s
import numpy as np
import pandas as pd
import Stemmer
from bm25s.tokenization import Tokenizer

from rag_eval_pipeline.retrieval.base import InMemoryIndex, SearchHit

_PASSAGES_FILE = "passages.parquet"
_COMPLETE_MARKER = "manifest.json"  # written last by the builder: its presence means complete
BUILD_CHUNK = 50_000
_SAMPLE_STRIDE = 64  # every 64th score estimates the k-th best (a floor: the sample is a subset)
_SORT_AT_MOST = 4_096  # more candidates than this are narrowed by one partition before the sort


class IndexNotFoundError(FileNotFoundError):
    """The index a manifest points at is missing: rebuild it by materializing ``kb_index``."""


def _new_tokenizer() -> Tokenizer:
    return Tokenizer(stopwords="en", stemmer=Stemmer.Stemmer("english"))


def _document_text(title: str, passage: str) -> str:
    return f"{title}\n{passage}"


class Bm25Index(InMemoryIndex):
    """A loaded BM25 index: tokenizer, scores and the passages they point at. Passages sharing no
    term with the query are not returned."""

    def __init__(self, retriever: bm25s.BM25, tokenizer: Tokenizer, passages: pd.DataFrame) -> None:
        super().__init__(passages)
        self._retriever = retriever
        self._tokenizer = tokenizer

    @classmethod
    def build(cls, passages: pd.DataFrame, chunk: int = BUILD_CHUNK) -> Bm25Index:
        """Tokenizes ``chunk`` passages at a time (one vocabulary across chunks), so the texts
        to tokenize never exist twice in full beside the frame."""
        tokenizer = _new_tokenizer()
        tokens: list[list[int]] = []
        for start in range(0, len(passages), chunk):
            part = passages.iloc[start : start + chunk]
            texts = [_document_text(t, p) for t, p in zip(part["title"], part["passage"])]
            tokens.extend(tokenizer.tokenize(texts, update_vocab=True, show_progress=False, return_as="ids"))
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        return cls(retriever, tokenizer, passages[["passage_id", "title", "passage"]])

    def save(self, folder: Path) -> None:
        self._retriever.save(str(folder), show_progress=False)
        self._tokenizer.save_vocab(str(folder))
        self._tokenizer.save_stopwords(str(folder))
        pd.DataFrame({"passage_id": self._ids, "title": self._titles, "passage": self._texts}).to_parquet(
            folder / _PASSAGES_FILE, index=False
        )

    @classmethod
    def load(cls, folder: Path) -> Bm25Index:
        if not (folder / _COMPLETE_MARKER).is_file():
            raise IndexNotFoundError(
                f"No complete embedded index at {folder}; materialize kb_index to build it."
            )
        retriever = bm25s.BM25.load(str(folder), show_progress=False)
        tokenizer = _new_tokenizer()
        tokenizer.load_vocab(str(folder))
        tokenizer.load_stopwords(str(folder))
        return cls(retriever, tokenizer, read_passages(folder))

    def passages(self) -> list[SearchHit]:
        """Every indexed passage (score 0), e.g. for the title catalog of two-hop retrieval."""
        return [SearchHit(i, t, p, 0.0) for i, t, p in zip(self._ids, self._titles, self._texts)]

    def _rank(self, queries: list[str], k: int) -> list[list[SearchHit]]:
        tokens = self._tokenizer.tokenize(queries, update_vocab=False, show_progress=False, return_as="ids")
        results = []
        for query_tokens in tokens:
            if not query_tokens:  # every word unknown or a stop word: nothing matches
                results.append([])
                continue
            scores = self._retriever.get_scores(query_tokens)
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
