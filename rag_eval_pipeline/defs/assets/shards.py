"""Case shards (``rag-eval backfill --shards N``): a model's cases answered and judged as N runs
that N workers take at once. Each shard's calls fill the shared response caches; the model's own
partition run then reads every answer and verdict back from them and summarizes all its cases
in one place, so a sharded evaluation's summary is the one a single run gives."""

import warnings

import dagster as dg
import pandas as pd

from rag_eval_pipeline.data.case_shards import CaseShard, all_shards, cases_of
from rag_eval_pipeline.defs.assets.evaluation import (
    JudgeConfig,
    Stage,
    answer_stage,
    build_candidate_answers,
    judge_stage,
)
from rag_eval_pipeline.defs.names import ANSWER_MODEL_PARTITIONS, CASE_SHARD_PARTITIONS, SHARDS
from rag_eval_pipeline.defs.partitions import answer_model_partitions
from rag_eval_pipeline.defs.resources import KnowledgeBaseResource, LLMResource, SettingsResource
from rag_eval_pipeline.retrieval.base import IndexManifest

case_shard_partitions = dg.DynamicPartitionsDefinition(name=CASE_SHARD_PARTITIONS)
model_by_shard = dg.MultiPartitionsDefinition(
    {ANSWER_MODEL_PARTITIONS: answer_model_partitions, CASE_SHARD_PARTITIONS: case_shard_partitions}
)


def shard_partition_key(model: str, shard: CaseShard) -> str:
    """The multi-partition key as Dagster writes it (dimensions in name order, joined by |)."""
    return str(dg.MultiPartitionKey({ANSWER_MODEL_PARTITIONS: model, CASE_SHARD_PARTITIONS: shard.key}))


@dg.asset(group_name=SHARDS, partitions_def=model_by_shard, code_version="1")
def case_shard_scores(
    context: dg.AssetExecutionContext,
    config: JudgeConfig,
    judgement_list: pd.DataFrame,
    kb_index: IndexManifest,
    kb_passages: pd.DataFrame,
    knowledge_base: KnowledgeBaseResource,
    llm: LLMResource,
    settings: SettingsResource,
) -> pd.DataFrame:
    """One shard of one answer model's cases, answered and judged exactly as the model's own run
    does: its scores, and the calls it made, which that run reads back from the cache."""
    keys = context.partition_key.keys_by_dimension  # type: ignore[attr-defined]
    model, shard = keys[ANSWER_MODEL_PARTITIONS], CaseShard.parse(keys[CASE_SHARD_PARTITIONS])
    cases = cases_of(judgement_list, shard)
    context.log.info(
        f"{model}: shard {shard.number} of {shard.count}, {len(cases)} of {len(judgement_list)} cases"
    )
    stage = Stage(context, knowledge_base, llm, settings)
    answers, answered = answer_stage(stage, model, cases, kb_index, kb_passages)
    scores, judged = judge_stage(stage, config, model, answers, cases)
    context.add_output_metadata(
        {
            "answer_model": model,
            "shard": f"{shard.number} of {shard.count}",
            "cases": len(cases),
            "of_cases": len(judgement_list),
            "failed_cases": answered["failed_cases"],
            "answer_calls": answered["api_calls"],
            "answer_cache_hits": answered["cache_hits"],
            **{k: v for k, v in judged.items() if k != "answer_model"},
        }
    )
    return scores


def register_shards(instance: dg.DagsterInstance, count: int) -> list[str]:
    """The shard keys of ``count`` shards (1of4 ... 4of4), registered where they are new."""
    keys = [shard.key for shard in all_shards(count)]
    new = [key for key in keys if not instance.has_dynamic_partition(CASE_SHARD_PARTITIONS, key)]
    if new:
        instance.add_dynamic_partitions(CASE_SHARD_PARTITIONS, new)
    return keys


# a whole backfill ("Materialize all" with every partition) answers each model once: its case
# shards first, on the workers at once, then the model's own run, which reads every call back
# from the caches, as `rag-eval backfill --shards` orders them
# (Dagster's mapping is in beta: its warning would precede every command's output)
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    _each_model_of_its_shards = dg.MultiToSingleDimensionPartitionMapping(
        partition_dimension_name=ANSWER_MODEL_PARTITIONS
    )
candidate_answers_after_shards = build_candidate_answers(
    after=[dg.AssetDep(case_shard_scores, partition_mapping=_each_model_of_its_shards)]
)
