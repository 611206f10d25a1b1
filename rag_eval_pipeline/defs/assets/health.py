"""Knowledge-base health of one answer model's evaluation: which questions the documents cannot
answer, which documents are out of date, which topics the failures gather in."""

from pathlib import Path

import dagster as dg
import pandas as pd
from pydantic import Field

from rag_eval_pipeline.defs.io_manager import COLUMNS, FAN_IN
from rag_eval_pipeline.defs.metadata import kb_health_metadata
from rag_eval_pipeline.defs.names import EVALUATION, KB_HEALTH, PRODUCTION_SAMPLE
from rag_eval_pipeline.defs.partitions import answer_model_partitions
from rag_eval_pipeline.defs.resources import DocumentsResource
from rag_eval_pipeline.health.assess import (
    HealthSettings,
    assess,
    case_inputs,
    health_record,
    with_document_times,
)
from rag_eval_pipeline.health.summary import RATES
from rag_eval_pipeline.health.traffic import SAMPLE_COLUMNS, sampled_production

# the knowledge base's reading (term index, conflicts) kept for the runs of other processes
READING_FOLDER = "kb_health_reading"


class KbHealthConfig(dg.Config):
    as_of: str | None = Field(
        default=None, description="The day documents are judged current on (YYYY-MM-DD); unset: today (UTC)."
    )
    max_topics: int = Field(default=8, description="Most topics the flagged questions are grouped into.")


def _kb_health(
    context: dg.AssetExecutionContext,
    config: KbHealthConfig,
    inputs: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame],
    documents: DocumentsResource,
    production_sample: dict[str, pd.DataFrame] | None,
) -> dict:
    candidate_answers, judge_scores, judgement_list, kb_passages, user_documents = inputs
    source = documents.load().passages["passage_id"].tolist() if documents.folder.is_dir() else None
    production, production_source = (
        sampled_production(production_sample) if production_sample is not None else (None, "")
    )
    health = assess(
        with_document_times(kb_passages, user_documents),
        case_inputs(candidate_answers, judge_scores, judgement_list),
        source,
        production,
        settings=HealthSettings(as_of=config.as_of, max_topics=config.max_topics),
        reading_folder=Path(context.instance.storage_directory()) / READING_FOLDER,
        production_source=production_source,
    )
    for problem in health.problems:
        context.log.warning(f"documents: {problem}")
    record = health_record(health, context.partition_key)
    context.add_output_metadata(kb_health_metadata(record, RATES))
    return record


def build_kb_health(with_production: bool) -> dg.AssetsDefinition:
    """``kb_health``; where the file has a production section, it also reads every daily
    production sample held (a fan-in over the days, only their questions) to compare the
    judgement list with real traffic."""
    if not with_production:

        @dg.asset(
            name=KB_HEALTH, group_name=EVALUATION, partitions_def=answer_model_partitions, code_version="2"
        )
        def kb_health(
            context: dg.AssetExecutionContext,
            config: KbHealthConfig,
            candidate_answers: pd.DataFrame,
            judge_scores: pd.DataFrame,
            judgement_list: pd.DataFrame,
            kb_passages: pd.DataFrame,
            user_documents: pd.DataFrame,
            documents: DocumentsResource,
        ) -> dict:
            """Each case's gap label (knowledge_gap, retrieval_miss, outdated, conflict, covered)
            with its evidence, each document's status (current, superseded, expired), use and
            ghosts, and the flagged questions' topics ranked by frequency x severity."""
            inputs = (candidate_answers, judge_scores, judgement_list, kb_passages, user_documents)
            return _kb_health(context, config, inputs, documents, None)

        return kb_health

    @dg.asset(
        name=KB_HEALTH,
        group_name=EVALUATION,
        partitions_def=answer_model_partitions,
        code_version="3",
        ins={
            PRODUCTION_SAMPLE: dg.AssetIn(
                partition_mapping=dg.AllPartitionMapping(),
                metadata={"allow_missing_partitions": True, FAN_IN: True, COLUMNS: SAMPLE_COLUMNS},
            )
        },
    )
    def kb_health_with_traffic(
        context: dg.AssetExecutionContext,
        config: KbHealthConfig,
        candidate_answers: pd.DataFrame,
        judge_scores: pd.DataFrame,
        judgement_list: pd.DataFrame,
        kb_passages: pd.DataFrame,
        user_documents: pd.DataFrame,
        documents: DocumentsResource,
        production_sample: dict[str, pd.DataFrame],
    ) -> dict:
        """Each case's gap label (knowledge_gap, retrieval_miss, outdated, conflict, covered)
        with its evidence, each document's status (current, superseded, expired), use and
        ghosts, the flagged questions' topics ranked by frequency x severity, and how like the
        daily production samples the judgement list is (divergence, blind spots, proposals)."""
        inputs = (candidate_answers, judge_scores, judgement_list, kb_passages, user_documents)
        return _kb_health(context, config, inputs, documents, production_sample)

    return kb_health_with_traffic
