"""Resources: the knowledge-base backend behind the search interface."""

from pathlib import Path

import dagster as dg
import pandas as pd
from pydantic import PrivateAttr

from rag_eval_pipeline.answering.run import Retriever
from rag_eval_pipeline.retrieval.base import IndexManifest
from rag_eval_pipeline.retrieval.bm25_index import Bm25Index, build_versioned_index


class KnowledgeBaseResource(dg.ConfigurableResource):
    """Builds and opens the knowledge-base index: an embedded on-disk BM25 index by default.

    ``index_dir`` defaults to ``<DAGSTER_HOME>/storage/kb_index``; every content version gets its
    own folder there, so a rebuild never overwrites the index that runs are reading.
    """

    index_dir: str | None = None

    _root: Path = PrivateAttr()
    _open: dict[str, Bm25Index] = PrivateAttr(default_factory=dict)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        if self.index_dir:
            self._root = Path(self.index_dir)
        else:
            self._root = Path(context.instance.storage_directory()) / "kb_index"  # type: ignore[union-attr]

    def build(self, passages: pd.DataFrame) -> IndexManifest:
        return build_versioned_index(passages, self._root)

    def retriever(self, manifest: IndexManifest, mode: str) -> Retriever:
        """A batch search function for ``mode`` over the index the manifest names."""
        if mode != "bm25":
            raise ValueError(
                f"retrieval mode '{mode}' is not available on the {manifest.backend} index; available: bm25"
            )
        index = self._open.get(manifest.location)
        if index is None:
            index = self._open[manifest.location] = Bm25Index.load(Path(manifest.location))
        return lambda queries, k: index.search_many(list(queries), k)
