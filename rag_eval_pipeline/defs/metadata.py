"""What each asset reports in the UI, shaped from its output by pure functions, so asset bodies
stay a few lines of loading, calling and returning."""

from typing import Any

import dagster as dg
import pandas as pd

from rag_eval_pipeline.answering.spec import AnswerSpec
from rag_eval_pipeline.llm.services import LLMServices
from rag_eval_pipeline.metrics.schema import OVERALL, USAGE
from rag_eval_pipeline.reporting.charts import bar_chart_svg, svg_markdown
from rag_eval_pipeline.reporting.markdown import to_markdown
from rag_eval_pipeline.reporting.report import HEADLINE_METRICS
from rag_eval_pipeline.retrieval.base import IndexManifest


def index_metadata(manifest: IndexManifest) -> dict[str, Any]:
    details = manifest.details
    return {
        "backend": manifest.backend,
        "retrieval_modes": ", ".join(manifest.modes),
        "embedding_model": str(details.get("embedding_model")),
        "index_version": manifest.version,
        "documents": manifest.documents,
        "index_size_bytes": int(details.get("size_bytes", 0)),
        "semantic_field": str(details.get("semantic", details.get("embedding_model"))),
        # embedded: exact or hnsw; Elasticsearch's kNN is HNSW whenever it holds vectors
        "vector_search": str(details.get("vector_search") or _cluster_vector_search(details)),
        "build_seconds": manifest.build_seconds,
        "location": dg.MetadataValue.path(manifest.location),
    }


def _cluster_vector_search(details: dict[str, Any]) -> str:
    return "none" if details.get("semantic", "none") == "none" else "elasticsearch knn (hnsw)"


def answers_metadata(
    spec: AnswerSpec, answers: pd.DataFrame, services: LLMServices, manifest: IndexManifest, seconds: float
) -> dict[str, Any]:
    ok = answers["status"].eq("ok")
    return {
        "answer_config": spec.answer_config,
        "provider": spec.provider,
        "model_id": spec.model_id,
        "prompt_version": spec.prompt_version,
        "calibration": spec.calibration.name.lower(),
        "cases": len(answers),
        "failed_cases": int((~ok).sum()),
        "api_calls": services.api_calls,
        "cache_hits": services.cache_hits,
        "cost_usd": float(answers["cost_usd"].sum()),
        "index_version": manifest.version,
        "seconds": round(seconds, 3),
    }


def scores_metadata(judge_ids: list[str], scores: pd.DataFrame, services: LLMServices) -> dict[str, Any]:
    return {
        "judges": ", ".join(judge_ids),
        "rows": len(scores),
        "answer_failed": int((scores["status"] == "answer_failed").sum()),
        "judge_errors": int((scores["status"] == "judge_error").sum()),
        "api_calls": services.api_calls,
        "cache_hits": services.cache_hits,
        "cost_usd": float(scores["cost_usd"].sum()),
    }


WORST_CASES = 10


def _usage_table(usage: pd.DataFrame) -> pd.DataFrame:
    """Tokens as whole numbers, dollars as dollars (the markdown renders floats to 3 places)."""
    table = usage.pivot(index="judge_id", columns="metric", values="total").reset_index()
    for column in [c for c in table.columns if c.endswith("_tokens")]:
        table[column] = table[column].map(lambda v: "–" if pd.isna(v) else f"{int(v):,}")
    return table


def worst_cases_table(
    partition: str,
    scores: pd.DataFrame,
    answers: pd.DataFrame,
    cases: pd.DataFrame,
    run_id: str | None = None,
) -> dg.TableMetadataValue | None:
    """The lowest-correctness cases of this partition, each with its answer, truth, scores,
    diagnosis, retrieved titles (gold starred), the passages the model read and the command that
    explains it as this run scored it: a bad score is traced from the asset page."""
    scored = (
        scores[scores["status"] == "ok"].dropna(subset=["correctness"])
        if "correctness" in scores
        else scores[:0]
    )
    if scored.empty:
        return None
    worst = scored.sort_values(["correctness", "qid"], kind="stable").drop_duplicates("qid").head(WORST_CASES)
    by_qid = answers.set_index("qid")
    truth = cases.set_index("qid")
    records = []
    for row in worst.itertuples():
        gold = set(truth.loc[row.qid, "gold_titles"])
        titles = [f"{t} *" if t in gold else t for t in by_qid.loc[row.qid, "retrieved_titles"]]
        read = zip(by_qid.loc[row.qid, "retrieved_titles"], by_qid.loc[row.qid, "retrieved_passages"])
        passages = " | ".join(f"[{n}] {t}: {_clip(str(p))}" for n, (t, p) in enumerate(read, start=1))
        records.append(
            dg.TableRecord(
                {
                    "qid": row.qid,
                    "question": str(truth.loc[row.qid, "question"]),
                    "answer": str(by_qid.loc[row.qid, "answer"]),
                    "truth": str(truth.loc[row.qid, "answer"]),
                    "judge": row.judge_id,
                    "correctness": float(row.correctness),
                    "faithfulness": _number(getattr(row, "faithfulness", None)),
                    "context_relevance": _number(getattr(row, "context_relevance", None)),
                    "diagnosis": str(row.diagnosis),
                    "retrieved (* gold)": "; ".join(titles),
                    "passages": passages,
                    "explain": f"rag-eval explain {row.qid} --model {partition}"
                    + (f" --run {run_id}" if run_id else ""),
                }
            )
        )
    columns = [dg.TableColumn(name, "float" if name in _SCORES else "string") for name in records[0].data]
    return dg.MetadataValue.table(records, dg.TableSchema(columns))


_SCORES = ("correctness", "faithfulness", "context_relevance")
PASSAGE_CLIP = 160  # characters of each passage in the table (the explain command shows more)


def _clip(text: str) -> str:
    return text if len(text) <= PASSAGE_CLIP else text[: PASSAGE_CLIP - 1] + "…"


def _number(value: object) -> float | None:
    return None if value is None or pd.isna(value) else float(value)  # type: ignore[arg-type]


def summary_metadata(summary: pd.DataFrame) -> dict[str, Any]:
    """The overall table, token and dollar totals, a chart, and every headline mean."""
    overall = summary[summary["group"] == OVERALL]
    chart_rows = overall[overall["metric"].isin(HEADLINE_METRICS)].assign(series=overall["judge_id"])
    usage = summary[summary["group"] == USAGE]
    cost = usage[usage["metric"] == "cost_usd"]
    table = overall[
        ["judge_id", "metric", "mean", "ci_low", "ci_high", "n", "n_failed", "n_judge_errors", "note"]
    ]
    return {
        "summary": dg.MetadataValue.md(to_markdown(table)),
        "usage": dg.MetadataValue.md(to_markdown(_usage_table(usage))),
        "chart": dg.MetadataValue.md(svg_markdown(bar_chart_svg(chart_rows), "mean score per metric")),
        "cost_usd": dg.MetadataValue.float(float(cost["total"].sum(min_count=1))),
        "judge_errors": int(overall.groupby("judge_id")["n_judge_errors"].max().sum()),
        **{
            f"{row.judge_id}/{row.metric}": dg.MetadataValue.float(round(float(row.mean), 4))
            for row in overall.itertuples()
            if not pd.isna(row.mean)
        },
    }


HEADLINE_COLUMNS = (
    "answer_model",
    "judge_id",
    "n_cases",
    "n_failed",
    "stale",
    "correctness",
    "faithfulness",
    "context_relevance",
    "f1",
    "note",
)


def comparison_metadata(comparison: pd.DataFrame) -> dict[str, Any]:
    """The comparison as two tables: the headline columns, narrow enough for the asset page, and
    every metric (wide: scroll the stored table, or read it with the CLI)."""
    headline = [c for c in HEADLINE_COLUMNS if c in comparison.columns]
    stale = comparison[comparison["stale"].astype(bool)] if "stale" in comparison else comparison[:0]
    reasons = {
        model: (
            rows["note"].iloc[0] if "note" in rows and rows["note"].iloc[0] else "other questions or index"
        )
        for model, rows in stale.groupby("answer_model")
    }
    return {
        "stale_models": "; ".join(f"{m}: {r}" for m, r in reasons.items()) or "none",
        "models": int(comparison["answer_model"].nunique()) if len(comparison) else 0,
        "comparison": dg.MetadataValue.md(to_markdown(comparison[headline] if headline else comparison)),
        "all_metrics": dg.MetadataValue.md(to_markdown(comparison)),
    }
