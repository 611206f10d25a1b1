"""What the configuration says about the knowledge base: its backend, its scope, vectors and the
Elasticsearch cluster, resolved once into a ``KnowledgeBaseSpec``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from rag_eval_pipeline.common.settings import Strict
from rag_eval_pipeline.retrieval.base import Backend, RetrievalMode
from rag_eval_pipeline.retrieval.spec import EsIndexNames, KnowledgeBaseSpec, RerankSpec, VectorSearch


class EsIndexNamesSettings(Strict):
    knowledge_base: str = EsIndexNames.knowledge_base  # an alias over versioned indices
    judgement_list: str = EsIndexNames.judgement_list
    eval_results: str = EsIndexNames.eval_results


class ElasticsearchSettings(Strict):
    """The cluster (``knowledge_base.backend: elasticsearch``); credentials stay in the
    environment. ``url`` and ``cloud_id`` unset: ELASTICSEARCH_URL / ELASTICSEARCH_CLOUD_ID."""

    url: str | None = None
    cloud_id: str | None = None
    verify_certs: bool = True
    ca_certs: str | None = None
    index_names: EsIndexNamesSettings = EsIndexNamesSettings()
    inference_id: str | None = None
    max_error_share: float = Field(default=0.0, ge=0, le=1)


class RerankSettings(Strict):
    """The ``rerank`` retrieval mode (``MODEL@rerank-k4``): a first stage's candidates ordered by
    a cross-encoder, offline (the [rerank] extra)."""

    first_stage: RetrievalMode = Field(
        default=RerankSpec.first_stage, description="the mode whose candidates are reranked"
    )
    candidates: int = Field(default=RerankSpec.candidates, ge=1, le=200, description="how many it reranks")
    model: str = Field(
        default=RerankSpec.model,
        description="reranker_en (cross-encoder/ms-marco-MiniLM-L-12-v2 int8; MS MARCO's terms are "
        "non-commercial), or a folder with a cross-encoder's model.onnx and tokenizer.json",
    )
    second_step: bool = Field(
        default=RerankSpec.second_step,
        description="keep the best passage, then rerank the rest against the question and it (multi-hop)",
    )
    threads: int = Field(
        default=RerankSpec.threads, ge=0, description="pairs scored at once (0: one per core)"
    )
    passage_tokens: int | None = Field(
        default=RerankSpec.passage_tokens,
        ge=8,
        le=512,
        description="each candidate (title and passage) cut after this many tokens (null: whole)",
    )
    bridge_tokens: int | None = Field(
        default=RerankSpec.bridge_tokens,
        ge=8,
        le=512,
        description="the best passage the second step reads beside the question, cut after this many tokens",
    )
    bridge_pool: int | None = Field(
        default=RerankSpec.bridge_pool,
        ge=1,
        description="how many candidates after the best the second step reads (null: all)",
    )

    @model_validator(mode="after")
    def _a_first_stage_that_is_not_itself(self) -> RerankSettings:
        if self.first_stage is RetrievalMode.RERANK:
            raise ValueError("first_stage cannot be rerank itself: use bm25, semantic, hybrid or two_hop")
        return self

    def spec(self) -> RerankSpec:
        return RerankSpec(
            self.first_stage,
            self.candidates,
            self.model,
            self.second_step,
            self.threads,
            self.passage_tokens,
            self.bridge_tokens,
            self.bridge_pool,
        )


class KnowledgeBaseSettings(Strict):
    backend: Backend = Field(
        default=Backend.EMBEDDED,
        description="the one switch: embedded (an index on disk) or elasticsearch (ELASTICSEARCH_URL "
        "or elasticsearch.url gives its address)",
    )
    scope: Literal["sample", "all"] = Field(
        default="sample",
        description="sample: the paragraphs of the evaluated questions (as in the Elastic "
        "LLM-as-a-judge article); all: of every question of the file (harder, and the same "
        "knowledge base whatever the sample size)",
    )
    embedding_model: str | None = None
    vector_search: VectorSearch = Field(
        default=VectorSearch.EXACT,
        description="embedded vectors: exact, or hnsw (approximate, the [ann] extra) past a few "
        "hundred thousand passages",
    )
    elasticsearch: ElasticsearchSettings = ElasticsearchSettings()
    rerank: RerankSettings = RerankSettings()

    @model_validator(mode="after")
    def _vectors_to_search(self) -> KnowledgeBaseSettings:
        if self.vector_search is not VectorSearch.EXACT and not self.embedding_model:
            raise ValueError(f"vector_search: {self.vector_search} needs an embedding_model (e.g. minilm)")
        return self

    def spec(self) -> KnowledgeBaseSpec:
        es = self.elasticsearch
        return KnowledgeBaseSpec(
            self.backend,
            self.embedding_model,
            self.vector_search,
            EsIndexNames(**es.index_names.model_dump()),
            es.inference_id,
            es.max_error_share,
            self.rerank.spec(),
        )
