"""Plain records in Elasticsearch (the judgement list, every scored case) for Kibana dashboards,
as in the Elastic LLM-as-a-judge article: upserted by deterministic ids."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from elasticsearch import BadRequestError, Elasticsearch

from rag_eval_pipeline.retrieval.elasticsearch.build import BulkReport, bulk_index
from rag_eval_pipeline.retrieval.elasticsearch.cluster import create_index, es_call

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
    if not es_call("checking the index", lambda: es.indices.exists(index=index)):
        try:
            create_index(es, index, mappings=RECORD_MAPPING, settings={"number_of_replicas": 0})
        except BadRequestError as err:
            if err.error != "resource_already_exists_exception":
                raise  # another partition of a parallel backfill created it first: fine

    def documents() -> Iterator[tuple[str, dict[str, Any]]]:
        for row in rows:
            yield ":".join(str(row[f]) for f in id_fields), row

    report = bulk_index(es, index, documents(), len(rows))
    es.indices.refresh(index=index)
    return report
