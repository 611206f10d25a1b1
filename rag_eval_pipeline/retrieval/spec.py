"""Where and how the knowledge base is built, as plain names and one spec resolved once from
the configuration: the backend, the vectors and how they are searched, the Elasticsearch index
names. Standard library only, so reading a configuration imports no search engine."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from rag_eval_pipeline.retrieval.base import Backend


class VectorSearch(StrEnum):
    """How the embedded backend searches its vectors (Elasticsearch's kNN is always HNSW)."""

    EXACT = "exact"
    HNSW = "hnsw"


@dataclass(frozen=True)
class EsIndexNames:
    knowledge_base: str = "hotpot-knowledge-base"
    judgement_list: str = "hotpot-judgement-list"
    eval_results: str = "eval-results"


@dataclass(frozen=True)
class KnowledgeBaseSpec:
    """Where and how the knowledge base is built, resolved once from the configuration."""

    backend: Backend = Backend.EMBEDDED
    embedding_model: str | None = None
    vector_search: VectorSearch = VectorSearch.EXACT
    index_names: EsIndexNames = EsIndexNames()
    inference_id: str | None = None  # an Elasticsearch inference endpoint for semantic_text
    max_error_share: float = 0.0  # Elasticsearch: documents that may fail to index

    @property
    def has_vectors(self) -> bool:
        """Whether semantic modes can be served (client-side vectors or a semantic field)."""
        return bool(self.embedding_model or self.inference_id)
