"""The whole asset graph with Elasticsearch as the knowledge base, on a real node."""

import dagster as dg
import pytest
from elasticsearch import Elasticsearch

from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.definitions import build_definitions
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.instance.runs import run_evaluation

pytestmark = pytest.mark.slow  # a real Elasticsearch node

MODELS = ["extractive-baseline", "oracle", "null"]


def test_graph_on_elasticsearch_writes_queryable_results_idempotently(
    es_url, es_prefix, shared_hotpotqa, tmp_path
):
    names = {
        "knowledge_base": f"{es_prefix}-kb",
        "judgement_list": f"{es_prefix}-judgements",
        "eval_results": f"{es_prefix}-results",
    }
    settings = Settings.model_validate(
        {
            "knowledge_base": {
                "backend": "elasticsearch",
                "elasticsearch": {"url": es_url, "index_names": names},
            }
        }
    )
    defs = build_definitions(settings)
    graph = defs.get_repository_def().asset_graph
    assert {"es_judgement_list", "eval_results"} <= {k.to_user_string() for k in graph.get_all_asset_keys()}
    es = Elasticsearch(es_url)

    def counts():
        return (
            es.count(index=names["knowledge_base"])["count"],
            es.count(index=names["judgement_list"])["count"],
            es.count(index=names["eval_results"])["count"],
        )

    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        report = run_evaluation(
            defs, instance, MODELS, dataset=str(shared_hotpotqa), sample=15, echo=lambda _: None
        )
        first = counts()
        run_evaluation(defs, instance, MODELS, dataset=str(shared_hotpotqa), sample=15, echo=lambda _: None)
        second = counts()
        manifest = load_asset(instance, "kb_index")
    assert manifest.backend == "elasticsearch" and manifest.location == names["knowledge_base"]
    assert first == second == (150, 15, 15 * len(MODELS))  # 15 questions x 10 paragraphs, all distinct
    comparison = report.comparison.set_index("answer_model")
    assert comparison.loc["oracle", "correctness"] == 1.0 and comparison.loc["null", "correctness"] == 0.0
    oracle_docs = es.search(
        index=names["eval_results"],
        query={
            "bool": {"filter": [{"term": {"answer_model": "oracle"}}, {"term": {"judge_id": "reference"}}]}
        },
        aggs={"correctness": {"avg": {"field": "scores.correctness"}}},
        size=1,
    )
    assert oracle_docs["hits"]["total"]["value"] == 15
    assert oracle_docs["aggregations"]["correctness"]["value"] == 1.0
    document = oracle_docs["hits"]["hits"][0]["_source"]
    assert {"question", "answer", "ground_truth", "retrieved_titles", "gold_titles", "index_version"} <= set(
        document
    )
