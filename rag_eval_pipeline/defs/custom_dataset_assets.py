"""The knowledge base and judgement list of a custom dataset (``dataset.kind: custom``): the
user's documents and questions take the place of HotpotQA's, under the same asset keys."""

import dagster as dg
import pandas as pd

from rag_eval_pipeline.data.hotpotqa import sample_questions
from rag_eval_pipeline.data.judgement_file import read_judgement_file
from rag_eval_pipeline.data.knowledge_base import PASSAGE_COLUMNS
from rag_eval_pipeline.defs.resources import DocumentsResource, SettingsResource
from rag_eval_pipeline.metrics.freshness import judgement_list_version

KNOWLEDGE_BASE = "knowledge_base"


@dg.asset(name="kb_passages", group_name=KNOWLEDGE_BASE, code_version="custom-1")
def custom_kb_passages(
    context: dg.AssetExecutionContext, user_documents: pd.DataFrame, documents: DocumentsResource
) -> pd.DataFrame:
    """The knowledge base of a custom dataset: the user's documents (chunked if configured)."""
    if user_documents.empty:
        raise ValueError(f"no readable documents in {documents.folder}: the knowledge base would be empty")
    context.add_output_metadata(
        {"distinct_passages": len(user_documents), "documents_folder": documents.folder}
    )
    return user_documents[PASSAGE_COLUMNS].reset_index(drop=True)


@dg.asset(name="judgement_list", group_name=KNOWLEDGE_BASE, code_version="custom-1")
def custom_judgement_list(
    context: dg.AssetExecutionContext, kb_passages: pd.DataFrame, settings: SettingsResource
) -> pd.DataFrame:
    """The user's questions, validated against the knowledge base (every problem named with its
    file and line). Without relevance labels the reference retrieval metrics are absent."""
    dataset = settings.settings.dataset
    cases = read_judgement_file(dataset.questions or "", kb_passages)
    sample = sample_questions(cases, dataset.sample_size, dataset.selection, dataset.seed)  # type: ignore[arg-type]
    labelled = int(sample["gold_titles"].map(len).gt(0).sum())
    context.add_output_metadata(
        {
            "source": str(dataset.questions),
            "cases": len(sample),
            "with_relevance_labels": labelled,
            "tags": dg.MetadataValue.json(sample["tags"].explode().value_counts().to_dict()),
        }
    )
    context.set_data_version(context.asset_key, dg.DataVersion(judgement_list_version(sample)))
    return sample
