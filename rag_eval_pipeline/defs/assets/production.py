"""Production traffic, a partition per day: the day's interactions from every source, a seeded
random sample of them, their scores by reference-free judges, the day's summary held to the
thresholds by a blocking check; then the trend across days, its report and Prometheus series.
Built from the settings, since the days begin on ``production.start_date``."""

import json
from dataclasses import dataclass

import dagster as dg
import pandas as pd

from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.defs.assets.progress import progress_logger
from rag_eval_pipeline.defs.feedback_metadata import feedback_interactions_metadata, feedback_summary_metadata
from rag_eval_pipeline.defs.io_manager import FAN_IN, HtmlDocument
from rag_eval_pipeline.defs.names import (
    DATA_VERSION_TAG,
    PRODUCTION,
    PRODUCTION_DAY,
    PRODUCTION_DIGEST_TAG,
    PRODUCTION_INTERACTIONS,
    PRODUCTION_JOB,
    PRODUCTION_REPORT,
    PRODUCTION_REPORT_JOB,
    PRODUCTION_SAMPLE,
    PRODUCTION_SCORES,
    PRODUCTION_SOURCES,
    PRODUCTION_SUMMARY,
    PRODUCTION_TREND,
    TRIGGER_TAG,
)
from rag_eval_pipeline.defs.production_metadata import (
    interactions_metadata,
    sample_metadata,
    scores_metadata,
    summary_metadata,
    worst_production_cases,
)
from rag_eval_pipeline.defs.resources import (
    EvaluationLockResource,
    KnowledgeBaseResource,
    LLMResource,
    MonitoringResource,
    SettingsResource,
    TracingResource,
)
from rag_eval_pipeline.defs.resources.production import ProductionResource
from rag_eval_pipeline.judges.score_cases import score_cases
from rag_eval_pipeline.metrics.budgets import budget_table
from rag_eval_pipeline.metrics.gates import failed_gates_line, gate_table
from rag_eval_pipeline.production.feedback import (
    SELECTION_WARNING,
    chance_lines,
    disagreements,
    feedback_agreement,
    feedback_by_topic,
    feedback_rows,
    judge_pairs,
    topic_lines,
)
from rag_eval_pipeline.production.feedback_sources import read_feedback
from rag_eval_pipeline.production.interactions import day_digests
from rag_eval_pipeline.production.sampling import draw_sample, filtered
from rag_eval_pipeline.production.scoring import (
    VERSION_GROUP,
    day_budgets,
    day_gates,
    over_budget,
    production_cases,
    summarize_day,
    trend_rows,
    with_versions,
)
from rag_eval_pipeline.production.settings import source_name
from rag_eval_pipeline.reporting.html import plotly_libraries
from rag_eval_pipeline.reporting.markdown import to_markdown
from rag_eval_pipeline.reporting.production import (
    production_exposition,
    render_production_report,
    users_section,
)
from rag_eval_pipeline.storage.materializations import HISTORY
from rag_eval_pipeline.tracing.events import SpanRef, evaluation_events

PRODUCTION_TRIGGER = "production_logs"
# refresh after any day changes: eager, but a day without traffic stays missing for good and is
# not waited for
AFTER_ANY_DAY = dg.AutomationCondition.eager().without(~dg.AutomationCondition.any_deps_missing())
SPENT = "spent_usd"  # what one materialization of a day's scores spent: the day's budget is cumulative


@dataclass(frozen=True)
class ProductionDefinitions:
    assets: list
    checks: list
    jobs: list
    sensors: list


def production_days(settings: Settings) -> dg.DailyPartitionsDefinition:
    """A partition per day from ``production.start_date`` up to today (today's rows are scored
    as they come, and again when more arrive)."""
    production = settings.production
    assert production is not None
    return dg.DailyPartitionsDefinition(
        start_date=production.start_date.isoformat(), timezone=production.timezone, end_offset=1
    )


def build_production(settings: Settings) -> ProductionDefinitions:
    """The production assets, their check, the two jobs and the sensors: a day's assets and its
    check are partitioned by day from ``production.start_date``, the trend and report read every
    day."""
    production = settings.production
    assert production is not None
    days = production_days(settings)
    summary = _summary(days)
    day_job, report_job = _jobs(days)
    return ProductionDefinitions(
        [
            production_sources,
            _interactions(days),
            _sample(days),
            _scores(days),
            summary,
            _verdict(days),
            production_trend,
            production_report,
        ],
        [_quality_gates(summary, days)],
        [day_job, report_job],
        [_logs_sensor(day_job, days, production.sensor_interval_s), REPORTS_AUTOMATION],
    )


@dg.asset(name=PRODUCTION_SOURCES, group_name=PRODUCTION, code_version="1")
def production_sources(context: dg.AssetExecutionContext, settings: SettingsResource) -> pd.DataFrame:
    """Where each day's interactions are read from, a row per configured source (nothing is
    read here). Unpartitioned, every day follows from it: production is one family of its own in
    a whole-lineage backfill, beside the answer models, never a second root partitioning."""
    chosen = settings.settings.production
    sources = list(chosen.sources) if chosen is not None else []
    frame = pd.DataFrame(
        [{"kind": s.kind, "source": source_name(s)} for s in sources], columns=["kind", "source"]
    )
    context.add_output_metadata(
        {"sources": len(frame), "list": dg.MetadataValue.md(to_markdown(frame) if len(frame) else "none")}
    )
    return frame


def _interactions(days: dg.DailyPartitionsDefinition) -> dg.AssetsDefinition:
    @dg.asset(group_name=PRODUCTION, partitions_def=days, deps=[PRODUCTION_SOURCES], code_version="2")
    def production_interactions(
        context: dg.AssetExecutionContext, production_sources: ProductionResource
    ) -> pd.DataFrame:
        """The day's interactions from every source (logs, Phoenix, span exports): question, served
        answer and contexts, time, trace, agent version, feedback. A row that cannot be read is
        named by file and line (or span) and left out; the rest of the day is kept."""
        read = production_sources.read_day(context.partition_key)
        for problem in read.problems:
            context.log.warning(f"skipped: {problem}")
        context.add_output_metadata(interactions_metadata(read))
        digest = day_digests(read.frame).get(context.partition_key, "empty")
        context.set_data_version(context.asset_key, dg.DataVersion(digest))  # same rows: nothing stale
        chosen = production_sources.production.feedback
        if chosen is None:
            return read.frame
        feedback = read_feedback(chosen, read.frame)  # users' feedback joined (production.feedback)
        for problem in feedback.problems:
            context.log.warning(f"feedback skipped: {problem}")
        context.add_output_metadata(feedback_interactions_metadata(feedback, chosen.negative_below))
        return feedback.interactions

    return production_interactions


def _sample(days: dg.DailyPartitionsDefinition) -> dg.AssetsDefinition:
    @dg.asset(group_name=PRODUCTION, partitions_def=days, code_version="1")
    def production_sample(
        context: dg.AssetExecutionContext, production_interactions: pd.DataFrame, settings: SettingsResource
    ) -> pd.DataFrame:
        """A seeded random sample of the day's interactions that the filters keep, at most
        ``sample_per_day``, in proportion to each agent version's traffic: the same seed draws
        the same sample, and late rows change it only where they rank below the cut."""
        chosen = settings.settings.production
        kept = filtered(production_interactions, chosen.filters)
        sample = draw_sample(
            kept, context.partition_key, chosen.sample_per_day, chosen.seed, chosen.stratify_by_agent_version
        )
        context.add_output_metadata(sample_metadata(production_interactions, kept, sample, chosen))
        return sample

    return production_sample


def _scores(days: dg.DailyPartitionsDefinition) -> dg.AssetsDefinition:
    @dg.asset(group_name=PRODUCTION, partitions_def=days, code_version="1")
    def production_scores(
        context: dg.AssetExecutionContext,
        production_sample: pd.DataFrame,
        llm: LLMResource,
        knowledge_base: KnowledgeBaseResource,
        settings: SettingsResource,
        evaluation_lock: EvaluationLockResource,
        tracing: TracingResource,
    ) -> pd.DataFrame:
        """Every sampled case scored by the reference-free judges on the contexts it was served
        (no metric that needs a reference answer is attempted); the day's budget, when set, stops
        the calls it does not allow, and their cases stay unscored (absent), said in one line.
        With ``tracing.evaluation_events``, every score goes out as a `gen_ai.evaluation.result`
        event, a child of the agent's own span where the interaction came from its traces."""
        chosen = settings.settings.production
        registry = settings.judge_registry()
        specs, left_out = registry.reference_free(chosen.judges or settings.settings.judges)
        for spec in left_out:
            context.log.warning(
                f"judge {spec.judge_id} measures nothing without a reference answer: left out"
            )
        # the day's spend is written down call by call: a crashed run's calls count too
        services = llm.services(chosen.daily_budget_usd, budget_name=f"production-{context.partition_key}")
        spent_before = services.budget.spent_before_usd if services.budget is not None else 0.0
        judges = [registry.build(s, services, knowledge_base.knowledge_base.query_embedder()) for s in specs]
        scores = score_cases(
            production_cases(production_sample),
            judges,
            on_progress=progress_logger(context, "judged"),
            concurrency=None,  # the provider's client bounds the calls in flight
        )
        scores = with_versions(scores, production_sample)
        stopped = over_budget(scores)
        if stopped:
            context.log.warning(
                f"the daily budget of ${chosen.daily_budget_usd:g} stopped {stopped} of "
                f"{len(production_sample)} cases (${spent_before + services.budget.spent_usd:.4f} spent "
                "today): they are unscored, not 0"
            )
        sent = _send_events(context, scores, production_sample, settings, tracing) if tracing.events else {}
        context.add_output_metadata(
            {
                **sent,
                **scores_metadata([s.judge_id for s in specs], scores, services, stopped),
                SPENT: dg.MetadataValue.float(services.budget.spent_usd if services.budget else 0.0),
                "worst_cases": dg.MetadataValue.md(
                    to_markdown(worst_production_cases(scores, production_sample))
                ),
            }
        )
        return scores

    return production_scores


def _send_events(
    context: dg.AssetExecutionContext,
    scores: pd.DataFrame,
    sample: pd.DataFrame,
    settings: SettingsResource,
    tracing: TracingResource,
) -> dict:
    """The day's scores as evaluation events, each a child of the agent's root span of its
    interaction (none where the interaction was logged without its trace and span)."""
    spans = sample.get("span_id", pd.Series([None] * len(sample), index=sample.index))
    parents = {
        (str(i), 0): SpanRef.of(t, s) for i, t, s in zip(sample["interaction_id"], sample["trace_id"], spans)
    }
    events = evaluation_events(
        scores,
        parents,
        {"rag_eval.production_day": context.partition_key, "rag_eval.dagster_run_id": context.run_id},
        settings.judge_registry().declared_reference_free(scores["judge_id"].unique()),
        settings.settings.production.gates(),
        settings.settings.redactor(),
    )
    return tracing.send_scores_events(events, context.log)


def _summary(days: dg.DailyPartitionsDefinition) -> dg.AssetsDefinition:
    @dg.asset(group_name=PRODUCTION, partitions_def=days, code_version="3")
    def production_summary(
        context: dg.AssetExecutionContext,
        production_scores: pd.DataFrame,
        production_sample: pd.DataFrame,
        production_interactions: pd.DataFrame,
        settings: SettingsResource,
    ) -> pd.DataFrame:
        """The day's mean of each reference-free metric with its 95% interval, overall and per agent
        version, with counts, the day's tokens and dollars, and the agent's latency p50 / p95 / max
        and cost per interaction (where its spans or logs say); with ``production.feedback``, the
        users' feedback rate, mean and thumbs-down rate over all the day's traffic (judge
        ``users``) and each judge against them. Held to the thresholds and budgets by its check."""
        statistics = settings.settings.statistics
        declared = settings.judge_registry().declared_reference_free(production_scores["judge_id"].unique())
        summary = summarize_day(
            production_scores, declared, statistics.interval_method, statistics.min_cases, production_sample
        )
        chosen = settings.settings.production
        users: dict = {}
        if chosen.feedback is not None and "feedback" in production_interactions:
            negative = chosen.feedback.negative_below
            rows = feedback_rows(production_interactions, negative, (VERSION_GROUP,))
            summary = pd.concat([summary, pd.DataFrame(rows, columns=summary.columns)], ignore_index=True)
            users = feedback_summary_metadata(
                summary, production_scores, production_sample, declared, negative, production_interactions
            )
        failed = _failed_line(
            day_gates(summary, chosen.gates(), statistics.min_cases),
            day_budgets(summary, chosen.budgets_held()),
        )
        context.add_output_metadata(
            {**summary_metadata(summary), **users, "thresholds": failed or "every threshold passed"}
        )
        return summary

    return production_summary


def _quality_gates(
    production_summary: dg.AssetsDefinition, days: dg.DailyPartitionsDefinition
) -> dg.AssetChecksDefinition:
    @dg.asset_check(asset=production_summary, name="quality_gates", partitions_def=days, blocking=True)
    def production_summary_quality_gates(
        context: dg.AssetCheckExecutionContext, production_summary: pd.DataFrame, settings: SettingsResource
    ) -> dg.AssetCheckResult:
        """The day against the production thresholds (faithfulness 0.8 by default) and budgets
        (none by default): below a threshold, over a budget, or on too few scored cases to
        conclude, the day fails, naming metric or figure, value and limit."""
        chosen = settings.settings.production
        results = day_gates(production_summary, chosen.gates(), settings.settings.statistics.min_cases)
        held = day_budgets(production_summary, chosen.budgets_held())
        failed = _failed_line(results, held)
        if failed:
            context.log.error(f"{context.partition_key}: production threshold failed: {failed}")
        metadata = {"gates": dg.MetadataValue.md(to_markdown(gate_table(results)))}
        if held:
            metadata["budgets"] = dg.MetadataValue.md(to_markdown(budget_table(held)))
        return dg.AssetCheckResult(
            passed=not failed, description=failed or "every threshold passed", metadata=metadata
        )

    return production_summary_quality_gates


def _failed_line(gates: list, budgets: list) -> str:
    """What failed, thresholds then budgets, in one line (a budget in the line `gate` prints)."""
    return "; ".join(filter(None, [failed_gates_line(gates), *(b.line for b in budgets)]))


def _verdict(days: dg.DailyPartitionsDefinition) -> dg.AssetsDefinition:
    @dg.asset(group_name=PRODUCTION, partitions_def=days, deps=[PRODUCTION_SUMMARY], code_version="1")
    def production_verdict(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        """Materialized (green) on a day that met every production threshold; on a day that did
        not, the summary's blocking check stops it, and the day reads Failed (red) here: filter
        this asset's Partitions tab by Failed to list the failing days."""
        return dg.MaterializeResult(metadata={"day": context.partition_key, "thresholds": "every one met"})

    return production_verdict


EVERY_DAY = {"allow_missing_partitions": True, FAN_IN: True}  # a fan-in over the scored days


@dg.asset(
    group_name=PRODUCTION,
    ins={PRODUCTION_SUMMARY: dg.AssetIn(metadata=EVERY_DAY)},
    code_version="1",
    automation_condition=AFTER_ANY_DAY,
)
def production_trend(
    context: dg.AssetExecutionContext,
    production_summary: dict[str, pd.DataFrame],
    settings: SettingsResource,
    monitoring: MonitoringResource,
) -> pd.DataFrame:
    """Every scored day's means with their intervals, per judge, metric and agent version,
    against its threshold; published as ``rag_eval_production_score{metric,judge,
    agent_version,day}`` for Prometheus."""
    statistics = settings.settings.statistics
    gates = settings.settings.production.gates()
    results = {day: day_gates(s, gates, statistics.min_cases) for day, s in production_summary.items()}
    trend = trend_rows(production_summary, results)
    path = monitoring.publish(production_exposition(trend), PRODUCTION)
    budgets = settings.settings.production.budgets_held()
    over = {d for d, s in production_summary.items() if any(not b.passed for b in day_budgets(s, budgets))}
    failing = sorted({d for d, r in results.items() if any(not g.passed for g in r)} | over)
    context.add_output_metadata(
        {
            "days": len(production_summary),
            "days_failing": ", ".join(failing) or "none",
            "textfile": dg.MetadataValue.path(path),
            "trend": dg.MetadataValue.md(to_markdown(trend[trend["agent_version"] == "all"])),
        }
    )
    return trend


@dg.asset(
    group_name=PRODUCTION,
    ins={
        PRODUCTION_SCORES: dg.AssetIn(metadata=EVERY_DAY),
        PRODUCTION_SAMPLE: dg.AssetIn(metadata=EVERY_DAY),
    },
    code_version="3",
    automation_condition=AFTER_ANY_DAY,
)
def production_report(
    context: dg.AssetExecutionContext,
    production_trend: pd.DataFrame,
    production_scores: dict[str, pd.DataFrame],
    production_sample: dict[str, pd.DataFrame],
    settings: SettingsResource,
) -> HtmlDocument:
    """One self-contained HTML page: each metric day by day with intervals and its threshold,
    per agent version, the days that failed and their cost, the latest day's worst cases, and
    (with ``production.feedback``) the judges against users."""
    latest = max(production_scores) if production_scores else None
    worst = (
        worst_production_cases(production_scores[latest], production_sample.get(latest))
        if latest
        else pd.DataFrame()
    )
    notes = [f"sources: {', '.join(source_name(s) for s in settings.settings.production.sources)}"]
    served = settings.settings.ui.reports_url
    context.add_output_metadata(
        {
            "days": int(production_trend["day"].nunique()) if len(production_trend) else 0,
            "report": dg.MetadataValue.url(f"{served}/{PRODUCTION_REPORT}.html"),
            "this_report": dg.MetadataValue.url(
                f"{served}/{HISTORY}/{PRODUCTION_REPORT}/{context.run_id}.html"
            ),
        }
    )
    users = _users_section(production_scores, production_sample, settings)
    return HtmlDocument(render_production_report(production_trend, worst, notes, users), plotly_libraries())


def _users_section(
    scores: dict[str, pd.DataFrame], samples: dict[str, pd.DataFrame], settings: SettingsResource
) -> str:
    """The report's judges-against-users section over every scored day (none without feedback)."""
    chosen = settings.settings.production.feedback
    days = [d for d in sorted(scores) if d in samples and "feedback" in samples[d]]
    if chosen is None or not days:
        return ""
    every_score = pd.concat([scores[d] for d in days], ignore_index=True)
    every_sample = pd.concat([samples[d] for d in days], ignore_index=True)
    declared = settings.judge_registry().declared_reference_free(every_score["judge_id"].unique())
    pairs = judge_pairs(every_score, every_sample, declared)
    agreement = feedback_agreement(pairs, chosen.negative_below)
    worst = disagreements(pairs, chosen.negative_below)
    worst = worst.assign(question=worst["question"].str.slice(0, 80))
    latest = days[-1]  # per topic: the latest day's sampled interactions, all of them scored or not
    by_topic = topic_lines(feedback_by_topic(samples[latest], chosen.negative_below), 80)
    return users_section(
        agreement, worst, chance_lines(agreement), SELECTION_WARNING, by_topic, f"the sample of {latest}"
    )


def _jobs(days: dg.DailyPartitionsDefinition) -> tuple:
    """One day's job (read, sample, score, summarize) and the trend's."""
    day_job = dg.define_asset_job(
        PRODUCTION_JOB,
        selection=dg.AssetSelection.assets(*PRODUCTION_DAY),
        partitions_def=days,
        description="One day of production traffic: read, sample, score without references, summarize.",
    )
    report_job = dg.define_asset_job(
        PRODUCTION_REPORT_JOB,
        selection=dg.AssetSelection.assets(PRODUCTION_TREND, PRODUCTION_REPORT),
        description="The trend across days, its report and Prometheus series.",
    )
    return day_job, report_job


def _logs_sensor(day_job, days: dg.DailyPartitionsDefinition, interval_s: float) -> dg.SensorDefinition:
    @dg.sensor(
        job=day_job,
        minimum_interval_seconds=interval_s,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Materializes a day of production traffic when its rows arrive in a source, and "
        "again when late rows change it (only that day).",
    )
    def production_logs_sensor(context: dg.SensorEvaluationContext, production_sources: ProductionResource):
        return day_requests(context, production_sources, days)

    return production_logs_sensor


REPORTS_AUTOMATION = dg.AutomationConditionSensorDefinition(
    "production_reports_sensor",
    target=dg.AssetSelection.assets(PRODUCTION_TREND, PRODUCTION_REPORT),
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Refreshes the production trend and report after any day is scored.",
)


def stored_digest(instance: dg.DagsterInstance, day: str) -> str | None:
    """The rows' digest of the day's latest stored interactions (their data version): a day
    `rag-eval production run` already scored is not scored again by the sensor."""
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(PRODUCTION_INTERACTIONS), asset_partitions=[day]), limit=1
    ).records
    materialization = records[0].asset_materialization if records else None
    return materialization.tags.get(DATA_VERSION_TAG) if materialization is not None else None


def day_requests(
    context: dg.SensorEvaluationContext, sources: ProductionResource, days: dg.DailyPartitionsDefinition
) -> dg.SensorResult | dg.SkipReason:
    """A run per day whose rows are new or changed since the cursor and since the day was last
    stored (each state once, by its digest, whoever scored it); problems are logged when the
    sources change, days outside the partitions named."""
    cursor = json.loads(context.cursor) if context.cursor else {}
    read = sources.read_all()
    digests = day_digests(read.frame)
    unseen = [day for day, digest in digests.items() if cursor.get(day) != digest]
    changed = sorted(day for day in unseen if stored_digest(context.instance, day) != digests[day])
    if not changed:
        said = f"no new or changed rows ({len(digests)} days seen, each stored as it is)"
        return (
            dg.SensorResult(skip_reason=said, cursor=json.dumps(digests, sort_keys=True))
            if unseen
            else (dg.SkipReason(said))
        )
    for problem in read.problems:
        context.log.warning(f"skipped: {problem}")
    known = set(days.get_partition_keys(dynamic_partitions_store=context.instance))
    outside = [day for day in changed if day not in known]
    if outside:
        context.log.warning(
            "rows on days that are not partitions (before production.start_date, or ahead): "
            + ", ".join(outside)
        )
    requests = [
        dg.RunRequest(
            run_key=f"production:{day}:{digests[day]}",
            partition_key=day,
            tags={TRIGGER_TAG: PRODUCTION_TRIGGER, PRODUCTION_DIGEST_TAG: digests[day]},
        )
        for day in changed
        if day in known
    ]
    return dg.SensorResult(run_requests=requests, cursor=json.dumps(digests, sort_keys=True))
