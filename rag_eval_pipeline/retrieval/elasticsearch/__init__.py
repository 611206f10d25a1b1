"""The knowledge base in Elasticsearch: cluster probing, index build with alias swap, search,
and the records indices (judgement list, eval results)."""

from rag_eval_pipeline.retrieval.elasticsearch.backend import ElasticsearchBackend
from rag_eval_pipeline.retrieval.elasticsearch.build import BulkIndexingError, build_es_index
from rag_eval_pipeline.retrieval.elasticsearch.cluster import (
    ElasticsearchUnavailableError,
    EsFeatures,
    EsIndexNames,
    detect_features,
)
from rag_eval_pipeline.retrieval.elasticsearch.records import index_documents
from rag_eval_pipeline.retrieval.elasticsearch.search import open_es_index

__all__ = [
    "BulkIndexingError",
    "ElasticsearchBackend",
    "ElasticsearchUnavailableError",
    "EsFeatures",
    "EsIndexNames",
    "build_es_index",
    "detect_features",
    "index_documents",
    "open_es_index",
]
