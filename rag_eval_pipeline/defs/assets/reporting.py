"""Across every answer model: the comparison, paired verdicts, judge validation, the HTML report
and the Prometheus metrics. Each reads every materialized partition; the reports refresh after
new summaries by themselves (``defs/automation.py``)."""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg
import pandas as pd
from upath import UPath

from rag_eval_pipeline.defs.assets.security import security_probes
from rag_eval_pipeline.defs.evaluations import InstanceRecords, against_baselines, baseline_diff_table
from rag_eval_pipeline.defs.freshness import stale_models
from rag_eval_pipeline.defs.io_manager import ABSENT_AS_NONE, FAN_IN, PINNED_BY, HtmlDocument
from rag_eval_pipeline.defs.metadata import baseline_diffs_metadata, comparison_metadata, verdicts_table
from rag_eval_pipeline.defs.names import (
    ARTIFACTS,
    BASELINE_DIFFS,
    CORRECTED_MEANS,
    EVAL_REPORT,
    JUDGE_AGREEMENT,
    JUDGE_SCORES,
    JUDGEMENT_LIST,
    KB_HEALTH,
    KB_INDEX,
    METRIC_SUMMARY,
    PAIRED_COMPARISON,
    REPORTING,
    SECURITY_PROBES,
    SIMULATED_SESSIONS,
    SIMULATION_SCORES,
    SIMULATION_SUMMARY,
)
from rag_eval_pipeline.defs.partitions import missing_models
from rag_eval_pipeline.defs.resources import HistoryResource, MonitoringResource, SettingsResource
from rag_eval_pipeline.metrics.comparison import VERDICT_RULE, paired_comparisons, standing, unpaired_notes
from rag_eval_pipeline.metrics.comparison import judge_validation as validate_judges
from rag_eval_pipeline.metrics.diff import DiffSpec
from rag_eval_pipeline.metrics.security import with_probes
from rag_eval_pipeline.metrics.summary import compare_models, language_breakdown
from rag_eval_pipeline.reporting.html import plotly_libraries
from rag_eval_pipeline.reporting.markdown import markdown_list, markdown_text, to_markdown
from rag_eval_pipeline.reporting.monitoring import prometheus_exposition
from rag_eval_pipeline.reporting.report import RenderedReport, case_languages, render_report
from rag_eval_pipeline.retrieval.base import IndexManifest
from rag_eval_pipeline.storage.baselines import BaselineError
from rag_eval_pipeline.storage.materializations import HISTORY, pages_folder
from rag_eval_pipeline.storage.probes import load_probes

ALL_PARTITIONS = {"allow_missing_partitions": True, FAN_IN: True}
PINNED_INPUTS = ("judge_scores", "candidate_answers")
# every cross-model asset is stale when the questions or the index change, as Dagster shows it
CURRENT_KNOWLEDGE = [KB_INDEX, JUDGEMENT_LIST]


def across_models(*partitioned_inputs: str, deps: list[str] | None = None):
    """An unpartitioned reporting asset that reads every materialized answer-model partition of
    ``partitioned_inputs``.

    Scores and answers are read as the partition's last accepted metric summary saw them: a run
    whose blocking check failed stored its judge_scores, but no summary, and leaves the reports
    as they were."""
    pinned = {**ALL_PARTITIONS, PINNED_BY: METRIC_SUMMARY}
    return dg.asset(
        group_name=REPORTING,
        ins={
            name: dg.AssetIn(metadata=ALL_PARTITIONS if name == METRIC_SUMMARY else pinned)
            for name in partitioned_inputs
        },
        deps=deps,
        code_version="2",
    )


@dg.asset(
    group_name=REPORTING,
    ins={
        METRIC_SUMMARY: dg.AssetIn(metadata=ALL_PARTITIONS),
        CORRECTED_MEANS: dg.AssetIn(metadata={ABSENT_AS_NONE: True}),
        PAIRED_COMPARISON: dg.AssetIn(metadata={ABSENT_AS_NONE: True}),
    },
    # a probe's attack success joins each model's numbers: read from `rag-eval probe`'s store, so
    # a newer probe makes the comparison read stale in the UI until it is compared again
    deps=[SECURITY_PROBES],
    code_version="5",
)
def model_comparison(
    context: dg.AssetExecutionContext,
    metric_summary: dict[str, pd.DataFrame],
    corrected_means: pd.DataFrame | None,
    paired_comparison: pd.DataFrame | None,
    judgement_list: pd.DataFrame,
    kb_index: IndexManifest,
    settings: SettingsResource,
) -> pd.DataFrame:
    """Every answer model's overall metrics side by side (reads every materialized partition);
    ``stale`` marks a model whose summary was computed on other questions, another index or
    another model, or whose later evaluation failed (its last good values stay, with the
    reason in ``note``); a registered model without results has a row of its own, ``missing``,
    with its failure's one line in ``note``: the others' results stand without it. A model's
    latest security probes (`rag-eval probe`) are a row of judge ``probe``: ``asr_<attack>``
    with its interval."""
    stale = stale_models(
        context.instance, metric_summary, settings.answer_registry(), judgement_list["qid"], kb_index.version
    )
    missing = missing_models(context.instance, metric_summary)
    for model, reason in missing.items():
        context.log.warning(f"{model}: {reason}")
    probes = load_probes(UPath(context.instance.storage_directory()) / ARTIFACTS)
    comparison = compare_models(with_probes(metric_summary, probes), stale, corrected_means, missing)
    context.add_output_metadata(
        comparison_metadata(
            comparison,
            language_breakdown(metric_summary),
            standing(paired_comparison),
            settings.settings.ui.dagster_url,
            case_languages(metric_summary),
            unpaired_notes(paired_comparison),
        )
    )
    return comparison


@across_models("judge_scores", deps=CURRENT_KNOWLEDGE)
def paired_comparison(
    context: dg.AssetExecutionContext, judge_scores: dict[str, pd.DataFrame], settings: SettingsResource
) -> pd.DataFrame:
    """Every pair of models on the same cases: mean difference with a paired bootstrap interval,
    an exact sign-flip test (and McNemar on correctness); "better" only when the test's p is below
    the significance level and the interval excludes 0."""
    statistics = settings.settings.statistics
    comparisons = paired_comparisons(
        judge_scores, statistics.significance_level, statistics.monte_carlo_draws, statistics.min_cases
    )
    decided = (
        comparisons[comparisons["verdict"] != "no difference shown"] if len(comparisons) else comparisons
    )
    one_count = len(comparisons) and comparisons["n"].nunique() == 1
    unpaired = unpaired_notes(comparisons)
    context.add_output_metadata(
        {
            "pairs": len(comparisons),
            "decided": len(decided),  # the pairs with a difference shown
            # each pair's cases, said once where every pair has as many (else the verdicts' `n`)
            **({"cases": int(comparisons["n"].iloc[0])} if one_count else {}),
            "verdict_rule": VERDICT_RULE.format(
                level=statistics.significance_level, min_cases=statistics.min_cases
            ),
            "verdicts": verdicts_table(comparisons),
            # pairs compared on fewer cases than both were judged on (correctness absent), and why
            **({"unpaired": dg.MetadataValue.md(markdown_list(unpaired))} if unpaired else {}),
            "comparisons": dg.MetadataValue.md(to_markdown(comparisons)),
        }
    )
    return comparisons


@across_models("judge_scores", deps=CURRENT_KNOWLEDGE)
def judge_validation(
    context: dg.AssetExecutionContext, judge_scores: dict[str, pd.DataFrame], settings: SettingsResource
) -> pd.DataFrame:
    """Each LLM judge against the reference judge (accuracy, Cohen's kappa, confusion) and on the
    calibration models: a judge that does not give oracle ~1 and null ~0 is flagged."""
    specs = {key: settings.answer_registry().try_resolve(key) for key in judge_scores}
    expected = {key: spec.calibration.expected_correctness if spec else None for key, spec in specs.items()}
    agreement, tables = validate_judges(judge_scores, expected)
    flagged = agreement[agreement["calibration_ok"] == False] if len(agreement) else agreement  # noqa: E712
    metadata = {
        "rows": len(agreement),
        "flagged_judges": ", ".join(sorted(set(flagged["judge_id"]))) if len(flagged) else "none",
        "agreement": dg.MetadataValue.md(to_markdown(agreement)),
    }
    for name, table in list(tables.items())[:10]:
        metadata[f"confusion: {name}"] = dg.MetadataValue.md(to_markdown(table.reset_index()))
    for judge_id in sorted(set(flagged["judge_id"])) if len(flagged) else []:
        context.log.warning(f"judge {judge_id} fails calibration on oracle/null: do not trust its scores")
    context.add_output_metadata(metadata)
    return agreement


@dg.asset(group_name=REPORTING, deps=[JUDGE_SCORES, *CURRENT_KNOWLEDGE], code_version="1")
def baseline_diffs(context: dg.AssetExecutionContext, settings: SettingsResource) -> pd.DataFrame:
    """Each named baseline (`rag-eval baseline set`) against the latest evaluation of its model:
    per metric the cases regressed, improved and unchanged, the mean change and the Holm-adjusted
    paired test, with the regressed cases linked to their drill-down (`rag-eval diff` in full)."""
    try:
        results, damaged = (
            against_baselines(InstanceRecords(context.instance), DiffSpec.of(settings.settings.statistics)),
            None,
        )
    except BaselineError as err:  # a damaged baselines file must not hold the report back
        context.log.warning(str(err))
        results, damaged = [], str(err)
    metadata = baseline_diffs_metadata(results, settings.settings.ui.dagster_url)
    context.add_output_metadata({**metadata, **({"unreadable": damaged} if damaged else {})})
    return baseline_diff_table(results)


REPORT_INS = {
    METRIC_SUMMARY: dg.AssetIn(metadata=ALL_PARTITIONS),
    **{name: dg.AssetIn(metadata={**ALL_PARTITIONS, PINNED_BY: METRIC_SUMMARY}) for name in PINNED_INPUTS},
    JUDGE_AGREEMENT: dg.AssetIn(metadata={ABSENT_AS_NONE: True}),
    CORRECTED_MEANS: dg.AssetIn(metadata={ABSENT_AS_NONE: True}),
    BASELINE_DIFFS: dg.AssetIn(metadata={ABSENT_AS_NONE: True}),
    KB_HEALTH: dg.AssetIn(metadata=ALL_PARTITIONS),  # each model's latest, for "Knowledge base"
}
# every agent version's simulation, as its last summary saw it (the report's "Simulated users")
SIMULATION_INS = {
    SIMULATION_SUMMARY: dg.AssetIn(metadata=ALL_PARTITIONS),
    **{
        name: dg.AssetIn(metadata={**ALL_PARTITIONS, PINNED_BY: SIMULATION_SUMMARY})
        for name in (SIMULATION_SCORES, SIMULATED_SESSIONS)
    },
}


def _simulated_versions(simulated: Mapping[str, pd.DataFrame]) -> dict:
    """Each simulated agent version's tables for the report; none without a simulation section."""
    if not simulated:  # only a report with a simulation section reads (and imports) its tables
        return {}
    from rag_eval_pipeline.trajectories.simulation.tables import report_versions

    return report_versions(
        simulated[SIMULATION_SUMMARY], simulated[SIMULATION_SCORES], simulated[SIMULATED_SESSIONS]
    )


def _report_metadata(
    run_id: str,
    metric_summary: Mapping[str, pd.DataFrame],
    simulations: Mapping,
    report: RenderedReport,
    settings: SettingsResource,
) -> dict[str, Any]:
    """What the report's asset page says: its size and pages, and links to the latest and this run's."""
    served = settings.settings.ui.reports_url  # `rag-eval ui` serves the artifacts folder there
    return {
        "models": len(metric_summary),
        "simulated_agent_versions": len(simulations),
        "size_kib": round(len(report.html.encode()) / 1024),
        "case_pages": len(report.pages) + 1,
        "report": dg.MetadataValue.url(f"{served}/{EVAL_REPORT}.html"),
        # a link named by its run: the URL in full (a run id) overflowed the pane at 1,440 px
        "this_report": dg.MetadataValue.md(
            f"[this run's report ({run_id[:8]})]({served}/{HISTORY}/{EVAL_REPORT}/{run_id}.html)"
        ),
    }


def eval_report_asset(with_simulation: bool) -> dg.AssetsDefinition:
    """The report; with a simulation section it reads every agent version's simulation too
    (without one, nothing of that partitioning is upstream)."""

    @dg.asset(
        name=EVAL_REPORT,
        group_name=REPORTING,
        ins={**REPORT_INS, **(SIMULATION_INS if with_simulation else {})},
        code_version="9",
    )
    def eval_report(
        context: dg.AssetExecutionContext,
        metric_summary: dict[str, pd.DataFrame],
        judge_scores: dict[str, pd.DataFrame],
        candidate_answers: dict[str, pd.DataFrame],
        judgement_list: pd.DataFrame,
        kb_index: IndexManifest,
        paired_comparison: pd.DataFrame,
        judge_validation: pd.DataFrame,
        judge_agreement: pd.DataFrame | None,
        corrected_means: pd.DataFrame | None,
        baseline_diffs: pd.DataFrame | None,
        kb_health: dict[str, dict],
        history: HistoryResource,
        settings: SettingsResource,
        **simulated: dict[str, pd.DataFrame],
    ) -> HtmlDocument:
        """One self-contained HTML report: scores with intervals, distributions, diagnoses, paired
        comparison, trend over time, a filterable per-case table and, where the agent was
        simulated, its scenarios. Opens without a network."""
        stale = stale_models(
            context.instance,
            metric_summary,
            settings.answer_registry(),
            judgement_list["qid"],
            kb_index.version,
        )
        simulations = _simulated_versions(simulated)
        report = render_report(
            metric_summary,
            judge_scores,
            candidate_answers,
            judgement_list,
            history.read(),
            paired_comparison,
            VERDICT_RULE.format(
                level=settings.settings.statistics.significance_level,
                min_cases=settings.settings.statistics.min_cases,
            ),
            stale,
            judge_validation,
            judge_agreement,
            history.read_agreement(),
            baseline_diffs,
            corrected_means,
            missing_models(context.instance, metric_summary),
            pages_folder(EVAL_REPORT, context.run_id),
            settings.settings.dataset.documents,  # the images the overlays refer to
            load_probes(UPath(context.instance.storage_directory()) / ARTIFACTS),  # `rag-eval probe`'s
            simulations,
            kb_health,
        )
        context.add_output_metadata(
            _report_metadata(context.run_id, metric_summary, simulations, report, settings)
        )
        # the images the report shows, display copies beside it (named by their content: once)
        return HtmlDocument(report.html, {**plotly_libraries(), **report.files}, report.pages)

    return eval_report


@across_models(METRIC_SUMMARY, deps=CURRENT_KNOWLEDGE)
def prometheus_metrics(
    context: dg.AssetExecutionContext, metric_summary: dict[str, pd.DataFrame], monitoring: MonitoringResource
) -> dict:
    """rag_eval_score{model,metric,judge} and counters of cases, failures and cost, written for
    node-exporter's textfile collector (and pushed to a Pushgateway when one is configured)."""
    exposition = prometheus_exposition(metric_summary)
    path = monitoring.publish(exposition)
    series = sum(1 for line in exposition.decode().splitlines() if line and not line.startswith("#"))
    context.add_output_metadata(
        {
            # Dagster shows a path on one line: the file's name, then its folder (which wraps)
            "textfile": Path(path).name,
            "textfile_folder": dg.MetadataValue.md(markdown_text(str(Path(path).parent))),
            "series": series,
            "pushgateway": monitoring.pushgateway_url or "not configured",
        }
    )
    return {"textfile": path, "series": series}


def reporting_assets(with_simulation: bool = False) -> list[dg.AssetsDefinition]:
    """The assets across every answer model (the report reading the simulations where defined)."""
    return [
        security_probes,
        model_comparison,
        paired_comparison,
        judge_validation,
        baseline_diffs,
        eval_report_asset(with_simulation),
        prometheus_metrics,
    ]
