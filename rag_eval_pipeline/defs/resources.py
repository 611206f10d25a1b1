"""Resources: the knowledge-base backend behind the search interface."""

from collections.abc import Callable
from pathlib import Path

import dagster as dg
import pandas as pd
from pydantic import Field, PrivateAttr

from rag_eval_pipeline.answering.run import Retriever
from rag_eval_pipeline.retrieval.base import IndexManifest
from rag_eval_pipeline.retrieval.embedded import (
    OpenedIndex,
    build_embedded_index,
    open_embedded_index,
)
from rag_eval_pipeline.retrieval.embedder import Embedder, SentenceTransformerEmbedder
from rag_eval_pipeline.retrieval.modes import search_many


class KnowledgeBaseResource(dg.ConfigurableResource):
    """Builds and opens the knowledge-base index: an embedded on-disk index by default.

    The embedded index is BM25, plus vectors when ``embedding_model`` is set (semantic, hybrid
    modes). ``index_dir`` defaults to ``<DAGSTER_HOME>/storage/kb_index``; every content version
    gets its own folder there, so a rebuild never overwrites the index that runs are reading.
    """

    index_dir: str | None = Field(default=None, description="Where embedded indexes are kept.")
    embedding_model: str | None = Field(
        default=None,
        description="Sentence-transformers model name or local folder; unset = BM25 only.",
    )
    embedding_batch_size: int = 64

    _root: Path = PrivateAttr()
    _embedders: dict[str, Embedder] = PrivateAttr(default_factory=dict)
    _indexes: dict[str, OpenedIndex] = PrivateAttr(default_factory=dict)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        if self.index_dir:
            self._root = Path(self.index_dir)
        else:
            self._root = Path(context.instance.storage_directory()) / "kb_index"  # type: ignore[union-attr]

    def embedder(self, model: str) -> Embedder:
        if model not in self._embedders:
            self._embedders[model] = SentenceTransformerEmbedder(model, self.embedding_batch_size)
        return self._embedders[model]

    def build(
        self, passages: pd.DataFrame, on_progress: Callable[[int, int], None] | None = None
    ) -> IndexManifest:
        embedder = self.embedder(self.embedding_model) if self.embedding_model else None
        return build_embedded_index(passages, self._root, embedder, on_progress)

    def retriever(self, manifest: IndexManifest, mode: str) -> Retriever:
        """A batch search function for ``mode`` over the index the manifest names."""
        if manifest.location not in self._indexes:
            self._indexes[manifest.location] = open_embedded_index(manifest, self.embedder)
        index = self._indexes[manifest.location].for_mode(mode)
        return lambda queries, k: search_many(index, queries, k)
