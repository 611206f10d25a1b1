"""Assets that exist when the knowledge base lives in Elasticsearch: the judgement list and every
scored case as indices, for Kibana dashboards as in the Elastic LLM-as-a-judge article."""

import dagster as dg
import pandas as pd

from rag_eval_pipeline.defs.names import ELASTICSEARCH
from rag_eval_pipeline.defs.partitions import answer_model_partitions
from rag_eval_pipeline.defs.resources import KnowledgeBaseResource
from rag_eval_pipeline.reporting.results import eval_result_documents
from rag_eval_pipeline.retrieval.base import IndexManifest


@dg.asset(group_name=ELASTICSEARCH, code_version="1")
def es_judgement_list(
    context: dg.AssetExecutionContext, judgement_list: pd.DataFrame, knowledge_base: KnowledgeBaseResource
) -> dict:
    """The judgement list as the ``hotpot-judgement-list`` index (one document per question)."""
    es, _ = knowledge_base.knowledge_base.es()
    index = knowledge_base.spec.index_names.judgement_list
    rows = [
        {
            "qid": r["qid"],
            "question": r["question"],
            "answer": r["answer"],
            "type": r["type"],
            "level": r["level"],
            "gold_titles": list(r["gold_titles"]),
        }
        for r in judgement_list.to_dict(orient="records")
    ]
    from rag_eval_pipeline.retrieval.elasticsearch.records import index_documents  # the client

    report = index_documents(es, index, rows, id_fields=["qid"])
    documents = es.count(index=index)["count"]
    context.add_output_metadata(
        {"index": index, "indexed": report.indexed, "errors": report.errors, "documents": documents}
    )
    return {"index": index, "documents": documents, "errors": report.errors}


@dg.asset(group_name=ELASTICSEARCH, partitions_def=answer_model_partitions, code_version="1")
def eval_results(
    context: dg.AssetExecutionContext,
    candidate_answers: pd.DataFrame,
    judge_scores: pd.DataFrame,
    judgement_list: pd.DataFrame,
    kb_index: IndexManifest,
    knowledge_base: KnowledgeBaseResource,
) -> dict:
    """Every scored case of this answer model in the ``eval-results`` index; ids are
    model:judge:question, so re-materializing overwrites instead of duplicating."""
    es, _ = knowledge_base.knowledge_base.es()
    index = knowledge_base.spec.index_names.eval_results
    documents = eval_result_documents(
        context.partition_key, candidate_answers, judge_scores, judgement_list, kb_index.version
    )
    from rag_eval_pipeline.retrieval.elasticsearch.records import index_documents  # the client

    report = index_documents(es, index, documents, id_fields=["answer_model", "judge_id", "qid"])
    in_index = es.count(index=index, query={"term": {"answer_model": context.partition_key}})["count"]
    context.add_output_metadata(
        {"index": index, "indexed": report.indexed, "errors": report.errors, "documents_for_model": in_index}
    )
    return {"index": index, "documents": in_index, "errors": report.errors}
