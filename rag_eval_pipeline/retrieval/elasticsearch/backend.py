"""The knowledge base in Elasticsearch as a ``SearchBackend``: configuration plus the cluster."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import pandas as pd
from elasticsearch import Elasticsearch

from rag_eval_pipeline.retrieval.base import IndexManifest, ProgressCallback
from rag_eval_pipeline.retrieval.elasticsearch.build import build_es_index
from rag_eval_pipeline.retrieval.elasticsearch.cluster import BACKEND_NAME, EsFeatures
from rag_eval_pipeline.retrieval.elasticsearch.search import open_es_index
from rag_eval_pipeline.retrieval.embedder import Embedder
from rag_eval_pipeline.retrieval.modes import OpenedIndex


@dataclass(frozen=True)
class ElasticsearchBackend:
    """Builds behind the alias ``alias`` (versioned indices, swapped when complete) and opens the
    version a manifest names."""

    name: ClassVar[str] = BACKEND_NAME

    es: Elasticsearch
    features: EsFeatures
    alias: str
    embedder: Embedder | None
    load_embedder: Callable[[str], Embedder]
    max_error_share: float = 0.0

    def build(self, passages: pd.DataFrame, on_progress: ProgressCallback | None = None) -> IndexManifest:
        return build_es_index(
            self.es,
            passages,
            self.alias,
            self.features,
            self.embedder,
            self.max_error_share,
            on_progress,
        )

    def open(self, manifest: IndexManifest) -> OpenedIndex:
        return open_es_index(self.es, manifest, self.features, self.load_embedder)
