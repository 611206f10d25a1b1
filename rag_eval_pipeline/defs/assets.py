"""The asset graph: HotpotQA sample -> knowledge base -> judgement list -> answers -> scores -> summaries.

Each body loads its inputs, resolves its choices through the registries, calls pure functions
and resources, and returns data with metadata (shaped in ``defs/metadata.py``).
"""

import time
from collections.abc import Callable

import dagster as dg
import pandas as pd
from pydantic import Field

from rag_eval_pipeline.answering.answer_cases import answer_cases
from rag_eval_pipeline.data.documents import merge_passages
from rag_eval_pipeline.data.hotpotqa import load_questions, sample_questions
from rag_eval_pipeline.data.knowledge_base import IN_SAMPLE, build_judgement_list, flatten_passages
from rag_eval_pipeline.defs.io_manager import PublishSnapshot
from rag_eval_pipeline.defs.metadata import (
    answers_metadata,
    comparison_metadata,
    index_metadata,
    scores_metadata,
    summary_metadata,
    worst_cases_table,
)
from rag_eval_pipeline.defs.partitions import answer_model_partitions
from rag_eval_pipeline.defs.resources import (
    AnthropicResource,
    DocumentsResource,
    HistoryResource,
    KnowledgeBaseResource,
    OpenAICompatibleResource,
    PhoenixResource,
    SettingsResource,
    TracingResource,
)
from rag_eval_pipeline.judges.score_cases import join_cases, score_cases
from rag_eval_pipeline.llm.targets import ANTHROPIC
from rag_eval_pipeline.metrics.freshness import current_provenance, judgement_list_version
from rag_eval_pipeline.metrics.summary import case_set_id, compare_models, summarize
from rag_eval_pipeline.reporting.monitoring import history_rows
from rag_eval_pipeline.retrieval.base import IndexManifest
from rag_eval_pipeline.tracing import TraceContext, build_case_traces
from rag_eval_pipeline.tracing.phoenix_experiments import experiment_cases

KNOWLEDGE_BASE = "knowledge_base"
EVALUATION = "evaluation"


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


def progress_logger(
    context: dg.AssetExecutionContext, what: str, steps: int = 10
) -> Callable[[int, int], None]:
    """A callback that logs `what: done/total` about ``steps`` times over a long loop."""

    def report(done: int, total: int) -> None:
        if done == total or done % max(1, total // steps) == 0:
            context.log.info(f"{what}: {done}/{total}")

    return report


def batch_prefill(
    context: dg.AssetExecutionContext, anthropic: AnthropicResource, what: str, to_requests: Callable
) -> Callable | None:
    """A prefill hook that sends a stage's calls as one Message Batch and logs what it did
    (None unless the resource asks for batches)."""
    if not anthropic.use_batches:
        return None

    def prefill(items: list) -> None:
        report = anthropic.batch_prefetcher().prefill(
            to_requests(items), on_progress=progress_logger(context, f"batch of {what}")
        )
        context.log.info(
            f"batch {report.batch_id or '(none needed)'}{' (resumed)' if report.resumed else ''}: "
            f"{report.succeeded} succeeded, {report.failed} failed, {report.already_cached} already cached"
        )

    return prefill


@dg.asset(group_name=KNOWLEDGE_BASE, code_version="1")
def hotpotqa_raw(
    context: dg.AssetExecutionContext, config: HotpotQASampleConfig, settings: SettingsResource
) -> pd.DataFrame:
    """A deterministic sample of HotpotQA distractor questions, each with its 10 context paragraphs
    (with knowledge_base.scope all: every question of the file, the sample marked in_sample)."""
    dataset = settings.settings.dataset
    source = config.source or dataset.source
    size = dataset.sample_size if config.sample_size is None else (config.sample_size or None)
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


@dg.asset(group_name=KNOWLEDGE_BASE, code_version="1")
def user_documents(context: dg.AssetExecutionContext, documents: DocumentsResource) -> pd.DataFrame:
    """The user's own documents from the documents folder; malformed files are reported and skipped."""
    loaded = documents.load()
    for problem in loaded.problems:
        context.log.warning(f"skipped: {problem}")
    context.add_output_metadata(
        {
            "folder": documents.folder,
            "files": len(loaded.versions),
            "passages": len(loaded.passages),
            "skipped": dg.MetadataValue.md("\n".join(f"- {p}" for p in loaded.problems) or "none"),
        }
    )
    return loaded.passages


@dg.asset(group_name=KNOWLEDGE_BASE, code_version="2")
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


@dg.asset(group_name=KNOWLEDGE_BASE, code_version="1")
def kb_index(
    context: dg.AssetExecutionContext, kb_passages: pd.DataFrame, knowledge_base: KnowledgeBaseResource
) -> IndexManifest:
    """The searchable knowledge-base index; its manifest says where it lives and which version it is."""
    manifest = knowledge_base.build(kb_passages, on_progress=progress_logger(context, "embedded"))
    context.add_output_metadata(index_metadata(manifest))
    # the content, not the run: a rebuild of the same passages leaves the evaluations fresh
    context.set_data_version(context.asset_key, dg.DataVersion(manifest.version))
    return manifest


@dg.asset(group_name=KNOWLEDGE_BASE, code_version="1")
def judgement_list(context: dg.AssetExecutionContext, hotpotqa_raw: pd.DataFrame) -> pd.DataFrame:
    """The questions to evaluate, with ground-truth answers and gold supporting titles and facts."""
    cases = build_judgement_list(hotpotqa_raw)
    context.add_output_metadata({"cases": len(cases)})
    context.set_data_version(context.asset_key, dg.DataVersion(judgement_list_version(cases)))
    return cases


@dg.asset(
    group_name=KNOWLEDGE_BASE,
    code_version="1",
    deps=["kb_passages", "kb_index", "judgement_list"],
)
def knowledge_base(context: dg.AssetExecutionContext) -> PublishSnapshot:
    """The published knowledge base. It runs only when every knowledge-base asset of its run
    (and their blocking checks) succeeded, and then makes them live together; a rebuild that
    fails half-way leaves the previous snapshot live and readable."""
    context.add_output_metadata({"published_by_run": context.run_id})
    return PublishSnapshot()


class JudgeConfig(dg.Config):
    """Which judges score each case; several judges give a row per case per judge."""

    judges: list[str] | None = Field(
        default=None,
        description="reference; a Claude model (e.g. claude-sonnet-4-6) for the STRICT rubric; "
        "ragas:<model> for RAGAS-style metrics. Unset: the configuration file's judges.",
    )


@dg.asset(group_name=EVALUATION, partitions_def=answer_model_partitions, code_version="2")
def candidate_answers(
    context: dg.AssetExecutionContext,
    judgement_list: pd.DataFrame,
    kb_index: IndexManifest,
    knowledge_base: KnowledgeBaseResource,
    anthropic: AnthropicResource,
    openai_compatible: OpenAICompatibleResource,
    settings: SettingsResource,
) -> pd.DataFrame:
    """Stage 1: for each question, the top-k retrieved passages and the answer model's answer."""
    registry = settings.answer_registry()
    spec = registry.resolve(context.partition_key)
    services = anthropic.services(openai_compatible)
    model = registry.build(spec, services)
    started = time.perf_counter()
    answers = answer_cases(
        judgement_list,
        spec,
        model,
        knowledge_base.retriever(kb_index, spec.retrieval_mode),
        on_progress=progress_logger(context, f"answered ({spec.answer_config})"),
        concurrency=services.concurrency,
        prefill=batch_prefill(
            context, anthropic, "answers", lambda reqs: [model.llm_request(r) for r in reqs]
        )
        if spec.provider == ANTHROPIC
        else None,
    )
    context.add_output_metadata(
        answers_metadata(spec, answers, services, kb_index, time.perf_counter() - started)
    )
    return answers


@dg.asset(group_name=EVALUATION, partitions_def=answer_model_partitions, code_version="2")
def judge_scores(
    context: dg.AssetExecutionContext,
    config: JudgeConfig,
    candidate_answers: pd.DataFrame,
    judgement_list: pd.DataFrame,
    anthropic: AnthropicResource,
    openai_compatible: OpenAICompatibleResource,
    knowledge_base: KnowledgeBaseResource,
    settings: SettingsResource,
) -> pd.DataFrame:
    """Stage 2: every metric of every judge, and of every custom metric, a row per case per
    judge (failed cases kept, unscored)."""
    registry = settings.judge_registry()
    specs = registry.for_run(config.judges or settings.settings.judges)
    answer_spec = settings.answer_registry().try_resolve(context.partition_key)
    services = anthropic.services(openai_compatible)
    judges = [registry.build(spec, services, knowledge_base.query_embedder()) for spec in specs]
    scores = score_cases(
        join_cases(candidate_answers, judgement_list),
        judges,
        on_progress=progress_logger(context, "judged"),
        concurrency=None,  # the provider's client bounds the calls in flight across all cases
        prefill=batch_prefill(context, anthropic, "judgements", list)
        if any(spec.needs_llm for spec in specs) and all(s.provider in (None, ANTHROPIC) for s in specs)
        else None,  # a Message Batch carries Claude calls only
        generative=answer_spec.generative if answer_spec else True,
    )
    metadata = scores_metadata([s.judge_id for s in specs], scores, services)
    worst = worst_cases_table(
        context.partition_key, scores, candidate_answers, judgement_list, context.run_id
    )
    context.add_output_metadata({**metadata, **({"worst_cases": worst} if worst else {})})
    return scores


@dg.asset(group_name=EVALUATION, partitions_def=answer_model_partitions, code_version="5")
def metric_summary(
    context: dg.AssetExecutionContext,
    judge_scores: pd.DataFrame,
    candidate_answers: pd.DataFrame,
    kb_index: IndexManifest,
    settings: SettingsResource,
) -> pd.DataFrame:
    """Mean of each metric per judge with a 95% interval, overall and per question type and
    level, with counts, judge errors, diagnoses, and the tokens and dollars spent; each row
    records the case set and index version it was computed on."""
    statistics = settings.settings.statistics
    declared = settings.judge_registry().declared_metrics(judge_scores["judge_id"].unique())
    summary = summarize(
        judge_scores, candidate_answers, statistics.interval_method, statistics.min_cases, declared
    )
    context.add_output_metadata(summary_metadata(summary))
    return summary.assign(kb_version=kb_index.version, summary_run_id=context.run_id)


@dg.asset(group_name=EVALUATION, partitions_def=answer_model_partitions, code_version="1")
def metric_history(
    context: dg.AssetExecutionContext,
    metric_summary: pd.DataFrame,
    kb_index: IndexManifest,
    history: HistoryResource,
) -> pd.DataFrame:
    """This summary's overall means, recorded once per summary materialization in the history
    behind the report's trend (recording the same summary again replaces, never duplicates)."""
    run_id = str(metric_summary["summary_run_id"].iloc[0]) if len(metric_summary) else context.run_id
    rows = history_rows(
        context.partition_key, metric_summary, kb_index.version, pd.Timestamp.now(tz="UTC"), run_id
    )
    context.add_output_metadata({"history_rows": history.record(rows), "summary_run_id": run_id})
    return rows


def failed_after_summary(instance: dg.DagsterInstance, partition: str, summary: pd.DataFrame) -> str | None:
    """Why a partition's stored summary is no longer its latest word: the newest run that
    evaluated it failed (a blocking check, an error) after the run that wrote the summary."""
    runs = instance.get_runs(dg.RunsFilter(tags={"dagster/partition": partition}), limit=1)
    summary_run = (
        str(summary["summary_run_id"].iloc[0]) if "summary_run_id" in summary and len(summary) else None
    )
    if not runs or runs[0].status != dg.DagsterRunStatus.FAILURE or runs[0].run_id == summary_run:
        return None
    return (
        f"evaluation run {runs[0].run_id[:8]} failed; these are the values of run {(summary_run or '?')[:8]}"
    )


@dg.asset(
    group_name=EVALUATION,
    ins={"metric_summary": dg.AssetIn(metadata={"allow_missing_partitions": True})},
    code_version="1",
)
def model_comparison(
    context: dg.AssetExecutionContext,
    metric_summary: dict[str, pd.DataFrame],
    judgement_list: pd.DataFrame,
    kb_index: IndexManifest,
) -> pd.DataFrame:
    """Every answer model's overall metrics side by side (reads every materialized partition);
    ``stale`` marks a model whose summary was computed on other questions or another index, or
    whose later evaluation failed (its last good values stay, with the reason in ``note``)."""
    failed = {
        p: r for p in metric_summary if (r := failed_after_summary(context.instance, p, metric_summary[p]))
    }
    comparison = compare_models(
        metric_summary, current_provenance(judgement_list["qid"], kb_index.version), failed
    )
    context.add_output_metadata(comparison_metadata(comparison))
    return comparison


def _trace_context(
    context: dg.AssetExecutionContext,
    settings: SettingsResource,
    kb_index: IndexManifest,
    qids: pd.Series,
    judge_scores: pd.DataFrame,
) -> TraceContext:
    """What every case of this partition's materialization shares, for traces and experiments."""
    spec = settings.answer_registry().resolve(context.partition_key)
    judges = settings.judge_registry()
    specs = [judges.resolve(judge_id) for judge_id in judge_scores["judge_id"].unique()]
    return TraceContext(
        spec.partition_key,
        spec.provider,
        spec.model_id,
        context.run_id,
        kb_index.version,
        case_set_id(qids),
        spec.prompt_version,
        judge_models={j.judge_id: (j.provider, j.model_id) for j in specs if j.provider and j.model_id},
    )


@dg.asset(group_name=EVALUATION, partitions_def=answer_model_partitions, code_version="1")
def case_traces(
    context: dg.AssetExecutionContext,
    candidate_answers: pd.DataFrame,
    judge_scores: pd.DataFrame,
    kb_index: IndexManifest,
    settings: SettingsResource,
    tracing: TracingResource,
) -> pd.DataFrame:
    """One trace per case in Phoenix, Langfuse or any OTLP collector (retrieval, answer and judge
    spans, every score), cached cases included; stored: each case's trace id. A collector that
    is down costs one bounded flush and is counted here, never a failed evaluation."""
    trace_context = _trace_context(context, settings, kb_index, candidate_answers["qid"], judge_scores)
    traces = build_case_traces(candidate_answers, judge_scores, trace_context)
    report = tracing.export(traces, candidate_answers["qid"].tolist())
    if report.spans_dropped:
        context.log.warning(
            f"traces: {report.spans_dropped} spans dropped ({report.error}); the evaluation is unaffected"
        )
    context.add_output_metadata(
        {
            "cases": report.cases,
            "spans_exported": report.spans_exported,
            "spans_dropped": report.spans_dropped,
            "endpoint": tracing.endpoint or tracing.preset,
        }
    )
    return pd.DataFrame({"qid": list(report.trace_ids), "trace_id": list(report.trace_ids.values())})


@dg.asset(group_name=EVALUATION, partitions_def=answer_model_partitions, code_version="1")
def phoenix_experiment(
    context: dg.AssetExecutionContext,
    candidate_answers: pd.DataFrame,
    judge_scores: pd.DataFrame,
    judgement_list: pd.DataFrame,
    kb_index: IndexManifest,
    settings: SettingsResource,
    phoenix: PhoenixResource,
) -> dict:
    """The judgement list as a Phoenix dataset (one per case set) and this answer model as an
    experiment over it: the stored answers and every judge's scores, replayed without a model
    call; failures stay failures. A Phoenix that cannot be reached is said once and recorded
    here, never a failed evaluation."""
    trace_context = _trace_context(context, settings, kb_index, judgement_list["qid"], judge_scores)
    metadata = trace_context.as_metadata()
    name = f"{trace_context.answer_model} {context.run_id[:8]}"
    cases = experiment_cases(candidate_answers, judge_scores)
    try:
        report = phoenix.upload(
            judgement_list, cases, trace_context.case_set, name, metadata, context.log.debug
        )
    except Exception as err:  # Phoenix down or refusing: the evaluation stands without it
        reason = f"{type(err).__name__}: {err}"[:300]
        context.log.warning(f"phoenix experiment not uploaded ({reason}); the evaluation is unaffected")
        context.add_output_metadata({"uploaded": False, "error": reason, "phoenix": phoenix.url})
        return {"uploaded": False, "error": reason}
    context.add_output_metadata(
        {
            "uploaded": True,
            "dataset": report.dataset_name,
            "experiment_id": report.experiment_id,
            "experiment": dg.MetadataValue.url(report.url),
            "runs": report.runs,
            "failed_runs": report.failed_runs,
            "evaluations": report.evaluations,
            "failed_evaluations": report.failed_evaluations,
        }
    )
    return {"uploaded": True, **report.__dict__}
