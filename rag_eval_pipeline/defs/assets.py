"""The asset graph: HotpotQA sample -> knowledge base -> judgement list -> answers -> scores -> summaries."""

import time
from collections.abc import Callable

import dagster as dg
import pandas as pd
from pydantic import Field

from rag_eval_pipeline.answering.answer_cases import answer_cases
from rag_eval_pipeline.answering.claude import ClaudeAnswerer, is_anthropic_model
from rag_eval_pipeline.answering.registry import offline_answer_model, resolve_answer_config
from rag_eval_pipeline.data.documents import merge_passages
from rag_eval_pipeline.data.hotpotqa import (
    load_hotpotqa_from_hub,
    read_hotpotqa_file,
    sample_questions,
)
from rag_eval_pipeline.data.knowledge_base import build_judgement_list, flatten_passages
from rag_eval_pipeline.defs.partitions import answer_model_partitions
from rag_eval_pipeline.defs.resources import (
    AnthropicResource,
    DatasetResource,
    DocumentsResource,
    EvaluationResource,
    HistoryResource,
    KnowledgeBaseResource,
    StatisticsResource,
)
from rag_eval_pipeline.judges.registry import build_custom_judges, build_judge, needs_llm
from rag_eval_pipeline.judges.score_cases import join_cases, score_cases
from rag_eval_pipeline.metrics.summary import OVERALL, USAGE, compare_models, summarize, to_markdown
from rag_eval_pipeline.reporting.charts import bar_chart_svg, svg_markdown
from rag_eval_pipeline.reporting.monitoring import history_rows
from rag_eval_pipeline.reporting.report import HEADLINE_METRICS
from rag_eval_pipeline.retrieval.base import IndexManifest

KNOWLEDGE_BASE = "knowledge_base"
EVALUATION = "evaluation"


class HotpotQASampleConfig(dg.Config):
    """Overrides of the configuration file's dataset section for one run (unset: the file's)."""

    source: str | None = Field(
        default=None,
        description="'hub' (Hugging Face hotpotqa/hotpot_qa, distractor, validation) or a path to "
        "a local HotpotQA file: original JSON list, or JSONL/parquet in the hub's row format.",
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
) -> Callable:
    """A prefill hook that sends a stage's calls as one Message Batch and logs what it did."""

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
    context: dg.AssetExecutionContext, config: HotpotQASampleConfig, dataset: DatasetResource
) -> pd.DataFrame:
    """A deterministic sample of HotpotQA distractor questions, each with its 10 context paragraphs."""
    source = config.source or dataset.source
    size = dataset.sample_size if config.sample_size is None else (config.sample_size or None)
    selection = config.selection or dataset.selection
    seed = dataset.seed if config.seed is None else config.seed
    questions = load_hotpotqa_from_hub() if source == "hub" else read_hotpotqa_file(source)
    sample = sample_questions(questions, size, selection, seed)  # type: ignore[arg-type]
    context.add_output_metadata(
        {
            "source": source,
            "questions_available": len(questions),
            "questions_sampled": len(sample),
            "selection": f"{selection} (seed {seed})",
            "types": dg.MetadataValue.json(sample["type"].value_counts().to_dict()),
        }
    )
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
    context: dg.AssetExecutionContext,
    kb_passages: pd.DataFrame,
    knowledge_base: KnowledgeBaseResource,
) -> dict:
    """The searchable knowledge-base index; its manifest says where it lives and which version it is."""
    manifest = knowledge_base.build(kb_passages, on_progress=progress_logger(context, "embedded"))
    context.add_output_metadata(
        {
            "backend": manifest.backend,
            "retrieval_modes": ", ".join(manifest.details.get("modes", [])),
            "embedding_model": str(manifest.details.get("embedding_model")),
            "index_version": manifest.version,
            "documents": manifest.documents,
            "index_size_bytes": int(manifest.details.get("size_bytes", 0)),
            "semantic_field": str(manifest.details.get("semantic", manifest.details.get("embedding_model"))),
            "build_seconds": manifest.build_seconds,
            "location": dg.MetadataValue.path(manifest.location),
        }
    )
    return manifest.to_dict()


@dg.asset(group_name=KNOWLEDGE_BASE, code_version="1")
def judgement_list(context: dg.AssetExecutionContext, hotpotqa_raw: pd.DataFrame) -> pd.DataFrame:
    """The questions to evaluate, with ground-truth answers and gold supporting titles and facts."""
    cases = build_judgement_list(hotpotqa_raw)
    context.add_output_metadata({"cases": len(cases)})
    return cases


class JudgeConfig(dg.Config):
    """Which judges score each case; several judges give a row per case per judge."""

    judges: list[str] | None = Field(
        default=None,
        description="reference; a Claude model (e.g. claude-sonnet-4-6) for the STRICT rubric; "
        "ragas:<model> for RAGAS-style metrics. Unset: the configuration file's judges.",
    )


@dg.asset(
    group_name=EVALUATION,
    partitions_def=answer_model_partitions,
    code_version="2",
)
def candidate_answers(
    context: dg.AssetExecutionContext,
    judgement_list: pd.DataFrame,
    kb_index: dict,
    knowledge_base: KnowledgeBaseResource,
    anthropic: AnthropicResource,
    evaluation: EvaluationResource,
) -> pd.DataFrame:
    """Stage 1: for each question, the top-k retrieved passages and the answer model's answer."""
    config, prompt = resolve_answer_config(context.partition_key, evaluation.named_answer_models())
    manifest = IndexManifest.from_dict(kb_index)
    client = anthropic.client() if is_anthropic_model(config.model) else None
    model = (
        ClaudeAnswerer(config.model, client, anthropic.price_table(), prompt)
        if client is not None
        else offline_answer_model(config.model)
    )
    started = time.perf_counter()
    prefill = None
    if client is not None and anthropic.use_batches:
        prefill = batch_prefill(
            context, anthropic, "answers", lambda reqs: [model.llm_request(r) for r in reqs]
        )
    answers = answer_cases(
        judgement_list,
        config,
        model,
        knowledge_base.retriever(manifest, config.retrieval_mode),
        on_progress=progress_logger(context, f"answered ({config.key})"),
        concurrency=anthropic.concurrency,
        prefill=prefill,
    )
    context.add_output_metadata(
        {
            "answer_config": config.key,
            "model_id": getattr(model, "model_id", model.name),
            "prompt_version": str(answers["prompt_version"].dropna().iloc[0])
            if answers["status"].eq("ok").any()
            else "none",
            "cases": len(answers),
            "failed_cases": int((answers["status"] != "ok").sum()),
            "api_calls": client.api_calls if client else 0,
            "cache_hits": client.cache_hits if client else 0,
            "cost_usd": float(answers["cost_usd"].sum()),
            "index_version": manifest.version,
            "seconds": round(time.perf_counter() - started, 3),
        }
    )
    return answers


@dg.asset(group_name=EVALUATION, partitions_def=answer_model_partitions, code_version="2")
def judge_scores(
    context: dg.AssetExecutionContext,
    config: JudgeConfig,
    candidate_answers: pd.DataFrame,
    judgement_list: pd.DataFrame,
    anthropic: AnthropicResource,
    knowledge_base: KnowledgeBaseResource,
    evaluation: EvaluationResource,
) -> pd.DataFrame:
    """Stage 2: every metric of every judge, and of every custom metric, a row per case per
    judge (failed cases kept, unscored)."""
    names = config.judges or evaluation.judges
    custom = evaluation.custom_metric_settings()
    llm_needed = any(needs_llm(j) for j in names) or any(getattr(m, "kind", "") == "rubric" for m in custom)
    client = anthropic.client() if llm_needed else None
    embed = knowledge_base.query_embedder()
    prices = anthropic.price_table()
    judges = [build_judge(name, client, prices, embed) for name in names]
    judges += build_custom_judges(custom, client, prices)
    prefill = (
        batch_prefill(context, anthropic, "judgements", list) if client and anthropic.use_batches else None
    )
    scores = score_cases(
        join_cases(candidate_answers, judgement_list),
        judges,
        on_progress=progress_logger(context, "judged"),
        concurrency=anthropic.concurrency,
        prefill=prefill,
    )
    context.add_output_metadata(
        {
            "judges": ", ".join(j.judge_id for j in judges),
            "rows": len(scores),
            "answer_failed": int((scores["status"] == "answer_failed").sum()),
            "judge_errors": int((scores["status"] == "judge_error").sum()),
            "api_calls": client.api_calls if client else 0,
            "cache_hits": client.cache_hits if client else 0,
            "cost_usd": float(scores["cost_usd"].sum()),
        }
    )
    return scores


@dg.asset(group_name=EVALUATION, partitions_def=answer_model_partitions, code_version="3")
def metric_summary(
    context: dg.AssetExecutionContext,
    judge_scores: pd.DataFrame,
    candidate_answers: pd.DataFrame,
    kb_index: dict,
    history: HistoryResource,
    statistics: StatisticsResource,
) -> pd.DataFrame:
    """Mean of each metric per judge with a 95% interval, overall and per question type and
    level, with counts, judge errors, diagnoses, and the tokens and dollars spent. Every
    materialization is also appended to the history behind the report's trend."""
    summary = summarize(judge_scores, candidate_answers, statistics.interval_method, statistics.min_cases)
    history.append(
        history_rows(context.partition_key, summary, kb_index["version"], pd.Timestamp.now(tz="UTC"))
    )
    overall = summary[summary["group"] == OVERALL]
    chart_rows = overall[overall["metric"].isin(HEADLINE_METRICS)].assign(series=overall["judge_id"])
    usage = summary[summary["group"] == USAGE]
    cost = usage[usage["metric"] == "cost_usd"]
    headline = {
        f"{row.judge_id}/{row.metric}": float(row.mean)
        for row in overall.itertuples()
        if not pd.isna(row.mean)
    }
    context.add_output_metadata(
        {
            "summary": dg.MetadataValue.md(
                to_markdown(
                    overall[["judge_id", "metric", "mean", "n", "n_cases", "n_failed", "n_judge_errors"]]
                )
            ),
            "usage": dg.MetadataValue.md(
                to_markdown(usage.pivot(index="judge_id", columns="metric", values="total").reset_index())
            ),
            "chart": dg.MetadataValue.md(svg_markdown(bar_chart_svg(chart_rows), "mean score per metric")),
            "cost_usd": dg.MetadataValue.float(float(cost["total"].sum(min_count=1))),
            "judge_errors": int(overall.groupby("judge_id")["n_judge_errors"].max().sum()),
            **{key: dg.MetadataValue.float(value) for key, value in headline.items()},
        }
    )
    return summary


@dg.asset(
    group_name=EVALUATION,
    ins={"metric_summary": dg.AssetIn(metadata={"allow_missing_partitions": True})},
    code_version="1",
    automation_condition=dg.AutomationCondition.eager(),
)
def model_comparison(
    context: dg.AssetExecutionContext, metric_summary: dict[str, pd.DataFrame]
) -> pd.DataFrame:
    """Every answer model's overall metrics side by side (reads every materialized partition)."""
    comparison = compare_models(metric_summary)
    context.add_output_metadata(
        {"models": len(metric_summary), "comparison": dg.MetadataValue.md(to_markdown(comparison))}
    )
    return comparison
