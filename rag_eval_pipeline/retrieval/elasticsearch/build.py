"""Building the knowledge-base index in Elasticsearch: a new versioned index, bulk loaded, then
the alias swapped to it in one atomic step. A failed or partial build never reaches the alias."""

from __future__ import annotations

import base64
import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from elasticsearch import Elasticsearch, NotFoundError, helpers

from rag_eval_pipeline.language.table import ENGLISH
from rag_eval_pipeline.retrieval.base import (
    IndexManifest,
    RetrievalMode,
    content_version,
    document_texts,
    passage_languages,
)
from rag_eval_pipeline.retrieval.elasticsearch.cluster import (
    BACKEND_NAME,
    SHARD_WAIT_S,
    EsFeatures,
    LanguageAnalysis,
    create_index,
    es_call,
    language_analyses,
)
from rag_eval_pipeline.retrieval.embedder import NO_VECTORS, Embedder, unread_languages

log = logging.getLogger(__name__)

MAPPING_VERSION = "2"  # 2: a field per language beside the knowledge base's main one
VECTOR_FIELD = "passage_vector"
SEMANTIC_FIELD = "passage_semantic"
KEEP_OLD_VERSIONS = 1  # the previous version stays for rollback; older ones are deleted


class BulkIndexingError(RuntimeError):
    """Too many documents failed to index; the new index was dropped, the live one untouched."""


def index_version(
    passages: pd.DataFrame,
    embedding_model: str | None,
    features: EsFeatures,
    analyses: dict[str, LanguageAnalysis] | None = None,
) -> str:
    chosen = ",".join(f"{code}:{a.analyzer}" for code, a in sorted((analyses or {}).items()))
    settings = [
        BACKEND_NAME,
        MAPPING_VERSION,
        embedding_model,
        features.analyzer,
        features.inference_id,
        chosen,
    ]
    return content_version(passages, "/".join(str(part) for part in settings))


@dataclass(frozen=True)
class LanguageFields:
    """Where each language's text is searched: the main language (most passages) in ``passage``
    and ``title.text``; every other in ``passage_in_<code>`` and ``title.text_<code>``, analysed
    its own way."""

    main: str
    analyses: dict[str, LanguageAnalysis]

    @classmethod
    def of(cls, passages: pd.DataFrame, es: Elasticsearch, features: EsFeatures) -> LanguageFields:
        counts = pd.Series(passage_languages(passages)).value_counts()
        codes = [str(code) for code in counts.index] or [ENGLISH]
        return cls(codes[0], language_analyses(es, features, codes))

    @property
    def others(self) -> list[str]:
        return [code for code in self.analyses if code != self.main]

    def analysis_settings(self) -> dict[str, Any]:
        defined = {a.analyzer: a.definition for a in self.analyses.values() if a.definition is not None}
        return {"analyzer": defined} if defined else {}

    def said(self) -> str:
        return "; ".join(f"{code}: {a.said}" for code, a in self.analyses.items())


def vector_value(vector: np.ndarray, features: EsFeatures) -> str | list[float]:
    if features.base64_vectors:
        return base64.b64encode(vector.astype(">f4").tobytes()).decode("ascii")
    return vector.tolist()


def bulk_load_settings(features: EsFeatures, fields: LanguageFields | None = None) -> dict[str, Any]:
    """What a knowledge-base index is created with: one shard, no replicas, and no refresh until
    the load is done (the build turns refresh back on before the index goes live)."""
    return {
        "number_of_shards": 1,
        "number_of_replicas": 0,
        "refresh_interval": "-1",
        "analysis": fields.analysis_settings() if fields is not None else features.analysis_settings(),
    }


def kb_mapping(
    features: EsFeatures,
    dims: int | None,
    version: str,
    embedding_model: str | None,
    fields: LanguageFields | None = None,
) -> dict[str, Any]:
    """The Elastic LLM-as-a-judge article's layout: title (keyword, with a text subfield),
    passage (text, copy_to the semantic field), and the semantic field as semantic_text,
    dense_vector, or absent; each language beside the main one in fields of its own."""
    main = fields.analyses[fields.main].analyzer if fields is not None else features.analyzer
    passage: dict[str, Any] = {"type": "text", "analyzer": main}
    title_fields: dict[str, Any] = {"text": {"type": "text", "analyzer": main}}
    properties: dict[str, Any] = {
        "passage_id": {"type": "keyword"},
        "title": {"type": "keyword", "fields": title_fields},
        "passage": passage,
    }
    for code in fields.others if fields is not None else []:
        analyzer = fields.analyses[code].analyzer  # type: ignore[union-attr]
        title_fields[f"text_{code}"] = {"type": "text", "analyzer": analyzer}
        properties[f"passage_in_{code}"] = {"type": "text", "analyzer": analyzer}
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
            "main_language": fields.main if fields is not None else ENGLISH,
            "language_fields": fields.others if fields is not None else [],
        },
        # a language's own copy of a passage is searched, never returned
        "_source": {"excludes": ["passage_in_*"]},
        "properties": properties,
    }


@dataclass
class BulkReport:
    indexed: int = 0
    errors: int = 0
    first_errors: list[str] = field(default_factory=list)


BULK_THREADS = 2  # bulk requests in flight: the cluster indexes one chunk while the next is sent


def bulk_index(
    es: Elasticsearch,
    index: str,
    documents: Iterator[tuple[str, dict[str, Any]]],
    total: int,
    on_progress: Callable[[int, int], None] | None = None,
    chunk_size: int = 500,
    threads: int | None = None,
) -> BulkReport:
    """Bulk requests from ``threads`` threads drawing on one stream of documents, each through
    ``helpers.streaming_bulk`` (retries with backoff on 429); per-document errors are counted.
    Progress is reported from the calling thread."""
    threads = threads or BULK_THREADS
    report = BulkReport()
    source = iter(documents)
    source_lock, report_lock = threading.Lock(), threading.Lock()

    def shared_actions() -> Iterator[dict[str, Any]]:
        while True:
            with source_lock:
                try:
                    doc_id, body = next(source)
                except StopIteration:
                    return
            yield {"_index": index, "_id": doc_id, "_source": body}

    def send() -> None:
        for ok, item in helpers.streaming_bulk(
            es,
            shared_actions(),
            chunk_size=chunk_size,
            raise_on_error=False,
            raise_on_exception=False,
            max_retries=3,
        ):
            with report_lock:
                if ok:
                    report.indexed += 1
                else:
                    report.errors += 1
                    if len(report.first_errors) < 3:
                        report.first_errors.append(str(item)[:300])

    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="bulk") as pool:
        pending = {pool.submit(send) for _ in range(threads)}
        while pending:
            done, pending = wait(pending, timeout=0.5)
            for future in done:
                future.result()  # a connection error ends the build (nothing goes live)
            if on_progress is not None:
                on_progress(report.indexed + report.errors, total)
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
    shard_wait_s: float = SHARD_WAIT_S,
) -> IndexManifest:
    """Index the passages into a new versioned index, then point the alias at it in one atomic
    step. A failed or partial build is deleted and never reaches the alias; an index of the same
    version that is complete is reused."""
    started = time.perf_counter()
    fields = LanguageFields.of(passages, es, features)
    log.info("Elasticsearch analysis by language: %s", fields.said())
    embedding_model = None if features.inference_id else (embedder.model_id if embedder else None)
    languages = {str(k): int(v) for k, v in pd.Series(passage_languages(passages)).value_counts().items()}
    unread = unread_languages(embedding_model, languages) if embedding_model else None
    if unread:
        embedding_model = None  # the semantic modes say why, rather than rank noise
    version = index_version(passages, embedding_model, features, fields.analyses)
    name = _physical_name(alias, version)
    if es_call("checking the index", lambda: es.indices.exists(index=name)):
        meta = es.indices.get_mapping(index=name)[name]["mappings"].get("_meta", {})
        if not meta.get("complete"):
            es.indices.delete(index=name)  # a partial build: never live, start again
    if not es.indices.exists(index=name):
        vectors = None
        if embedding_model is not None and embedder is not None:
            vectors = embedder.encode(document_texts(passages), on_progress=on_progress)
        mapping = kb_mapping(
            features, int(vectors.shape[1]) if vectors is not None else None, version, embedding_model, fields
        )
        settings = bulk_load_settings(features, fields)
        create_index(es, name, mappings=mapping, settings=settings, shard_wait_s=shard_wait_s)
        try:
            documents = _documents(passages, fields, vectors, features)
            report = bulk_index(es, name, documents, len(passages), on_progress)
            _make_live_ready(es, name, report, len(passages), max_error_share, mapping["_meta"])
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
            "analyzer": fields.analyses[fields.main].analyzer,
            "analyzers": {code: a.said for code, a in fields.analyses.items()},
            "languages": languages,
            "main_language": mapping["_meta"].get("main_language", ENGLISH),
            "language_fields": mapping["_meta"].get("language_fields", []),
            **({NO_VECTORS: unread} if unread else {}),
            "semantic": mapping["_meta"]["semantic"],
            "embedding_model": mapping["_meta"].get("embedding_model"),
            "hybrid": "rrf retriever" if features.rrf else "client-side rrf",
            "modes": RetrievalMode.available(has_vectors=mapping["_meta"]["semantic"] != "none"),
            "cluster_version": features.version,
        },
    )


def _documents(
    passages: pd.DataFrame, fields: LanguageFields, vectors: np.ndarray | None, features: EsFeatures
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each passage as a document: a passage outside the main language also in its language's
    field, and its vector when the index holds vectors."""
    codes = passage_languages(passages)
    for row_number, row in enumerate(passages.itertuples(index=False)):
        source = {"passage_id": row.passage_id, "title": row.title, "passage": row.passage}
        if codes[row_number] != fields.main:
            source[f"passage_in_{codes[row_number]}"] = row.passage
        if vectors is not None:
            source[VECTOR_FIELD] = vector_value(vectors[row_number], features)
        yield row.passage_id, source


def _make_live_ready(
    es: Elasticsearch, name: str, report: BulkReport, total: int, max_error_share: float, meta: dict[str, Any]
) -> None:
    """After the load: too many failed documents or fewer searchable than indexed is an error;
    otherwise refresh is turned back on and the index is marked complete (ready for the alias)."""
    share = report.errors / max(1, total)
    if share > max_error_share:
        raise BulkIndexingError(
            f"{report.errors} of {total} documents failed to index "
            f"({share:.1%} > {max_error_share:.1%} allowed); e.g. {report.first_errors}"
        )
    es.indices.put_settings(index=name, settings={"refresh_interval": "1s"})
    es.indices.refresh(index=name)
    count = es.count(index=name)["count"]
    if count != report.indexed:
        raise BulkIndexingError(f"{count} documents searchable, {report.indexed} indexed")
    es.indices.put_mapping(index=name, meta={**meta, "complete": True})


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
