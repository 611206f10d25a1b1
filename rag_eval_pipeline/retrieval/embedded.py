"""The embedded knowledge-base index: BM25 plus optional vectors, one folder per content version."""

from __future__ import annotations

import functools
import json
import os
import shutil
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import bm25s
import pandas as pd

from rag_eval_pipeline.common.recent import KeptRecent
from rag_eval_pipeline.retrieval.base import (
    Backend,
    IndexManifest,
    ProgressCallback,
    RetrievalMode,
    content_version,
    document_texts,
)
from rag_eval_pipeline.retrieval.bm25_index import Bm25Index, IndexNotFoundError, read_passages
from rag_eval_pipeline.retrieval.embedder import NO_VECTORS, Embedder, unread_languages
from rag_eval_pipeline.retrieval.modes import OpenedIndex, TitleCatalog
from rag_eval_pipeline.retrieval.spec import VectorSearch
from rag_eval_pipeline.retrieval.vector_index import DenseIndex, HnswIndex, has_vectors

BACKEND_NAME = Backend.EMBEDDED.value
INDEX_FORMAT_VERSION = "3"  # bump when the on-disk layout or the tokenisation changes
MANIFEST_FILE = "manifest.json"
KEPT_INDEXES = 2  # the live index and the one a rebuild just made


def embedded_version(
    passages: pd.DataFrame, embedding_model: str | None, vector_search: VectorSearch = VectorSearch.EXACT
) -> str:
    approximate = f"/{vector_search}" if embedding_model and vector_search is not VectorSearch.EXACT else ""
    return content_version(passages, f"{BACKEND_NAME}/{INDEX_FORMAT_VERSION}/{embedding_model}{approximate}")


def build_embedded_index(
    passages: pd.DataFrame,
    root: Path,
    embedder: Embedder | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    vector_search: VectorSearch = VectorSearch.EXACT,
) -> IndexManifest:
    """Build BM25 (and vectors when an embedder is given, with their HNSW graph when
    ``vector_search`` is hnsw) into ``root/<version>`` atomically.

    Everything is written to a scratch folder and renamed into place only when complete, so a
    failed build never touches a live index. An index of the same version is reused as it is.
    """
    root.mkdir(parents=True, exist_ok=True)
    embedding_model = embedder.model_id if embedder is not None else None
    version = embedded_version(passages, embedding_model, vector_search)
    final = root / version
    if (final / MANIFEST_FILE).is_file():
        return IndexManifest.from_dict(json.loads((final / MANIFEST_FILE).read_text()))
    started = time.perf_counter()
    scratch = root / f".building-{version}-{uuid.uuid4().hex[:8]}"
    scratch.mkdir()
    try:
        lexical = Bm25Index.build(passages)
        lexical.save(scratch)
        details = {
            "lexical": f"bm25s {bm25s.__version__}: title + passage, each passage in its language's analysis",
            "languages": lexical.languages,
            "embedding_model": embedding_model,
            "modes": RetrievalMode.available(has_vectors=False),
        }
        unread = unread_languages(embedding_model, lexical.languages) if embedder is not None else None
        if unread:
            details[NO_VECTORS] = unread  # the semantic modes say this, rather than rank noise
        elif embedder is not None:
            vectors = embedder.encode(document_texts(passages), on_progress=on_progress)
            dense = DenseIndex(vectors, passages, embedder)
            dense.save(scratch)
            if vector_search is VectorSearch.HNSW:
                HnswIndex.save_graph(dense.vectors, scratch)  # normalised once, by DenseIndex
            details["vector_search"] = str(vector_search)
            details["modes"] = RetrievalMode.available(has_vectors=True)
            details["dimensions"] = int(vectors.shape[1])
        details["size_bytes"] = sum(f.stat().st_size for f in scratch.rglob("*") if f.is_file())
        manifest = IndexManifest(
            backend=BACKEND_NAME,
            location=str(final),
            version=version,
            documents=len(passages),
            build_seconds=round(time.perf_counter() - started, 3),
            details=details,
        )
        (scratch / MANIFEST_FILE).write_text(json.dumps(manifest.to_dict(), indent=2))
        if final.exists():  # an incomplete folder left by a crash: it was never live
            shutil.rmtree(final)
        os.replace(scratch, final)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return manifest


def open_embedded_index(manifest: IndexManifest, load_embedder: Callable[[str], Embedder]) -> OpenedIndex:
    """The lexical index, the semantic one when the index holds vectors, and the title catalog."""
    folder = Path(manifest.location)
    if not (folder / MANIFEST_FILE).is_file():
        raise IndexNotFoundError(f"No complete embedded index at {folder}; materialize kb_index to build it.")
    lexical = Bm25Index.load(folder)
    model = manifest.details.get("embedding_model")
    semantic = None
    if model and has_vectors(folder):
        approximate = manifest.details.get("vector_search") == VectorSearch.HNSW
        semantic = (HnswIndex if approximate else DenseIndex).load(
            folder, read_passages(folder), load_embedder(model)
        )
    catalog = functools.cache(lambda: TitleCatalog(lexical.passages()))
    return OpenedIndex(
        lexical, semantic, catalog, manifest.backend, no_vectors=manifest.details.get(NO_VECTORS)
    )


class OpenedIndexes:
    """Embedded indexes opened once and kept, the ``kept`` most recently used: an index folder
    is written once under its content version and renamed into place complete, so one opened is
    the index for as long as its manifest file is the same one."""

    def __init__(self, kept: int = KEPT_INDEXES) -> None:
        self._opened: KeptRecent[tuple, OpenedIndex] = KeptRecent(kept)

    def open(self, manifest: IndexManifest, load_embedder: Callable[[str], Embedder]) -> OpenedIndex:
        try:
            stat = (Path(manifest.location) / MANIFEST_FILE).stat()
        except FileNotFoundError:  # gone: said as the index's own error, with its remedy
            return open_embedded_index(manifest, load_embedder)
        key = (manifest.location, manifest.version, stat.st_ino, stat.st_mtime_ns)
        opened = self._opened.get(key)
        if opened is None:
            opened = open_embedded_index(manifest, load_embedder)
            self._opened.put(key, opened)
        return opened


class EmbeddedBackend:
    """The knowledge base on local disk under ``root``: BM25, plus vectors when an embedder is
    given (searched exactly, or through an HNSW graph); one folder per content version. Indexes
    are opened through ``opened`` (shared by a process's runs) or each time."""

    name = BACKEND_NAME

    def __init__(
        self,
        root: Path,
        embedder: Embedder | None,
        load_embedder: Callable[[str], Embedder],
        vector_search: VectorSearch = VectorSearch.EXACT,
        opened: OpenedIndexes | None = None,
    ) -> None:
        self._root = root
        self._embedder = embedder
        self._load_embedder = load_embedder
        self._vector_search = vector_search
        self._opened = opened
        if embedder is not None and vector_search is VectorSearch.HNSW:
            HnswIndex.require_library()  # before hours of embedding, not after

    def build(self, passages: pd.DataFrame, on_progress: ProgressCallback | None = None) -> IndexManifest:
        return build_embedded_index(passages, self._root, self._embedder, on_progress, self._vector_search)

    def open(self, manifest: IndexManifest) -> OpenedIndex:
        if self._opened is None:
            return open_embedded_index(manifest, self._load_embedder)
        return self._opened.open(manifest, self._load_embedder)
