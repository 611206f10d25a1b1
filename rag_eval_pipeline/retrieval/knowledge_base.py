"""The knowledge base of one run: which backend holds it, the embedders it loads once, and the
indexes it opens once. The Dagster resource is configuration plus this."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from rag_eval_pipeline.retrieval.base import (
    Backend,
    IndexManifest,
    ProgressCallback,
    RetrievalMode,
    SearchHit,
    SearchIndex,
)
from rag_eval_pipeline.retrieval.embedded import EmbeddedBackend, OpenedIndexes
from rag_eval_pipeline.retrieval.embedder import (
    Embedder,
    QueryEmbedder,
    make_embedder,
    resolve_embedding_model,
)
from rag_eval_pipeline.retrieval.modes import OpenedIndex, SearchBackend, search_many
from rag_eval_pipeline.retrieval.pair_scores import KeptPairScores, PairCounts, PairScoreStore
from rag_eval_pipeline.retrieval.reranker import CrossEncoder, RerankedIndex
from rag_eval_pipeline.retrieval.spec import KnowledgeBaseSpec

if TYPE_CHECKING:  # the Elasticsearch client is imported when the backend is the cluster
    from elasticsearch import Elasticsearch

    from rag_eval_pipeline.retrieval.elasticsearch.cluster import EsFeatures

# the questions, k, and each question's language
Retriever = Callable[[Sequence[str], int, Sequence[str | None] | None], list[list[SearchHit]]]
EMBEDDING_BATCH_SIZE = 64


@dataclass
class KnowledgeBase:
    """The backend the spec names over ``root`` (embedded indexes) or the cluster ``connect``
    reaches; embedders and opened indexes are kept for the life of the run. ``pair_scores``:
    the file the reranker's scores are kept in by content (none kept without it);
    ``refresh_pair_scores`` scores every pair again."""

    spec: KnowledgeBaseSpec
    root: Path
    connect: Callable[[], Elasticsearch] | None = None
    embedded_indexes: OpenedIndexes | None = None  # shared with other runs of the process, if given
    pair_scores: Path | None = None
    refresh_pair_scores: bool = False
    _es: tuple[Elasticsearch, EsFeatures] | None = field(default=None, repr=False)
    _embedders: dict[str, Embedder] = field(default_factory=dict, repr=False)
    _opened: dict[str, OpenedIndex] = field(default_factory=dict, repr=False)
    _cross_encoder: CrossEncoder | None = field(default=None, repr=False)
    _pair_store: PairScoreStore | None = field(default=None, repr=False)

    def embedder(self, model: str) -> Embedder:
        if model not in self._embedders:
            self._embedders[model] = make_embedder(resolve_embedding_model(model), EMBEDDING_BATCH_SIZE)
        return self._embedders[model]

    def query_embedder(self) -> QueryEmbedder | None:
        """Embeds texts with the configured model (RAGAS answer relevancy), loaded on first use;
        None when there is none."""
        model = self.spec.embedding_model
        if not model:
            return None
        return QueryEmbedder(model, lambda texts: self.embedder(model).encode(texts))

    def es(self) -> tuple[Elasticsearch, EsFeatures]:
        """The cluster client and its detected features (detected once, logged once)."""
        if self.connect is None:
            raise ValueError("the knowledge base is not in Elasticsearch (knowledge_base.backend)")
        if self._es is None:
            client = self.connect()
            from rag_eval_pipeline.retrieval.elasticsearch.cluster import detect_features

            self._es = (client, detect_features(client, self.spec.inference_id))
        return self._es

    def backend(self) -> SearchBackend:
        """The configured backend: the one place that chooses between them."""
        model = self.spec.embedding_model
        embedder = self.embedder(model) if model else None
        if self.spec.backend is Backend.EMBEDDED:
            return EmbeddedBackend(
                self.root, embedder, self.embedder, self.spec.vector_search, self.embedded_indexes
            )
        es, features = self.es()
        alias = self.spec.index_names.knowledge_base
        from rag_eval_pipeline.retrieval.elasticsearch.backend import ElasticsearchBackend

        return ElasticsearchBackend(es, features, alias, embedder, self.embedder, self.spec.max_error_share)

    def build(self, passages: pd.DataFrame, on_progress: ProgressCallback | None = None) -> IndexManifest:
        return self.backend().build(passages, on_progress)

    def retriever(
        self, manifest: IndexManifest, mode: RetrievalMode, counts: PairCounts | None = None
    ) -> Retriever:
        """A batch search function for ``mode`` over the index the manifest names (opened once);
        the reranker's pairs scored and read back from the kept scores are added to ``counts``."""
        key = f"{manifest.backend}:{manifest.location}:{manifest.version}"
        if key not in self._opened:
            self._opened[key] = self.backend().open(manifest)
        opened = self._opened[key]
        if mode is RetrievalMode.RERANK:
            rerank, encoder = self.spec.rerank, self.cross_encoder()
            if self.pair_scores is not None and self._pair_store is None:
                self._pair_store = PairScoreStore(self.pair_scores)
            kept = KeptPairScores(
                encoder.scores, encoder.identity, self._pair_store, counts, self.refresh_pair_scores
            )
            index: SearchIndex = RerankedIndex(opened.for_mode(rerank.first_stage), encoder, rerank, kept)
        else:
            index = opened.for_mode(mode)
        return lambda queries, k, languages=None: search_many(index, queries, k, languages)

    def close(self) -> None:
        """Closes the kept scores' file (the run's other handles close with the process)."""
        if self._pair_store is not None:
            self._pair_store.close()

    def cross_encoder(self) -> CrossEncoder:
        """The reranker's model, loaded once for the run."""
        if self._cross_encoder is None:
            self._cross_encoder = CrossEncoder(self.spec.rerank.model, self.spec.rerank.threads)
        return self._cross_encoder
