"""What the production assets report in the UI, shaped from their outputs by pure functions."""

from typing import Any

import dagster as dg
import pandas as pd

from rag_eval_pipeline.llm.services import LLMServices
from rag_eval_pipeline.metrics.budgets import BUDGET
from rag_eval_pipeline.metrics.schema import USAGE
from rag_eval_pipeline.metrics.settings import OVERALL
from rag_eval_pipeline.production.interactions import ReadInteractions
from rag_eval_pipeline.production.settings import ProductionSettings
from rag_eval_pipeline.reporting.markdown import means_with_intervals, to_markdown

SHOWN_PROBLEMS = 20
WORST = 10
_REFERENCE_FREE = (
    "faithfulness",
    "context_relevance",
    "context_precision",
    "answer_relevancy",
    "faithfulness_lexical",
)


def _counts(values: pd.Series) -> dg.MetadataValue:
    return dg.MetadataValue.json({str(k): int(v) for k, v in values.value_counts().sort_index().items()})


def interactions_metadata(read: ReadInteractions) -> dict[str, Any]:
    frame, problems = read.frame, read.problems
    shown = "\n".join(f"- {p}" for p in problems[:SHOWN_PROBLEMS])
    more = f"\n- ... and {len(problems) - SHOWN_PROBLEMS} more" if len(problems) > SHOWN_PROBLEMS else ""
    return {
        "interactions": len(frame),
        "by_source": _counts(frame["source"]),
        "by_agent_version": _counts(frame["agent_version"]),
        "without_contexts": int((~frame["contexts_known"].astype(bool)).sum()) if len(frame) else 0,
        "skipped_rows": len(problems),
        "skipped": dg.MetadataValue.md((shown + more) or "none"),
    }


def sample_metadata(
    interactions: pd.DataFrame, kept: pd.DataFrame, sample: pd.DataFrame, settings: ProductionSettings
) -> dict[str, Any]:
    versions = kept["agent_version"].value_counts() if len(kept) else pd.Series(dtype=int)
    sampled = sample["agent_version"].value_counts() if len(sample) else pd.Series(dtype=int)
    table = pd.DataFrame(
        {
            "agent_version": versions.index,
            "interactions": versions.values,
            "sampled": sampled.reindex(versions.index, fill_value=0).values,
        }
    )
    return {
        "interactions": len(interactions),
        "kept_by_filters": len(kept),
        "sampled": len(sample),
        "sample_per_day": settings.sample_per_day,
        "seed": settings.seed,
        "stratified_by_agent_version": bool(settings.stratify_by_agent_version and len(versions) > 1),
        "by_agent_version": dg.MetadataValue.md(to_markdown(table)),
    }


def scores_metadata(
    judge_ids: list[str], scores: pd.DataFrame, services: LLMServices, stopped: int
) -> dict[str, Any]:
    budget = services.budget
    return {
        "judges": ", ".join(judge_ids) or "none",
        "cases": int(scores["qid"].nunique()) if len(scores) else 0,
        "judge_errors": int((scores["status"] == "judge_error").sum()),
        "over_budget": stopped,
        "api_calls": services.api_calls,
        "cache_hits": services.cache_hits,
        "llm_limit": services.shared_limits,
        "cost_usd": float(scores["cost_usd"].sum(min_count=1)) if len(scores) else 0.0,
        "budget_usd": "none" if budget is None else round(budget.limit_usd, 4),
    }


def summary_metadata(summary: pd.DataFrame) -> dict[str, Any]:
    budgeted = summary["group"].astype(str).str.startswith(BUDGET)
    scored = summary[(summary["group"] != USAGE) & ~budgeted & summary["mean"].notna()]
    overall = scored[scored["group"] == OVERALL]
    figures = summary[budgeted & summary["n"].gt(0)]
    usage = summary[(summary["group"] == USAGE) & (summary["metric"] == "cost_usd")]
    table = means_with_intervals(
        scored[["judge_id", "metric", "group", "mean", "ci_low", "ci_high", "n", "note"]]
    )
    return {
        "summary": dg.MetadataValue.md(to_markdown(table)),
        "cost_usd": dg.MetadataValue.float(float(usage["total"].sum(min_count=1)) if len(usage) else 0.0),
        **{
            f"{row.judge_id}/{row.metric}": dg.MetadataValue.float(round(float(row.mean), 4))
            for row in overall.itertuples()
        },
        # the agent's latency and cost per interaction: plotted over the days like the means
        **{
            f"{row.judge_id}/{row.metric}": dg.MetadataValue.float(round(float(row.mean), 6))
            for row in figures[figures["group"] == BUDGET].itertuples()
        },
        **(
            {"budgets": dg.MetadataValue.md(to_markdown(figures[["metric", "group", "mean", "n", "note"]]))}
            if len(figures)
            else {}
        ),
    }


def worst_production_cases(scores: pd.DataFrame, sample: pd.DataFrame | None = None) -> pd.DataFrame:
    """The sampled cases scored lowest (by the first reference-free metric measured), with the
    question and answer when the sample is at hand."""
    metric = next((m for m in _REFERENCE_FREE if m in scores and scores[m].notna().any()), None)
    if metric is None:
        return pd.DataFrame()
    scored = scores[(scores["status"] == "ok") & scores[metric].notna()]
    worst = scored.sort_values([metric, "qid"]).drop_duplicates("qid").head(WORST)
    columns = ["qid", "judge_id", metric, "agent_version"]
    worst = worst[[c for c in columns if c in worst]]
    if sample is not None and len(sample):
        texts = sample.set_index("interaction_id")
        worst = worst.assign(
            question=worst["qid"].map(texts["question"]).str.slice(0, 80),
            answer=worst["qid"].map(texts["answer"]).str.slice(0, 60),
        )
    return worst.reset_index(drop=True)
