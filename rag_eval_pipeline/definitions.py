"""The one Definitions object: every asset, check, job and resource (workspace.yaml points here)."""

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
)
from rag_eval_pipeline.defs.checks import ASSET_CHECKS
from rag_eval_pipeline.defs.io_manager import ArtifactIOManager
from rag_eval_pipeline.defs.partitions import answer_model_partitions
from rag_eval_pipeline.defs.resources import KnowledgeBaseResource

KNOWLEDGE_BASE_ASSETS = [hotpotqa_raw, kb_passages, kb_index, judgement_list]
EVALUATION_ASSETS = [candidate_answers, judge_scores, metric_summary]

knowledge_base_job = dg.define_asset_job(
    "knowledge_base_job",
    selection=dg.AssetSelection.assets(*KNOWLEDGE_BASE_ASSETS),
    description="Sample the questions and (re)build the knowledge base and its index.",
)
evaluation_job = dg.define_asset_job(
    "evaluation_job",
    selection=dg.AssetSelection.assets(*EVALUATION_ASSETS),
    partitions_def=answer_model_partitions,
    description="Answer, judge and summarize one answer-model partition.",
)
comparison_job = dg.define_asset_job(
    "comparison_job",
    selection=dg.AssetSelection.assets(model_comparison),
    description="Put every answer model's metrics side by side.",
)


def build_definitions(knowledge_base: KnowledgeBaseResource | None = None) -> dg.Definitions:
    """The code location; the CLI passes its own resource settings (e.g. an embedding model)."""
    return dg.Definitions(
        assets=[*KNOWLEDGE_BASE_ASSETS, *EVALUATION_ASSETS, model_comparison],
        asset_checks=ASSET_CHECKS,
        jobs=[knowledge_base_job, evaluation_job, comparison_job],
        resources={
            "io_manager": ArtifactIOManager(),
            "knowledge_base": knowledge_base or KnowledgeBaseResource(),
        },
    )


defs = build_definitions()
