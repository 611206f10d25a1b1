"""BM25 over title + passage with bm25s (English stop words, Snowball stemming), saved to a folder."""

from __future__ import annotations

from pathlib import Path

import bm25s
import pandas as pd
import Stemmer
from bm25s.tokenization import Tokenizer

from rag_eval_pipeline.retrieval.base import InMemoryIndex, SearchHit

_PASSAGES_FILE = "passages.parquet"
_COMPLETE_MARKER = "manifest.json"  # written last by the builder: its presence means complete
BUILD_CHUNK = 50_000


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
        super().__init__(
            passages["passage_id"].tolist(), passages["title"].tolist(), passages["passage"].tolist()
        )
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
        docs, scores = self._retriever.retrieve(tokens, k=k, show_progress=False)
        results = []
        for row_docs, row_scores in zip(docs, scores):
            results.append([self.hit(d, s) for d, s in zip(row_docs, row_scores) if s > 0])
        return results


def read_passages(folder: Path) -> pd.DataFrame:
    return pd.read_parquet(folder / _PASSAGES_FILE)
