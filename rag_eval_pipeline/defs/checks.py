"""Asset checks: thin wrappers over the pure validators; the ones guarding downstream numbers block.
Each is named for the property it checks; Dagster prefixes the asset in its step key
(``judge_scores_quality_gates``)."""

import warnings
from collections.abc import Callable

import dagster as dg
import pandas as pd

from rag_eval_pipeline.answering.answer_cases import not_answered_reason
from rag_eval_pipeline.defs.names import (
    CANDIDATE_ANSWERS,
    JUDGE_SCORES,
    JUDGEMENT_LIST,
    KB_INDEX,
    KB_PASSAGES,
    METRIC_SUMMARY,
)
from rag_eval_pipeline.defs.partitions import answer_model_partitions
from rag_eval_pipeline.defs.resources import SettingsResource
from rag_eval_pipeline.metrics.budgets import budget_table, budgets_of, check_budgets
from rag_eval_pipeline.metrics.freshness import answers_provenance, current_provenance, freshness
from rag_eval_pipeline.metrics.gates import check_gates, failed_gates_line, gate_table
from rag_eval_pipeline.metrics.summary import summarize
from rag_eval_pipeline.metrics.validation import (
    coverage_problems,
    gold_title_problems,
    judge_error_share_problems,
    passage_problems,
    score_range_problems,
    scoring_completeness_problems,
)
from rag_eval_pipeline.reporting.markdown import to_markdown
from rag_eval_pipeline.retrieval.base import IndexManifest

# Partitioned asset checks are a Dagster preview feature; they are what lets a check run per
# answer model, so we accept the preview and keep its warning out of every CLI call.
warnings.filterwarnings("ignore", category=dg.PreviewWarning, message=".*partitions_def.*")


def _result(problems: list[str]) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        passed=not problems,
        description="; ".join(problems)[:500] or None,
        metadata={"problems": dg.MetadataValue.md("\n".join(f"- {p}" for p in problems) or "none")},
    )


@dg.asset_check(asset=KB_PASSAGES, name="unique_ids", blocking=True)
def kb_passages_unique_ids(kb_passages: pd.DataFrame) -> dg.AssetCheckResult:
    """Passage ids are unique and no passage is empty, so retrieval hits map to one passage."""
    return _result(passage_problems(kb_passages))


def _against(
    asset: str,
    name: str,
    upstream: str,
    problems: Callable[[pd.DataFrame, pd.DataFrame], list[str]],
    description: str,
    partitions_def: dg.PartitionsDefinition | None = answer_model_partitions,
) -> dg.AssetChecksDefinition:
    """A blocking check of ``asset`` against the table it follows from (``upstream``): the pure
    validator's problems with (checked, upstream), none passing."""

    @dg.asset_check(
        asset=asset,
        name=name,
        partitions_def=partitions_def,
        blocking=True,
        additional_ins={"upstream": dg.AssetIn(upstream)},
        description=description,
    )
    def check(checked: pd.DataFrame, upstream: pd.DataFrame) -> dg.AssetCheckResult:
        return _result(problems(checked, upstream))

    return check


judgement_list_gold_titles_in_kb = _against(
    JUDGEMENT_LIST,
    "gold_titles_in_kb",
    KB_PASSAGES,
    gold_title_problems,
    "Every gold supporting title is in the knowledge base, or retrieval recall is capped unseen.",
    partitions_def=None,
)
candidate_answers_complete = _against(
    CANDIDATE_ANSWERS,
    "complete",
    JUDGEMENT_LIST,
    lambda answers, judgement_list: coverage_problems(judgement_list, answers),
    "Every question of the judgement list is answered or recorded as failed.",
)
judge_scores_complete = _against(
    JUDGE_SCORES,
    "complete",
    CANDIDATE_ANSWERS,
    scoring_completeness_problems,
    "Every case has a row per judge, scored or recorded as failed: nothing vanishes.",
)


@dg.asset_check(asset=JUDGE_SCORES, name="in_range", partitions_def=answer_model_partitions, blocking=True)
def judge_scores_in_range(judge_scores: pd.DataFrame, settings: SettingsResource) -> dg.AssetCheckResult:
    """Scores lie in [0, 1], each metric on the scale its judge declares (``metrics.scales``:
    exactly 0, 0.5 or 1, or a mean of such verdicts on [0, 1] with each verdict kept apart and
    held to the scale); a value off its scale is named with its case and judge."""
    scales = settings.judge_registry().metric_scales(judge_scores["judge_id"].unique())
    return _result(score_range_problems(judge_scores, scales))


@dg.asset_check(
    asset=JUDGE_SCORES, name="judge_error_share", partitions_def=answer_model_partitions, blocking=True
)
def judge_scores_judge_error_share(
    judge_scores: pd.DataFrame, settings: SettingsResource
) -> dg.AssetCheckResult:
    """A judge that fails on too many cases makes its means unrepresentative."""
    return _result(judge_error_share_problems(judge_scores, settings.settings.max_judge_error_share))


@dg.asset_check(
    asset=JUDGE_SCORES,
    name="quality_gates",
    partitions_def=answer_model_partitions,
    blocking=True,
    additional_ins={
        CANDIDATE_ANSWERS: dg.AssetIn(CANDIDATE_ANSWERS),
        JUDGEMENT_LIST: dg.AssetIn(JUDGEMENT_LIST),
        KB_INDEX: dg.AssetIn(KB_INDEX),
    },
)
def judge_scores_quality_gates(
    context: dg.AssetCheckExecutionContext,
    judge_scores: pd.DataFrame,
    candidate_answers: pd.DataFrame,
    judgement_list: pd.DataFrame,
    kb_index: IndexManifest,
    settings: SettingsResource,
) -> dg.AssetCheckResult:
    """The configured metric thresholds and budgets (none by default): below a threshold, over a
    budget (latency, cost per case), on too few cases to conclude, or on answers that no longer
    describe the current evaluation (stale), the summary is blocked. The failing metrics and
    budgets, values and limits are named in the run's log, in the lines `rag-eval gate` prints."""
    thresholds, statistics = settings.settings.gates(), settings.settings.statistics
    budgets = budgets_of(settings.settings.budgets)
    if not thresholds and not budgets:
        return dg.AssetCheckResult(passed=True, metadata={"gates": "no thresholds configured"})
    if not_answered_reason(candidate_answers) is not None:  # nothing to gate: said once, by `answered`
        return dg.AssetCheckResult(
            passed=True,
            description="not gated: no case was answered (metric_summary's `answered` check says why)",
            metadata={"gates": "not gated: no case was answered"},
        )
    spec = (
        settings.answer_registry().try_resolve(context.partition_key) if context.has_partition_key else None
    )
    current = current_provenance(judgement_list["qid"], kb_index.version, spec.fingerprint if spec else None)
    stale = freshness(answers_provenance(candidate_answers), current)
    declared = settings.judge_registry().declared_metrics(judge_scores["judge_id"].unique())
    summary = summarize(
        judge_scores, candidate_answers, statistics.interval_method, statistics.min_cases, declared
    )
    results = check_gates(summary, thresholds, min_cases=statistics.min_cases)
    held = check_budgets(summary, budgets)
    # a budget's failure says what `rag-eval gate` says: "latency p95 2.31 s is greater than ..."
    failed = "; ".join(filter(None, [failed_gates_line(results, stale), *(r.line for r in held)]))
    if failed:
        context.log.error(f"quality gate failed: {failed}")
    metadata = {
        "gates": dg.MetadataValue.md(
            to_markdown(gate_table(results)) if results else "no thresholds configured"
        ),
        "stale": "; ".join(stale) or "no",
    }
    if held:
        metadata["budgets"] = dg.MetadataValue.md(to_markdown(budget_table(held)))
    return dg.AssetCheckResult(
        passed=not failed, description=failed or "every gate passed", metadata=metadata
    )


@dg.asset_check(
    asset=METRIC_SUMMARY,
    name="answered",
    partitions_def=answer_model_partitions,
    blocking=True,
    additional_ins={CANDIDATE_ANSWERS: dg.AssetIn(CANDIDATE_ANSWERS)},
)
def metric_summary_answered(candidate_answers: pd.DataFrame) -> dg.AssetCheckResult:
    """The model answered at least one case. One that could not answer at all (an agent that
    cannot start or be reached, a key refused, every case failed) has its answers, scores and
    summary stored with the reason, so a backfill of every model still builds the comparison
    (which names it, as missing); this check fails its run with that reason."""
    reason = not_answered_reason(candidate_answers)
    return dg.AssetCheckResult(
        passed=reason is None,
        description=reason or f"{int((candidate_answers['status'] == 'ok').sum())} cases answered",
        metadata={"cases": len(candidate_answers)},
    )


ASSET_CHECKS = [
    metric_summary_answered,
    judge_scores_complete,
    judge_scores_judge_error_share,
    judge_scores_quality_gates,
    kb_passages_unique_ids,
    judgement_list_gold_titles_in_kb,
    candidate_answers_complete,
    judge_scores_in_range,
]
