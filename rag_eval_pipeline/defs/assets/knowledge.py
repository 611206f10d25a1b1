"""The knowledge base and the judgement list: a HotpotQA sample (or the user's own questions), the
user's documents, the passages, their index, and the snapshot that publishes them together."""

import dagster as dg
import pandas as pd
from pydantic import Field

from rag_eval_pipeline.data.documents import folder_fingerprint, merge_passages
from rag_eval_pipeline.data.hotpotqa import load_questions, sample_questions
from rag_eval_pipeline.data.images import image_sizes
from rag_eval_pipeline.data.judgement_file import custom_knowledge_base, read_judgement_file
from rag_eval_pipeline.data.knowledge_base import (
    IN_SAMPLE,
    LANGUAGE_ASSUMED,
    QUESTION_FIELDS,
    REFERENCE_PENDING,
    build_judgement_list,
    flatten_passages,
)
from rag_eval_pipeline.data.visual_labels import GOLD_IMAGE_SIZES
from rag_eval_pipeline.defs.assets.progress import progress_logger
from rag_eval_pipeline.defs.io_manager import COLUMNS, PublishSnapshot
from rag_eval_pipeline.defs.metadata import image_list_table, index_metadata
from rag_eval_pipeline.defs.names import (
    DOCUMENTS_FINGERPRINT,
    HOTPOTQA_RAW,
    JUDGEMENT_LIST,
    KB_INDEX,
    KB_PASSAGES,
    KNOWLEDGE,
)
from rag_eval_pipeline.defs.resources import DocumentsResource, KnowledgeBaseResource, SettingsResource
from rag_eval_pipeline.language.table import UNKNOWN
from rag_eval_pipeline.metrics.freshness import judgement_list_version
from rag_eval_pipeline.retrieval.base import IndexManifest


def language_assumed_note(count: int, what: str, names: list[str]) -> str:
    """One line for texts too short to tell their language (they took the most common one)."""
    shown = ", ".join(str(n) for n in names[:5]) + (" ..." if len(names) > 5 else "")
    return (
        f"the language of {count} {what} could not be told from their text and was taken as their "
        f"list's most common ({shown}): set `language` on them, or dataset.language"
    )


def language_unknown_note(count: int, names: list[str]) -> str:
    """One line for cases in a script no detected language writes: recorded as unknown, not as
    a neighbour's language."""
    shown = ", ".join(str(n) for n in names[:5]) + (" ..." if len(names) > 5 else "")
    return (
        f"the language of {count} cases is unknown: their script is one the detector knows no language of "
        f"({shown}); they are read by ICU's word break with no stemmer or lexicon: set `language` "
        "(an ISO 639-1 code) on them, or dataset.language"
    )


class HotpotQASampleConfig(dg.Config):
    """Overrides of the configuration file's dataset section for one run (unset: the file's)."""

    source: str | None = Field(
        default=None,
        description="'bundled' (the 500-question sample shipped in the package), 'hub' (Hugging "
        "Face hotpotqa/hotpot_qa, distractor, validation) or a path to a local HotpotQA file: "
        "original JSON list, or JSONL/parquet in the hub's row format.",
    )
    sample_size: int | None = Field(default=None, description="Questions to evaluate; 0 for all of them.")
    selection: str | None = Field(
        default=None, description="'first' N questions, or 'random' N drawn with `seed`."
    )
    seed: int | None = None


@dg.asset(group_name=KNOWLEDGE, code_version="1")
def hotpotqa_raw(
    context: dg.AssetExecutionContext, config: HotpotQASampleConfig, settings: SettingsResource
) -> pd.DataFrame:
    """A deterministic sample of HotpotQA distractor questions, each with its 10 context paragraphs
    (with knowledge_base.scope all: every question of the file, the sample marked in_sample)."""
    dataset = settings.settings.dataset
    source = config.source or dataset.source
    size = dataset.sample_size if config.sample_size is None else config.sample_size
    selection = config.selection or dataset.selection
    seed = dataset.seed if config.seed is None else config.seed
    questions = load_questions(source)
    sample = sample_questions(questions, size, selection, seed)  # type: ignore[arg-type]
    scope = settings.settings.knowledge_base.scope
    context.add_output_metadata(
        {
            "source": source,
            "questions_available": len(questions),
            "questions_sampled": len(sample),
            "selection": f"{selection} (seed {seed})",
            "knowledge_base_scope": scope,
            "types": dg.MetadataValue.json(sample["type"].value_counts().to_dict()),
        }
    )
    if scope == "all":  # every question's paragraphs build the knowledge base; the sample is marked
        return questions.assign(**{IN_SAMPLE: questions["qid"].isin(set(sample["qid"]))})
    return sample


@dg.asset(group_name=KNOWLEDGE, code_version="1")
def user_documents(context: dg.AssetExecutionContext, documents: DocumentsResource) -> pd.DataFrame:
    """The user's own documents from the documents folder; malformed files are reported and skipped."""
    loaded = documents.load()
    for problem in loaded.problems:
        context.log.warning(f"skipped: {problem}")
    if loaded.assumed_language:
        context.log.warning(
            language_assumed_note(len(loaded.assumed_language), "documents", loaded.assumed_language)
        )
    context.add_output_metadata(
        {
            "folder": str(documents.folder),
            "files": len(loaded.versions),
            # what the new-documents sensor's first tick compares the folder with
            DOCUMENTS_FINGERPRINT: folder_fingerprint(loaded.versions),
            "passages": len(loaded.passages),
            "languages": dg.MetadataValue.json(loaded.passages["language"].value_counts().to_dict()),
            "skipped": dg.MetadataValue.md("\n".join(f"- {p}" for p in loaded.problems) or "none"),
        }
    )
    return loaded.passages


@dg.asset(group_name=KNOWLEDGE, code_version="1")
def image_catalog(context: dg.AssetExecutionContext, documents: DocumentsResource) -> pd.DataFrame:
    """The images of the documents folder: id (its path there), sha256, width, height, type and
    each one's problems (unreadable, too large, a duplicate), none fatal to the others."""
    catalog = documents.images()
    for problem in catalog.all_problems():
        context.log.warning(f"image: {problem}")
    frame = catalog.frame()
    context.add_output_metadata(
        {
            "images": len(frame),
            "usable": sum(1 for i in catalog.images.values() if i.usable),
            "captioned": int(frame["caption"].astype(bool).sum()) if len(frame) else 0,
            "problems": dg.MetadataValue.md("\n".join(f"- {p}" for p in catalog.all_problems()) or "none"),
            **({"list": image_list_table(frame)} if len(frame) else {}),
        }
    )
    return frame


@dg.asset(group_name=KNOWLEDGE, code_version="2")
def kb_passages(
    context: dg.AssetExecutionContext, hotpotqa_raw: pd.DataFrame, user_documents: pd.DataFrame
) -> pd.DataFrame:
    """Every context paragraph of the sampled questions, one row per title, plus the user's
    documents (which replace a paragraph of the same title): the knowledge base."""
    hotpotqa = flatten_passages(hotpotqa_raw)
    passages = merge_passages(hotpotqa, user_documents)
    context.add_output_metadata(
        {
            "paragraphs_seen": int(hotpotqa_raw["context_titles"].map(len).sum()),
            "hotpotqa_passages": len(hotpotqa),
            "user_documents": len(user_documents),
            "distinct_passages": len(passages),
        }
    )
    return passages


@dg.asset(group_name=KNOWLEDGE, code_version="1")
def kb_index(
    context: dg.AssetExecutionContext, kb_passages: pd.DataFrame, knowledge_base: KnowledgeBaseResource
) -> IndexManifest:
    """The searchable knowledge-base index; its manifest says where it lives and which version it is."""
    manifest = knowledge_base.knowledge_base.build(
        kb_passages, on_progress=progress_logger(context, "embedded")
    )
    analyzers = manifest.details.get("analyzers") or {}
    if analyzers:  # Elasticsearch: which analysis each language got on this node, in one line
        fallback = any(code != "en" and str(said).startswith("standard") for code, said in analyzers.items())
        said = "; ".join(f"{code}: {how}" for code, how in analyzers.items())
        (context.log.warning if fallback else context.log.info)(f"Elasticsearch analysis by language: {said}")
    if manifest.details.get("no_vectors"):
        context.log.warning(f"no vectors: {manifest.details['no_vectors']}")
    context.add_output_metadata(index_metadata(manifest))
    # the content, not the run: a rebuild of the same passages leaves the evaluations fresh
    context.set_data_version(context.asset_key, dg.DataVersion(manifest.version))
    return manifest


@dg.asset(
    group_name=KNOWLEDGE,
    code_version="1",
    # not the paragraphs, most of each question's bytes (0.6 GB of Arrow at 100,000 questions)
    ins={HOTPOTQA_RAW: dg.AssetIn(metadata={COLUMNS: [*QUESTION_FIELDS, IN_SAMPLE]})},
)
def judgement_list(context: dg.AssetExecutionContext, hotpotqa_raw: pd.DataFrame) -> pd.DataFrame:
    """The questions to evaluate, with ground-truth answers and gold supporting titles and facts."""
    cases = build_judgement_list(hotpotqa_raw)
    version = judgement_list_version(cases)
    context.add_output_metadata({"cases": len(cases), "version": version})
    context.set_data_version(context.asset_key, dg.DataVersion(version))
    return cases


@dg.asset(group_name=KNOWLEDGE, code_version="1", deps=[KB_PASSAGES, KB_INDEX, JUDGEMENT_LIST])
def knowledge_base(context: dg.AssetExecutionContext) -> PublishSnapshot:
    """The published knowledge base. It runs only when every knowledge-base asset of its run
    (and their blocking checks) succeeded, and then makes them live together; a rebuild that
    fails half-way leaves the previous snapshot live and readable."""
    context.add_output_metadata({"published_by_run": context.run_id})
    return PublishSnapshot()


@dg.asset(name=KB_PASSAGES, group_name=KNOWLEDGE, code_version="custom-2")
def custom_kb_passages(
    context: dg.AssetExecutionContext,
    user_documents: pd.DataFrame,
    documents: DocumentsResource,
    settings: SettingsResource,
) -> pd.DataFrame:
    """The knowledge base of a custom dataset: the user's documents (chunked if configured) and
    the passages the judgement list's cases carry (a promoted production case's served
    contexts), a document replacing a carried passage of the same title."""
    dataset = settings.settings.dataset
    questions = dataset.questions or ""
    passages, problems = custom_knowledge_base(
        questions, user_documents, documents.chunking, dataset.language, dataset.encoding
    )
    for problem in problems:
        context.log.warning(f"skipped: {problem}")
    if passages.empty:
        raise ValueError(
            f"no readable documents in {documents.folder} and none carried by {questions}: the "
            "knowledge base would be empty"
        )
    context.add_output_metadata(
        {
            "distinct_passages": len(passages),
            "documents_folder": str(documents.folder),
            "carried_by_the_judgement_list": len(passages) - len(user_documents),
            "languages": dg.MetadataValue.json(passages["language"].value_counts().to_dict()),
        }
    )
    return passages


@dg.asset(name=JUDGEMENT_LIST, group_name=KNOWLEDGE, code_version="custom-2")
def custom_judgement_list(
    context: dg.AssetExecutionContext,
    kb_passages: pd.DataFrame,
    image_catalog: pd.DataFrame,
    settings: SettingsResource,
) -> pd.DataFrame:
    """The user's questions, validated against the knowledge base (every problem named with its
    file and line). Without relevance labels the reference retrieval metrics are absent."""
    dataset = settings.settings.dataset
    cases = read_judgement_file(
        dataset.questions or "",
        kb_passages,
        settings.settings.abstention(),
        dataset.language,
        image_sizes=image_sizes(image_catalog),
        encoding=dataset.encoding,
    )
    sample = sample_questions(cases, dataset.sample_size, dataset.selection, dataset.seed)  # type: ignore[arg-type]
    labelled = int(sample["gold_titles"].map(len).gt(0).sum())
    assumed = sample.loc[sample["language_source"] == LANGUAGE_ASSUMED, "qid"].tolist()
    if assumed:
        context.log.warning(language_assumed_note(len(assumed), "cases", assumed))
    unknown = sample.loc[sample["language"] == UNKNOWN, "qid"].tolist()
    if unknown:
        context.log.warning(language_unknown_note(len(unknown), unknown))
    version = judgement_list_version(sample)
    context.add_output_metadata(
        {
            "source": str(dataset.questions),
            "cases": len(sample),
            "version": version,  # what `rag-eval gate --judgement-list` pins
            "with_relevance_labels": labelled,
            "with_image_labels": int(sample[GOLD_IMAGE_SIZES].notna().sum()),
            "reference_pending": int(sample[REFERENCE_PENDING].sum()),
            "tags": dg.MetadataValue.json(sample["tags"].explode().value_counts().to_dict()),
            "languages": dg.MetadataValue.json(sample["language"].value_counts().to_dict()),
            "language_source": dg.MetadataValue.json(sample["language_source"].value_counts().to_dict()),
        }
    )
    context.set_data_version(context.asset_key, dg.DataVersion(version))
    return sample


HOTPOTQA_KNOWLEDGE_ASSETS = [
    hotpotqa_raw,
    user_documents,
    image_catalog,
    kb_passages,
    kb_index,
    judgement_list,
    knowledge_base,
]
CUSTOM_KNOWLEDGE_ASSETS = [
    user_documents,
    image_catalog,
    custom_kb_passages,
    kb_index,
    custom_judgement_list,
    knowledge_base,
]
