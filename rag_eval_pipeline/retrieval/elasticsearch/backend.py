"""The knowledge base in Elasticsearch as a ``SearchBackend``: configuration plus the cluster."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
from elasticsearch import Elasticsearch

from rag_eval_pipeline.retrieval.base import IndexManifest, ProgressCallback
from rag_eval_pipeline.retrieval.elasticsearch.build import build_es_index
from rag_eval_pipeline.retrieval.elasticsearch.cluster import BACKEND_NAME, EsFeatures
from rag_eval_pipeline.retrieval.elasticsearch.search import open_es_index
from rag_eval_pipeline.retrieval.embedder import Embedder
from rag_eval_pipeline.retrieval.modes import OpenedIndex


class ElasticsearchBackend:
    """Builds behind the alias ``alias`` (versioned indices, swapped when complete) and opens the
    version a manifest names."""

    name = BACKEND_NAME

    def __init__(
        self,
        es: Elasticsearch,
        features: EsFeatures,
        alias: str,
        embedder: Embedder | None,
        load_embedder: Callable[[str], Embedder],
        max_error_share: float = 0.0,
    ) -> None:
        self._es = es
        self._features = features
        self._alias = alias
        self._embedder = embedder
        self._load_embedder = load_embedder
        self._max_error_share = max_error_share

    def build(self, passages: pd.DataFrame, on_progress: ProgressCallback | None = None) -> IndexManifest:
        return build_es_index(
            self._es,
            passages,
            self._alias,
            self._features,
            self._embedder,
            self._max_error_share,
            on_progress,
        )

    def open(self, manifest: IndexManifest) -> OpenedIndex:
        return open_es_index(self._es, manifest, self._features, self._load_embedder)
