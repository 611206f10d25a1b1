"""The knowledge base in Elasticsearch: versioned indices behind an alias, bulk indexing, and the
retrieval modes over BM25, kNN on client-side vectors, or ``semantic_text`` where the cluster
has an inference endpoint. Hybrid uses the ``rrf`` retriever where the cluster has it and fuses
client-side otherwise."""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from elasticsearch import ApiError, Elasticsearch, NotFoundError, TransportError, helpers

from rag_eval_pipeline.retrieval.base import IndexManifest, SearchHit, SearchIndex
from rag_eval_pipeline.retrieval.embedded import document_texts
from rag_eval_pipeline.retrieval.embedder import Embedder
from rag_eval_pipeline.retrieval.fusion import DEFAULT_RRF_K
from rag_eval_pipeline.retrieval.modes import (
    FUSION_CANDIDATES,
    FusedIndex,
    ModeUnavailableError,
    TitleCatalog,
    TwoHopIndex,
)

log = logging.getLogger(__name__)

BACKEND_NAME = "elasticsearch"
MAPPING_VERSION = "1"
VECTOR_FIELD = "passage_vector"
SEMANTIC_FIELD = "passage_semantic"
FALLBACK_ANALYZER = "standard_english_stop"
KEEP_OLD_VERSIONS = 1  # the previous version stays for rollback; older ones are deleted


class ElasticsearchUnavailableError(RuntimeError):
    """The cluster cannot be reached or answered with an error; the message says which."""


class BulkIndexingError(RuntimeError):
    """Too many documents failed to index; the new index was dropped, the live one untouched."""


@dataclass(frozen=True)
class EsIndexNames:
    knowledge_base: str = "hotpot-knowledge-base"
    judgement_list: str = "hotpot-judgement-list"
    eval_results: str = "eval-results"


@dataclass(frozen=True)
class EsFeatures:
    """What this cluster can do, detected once: the integ-test distribution lacks the english
    analyzer, inference endpoints and the rrf retriever; Elastic Cloud has all three."""

    version: str
    english_analyzer: bool
    inference_id: str | None
    rrf: bool

    @property
    def analyzer(self) -> str:
        return "english" if self.english_analyzer else FALLBACK_ANALYZER

    def analysis_settings(self) -> dict[str, Any]:
        if self.english_analyzer:
            return {}
        # core Elasticsearch only: the standard tokenizer with English stop words, no stemming
        return {"analyzer": {FALLBACK_ANALYZER: {"type": "standard", "stopwords": "_english_"}}}


def _call(what: str, fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except (TransportError, ConnectionError) as err:
        raise ElasticsearchUnavailableError(f"Elasticsearch unreachable while {what}: {err}") from err


def detect_features(es: Elasticsearch, inference_id: str | None) -> EsFeatures:
    # GET / is not served by every distribution (the integ-test one lacks it): ask the nodes
    nodes = _call(
        "reading cluster info", lambda: es.nodes.info(node_id="_local", filter_path="nodes.*.version")
    )
    version = next(iter(nodes["nodes"].values()))["version"]
    try:
        es.indices.analyze(analyzer="english", text="probe")
        english = True
    except ApiError:
        english = False
    has_inference = False
    if inference_id:
        try:
            es.perform_request("GET", f"/_inference/{inference_id}", headers={"accept": "application/json"})
            has_inference = True
        except ApiError:
            has_inference = False
    rrf = _supports_rrf(es)
    features = EsFeatures(version, english, inference_id if has_inference else None, rrf)
    log.info(
        "Elasticsearch %s: analyzer %s, semantic field %s, hybrid %s",
        features.version,
        features.analyzer,
        f"semantic_text ({features.inference_id})"
        if features.inference_id
        else "dense_vector (client-side embeddings) or none",
        "rrf retriever" if rrf else "client-side reciprocal rank fusion",
    )
    return features


def _supports_rrf(es: Elasticsearch) -> bool:
    """An rrf search on no index: unknown retriever -> 400 parsing error; known -> any other answer."""
    try:
        es.search(
            index="rag-eval-feature-probe-*",
            retriever={"rrf": {"retrievers": [{"standard": {"query": {"match_all": {}}}}] * 2}},
            allow_no_indices=True,
            size=0,
        )
        return True
    except ApiError as err:
        return "unknown retriever" not in str(err)


def index_version(passages: pd.DataFrame, embedding_model: str | None, features: EsFeatures) -> str:
    digest = hashlib.sha256(
        f"{BACKEND_NAME}/{MAPPING_VERSION}/{embedding_model}/{features.analyzer}/{features.inference_id}".encode()
    )
    for pid, title, passage in zip(passages["passage_id"], passages["title"], passages["passage"]):
        digest.update(f"\x1e{pid}\x1f{title}\x1f{passage}".encode())
    return digest.hexdigest()[:16]


def kb_mapping(
    features: EsFeatures, dims: int | None, version: str, embedding_model: str | None
) -> dict[str, Any]:
    """The article's layout: title (keyword, with a text subfield), passage (text, copy_to the
    semantic field), and the semantic field as semantic_text, dense_vector, or absent."""
    passage: dict[str, Any] = {"type": "text", "analyzer": features.analyzer}
    properties: dict[str, Any] = {
        "passage_id": {"type": "keyword"},
        "title": {"type": "keyword", "fields": {"text": {"type": "text", "analyzer": features.analyzer}}},
        "passage": passage,
    }
    semantic = "none"
    if features.inference_id:
        passage["copy_to"] = SEMANTIC_FIELD
        properties[SEMANTIC_FIELD] = {"type": "semantic_text", "inference_id": features.inference_id}
        semantic = "semantic_text"
    elif dims is not None:
        properties[VECTOR_FIELD] = {
            "type": "dense_vector",
            "dims": dims,
            "similarity": "cosine",
            "index": True,
        }
        semantic = "dense_vector"
    return {
        "_meta": {
            "version": version,
            "complete": False,
            "embedding_model": embedding_model,
            "semantic": semantic,
        },
        "properties": properties,
    }


@dataclass
class BulkReport:
    indexed: int = 0
    errors: int = 0
    first_errors: list[str] = field(default_factory=list)


def bulk_index(
    es: Elasticsearch,
    index: str,
    documents: Iterator[tuple[str, dict[str, Any]]],
    total: int,
    on_progress: Callable[[int, int], None] | None = None,
    chunk_size: int = 500,
) -> BulkReport:
    """Stream documents through ``helpers.streaming_bulk``; per-document errors are counted."""
    report = BulkReport()
    actions = ({"_index": index, "_id": doc_id, "_source": source} for doc_id, source in documents)
    for ok, item in helpers.streaming_bulk(
        es, actions, chunk_size=chunk_size, raise_on_error=False, raise_on_exception=False, max_retries=3
    ):
        if ok:
            report.indexed += 1
        else:
            report.errors += 1
            if len(report.first_errors) < 3:
                report.first_errors.append(str(item)[:300])
        done = report.indexed + report.errors
        if on_progress is not None and (done % chunk_size == 0 or done == total):
            on_progress(done, total)
    return report


def _physical_name(alias: str, version: str) -> str:
    return f"{alias}-v{version}"


def _alias_targets(es: Elasticsearch, alias: str) -> list[str]:
    try:
        return sorted(es.indices.get_alias(name=alias).keys())
    except NotFoundError:
        return []


def build_es_index(
    es: Elasticsearch,
    passages: pd.DataFrame,
    alias: str,
    features: EsFeatures,
    embedder: Embedder | None = None,
    max_error_share: float = 0.0,
    on_progress: Callable[[int, int], None] | None = None,
) -> IndexManifest:
    """Index the passages into a new versioned index, then point the alias at it in one atomic
    step. A failed or partial build is deleted and never reaches the alias; an index of the same
    version that is complete is reused."""
    started = time.perf_counter()
    embedding_model = None if features.inference_id else (embedder.model_id if embedder else None)
    version = index_version(passages, embedding_model, features)
    name = _physical_name(alias, version)
    if _call("checking the index", lambda: es.indices.exists(index=name)):
        meta = es.indices.get_mapping(index=name)[name]["mappings"].get("_meta", {})
        if not meta.get("complete"):
            es.indices.delete(index=name)  # a partial build: never live, start again
    if not es.indices.exists(index=name):
        vectors = None
        if embedding_model is not None and embedder is not None:
            vectors = embedder.encode(document_texts(passages), on_progress=on_progress)
        dims = int(vectors.shape[1]) if vectors is not None else None
        _call(
            "creating the index",
            lambda: es.indices.create(
                index=name,
                mappings=kb_mapping(features, dims, version, embedding_model),
                settings={
                    "number_of_shards": 1,
                    "number_of_replicas": 0,
                    "refresh_interval": "-1",
                    "analysis": features.analysis_settings(),
                },
            ),
        )

        def documents() -> Iterator[tuple[str, dict[str, Any]]]:
            for row_number, row in enumerate(passages.itertuples(index=False)):
                source = {"passage_id": row.passage_id, "title": row.title, "passage": row.passage}
                if vectors is not None:
                    source[VECTOR_FIELD] = vectors[row_number].tolist()
                yield row.passage_id, source

        try:
            report = bulk_index(es, name, documents(), len(passages), on_progress)
            share = report.errors / max(1, len(passages))
            if share > max_error_share:
                raise BulkIndexingError(
                    f"{report.errors} of {len(passages)} documents failed to index "
                    f"({share:.1%} > {max_error_share:.1%} allowed); e.g. {report.first_errors}"
                )
            es.indices.put_settings(index=name, settings={"refresh_interval": "1s"})
            es.indices.refresh(index=name)
            count = es.count(index=name)["count"]
            if count != report.indexed:
                raise BulkIndexingError(f"{count} documents searchable, {report.indexed} indexed")
            es.indices.put_mapping(
                index=name,
                meta={**kb_mapping(features, dims, version, embedding_model)["_meta"], "complete": True},
            )
        except BaseException:
            es.indices.delete(index=name, ignore_unavailable=True)
            raise
    _swap_alias(es, alias, name)
    mapping = es.indices.get_mapping(index=name)[name]["mappings"]
    stats = es.indices.stats(index=name)["_all"]["primaries"]
    return IndexManifest(
        backend=BACKEND_NAME,
        location=alias,
        version=version,
        documents=int(stats["docs"]["count"]),
        build_seconds=round(time.perf_counter() - started, 3),
        details={
            "index": name,
            "size_bytes": int(stats["store"]["size_in_bytes"]),
            "analyzer": features.analyzer,
            "semantic": mapping["_meta"]["semantic"],
            "embedding_model": mapping["_meta"].get("embedding_model"),
            "hybrid": "rrf retriever" if features.rrf else "client-side rrf",
            "modes": ["bm25", "two_hop"]
            + (["semantic", "hybrid"] if mapping["_meta"]["semantic"] != "none" else []),
            "cluster_version": features.version,
        },
    )


def _swap_alias(es: Elasticsearch, alias: str, name: str) -> None:
    current = _alias_targets(es, alias)
    if current == [name]:
        return
    actions: list[dict[str, Any]] = [{"remove": {"index": old, "alias": alias}} for old in current]
    actions.append({"add": {"index": name, "alias": alias, "is_write_index": True}})
    es.indices.update_aliases(actions=actions)
    versions = sorted(
        (i for i in es.indices.get(index=f"{alias}-v*") if i != name),
        key=lambda i: es.indices.get_settings(index=i)[i]["settings"]["index"]["creation_date"],
    )
    for stale in versions[: max(0, len(versions) - KEEP_OLD_VERSIONS)]:
        es.indices.delete(index=stale, ignore_unavailable=True)


class EsLexicalIndex:
    """BM25 over title and passage as one field set (combined_fields, BM25F)."""

    def __init__(self, es: Elasticsearch, index: str) -> None:
        self._es = es
        self._index = index

    def _query(self, query: str) -> dict[str, Any]:
        return {"combined_fields": {"query": query, "fields": ["title.text", "passage"]}}

    def search(self, query: str, k: int) -> list[SearchHit]:
        return self.search_many([query], k)[0]

    def search_many(self, queries: list[str], k: int) -> list[list[SearchHit]]:
        if not queries:
            return []
        searches: list[dict[str, Any]] = []
        for query in queries:
            searches += [
                {"index": self._index},
                {"query": self._query(query), "size": k, "_source": ["passage_id", "title", "passage"]},
            ]
        responses = _call("searching", lambda: self._es.msearch(searches=searches))["responses"]
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

    def search(self, query: str, k: int) -> list[SearchHit]:
        return self.search_many([query], k)[0]

    def search_many(self, queries: list[str], k: int) -> list[list[SearchHit]]:
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
        responses = _call("searching", lambda: self._es.msearch(searches=searches))["responses"]
        return [_hits(r) for r in responses]


class EsSemanticTextIndex:
    """The cluster's own inference (semantic_text): the query is embedded server-side."""

    def __init__(self, es: Elasticsearch, index: str) -> None:
        self._es = es
        self._index = index

    def search(self, query: str, k: int) -> list[SearchHit]:
        response = _call(
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

    def search(self, query: str, k: int) -> list[SearchHit]:
        if isinstance(self._semantic, EsDenseIndex):
            vector = self._semantic._embedder.encode([query])[0].tolist()
            second: dict[str, Any] = {"knn": {**self._semantic.knn(vector, FUSION_CANDIDATES)}}
        else:
            second = {"standard": {"query": {"semantic": {"field": SEMANTIC_FIELD, "query": query}}}}
        retriever = {
            "rrf": {
                "retrievers": [{"standard": {"query": self._lexical._query(query)}}, second],
                "rank_window_size": max(k, FUSION_CANDIDATES),
                "rank_constant": DEFAULT_RRF_K,
            }
        }
        return _hits(
            _call("searching", lambda: self._es.search(index=self._index, retriever=retriever, size=k))
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
) -> Callable[[str], SearchIndex]:
    """A function from retrieval mode to search index over the index the manifest names."""
    index = manifest.details["index"]  # the version the manifest names, not whatever the alias holds now
    if not _call("opening the index", lambda: es.indices.exists(index=index)):
        raise ElasticsearchUnavailableError(
            f"Elasticsearch index {index} (alias {manifest.location}) is missing; materialize kb_index"
        )
    lexical = EsLexicalIndex(es, index)
    semantic_kind = manifest.details.get("semantic")
    semantic: SearchIndex | None = None
    if semantic_kind == "semantic_text":
        semantic = EsSemanticTextIndex(es, index)
    elif semantic_kind == "dense_vector":
        semantic = EsDenseIndex(es, index, load_embedder(manifest.details["embedding_model"]))
    catalog: list[TitleCatalog] = []

    def for_mode(mode: str) -> SearchIndex:
        if mode == "bm25":
            return lexical
        if mode == "two_hop":
            if not catalog:
                catalog.append(TitleCatalog(read_all_passages(es, index)))
            base = for_mode("hybrid") if semantic is not None else lexical
            return TwoHopIndex(base, catalog[0])
        if semantic is None:
            raise ModeUnavailableError(
                f"retrieval mode '{mode}' needs a semantic field, and index {index} has none: build "
                "kb_index with an embedding model, or on a cluster with an inference endpoint"
            )
        if mode == "semantic":
            return semantic
        if mode == "hybrid":
            if features.rrf:
                log.info("hybrid retrieval: Elasticsearch rrf retriever")
                return EsRrfIndex(es, index, lexical, semantic)
            log.info("hybrid retrieval: client-side reciprocal rank fusion (no rrf retriever)")
            return FusedIndex(lexical, semantic)
        raise ModeUnavailableError(f"unknown retrieval mode '{mode}'")

    return for_mode


TEXT_FIELDS = ("question", "answer", "ground_truth", "error")
RECORD_MAPPING: dict[str, Any] = {
    # strings are keywords (filters, Kibana terms) except the free text fields
    "dynamic_templates": [
        {
            "free_text": {
                "match_mapping_type": "string",
                "match": "|".join(TEXT_FIELDS),
                "match_pattern": "regex",
                "mapping": {"type": "text"},
            }
        },
        {"strings": {"match_mapping_type": "string", "mapping": {"type": "keyword"}}},
        {"scores": {"path_match": "scores.*", "mapping": {"type": "float"}}},
    ],
}


def index_documents(
    es: Elasticsearch, index: str, rows: Sequence[dict[str, Any]], id_fields: Sequence[str]
) -> BulkReport:
    """Upsert rows (judgement list, eval results) with ids derived from ``id_fields``: re-running
    overwrites the same documents instead of adding copies."""
    if not _call("checking the index", lambda: es.indices.exists(index=index)):
        es.indices.create(index=index, mappings=RECORD_MAPPING, settings={"number_of_replicas": 0})

    def documents() -> Iterator[tuple[str, dict[str, Any]]]:
        for row in rows:
            yield ":".join(str(row[f]) for f in id_fields), row

    report = bulk_index(es, index, documents(), len(rows))
    es.indices.refresh(index=index)
    return report
