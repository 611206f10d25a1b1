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
)
from rag_eval_pipeline.defs.checks import ASSET_CHECKS
from rag_eval_pipeline.defs.io_manager import ArtifactIOManager
from rag_eval_pipeline.defs.partitions import answer_model_partitions
from rag_eval_pipeline.defs.resources import AnthropicResource, KnowledgeBaseResource

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


def default_anthropic(**settings: Any) -> AnthropicResource:
    """The API key is bound through EnvVar when the environment has one; without it the
    definitions still load and offline models run (a Claude model then fails with a clear error)."""
    if "ANTHROPIC_API_KEY" in os.environ:
        settings["api_key"] = dg.EnvVar("ANTHROPIC_API_KEY")
    return AnthropicResource(**settings)


def build_definitions(
    knowledge_base: KnowledgeBaseResource | None = None,
    anthropic: AnthropicResource | None = None,
) -> dg.Definitions:
    """The code location; the CLI and tests pass their own resource settings."""
    return dg.Definitions(
        assets=[*KNOWLEDGE_BASE_ASSETS, *EVALUATION_ASSETS, model_comparison],
        asset_checks=ASSET_CHECKS,
        jobs=[knowledge_base_job, evaluation_job, comparison_job],
        resources={
            "io_manager": ArtifactIOManager(),
            "knowledge_base": knowledge_base or KnowledgeBaseResource(),
            "anthropic": anthropic or default_anthropic(),
        },
    )


defs = build_definitions()
