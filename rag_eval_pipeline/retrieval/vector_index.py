"""Cosine search over L2-normalised float32 vectors, persisted beside the BM25 index: exact
(one matrix product) or approximate (an HNSW graph from usearch, the ``[ann]`` extra).

Exact search is linear in the corpus: 3.5 ms a query at 100k passages of 384 dimensions, 57 ms
and 1.5 GB at 1M (``benchmarks/scale.py``). The HNSW graph answers in about 1 ms at 1M with
recall@10 0.95 against exact at the search width used here, memory-mapped from disk.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from rag_eval_pipeline.retrieval.base import InMemoryIndex, SearchHit
from rag_eval_pipeline.retrieval.embedder import Embedder, SemanticExtraMissingError, l2_normalise

_VECTORS_FILE = "vectors.npy"
_VECTORS_META = "vectors.json"
_GRAPH_FILE = "vectors.usearch"
HNSW_CONNECTIVITY = 16  # usearch's default graph degree
HNSW_EXPANSION = 512  # candidates a search keeps: recall@10 0.954 at 1M where the default 64 gives 0.757
ANN_INSTALL_HINT = "pip install 'rag-eval-pipeline[ann]'"


def has_vectors(folder: Path) -> bool:
    return (folder / _VECTORS_FILE).is_file()


def _check_embedding_model(folder: Path, embedder: Embedder) -> None:
    """Query vectors from another model than the stored ones would rank nonsense: refuse."""
    stored = json.loads((folder / _VECTORS_META).read_text())["embedding_model"]
    if stored != embedder.model_id:
        raise ValueError(f"the vectors in {folder} were made with {stored}, not {embedder.model_id}")


class DenseIndex(InMemoryIndex):
    """Semantic search: embed the query, rank passages by cosine similarity."""

    def __init__(self, vectors: np.ndarray, passages: pd.DataFrame, embedder: Embedder) -> None:
        if len(vectors) != len(passages):
            raise ValueError(f"{len(vectors)} vectors for {len(passages)} passages")
        super().__init__(passages)
        self.vectors = l2_normalise(vectors)
        self._embedder = embedder

    def save(self, folder: Path) -> None:
        np.save(folder / _VECTORS_FILE, self.vectors)
        (folder / _VECTORS_META).write_text(
            json.dumps({"embedding_model": self._embedder.model_id, "shape": list(self.vectors.shape)})
        )

    @classmethod
    def load(cls, folder: Path, passages: pd.DataFrame, embedder: Embedder) -> DenseIndex:
        _check_embedding_model(folder, embedder)
        return cls(np.load(folder / _VECTORS_FILE), passages, embedder)

    def _rank(self, queries: list[str], k: int, languages: Sequence[str | None]) -> list[list[SearchHit]]:
        scores = self._embedder.encode(queries) @ self.vectors.T
        results = []
        for row in scores:
            top = np.argpartition(-row, k - 1)[:k]
            top = top[np.argsort(-row[top], kind="stable")]
            results.append([self.hit(i, row[i]) for i in top])
        return results


class HnswIndex(InMemoryIndex):
    """Semantic search through an HNSW graph (usearch, half-precision vectors) memory-mapped from
    the index folder: the float32 matrix stays on disk, so a million passages need the graph's
    0.8 GB, not 1.5 GB, and a query touches a few thousand vectors instead of all of them."""

    def __init__(self, graph: object, passages: pd.DataFrame, embedder: Embedder) -> None:
        super().__init__(passages)
        self._graph = graph
        self._embedder = embedder

    @staticmethod
    def require_library() -> None:
        _usearch()

    @staticmethod
    def save_graph(unit_vectors: np.ndarray, folder: Path) -> None:
        """``unit_vectors`` as ``DenseIndex`` holds them. Inserted on one thread: a graph built in
        parallel depends on thread timing, and the same passages must give the same index (and
        the same scores) on every build."""
        usearch = _usearch()
        graph = usearch.Index(
            ndim=unit_vectors.shape[1], metric="cos", dtype="f16", connectivity=HNSW_CONNECTIVITY
        )
        graph.add(np.arange(len(unit_vectors)), unit_vectors, threads=1)
        graph.save(str(folder / _GRAPH_FILE))

    @classmethod
    def load(cls, folder: Path, passages: pd.DataFrame, embedder: Embedder) -> HnswIndex:
        _check_embedding_model(folder, embedder)
        graph = _usearch().Index.restore(str(folder / _GRAPH_FILE), view=True)
        if graph is None or len(graph) != len(passages):
            raise ValueError(f"the HNSW graph in {folder} does not match its {len(passages)} passages")
        graph.expansion_search = HNSW_EXPANSION
        return cls(graph, passages, embedder)

    def _rank(self, queries: list[str], k: int, languages: Sequence[str | None]) -> list[list[SearchHit]]:
        found = self._graph.search(self._embedder.encode(queries), k)  # type: ignore[attr-defined]
        # one query gives its matches alone; several a padded row each, counts saying how much is real
        keys, distances = np.atleast_2d(found.keys), np.atleast_2d(found.distances)
        counts = np.atleast_1d(getattr(found, "counts", len(found.keys)))
        results = []
        for row in range(len(queries)):
            real = int(counts[row])
            hits = [(int(key), 1.0 - float(d)) for key, d in zip(keys[row][:real], distances[row][:real])]
            hits.sort(key=lambda hit: (-hit[1], hit[0]))  # equal scores in row order, as exact search
            results.append([self.hit(key, score) for key, score in hits[:k]])
        return results


def _usearch():
    try:
        import usearch.index
    except ImportError as err:
        raise SemanticExtraMissingError(
            f"vector_search: hnsw needs usearch, which is not installed: {ANN_INSTALL_HINT} "
            "(or set vector_search: exact)"
        ) from err
    return usearch.index
