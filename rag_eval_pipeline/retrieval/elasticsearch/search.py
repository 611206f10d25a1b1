"""Searching the knowledge base in Elasticsearch: BM25 (combined_fields), kNN over client-side
vectors, the cluster's own semantic_text inference, and the rrf retriever for hybrid where the
cluster has it. Which search serves which mode is decided in ``retrieval/modes.py``."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from typing import Any

from elasticsearch import Elasticsearch, helpers

from rag_eval_pipeline.retrieval.base import BatchedIndex, IndexManifest, SearchHit, SearchIndex
from rag_eval_pipeline.retrieval.elasticsearch.build import SEMANTIC_FIELD, VECTOR_FIELD
from rag_eval_pipeline.retrieval.elasticsearch.cluster import EsFeatures, es_call
from rag_eval_pipeline.retrieval.elasticsearch.errors import ElasticsearchUnavailableError
from rag_eval_pipeline.retrieval.embedder import NO_VECTORS, Embedder
from rag_eval_pipeline.retrieval.fusion import DEFAULT_RRF_K
from rag_eval_pipeline.retrieval.modes import FUSION_CANDIDATES, FusedIndex, OpenedIndex, TitleCatalog

log = logging.getLogger(__name__)


RETURNED = ("passage_id", "title", "passage")  # what a hit reads of a document


class EsLexicalIndex(BatchedIndex):
    """BM25 over title and passage as one field set (combined_fields, BM25F): a question in a
    language with fields of its own is searched there, every other in the main fields."""

    def __init__(self, es: Elasticsearch, index: str, language_fields: Sequence[str] = ()) -> None:
        self._es = es
        self._index = index
        self._languages = set(language_fields)

    def _query(self, query: str, language: str | None = None) -> dict[str, Any]:
        if language in self._languages:
            fields = [f"title.text_{language}", f"passage_in_{language}"]
        else:
            fields = ["title.text", "passage"]
        return {"combined_fields": {"query": query, "fields": fields}}

    def search_many(
        self, queries: list[str], k: int, languages: Sequence[str | None] | None = None
    ) -> list[list[SearchHit]]:
        if not queries:
            return []
        searches: list[dict[str, Any]] = []
        for query, language in zip(queries, languages or [None] * len(queries)):
            searches += [
                {"index": self._index},
                {
                    "query": self._query(query, language),
                    "size": k,
                    "_source": ["passage_id", "title", "passage"],
                },
            ]
        responses = es_call("searching", lambda: self._es.msearch(searches=searches))["responses"]
        return [_hits(r) for r in responses]


class EsDenseIndex:
    """Approximate kNN (HNSW) over client-side embeddings."""

    def __init__(self, es: Elasticsearch, index: str, embedder: Embedder, num_candidates: int = 100) -> None:
        self._es = es
        self._index = index
        self._embedder = embedder
        self._num_candidates = num_candidates

    def knn(self, vector: list[float], k: int) -> dict[str, Any]:
        return {
            "field": VECTOR_FIELD,
            "query_vector": vector,
            "k": k,
            "num_candidates": max(k, self._num_candidates),
        }

    def search(self, query: str, k: int, language: str | None = None) -> list[SearchHit]:
        return self.search_many([query], k)[0]

    def search_many(
        self, queries: list[str], k: int, languages: Sequence[str | None] | None = None
    ) -> list[list[SearchHit]]:
        if not queries:
            return []
        vectors = self._embedder.encode(queries)
        searches: list[dict[str, Any]] = []
        for vector in vectors:
            searches += [
                {"index": self._index},
                {
                    "knn": self.knn(vector.tolist(), k),
                    "size": k,
                    "_source": ["passage_id", "title", "passage"],
                },
            ]
        responses = es_call("searching", lambda: self._es.msearch(searches=searches))["responses"]
        return [_hits(r) for r in responses]


class EsSemanticTextIndex:
    """The cluster's own inference (semantic_text): the query is embedded server-side."""

    def __init__(self, es: Elasticsearch, index: str) -> None:
        self._es = es
        self._index = index

    def search(self, query: str, k: int, language: str | None = None) -> list[SearchHit]:
        response = es_call(
            "searching",
            lambda: self._es.search(
                index=self._index, query={"semantic": {"field": SEMANTIC_FIELD, "query": query}}, size=k
            ),
        )
        return _hits(response)


class EsRrfIndex:
    """Hybrid in one request: the cluster's rrf retriever over BM25 and the semantic field."""

    def __init__(self, es: Elasticsearch, index: str, lexical: EsLexicalIndex, semantic: SearchIndex) -> None:
        self._es = es
        self._index = index
        self._lexical = lexical
        self._semantic = semantic

    def search(self, query: str, k: int, language: str | None = None) -> list[SearchHit]:
        if isinstance(self._semantic, EsDenseIndex):
            vector = self._semantic._embedder.encode([query])[0].tolist()
            second: dict[str, Any] = {"knn": {**self._semantic.knn(vector, FUSION_CANDIDATES)}}
        else:
            second = {"standard": {"query": {"semantic": {"field": SEMANTIC_FIELD, "query": query}}}}
        retriever = {
            "rrf": {
                "retrievers": [{"standard": {"query": self._lexical._query(query, language)}}, second],
                "rank_window_size": max(k, FUSION_CANDIDATES),
                "rank_constant": DEFAULT_RRF_K,
            }
        }
        return _hits(
            es_call("searching", lambda: self._es.search(index=self._index, retriever=retriever, size=k))
        )


def _hits(response: dict[str, Any]) -> list[SearchHit]:
    if "error" in response:
        raise ElasticsearchUnavailableError(f"search failed: {response['error']}")
    return [
        SearchHit(
            h["_source"]["passage_id"],
            h["_source"]["title"],
            h["_source"]["passage"],
            float(h["_score"] or 0.0),
        )
        for h in response["hits"]["hits"]
    ]


def read_all_passages(es: Elasticsearch, index: str) -> list[SearchHit]:
    """Every passage of the index (for the two-hop title catalog)."""
    return [
        SearchHit(d["_source"]["passage_id"], d["_source"]["title"], d["_source"]["passage"], 0.0)
        for d in helpers.scan(
            es, index=index, query={"query": {"match_all": {}}}, _source=["passage_id", "title", "passage"]
        )
    ]


def open_es_index(
    es: Elasticsearch,
    manifest: IndexManifest,
    features: EsFeatures,
    load_embedder: Callable[[str], Embedder],
) -> OpenedIndex:
    """The searches over the index the manifest names (that version, not whatever the alias
    holds now); the title catalog is read only when two_hop first needs it."""
    index = manifest.details["index"]
    if not es_call("opening the index", lambda: es.indices.exists(index=index)):
        raise ElasticsearchUnavailableError(
            f"Elasticsearch index {index} (alias {manifest.location}) is missing; materialize kb_index"
        )
    lexical = EsLexicalIndex(es, index, manifest.details.get("language_fields") or ())
    semantic_kind = manifest.details.get("semantic")
    semantic: SearchIndex | None = None
    if semantic_kind == "semantic_text":
        semantic = EsSemanticTextIndex(es, index)
    elif semantic_kind == "dense_vector":
        semantic = EsDenseIndex(es, index, load_embedder(manifest.details["embedding_model"]))

    def fuse(lexical_index: SearchIndex, semantic_index: SearchIndex) -> SearchIndex:
        if features.rrf:
            log.info("hybrid retrieval: Elasticsearch rrf retriever")
            return EsRrfIndex(es, index, lexical, semantic_index)
        log.info("hybrid retrieval: client-side reciprocal rank fusion (no rrf retriever)")
        return FusedIndex(lexical_index, semantic_index)

    catalog = functools.cache(lambda: TitleCatalog(read_all_passages(es, index)))
    return OpenedIndex(lexical, semantic, catalog, manifest.backend, fuse, manifest.details.get(NO_VECTORS))
