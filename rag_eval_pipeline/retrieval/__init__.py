"""The knowledge base: the retrieval modes, the ``SearchBackend`` protocol and its embedded and
Elasticsearch implementations, and the one mapping of a mode to a search (``modes.py``)."""

from rag_eval_pipeline.retrieval.base import (
    DEFAULT_RETRIEVAL_MODE,
    DEFAULT_TOP_K,
    IndexManifest,
    RetrievalMode,
    SearchHit,
    SearchIndex,
)
from rag_eval_pipeline.retrieval.modes import SearchBackend

__all__ = [
    "DEFAULT_RETRIEVAL_MODE",
    "DEFAULT_TOP_K",
    "IndexManifest",
    "RetrievalMode",
    "SearchBackend",
    "SearchHit",
    "SearchIndex",
]
