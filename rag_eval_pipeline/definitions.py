"""The one Definitions object: every asset, check, job and resource (workspace.yaml points here)."""

import os
from typing import Any

import dagster as dg

from rag_eval_pipeline.defs.assets import (
    candidate_answers,
    hotpotqa_raw,
    judge_scores,
    judgement_list,
    kb_index,
    kb_passages,
    metric_summary,
    model_comparison,
    user_documents,
)
from rag_eval_pipeline.defs.checks import ASSET_CHECKS
from rag_eval_pipeline.defs.elasticsearch_assets import es_judgement_list, eval_results
from rag_eval_pipeline.defs.io_manager import ArtifactIOManager
from rag_eval_pipeline.defs.partitions import answer_model_partitions
from rag_eval_pipeline.defs.reporting_assets import (
    eval_report,
    judge_validation,
    paired_comparison,
    prometheus_metrics,
)
from rag_eval_pipeline.defs.resources import (
    AnthropicResource,
    DocumentsResource,
    ElasticsearchResource,
    HistoryResource,
    KnowledgeBaseResource,
    MonitoringResource,
    QualityGatesResource,
)
from rag_eval_pipeline.defs.sensors import build_sensors

KNOWLEDGE_BASE_ASSETS = [hotpotqa_raw, user_documents, kb_passages, kb_index, judgement_list]
EVALUATION_ASSETS = [candidate_answers, judge_scores, metric_summary]
REPORTING_ASSETS = [paired_comparison, judge_validation, eval_report, prometheus_metrics]


def _jobs(knowledge_base_assets: list, evaluation_assets: list) -> list:
    return [
        dg.define_asset_job(
            "knowledge_base_job",
            selection=dg.AssetSelection.assets(*knowledge_base_assets),
            description="Sample the questions and (re)build the knowledge base and its index.",
        ),
        dg.define_asset_job(
            "evaluation_job",
            selection=dg.AssetSelection.assets(*evaluation_assets),
            partitions_def=answer_model_partitions,
            description="Answer, judge and summarize one answer-model partition.",
        ),
        dg.define_asset_job(
            "comparison_job",
            selection=dg.AssetSelection.assets(model_comparison, *REPORTING_ASSETS),
            description="Compare every answer model, validate the judges, write the report and "
            "the Prometheus metrics.",
        ),
    ]


def default_anthropic(**settings: Any) -> AnthropicResource:
    """The API key is bound through EnvVar when the environment has one; without it the
    definitions still load and offline models run (a Claude model then fails with a clear error)."""
    if "ANTHROPIC_API_KEY" in os.environ:
        settings["api_key"] = dg.EnvVar("ANTHROPIC_API_KEY")
    return AnthropicResource(**settings)


def default_knowledge_base(**settings: Any) -> KnowledgeBaseResource:
    """The one switch: ELASTICSEARCH_URL (or ELASTICSEARCH_CLOUD_ID) in the environment puts the
    knowledge base in Elasticsearch, with ELASTICSEARCH_API_KEY or ELASTICSEARCH_USERNAME and
    ELASTICSEARCH_PASSWORD bound through EnvVar; otherwise the embedded on-disk index."""
    bound = {
        field: dg.EnvVar(variable)
        for field, variable in [
            ("url", "ELASTICSEARCH_URL"),
            ("cloud_id", "ELASTICSEARCH_CLOUD_ID"),
            ("api_key", "ELASTICSEARCH_API_KEY"),
            ("username", "ELASTICSEARCH_USERNAME"),
            ("password", "ELASTICSEARCH_PASSWORD"),
            ("ca_certs", "ELASTICSEARCH_CA_CERTS"),
        ]
        if variable in os.environ
    }
    if "url" in bound or "cloud_id" in bound:
        settings.setdefault("elasticsearch", ElasticsearchResource(**bound))
    return KnowledgeBaseResource(**settings)


def build_definitions(
    knowledge_base: KnowledgeBaseResource | None = None,
    anthropic: AnthropicResource | None = None,
    quality_gates: QualityGatesResource | None = None,
    documents: DocumentsResource | None = None,
    monitoring: MonitoringResource | None = None,
) -> dg.Definitions:
    """The code location; the CLI and tests pass their own resource settings. With an
    Elasticsearch knowledge base, the judgement list and the scored cases are indexed too."""
    knowledge_base = knowledge_base or default_knowledge_base()
    kb_assets, eval_assets = list(KNOWLEDGE_BASE_ASSETS), list(EVALUATION_ASSETS)
    if knowledge_base.backend == "elasticsearch":
        kb_assets.append(es_judgement_list)
        eval_assets.append(eval_results)
    jobs = _jobs(kb_assets, eval_assets)
    return dg.Definitions(
        assets=[*kb_assets, *eval_assets, model_comparison, *REPORTING_ASSETS],
        asset_checks=ASSET_CHECKS,
        jobs=jobs,
        sensors=build_sensors(jobs[0], jobs[1]),
        resources={
            "io_manager": ArtifactIOManager(),
            "knowledge_base": knowledge_base,
            "anthropic": anthropic or default_anthropic(),
            "quality_gates": quality_gates or QualityGatesResource(),
            "documents": documents or DocumentsResource(),
            "history": HistoryResource(),
            "monitoring": monitoring or MonitoringResource(),
        },
    )


defs = build_definitions()
