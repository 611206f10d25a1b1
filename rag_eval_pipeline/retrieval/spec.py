"""Where and how the knowledge base is built, as plain names and one spec resolved once from
the configuration: the backend, the vectors and how they are searched, the Elasticsearch index
names. Standard library only, so reading a configuration imports no search engine."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from rag_eval_pipeline.retrieval.base import Backend, RetrievalMode


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
class RerankSpec:
    """The ``rerank`` retrieval mode: which first stage gives the candidates, how many, which
    cross-encoder orders them, whether its multi-hop step runs, how much of each passage the
    model reads, and how many pairs at once. None: no cut (up to the model's 512 tokens)."""

    first_stage: RetrievalMode = RetrievalMode.TWO_HOP
    candidates: int = 20
    model: str = "reranker_en"
    second_step: bool = True
    threads: int = 0  # 0: one per core
    passage_tokens: int | None = None  # each candidate's title and passage, cut after this many tokens
    bridge_tokens: int | None = None  # the best passage step 2 reads beside the question
    bridge_pool: int | None = None  # the candidates after the best that step 2 reads (None: all)

    @property
    def identity(self) -> str:
        """What reranked answers depend on (the threads do not change a score)."""
        step = "+second-step" if self.second_step else ""
        cuts = [
            f"{name}={value}"
            for name, value in (
                ("passage_tokens", self.passage_tokens),
                ("bridge_tokens", self.bridge_tokens if self.second_step else None),
                ("bridge_pool", self.bridge_pool if self.second_step else None),
            )
            if value is not None
        ]
        parts = [self.first_stage.value, str(self.candidates), self.model + step, *cuts]
        return f"rerank({', '.join(parts)})"


@dataclass(frozen=True)
class KnowledgeBaseSpec:
    """Where and how the knowledge base is built, resolved once from the configuration."""

    backend: Backend = Backend.EMBEDDED
    embedding_model: str | None = None
    vector_search: VectorSearch = VectorSearch.EXACT
    index_names: EsIndexNames = EsIndexNames()
    inference_id: str | None = None  # an Elasticsearch inference endpoint for semantic_text
    max_error_share: float = 0.0  # Elasticsearch: documents that may fail to index
    rerank: RerankSpec = RerankSpec()

    @property
    def has_vectors(self) -> bool:
        """Whether semantic modes can be served (client-side vectors or a semantic field)."""
        return bool(self.embedding_model or self.inference_id)
