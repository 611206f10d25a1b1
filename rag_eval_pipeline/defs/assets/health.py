"""Knowledge-base health of one answer model's evaluation: which questions the documents cannot
answer, which documents are out of date, which topics the failures gather in."""

from pathlib import Path

import dagster as dg
from pydantic import Field

from rag_eval_pipeline.defs.io_manager import COLUMNS, FAN_IN
from rag_eval_pipeline.defs.metadata import kb_health_metadata
from rag_eval_pipeline.defs.names import (
    CANDIDATE_ANSWERS,
    EVALUATION,
    JUDGE_SCORES,
    JUDGEMENT_LIST,
    KB_HEALTH,
    KB_PASSAGES,
    PRODUCTION_SAMPLE,
    USER_DOCUMENTS,
)
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


EVALUATION_INPUTS = (CANDIDATE_ANSWERS, JUDGE_SCORES, JUDGEMENT_LIST, KB_PASSAGES, USER_DOCUMENTS)


def build_kb_health(with_production: bool) -> dg.AssetsDefinition:
    """``kb_health``; where the file has a production section, it also reads every daily
    production sample held (a fan-in over the days, only their questions) to compare the
    judgement list with real traffic."""
    ins = {name: dg.AssetIn() for name in EVALUATION_INPUTS}
    if with_production:
        ins[PRODUCTION_SAMPLE] = dg.AssetIn(
            partition_mapping=dg.AllPartitionMapping(),
            metadata={"allow_missing_partitions": True, FAN_IN: True, COLUMNS: SAMPLE_COLUMNS},
        )

    @dg.asset(
        name=KB_HEALTH,
        group_name=EVALUATION,
        partitions_def=answer_model_partitions,
        code_version="3",  # 3: the reference read by its numbers and sentences
        ins=ins,
    )
    def kb_health(
        context: dg.AssetExecutionContext, config: KbHealthConfig, documents: DocumentsResource, **inputs
    ) -> dict:
        """Each case's gap label (knowledge_gap, retrieval_miss, outdated, conflict, covered)
        with its evidence, each document's status (current, superseded, expired), use and
        ghosts, the flagged questions' topics ranked by frequency x severity and, with a
        production section, how like its daily samples the judgement list is."""
        source = documents.load().passages["passage_id"].tolist() if documents.folder.is_dir() else None
        samples = inputs.get(PRODUCTION_SAMPLE)
        production, production_source = sampled_production(samples) if samples is not None else (None, "")
        health = assess(
            with_document_times(inputs[KB_PASSAGES], inputs[USER_DOCUMENTS]),
            case_inputs(inputs[CANDIDATE_ANSWERS], inputs[JUDGE_SCORES], inputs[JUDGEMENT_LIST]),
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

    return kb_health
