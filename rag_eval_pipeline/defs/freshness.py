"""The freshness of a stored summary as the instance and the configuration see it now: the glue
around ``metrics.freshness.freshness``, the one rule for gate, checks, comparison and report."""

import dagster as dg
import pandas as pd

from rag_eval_pipeline.answering.registry import AnswerRegistry
from rag_eval_pipeline.defs.partitions import newest_finished_run
from rag_eval_pipeline.metrics.freshness import summary_stale_reasons


def stale_reasons(
    instance: dg.DagsterInstance,
    partition: str,
    summary: pd.DataFrame,
    registry: AnswerRegistry,
    judgement_qids: pd.Series,
    kb_version: str,
) -> list[str]:
    """Why this partition's stored summary may not be trusted now (empty: it may)."""
    spec = registry.try_resolve(partition)
    return summary_stale_reasons(
        partition,
        summary,
        spec.fingerprint if spec else None,
        judgement_qids,
        kb_version,
        newest_finished_run(instance, partition),
    )


def stale_models(
    instance: dg.DagsterInstance,
    summaries: dict[str, pd.DataFrame],
    registry: AnswerRegistry,
    judgement_qids: pd.Series,
    kb_version: str,
) -> dict[str, list[str]]:
    """Every model whose summary is stale, with why."""
    reasons = {
        model: stale_reasons(instance, model, summary, registry, judgement_qids, kb_version)
        for model, summary in summaries.items()
    }
    return {model: why for model, why in reasons.items() if why}
