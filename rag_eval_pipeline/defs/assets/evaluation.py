"""One answer model's partition: its answers, every judge's scores, the summary and its history,
and (when configured) its case traces and its Phoenix experiment."""

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import dagster as dg
import pandas as pd
from pydantic import Field

from rag_eval_pipeline.answering.agents.contexts import ContextMatcher
from rag_eval_pipeline.answering.answer_cases import (
    AllCasesFailedError,
    answer_cases,
    cases_not_answered,
    not_answered_reason,
    one_line_reason,
)
from rag_eval_pipeline.answering.base import AnswerModel
from rag_eval_pipeline.answering.spec import AnswerSpec
from rag_eval_pipeline.common.secrets import Redactor
from rag_eval_pipeline.data.images import image_catalog
from rag_eval_pipeline.defs.assets.progress import progress_logger
from rag_eval_pipeline.defs.metadata import (
    answers_metadata,
    claims_preview,
    scores_metadata,
    summary_metadata,
    worst_case_markdown,
    worst_cases_key,
    worst_cases_table,
)
from rag_eval_pipeline.defs.names import (
    CANDIDATE_ANSWERS,
    EVALUATION,
    EVALUATION_FAILED,
    JUDGEMENT_LIST,
    KB_INDEX,
)
from rag_eval_pipeline.defs.partitions import answer_model_partitions
from rag_eval_pipeline.defs.resources import (
    EvaluationLockResource,
    HistoryResource,
    KnowledgeBaseResource,
    LLMResource,
    PhoenixResource,
    SettingsResource,
    TracingResource,
)
from rag_eval_pipeline.judges.alignment import PromptStore
from rag_eval_pipeline.judges.claims import claims_table
from rag_eval_pipeline.judges.grounding import has_image_labels, reads_images, with_grounding
from rag_eval_pipeline.judges.registry import judging_rules
from rag_eval_pipeline.judges.score_cases import join_cases, score_cases
from rag_eval_pipeline.llm.client import FatalLLMError
from rag_eval_pipeline.metrics.blind_retrieval import empty_retrieval_warning, zero_recall_warning
from rag_eval_pipeline.metrics.diagnosis import AnswerSource
from rag_eval_pipeline.metrics.freshness import answers_provenance
from rag_eval_pipeline.metrics.grounding import IMAGE_PREFIX
from rag_eval_pipeline.metrics.schema import case_set_id
from rag_eval_pipeline.metrics.summary import summarize
from rag_eval_pipeline.reporting.markdown import to_markdown
from rag_eval_pipeline.reporting.monitoring import history_rows
from rag_eval_pipeline.retrieval.base import IndexManifest, RetrievalMode
from rag_eval_pipeline.retrieval.pair_scores import PairCounts
from rag_eval_pipeline.retrieval.reranker import unread_by_reranker
from rag_eval_pipeline.tracing.cases import TraceContext, build_case_traces
from rag_eval_pipeline.tracing.events import SpanRef, evaluation_events
from rag_eval_pipeline.tracing.phoenix_experiments import experiment_cases

if TYPE_CHECKING:  # the batches adapter imports the Anthropic SDK: only when a stage batches
    from rag_eval_pipeline.llm.batches import BatchPrefetcher


def batch_prefill(
    context: dg.AssetExecutionContext, prefetcher: "BatchPrefetcher | None", what: str, to_requests: Callable
) -> Callable | None:
    """A prefill hook that sends a stage's calls as one batch and logs what it did (None when
    the stage's provider does not batch, or its settings do not ask for it)."""
    if prefetcher is None:
        return None

    def prefill(items: list) -> None:
        report = prefetcher.prefill(
            to_requests(items), on_progress=progress_logger(context, f"batch of {what}")
        )
        context.log.info(
            f"batch {report.batch_id or '(none needed)'}{' (resumed)' if report.resumed else ''}: "
            f"{report.succeeded} succeeded, {report.failed} failed, {report.already_cached} already cached"
        )

    return prefill


def stage_failure(what: str, err: BaseException) -> dg.Failure:
    """A stage that cannot do its work (an agent that cannot start or be reached, a key the
    provider refuses, every case failed) as ``dagster.Failure``: its description is the one
    line the command line would say, so the run's page opens on the reason, and the details
    are its metadata."""
    return dg.Failure(
        description=one_line_reason(err),
        metadata={"stage": what, "error": type(err).__name__, "detail": str(err)[:2000]},
    )


@contextlib.contextmanager
def failing_in_one_line(what: str) -> Iterator[None]:
    """The stage in the block fails the step with ``stage_failure`` when it cannot do its work."""
    try:
        yield
    except (FatalLLMError, AllCasesFailedError) as err:
        raise stage_failure(what, err) from err


def marked_as_failure(frame: pd.DataFrame, reason: str | None) -> pd.DataFrame:
    """``frame`` marked as a model's recorded failure (the IO manager keeps it as this run's
    file, never as the latest value), or as it is when ``reason`` is None."""
    if reason is not None:
        frame.attrs[EVALUATION_FAILED] = reason
    return frame


class JudgeConfig(dg.Config):
    """Which judges score each case, how many times, and whether a jury combines them; several
    judges give a row per case per judge (per re-score)."""

    judges: list[str] | None = Field(
        default=None,
        description="reference; a Claude model (e.g. claude-sonnet-4-6) for the STRICT rubric; "
        "ragas:<model> for RAGAS-style metrics; vision:<model> to look at the retrieved images "
        "(grounding joins by itself when the judgement list labels images). Unset: the "
        "configuration file's judges.",
    )
    judge_repeats: int | None = Field(
        default=None,
        description="ask every LLM judge this many times per case. Unset: the file's judge_repeats.",
    )
    jury: str | None = Field(
        default=None, description="median or weighted: add the judge 'jury'. Unset: the file's jury."
    )


@dataclass(frozen=True)
class Stage:
    """What both stages run with, gathered once by the asset that runs them (a model's
    partition or one of its case shards): its context and the resources the stages call."""

    context: dg.AssetExecutionContext
    knowledge_base: KnowledgeBaseResource
    llm: LLMResource
    settings: SettingsResource


def answer_stage(
    stage: Stage,
    model_key: str,
    judgement_list: pd.DataFrame,
    kb_index: IndexManifest,
    kb_passages: pd.DataFrame,
    record_failure: bool = False,
) -> tuple[pd.DataFrame, dict]:
    """Stage 1 for the cases of ``judgement_list``, and its metadata: what a model's partition
    and each of its case shards run alike, so a shard's calls are the very ones the model's run
    asks its cache for. A model that cannot answer at all fails the step, or with
    ``record_failure`` gives every case failed with the reason (``marked_as_failure``)."""
    context, knowledge_base, llm, settings = stage.context, stage.knowledge_base, stage.llm, stage.settings
    registry = settings.answer_registry()
    spec = registry.resolve(model_key)
    for note in registry.notes(spec):  # said once before the run by a command (`note:`)
        context.log.info(note)
    services = llm.services()
    model = _with_images(registry.build(spec, services), spec, kb_passages, llm, settings)
    redact = settings.settings.redactor()
    rerank_pairs = PairCounts()  # what the reranker scored, and what it read from the kept scores
    started = time.perf_counter()
    try:
        answers = answer_cases(
            judgement_list,
            spec,
            model,
            None
            if spec.is_agent
            else knowledge_base.knowledge_base.retriever(kb_index, spec.retrieval_mode, rerank_pairs),
            on_progress=progress_logger(context, f"answered ({spec.answer_config})"),
            # an agent bounds its own calls in flight; twice as many cases at once, so that reading
            # and matching a reply never holds a call's slot
            concurrency=2 * spec.calls_in_flight if spec.calls_in_flight else services.concurrency,
            prefill=batch_prefill(
                context,
                llm.batches([spec.endpoint]) if spec.endpoint is not None else None,
                "answers",
                lambda requests: [model.llm_request(r) for r in requests],  # type: ignore[attr-defined]
            ),
            max_answer_chars=settings.settings.max_answer_chars,
            matcher=ContextMatcher(kb_passages) if spec.is_agent else None,
            match_by_text=spec.agent_matches_by_text,
            redact=redact,
            on_retrieved=progress_logger(context, f"retrieved and reranked ({spec.answer_config})")
            if spec.retrieval_mode is RetrievalMode.RERANK
            else None,
        )
    except (FatalLLMError, AllCasesFailedError) as err:
        if not record_failure:
            raise stage_failure(f"{spec.partition_key}: answers", err) from err
        return _not_answered(context, spec, model, judgement_list, kb_index, err, redact)
    blind = _retrieval_warning(
        context, spec, answers, judgement_list, kb_index, knowledge_base, rerank_pairs
    )
    metadata = {
        **answers_metadata(spec, answers, services, kb_index, time.perf_counter() - started),
        **({"retrieval_warning": blind} if blind else {}),
        **(
            {"rerank_pairs_scored": rerank_pairs.scored, "rerank_pairs_kept": rerank_pairs.kept}
            if spec.retrieval_mode is RetrievalMode.RERANK
            else {}
        ),
    }
    return answers.assign(kb_version=kb_index.version), metadata


def _with_images(
    model: AnswerModel,
    spec: AnswerSpec,
    kb_passages: pd.DataFrame,
    llm: LLMResource,
    settings: SettingsResource,
) -> AnswerModel:
    """The model; a chat model that sees images is shown those among its retrieved passages,
    before them."""
    if (
        hasattr(model, "with_images")
        and (spec.endpoint is None or llm.sees_images(spec.endpoint))
        and kb_passages["passage_id"].str.startswith(IMAGE_PREFIX).any()
    ):
        model = model.with_images(image_catalog(settings.settings.dataset.documents))
    return model


def _not_answered(
    context: dg.AssetExecutionContext,
    spec: AnswerSpec,
    model: AnswerModel,
    judgement_list: pd.DataFrame,
    kb_index: IndexManifest,
    err: Exception,
    redact: Redactor,
) -> tuple[pd.DataFrame, dict]:
    """A model that could not answer at all: every case failed with the reason, stored, so the
    comparison goes on without it."""
    reason = redact(one_line_reason(err))
    context.log.error(
        f"{spec.partition_key} could not answer: {reason}. Its evaluation is stored with this "
        "reason, so the comparison goes on without it; metric_summary's `answered` check fails "
        "the run."
    )
    model_id = getattr(model, "model_id", None) or spec.partition_key
    unanswered = cases_not_answered(judgement_list, spec, model_id, reason)
    metadata = {EVALUATION_FAILED: reason, "stage": "answers", "detail": redact(str(err))[:2000]}
    return marked_as_failure(unanswered.assign(kb_version=kb_index.version), reason), metadata


def _retrieval_warning(
    context: dg.AssetExecutionContext,
    spec: AnswerSpec,
    answers: pd.DataFrame,
    judgement_list: pd.DataFrame,
    kb_index: IndexManifest,
    knowledge_base: KnowledgeBaseResource,
    rerank_pairs: PairCounts,
) -> str | None:
    """What retrieval could not see (a language without passages, one the reranker does not
    read), logged as a warning; the reranker's pairs logged."""
    blind = empty_retrieval_warning(answers, judgement_list, kb_index.details.get("languages") or {})
    if spec.retrieval_mode is RetrievalMode.RERANK:
        context.log.info(
            f"reranked ({spec.answer_config}): {rerank_pairs.scored} pairs scored, "
            f"{rerank_pairs.kept} read from the kept scores"
        )
        blind = blind or unread_by_reranker(
            knowledge_base.knowledge_base.spec.rerank, kb_index.details.get("languages") or {}
        )
    if blind:
        context.log.warning(blind)
    return blind


def build_candidate_answers(after: Sequence[dg.AssetDep] = ()) -> dg.AssetsDefinition:
    """Stage 1's asset; ``after`` names what a backfill of every asset must finish first (with
    workers, each model's case shards, whose calls its run then reads from the caches)."""

    @dg.asset(
        name=CANDIDATE_ANSWERS,
        group_name=EVALUATION,
        partitions_def=answer_model_partitions,
        code_version="4",
        deps=list(after),
    )
    def candidate_answers(
        context: dg.AssetExecutionContext,
        judgement_list: pd.DataFrame,
        kb_index: IndexManifest,
        kb_passages: pd.DataFrame,
        knowledge_base: KnowledgeBaseResource,
        llm: LLMResource,
        settings: SettingsResource,
        evaluation_lock: EvaluationLockResource,
    ) -> pd.DataFrame:
        """Stage 1: for each question, the contexts and the answer: the top-k passages this
        project retrieves and the answer model's answer, or the team's agent's answer and the
        contexts it returned (each matched to a knowledge-base passage).

        To evaluate every model: the lineage's "Materialize all…", then **All** under partition
        selection (the dialog opens on Custom with none chosen), then "Launch backfill"; the
        comparison is `model_comparison` in the reporting group."""
        answers, metadata = answer_stage(
            Stage(context, knowledge_base, llm, settings),
            context.partition_key,
            judgement_list,
            kb_index,
            kb_passages,
            record_failure=True,  # a backfill builds the comparison without a model that cannot run
        )
        context.add_output_metadata(metadata)
        return answers

    return candidate_answers


candidate_answers = build_candidate_answers()


def judge_stage(
    stage: Stage,
    config: JudgeConfig,
    model_key: str,
    candidate_answers: pd.DataFrame,
    judgement_list: pd.DataFrame,
) -> tuple[pd.DataFrame, dict]:
    """Stage 2 for the answered cases, and its metadata (shared by a model's partition and its
    case shards, as stage 1 is)."""
    context, knowledge_base, llm, settings = stage.context, stage.knowledge_base, stage.llm, stage.settings
    labelled = has_image_labels(judgement_list)
    judge_ids = with_grounding(config.judges or settings.settings.judges, labelled)
    judging = settings.judging(judge_ids, config.judge_repeats, config.jury).with_prompts(
        PromptStore(Path(context.instance.storage_directory())), settings.settings.judge_prompts
    )
    specs = judging.specs
    answer_spec = settings.answer_registry().try_resolve(model_key)
    services = llm.services()
    registry = settings.judge_registry()
    images = image_catalog(settings.settings.dataset.documents) if labelled or reads_images(specs) else None
    embed = knowledge_base.knowledge_base.query_embedder()
    judges = [registry.build(spec, services, embed, images) for spec in specs]
    llm_judges = [spec.endpoint for spec in specs if spec.endpoint is not None]
    with failing_in_one_line(f"{model_key}: judges"):
        scores = score_cases(
            join_cases(candidate_answers, judgement_list),
            judges,
            on_progress=progress_logger(context, "judged"),
            concurrency=None,  # the provider's client bounds the calls in flight across all cases
            # a batch carries one provider's calls: only when every judge that calls a model is on it
            prefill=batch_prefill(context, llm.batches(llm_judges), "judgements", judging.as_asked),
            source=answer_spec.source if answer_spec else AnswerSource.GENERATIVE,
            redact=settings.settings.redactor(),
            repeats={spec.judge_id: spec.repeats for spec in specs},
            jurors=judging.jurors,
            jury=judging.jury or "median",
        )
    metadata = scores_metadata(judging.judge_ids, scores, services)
    return scores, {"answer_model": model_key, **metadata, **judging_rules(judging)}


@dg.asset(group_name=EVALUATION, partitions_def=answer_model_partitions, code_version="3", deps=[KB_INDEX])
def judge_scores(
    context: dg.AssetExecutionContext,
    config: JudgeConfig,
    candidate_answers: pd.DataFrame,
    judgement_list: pd.DataFrame,
    llm: LLMResource,
    knowledge_base: KnowledgeBaseResource,
    settings: SettingsResource,
    evaluation_lock: EvaluationLockResource,
) -> pd.DataFrame:
    """Stage 2: every metric of every judge, and of every custom metric, a row per case per
    judge (failed cases kept, unscored)."""
    model = context.partition_key
    stage = Stage(context, knowledge_base, llm, settings)
    scores, metadata = judge_stage(stage, config, model, candidate_answers, judgement_list)
    worst = worst_cases_table(model, scores, candidate_answers, judgement_list, context.run_id)
    images = settings.settings.dataset.documents  # where an image case's overlay is drawn from
    cases = worst_case_markdown(model, scores, candidate_answers, judgement_list, context.run_id, images)
    shown = {worst_cases_key(model): worst} if worst else {}
    failed = not_answered_reason(candidate_answers)
    context.add_output_metadata(
        {**metadata, **shown, **cases, **({EVALUATION_FAILED: failed} if failed else {})}
    )
    return marked_as_failure(scores, failed)


@dg.asset(
    group_name=EVALUATION, partitions_def=answer_model_partitions, code_version="11", deps=[JUDGEMENT_LIST]
)
def metric_summary(
    context: dg.AssetExecutionContext,
    judge_scores: pd.DataFrame,
    candidate_answers: pd.DataFrame,
    kb_index: IndexManifest,
    settings: SettingsResource,
) -> pd.DataFrame:
    """Mean of each metric per judge with a 95% interval, overall and per question type, level
    and language, with counts, judge errors, diagnoses, and the tokens and dollars spent. Each
    row records the case set, index version and answer model it was computed on. It reads this
    model's evaluation only: people's corrections and flags are the cross-model
    ``corrected_means``, so one model never waits on another."""
    statistics = settings.settings.statistics
    declared = settings.judge_registry().declared_metrics(judge_scores["judge_id"].unique())
    summary = summarize(
        judge_scores, candidate_answers, statistics.interval_method, statistics.min_cases, declared
    )
    blind = zero_recall_warning(judge_scores)
    if blind:
        context.log.warning(blind)
    failed = not_answered_reason(candidate_answers)
    context.add_output_metadata(
        {
            **summary_metadata(summary),
            **({"retrieval_warning": blind} if blind else {}),
            **({EVALUATION_FAILED: failed} if failed else {}),
        }
    )
    answered = answers_provenance(candidate_answers)
    summary = summary.assign(
        kb_version=answered.kb_version or kb_index.version,
        answer_spec=answered.answer_spec,
        summary_run_id=context.run_id,
    )
    return marked_as_failure(summary, failed)


@dg.asset(group_name=EVALUATION, partitions_def=answer_model_partitions, code_version="2")
def answer_claims(context: dg.AssetExecutionContext, judge_scores: pd.DataFrame) -> pd.DataFrame:
    """One row per claim of each answer, as a claim judge (`claims:<LLM>`) checked it: supported
    by the contexts or not, the passage that states it, the passage it cites and whether that
    citation holds; its page shows the claims themselves, an unsupported one first. Empty when
    no claim judge ran."""
    claims = claims_table(judge_scores)
    readable = to_markdown(claims_preview(claims))
    supported = claims["supported"].astype(bool) if len(claims) else claims["supported"]
    context.add_output_metadata(
        {
            "claims": len(claims),
            "unsupported": int((~supported).sum()) if len(claims) else 0,
            "unsupported_cases": int(  # a short key: a long one widened the pane past 1,440 px
                claims.loc[~supported, "qid"].nunique()
            )
            if len(claims)
            else 0,
            "how": "add a claim judge to see claims: --judges reference,claims:claude-sonnet-4-6"
            if claims.empty
            else "each claim checked against the contexts the answer was given from",
            **({f"claims of {context.partition_key}": dg.MetadataValue.md(readable)} if len(claims) else {}),
        }
    )
    return claims


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
        agent=spec.is_agent,
    )


def _event_parents(candidate_answers: pd.DataFrame, keys: list, roots: list) -> dict:
    """Each answer's evaluated span: the agent's own where its reply named its trace, else this
    pipeline's case span (None: neither is known)."""
    said = candidate_answers.get("agent_trace", pd.Series([None] * len(keys)))
    return {
        key: SpanRef.of_reply(trace) or (SpanRef.of(*root) if root else None)
        for key, root, trace in zip(keys, roots, said)
    }


def _response_ids(candidate_answers: pd.DataFrame, keys: list) -> dict:
    """Each answer's reply id (an LLM's message id, an agent's mapped one; a table stored before
    ids were kept has none)."""
    ids = candidate_answers.get("response_id", pd.Series([None] * len(keys)))
    return {key: value for key, value in zip(keys, ids) if isinstance(value, str) and value}


@dg.asset(group_name=EVALUATION, partitions_def=answer_model_partitions, code_version="2")
def case_traces(
    context: dg.AssetExecutionContext,
    candidate_answers: pd.DataFrame,
    judge_scores: pd.DataFrame,
    kb_index: IndexManifest,
    settings: SettingsResource,
    tracing: TracingResource,
) -> pd.DataFrame:
    """One trace per case in Phoenix, Langfuse or any OTLP collector (retrieval, answer and judge
    spans, every score), cached cases included, and (``tracing.evaluation_events``) every score
    as a `gen_ai.evaluation.result` event, a child of its case's span; stored: each case's trace
    id. A collector that is down costs one bounded flush and is counted here, never a failed
    evaluation."""
    trace_context = _trace_context(context, settings, kb_index, candidate_answers["qid"], judge_scores)
    keys = list(zip(candidate_answers["qid"].astype(str), candidate_answers["repeat"].astype(int)))
    metadata: dict = {"endpoint": tracing.destination}
    roots: list = [None] * len(keys)
    down = None
    trace_ids: dict[str, str] = {}
    if tracing.traces:
        traces = build_case_traces(candidate_answers, judge_scores, trace_context)
        report = tracing.export(traces, candidate_answers["qid"].tolist())
        if report.spans_dropped:
            context.log.warning(
                f"traces: {report.spans_dropped} spans dropped ({report.error}); the evaluation is unaffected"
            )
            down = report.error if not report.spans_exported else None
        roots, trace_ids = report.roots, report.trace_ids
        metadata.update(
            cases=report.cases, spans_exported=report.spans_exported, spans_dropped=report.spans_dropped
        )
    if tracing.events:
        events = evaluation_events(
            judge_scores,
            _event_parents(candidate_answers, keys, roots),
            trace_context.event_attributes(),
            settings.judge_registry().declared_metrics(judge_scores["judge_id"].unique()),
            settings.settings.gates(),
            settings.settings.redactor(),
            _response_ids(candidate_answers, keys),
        )
        sent = tracing.export_events(events, collector_down=down)
        if sent.dropped:
            context.log.warning(
                f"evaluation events: {sent.dropped} dropped ({sent.error}); the evaluation is unaffected"
            )
        metadata.update(
            events=sent.events,
            events_exported=sent.exported,
            events_dropped=sent.dropped,
            events_written=sent.written,
        )
    context.add_output_metadata(metadata)
    return pd.DataFrame({"qid": list(trace_ids), "trace_id": list(trace_ids.values())})


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


EVALUATION_ASSETS = [candidate_answers, judge_scores, answer_claims, metric_summary, metric_history]
