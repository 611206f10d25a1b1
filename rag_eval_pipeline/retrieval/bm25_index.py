"""The embedded knowledge-base index: BM25 (bm25s) persisted on disk, one folder per content version."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import uuid
from pathlib import Path

import bm25s
import pandas as pd
import Stemmer
from bm25s.tokenization import Tokenizer

from rag_eval_pipeline.retrieval.base import IndexManifest, SearchHit

BACKEND_NAME = "embedded-bm25"
INDEX_FORMAT_VERSION = "1"  # bump when the on-disk layout or the tokenisation changes
_PASSAGES_FILE = "passages.parquet"
_MANIFEST_FILE = "manifest.json"


class IndexNotFoundError(FileNotFoundError):
    """The index a manifest points at is missing: rebuild it by materializing ``kb_index``."""


def _new_tokenizer() -> Tokenizer:
    return Tokenizer(stopwords="en", stemmer=Stemmer.Stemmer("english"))


def _document_text(title: str, passage: str) -> str:
    return f"{title}\n{passage}"


def content_version(passages: pd.DataFrame) -> str:
    """Hash of the passages and the index settings: equal content -> equal version."""
    digest = hashlib.sha256(f"{BACKEND_NAME}/{INDEX_FORMAT_VERSION}".encode())
    for pid, title, passage in zip(passages["passage_id"], passages["title"], passages["passage"]):
        digest.update(f"\x1e{pid}\x1f{title}\x1f{passage}".encode())
    return digest.hexdigest()[:16]


class Bm25Index:
    """A loaded BM25 index: tokenizer, scores and the passages they point at."""

    def __init__(self, retriever: bm25s.BM25, tokenizer: Tokenizer, passages: pd.DataFrame) -> None:
        self._retriever = retriever
        self._tokenizer = tokenizer
        self._ids = passages["passage_id"].tolist()
        self._titles = passages["title"].tolist()
        self._texts = passages["passage"].tolist()

    @classmethod
    def build(cls, passages: pd.DataFrame) -> Bm25Index:
        tokenizer = _new_tokenizer()
        texts = [_document_text(t, p) for t, p in zip(passages["title"], passages["passage"])]
        tokens = tokenizer.tokenize(texts, show_progress=False, return_as="ids")
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
        if not (folder / _MANIFEST_FILE).is_file():
            raise IndexNotFoundError(
                f"No complete embedded index at {folder}; materialize kb_index to build it."
            )
        retriever = bm25s.BM25.load(str(folder), show_progress=False)
        tokenizer = _new_tokenizer()
        tokenizer.load_vocab(str(folder))
        tokenizer.load_stopwords(str(folder))
        return cls(retriever, tokenizer, pd.read_parquet(folder / _PASSAGES_FILE))

    def __len__(self) -> int:
        return len(self._ids)

    def search(self, query: str, k: int) -> list[SearchHit]:
        """Top-k passages by BM25; passages sharing no term with the query are not returned."""
        return self.search_many([query], k)[0]

    def search_many(self, queries: list[str], k: int) -> list[list[SearchHit]]:
        if not queries:
            return []
        k = min(k, len(self._ids))
        if k < 1:
            return [[] for _ in queries]
        tokens = self._tokenizer.tokenize(queries, update_vocab=False, show_progress=False, return_as="ids")
        docs, scores = self._retriever.retrieve(tokens, k=k, show_progress=False)
        results = []
        for row_docs, row_scores in zip(docs, scores):
            results.append(
                [
                    SearchHit(self._ids[d], self._titles[d], self._texts[d], float(s))
                    for d, s in zip(row_docs, row_scores)
                    if s > 0
                ]
            )
        return results


def build_versioned_index(passages: pd.DataFrame, root: Path) -> IndexManifest:
    """Build the index into ``root/<version>`` atomically and return its manifest.

    The index is written to a scratch folder and renamed into place only when complete, so a
    failed build never touches a live index. An index of the same version is reused.
    """
    root.mkdir(parents=True, exist_ok=True)
    version = content_version(passages)
    final = root / version
    if (final / _MANIFEST_FILE).is_file():
        return IndexManifest.from_dict(json.loads((final / _MANIFEST_FILE).read_text()))
    started = time.perf_counter()
    scratch = root / f".building-{version}-{uuid.uuid4().hex[:8]}"
    scratch.mkdir()
    try:
        index = Bm25Index.build(passages)
        index.save(scratch)
        manifest = IndexManifest(
            backend=BACKEND_NAME,
            location=str(final),
            version=version,
            documents=len(index),
            build_seconds=round(time.perf_counter() - started, 3),
            details={"library": f"bm25s {bm25s.__version__}", "fields": "title + passage"},
        )
        (scratch / _MANIFEST_FILE).write_text(json.dumps(manifest.to_dict(), indent=2))
        if final.exists():  # an incomplete folder left by a crash: it was never live
            shutil.rmtree(final)
        os.replace(scratch, final)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return manifest
