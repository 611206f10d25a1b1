"""Production traffic through the instance, as `rag-eval production run` drives it: what is
checked before a day is read, each day materialized as a run of its own (as the sensor would
launch it), the trend after them, and each day's outcome read back."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import dagster as dg
import pandas as pd

from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.defs.names import (
    PRODUCTION_JOB,
    PRODUCTION_REPORT_JOB,
    PRODUCTION_SAMPLE,
    PRODUCTION_SCORES,
    PRODUCTION_SUMMARY,
    TRIGGER_TAG,
)
from rag_eval_pipeline.instance.lineage import load_materialization
from rag_eval_pipeline.instance.preflight import endpoint_problems
from rag_eval_pipeline.instance.runs import cli_tags, console_logs, run_in_process, run_partition
from rag_eval_pipeline.judges.registry import JudgeRegistry, JudgeSpec
from rag_eval_pipeline.judges.score_cases import OVER_BUDGET
from rag_eval_pipeline.llm.pricing import price_for
from rag_eval_pipeline.llm.providers import llm_provider
from rag_eval_pipeline.llm.targets import LLMEndpoint
from rag_eval_pipeline.metrics.budgets import BudgetResult
from rag_eval_pipeline.metrics.gates import GateResult
from rag_eval_pipeline.production.feedback import FEEDBACK_METRICS
from rag_eval_pipeline.production.feedback_sources import feedback_problems
from rag_eval_pipeline.production.interactions import day_digests
from rag_eval_pipeline.production.scoring import day_budgets, day_cost, day_gates
from rag_eval_pipeline.production.settings import USERS
from rag_eval_pipeline.production.sources import read_sources, source_problems

CLI_TRIGGER = "cli"


class NoProductionError(ValueError):
    """The configuration has no production section, or the sources hold no such day."""


@dataclass
class DayOutcome:
    """One day as its run left it: the summary, each threshold's and latency or cost budget's
    result, cost and cases the daily budget stopped; ``error`` when the run failed before a
    summary."""

    day: str
    run_id: str
    summary: pd.DataFrame | None
    gates: list[GateResult] = field(default_factory=list)
    sampled: int = 0
    over_budget: int = 0
    cost_usd: float = 0.0
    error: str | None = None
    budgets: list[BudgetResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.error is None and all(g.passed for g in [*self.gates, *self.budgets])


@dataclass
class ProductionReport:
    days: list[DayOutcome]
    problems: list[str]
    report_run_id: str | None = None


def production_judges(settings: Settings) -> tuple[list[JudgeSpec], list[JudgeSpec]]:
    """The judges of production traffic (each without a reference answer), and those left out."""
    registry = JudgeRegistry(settings.custom_metrics, settings.abstention())
    return registry.reference_free(settings.production.judges or settings.judges)  # type: ignore[union-attr]


def production_problems(
    settings: Settings, llm_missing: Callable[[LLMEndpoint], str | None], prices: dict
) -> list[str]:
    """What can be known before any day is read: the sources exist, some judge measures
    something without a reference, every threshold's metric is measured by one of them, their
    keys are set, and a budget can price every call."""
    production = settings.production
    if production is None:
        return [
            "no production section in the configuration file: add production.sources "
            "(README: Production sampling)"
        ]
    problems = source_problems(production) + feedback_problems(production.feedback)
    specs, _ = production_judges(settings)
    if not specs:
        problems.append(
            "no production judge measures anything without a reference answer: use reference, an LLM "
            "judge (claude-sonnet-4-6, ragas:<model>) or a custom metric with reference_free: true"
        )
    measured = {(s.judge_id, m) for s in specs for m in s.reference_free_metrics}
    if production.feedback is not None:  # the users' own figures (production.feedback)
        measured |= {(USERS, m) for m in FEEDBACK_METRICS}
    for gate in production.gates():
        if not any(m == gate.metric and gate.judge_id in (None, j) for j, m in measured):
            offered = ", ".join(sorted({f"{j}/{m}" for j, m in measured})) or "none"
            problems.append(
                f"production threshold {gate.key} is measured by none of the production judges (they "
                f"measure {offered}): add a judge that does to production.judges, or change "
                "production.thresholds"
            )
    problems += endpoint_problems([], specs, llm_missing)
    if production.daily_budget_usd is not None:
        paid = [s for s in specs if s.endpoint is not None and not llm_provider(s.endpoint).free]
        unpriced = sorted({s.model_id or "" for s in paid if price_for(s.model_id or "", prices) is None})
        if unpriced:
            problems.append(
                f"production.daily_budget_usd cannot bound calls to {', '.join(unpriced)}: no price for "
                "them (add them to prices: [input, output, cache write, cache read] per million tokens)"
            )
    return problems


def days_in_sources(settings: Settings) -> tuple[list[str], list[str]]:
    """Every day the sources hold rows of, and the problems of the rows they could not read."""
    read = read_sources(settings.production)  # type: ignore[arg-type]
    return sorted(day_digests(read.frame)), read.problems


def _within_partitions(settings: Settings, days: Sequence[str]) -> tuple[list[str], list[str]]:
    start = settings.production.start_date  # type: ignore[union-attr]
    today = dt.datetime.now(settings.production.zone).date()  # type: ignore[union-attr]
    inside = [d for d in days if start <= dt.date.fromisoformat(d) <= today]
    return inside, [d for d in days if d not in inside]


def run_production(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    settings: Settings,
    days: Sequence[str],
    verbose: bool = False,
    echo: Callable[[str], None] = print,
) -> ProductionReport:
    """Each day as one run of the production job in this process, then the trend and report;
    a day whose threshold check fails is reported, not raised."""
    inside, outside = _within_partitions(settings, days)
    notes = [
        f"{d}: not a day partition (before production.start_date {settings.production.start_date}, "  # type: ignore[union-attr]
        "or ahead of today): not scored"
        for d in outside
    ]
    outcomes = []
    job = defs.resolve_job_def(PRODUCTION_JOB)
    for number, day in enumerate(inside, start=1):
        echo(f"[day {number}/{len(inside)}] {day}: read, sample, score, summarize ...")
        result = run_partition(job, instance, day, verbose, {TRIGGER_TAG: CLI_TRIGGER})
        outcomes.append(_outcome(instance, settings, day, result))
    report = None
    if outcomes:
        echo("[trend] every day: trend, report, Prometheus ...")
        trend = defs.resolve_job_def(PRODUCTION_REPORT_JOB)
        report = run_in_process(trend, instance, run_config=console_logs(verbose), tags=cli_tags()).run_id
    return ProductionReport(outcomes, notes, report)


def _failure(result: dg.ExecuteInProcessResult) -> str:
    """The first failed step's innermost error, in one line."""
    failure = next((e for e in result.all_events if e.is_step_failure), None)
    error = failure.step_failure_data.error if failure is not None and failure.step_failure_data else None
    while error is not None and error.cause is not None:
        error = error.cause
    if error is None:
        return "the run stored no summary"
    return f"{error.cls_name}: {error.message.strip().splitlines()[0] if error.message.strip() else ''}"


def _outcome(
    instance: dg.DagsterInstance, settings: Settings, day: str, result: dg.ExecuteInProcessResult
) -> DayOutcome:
    try:
        summary = load_materialization(instance, PRODUCTION_SUMMARY, day, result.run_id)
        scores = load_materialization(instance, PRODUCTION_SCORES, day, result.run_id)
        sample = load_materialization(instance, PRODUCTION_SAMPLE, day, result.run_id)
    except FileNotFoundError:
        return DayOutcome(day, result.run_id, None, error=_failure(result))
    gates = day_gates(summary, settings.production.gates(), settings.statistics.min_cases)  # type: ignore[union-attr]
    budgets = day_budgets(summary, settings.production.budgets_held())  # type: ignore[union-attr]
    stopped = int(scores.loc[scores["status"] == OVER_BUDGET, "qid"].nunique())
    return DayOutcome(
        day, result.run_id, summary, gates, len(sample), stopped, day_cost(summary), budgets=budgets
    )
