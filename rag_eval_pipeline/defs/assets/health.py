"""Knowledge-base health of one answer model's evaluation: which questions the documents cannot
answer, which documents are out of date, which topics the failures gather in."""

from pathlib import Path

import dagster as dg
import pandas as pd
from pydantic import Field

from rag_eval_pipeline.defs.metadata import kb_health_metadata
from rag_eval_pipeline.defs.names import EVALUATION, KB_HEALTH
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

# the knowledge base's reading (term index, conflicts) kept for the runs of other processes
READING_FOLDER = "kb_health_reading"


class KbHealthConfig(dg.Config):
    as_of: str | None = Field(
        default=None, description="The day documents are judged current on (YYYY-MM-DD); unset: today (UTC)."
    )
    max_topics: int = Field(default=8, description="Most topics the flagged questions are grouped into.")


@dg.asset(name=KB_HEALTH, group_name=EVALUATION, partitions_def=answer_model_partitions, code_version="2")
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
    """Each case's gap label (knowledge_gap, retrieval_miss, outdated, conflict, covered) with its
    evidence, each document's status (current, superseded, expired), use and ghosts, and the
    flagged questions' topics ranked by frequency x severity."""
    source = documents.load().passages["passage_id"].tolist() if documents.folder.is_dir() else None
    health = assess(
        with_document_times(kb_passages, user_documents),
        case_inputs(candidate_answers, judge_scores, judgement_list),
        source,
        settings=HealthSettings(as_of=config.as_of, max_topics=config.max_topics),
        reading_folder=Path(context.instance.storage_directory()) / READING_FOLDER,
    )
    for problem in health.problems:
        context.log.warning(f"documents: {problem}")
    record = health_record(health, context.partition_key)
    context.add_output_metadata(kb_health_metadata(record, RATES))
    return record
