"""Simulations through the instance, as `rag-eval simulate` drives them: the agent version a
partition, a run of the simulation job on it, and the run's tables read back."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import dagster as dg
import pandas as pd

from rag_eval_pipeline.defs.names import (
    AGENT_VERSION_PARTITIONS,
    SIMULATED_SESSIONS,
    SIMULATION_JOB,
    SIMULATION_JUDGE_SCORES,
    SIMULATION_SCORES,
    SIMULATION_SUMMARY,
)
from rag_eval_pipeline.instance.lineage import load_materialization
from rag_eval_pipeline.instance.runs import cli_tags, console_logs, run_in_process
from rag_eval_pipeline.instance.trajectories import _failed_checks


@dataclass
class SimulationOutcome:
    """One agent version's simulation as its run left it; ``error`` when a table is missing."""

    version: str
    run_id: str
    sessions: pd.DataFrame | None = None
    scores: pd.DataFrame | None = None
    judged: pd.DataFrame | None = None
    summary: pd.DataFrame | None = None
    failed_checks: list[str] = field(default_factory=list)
    error: str | None = None


def _error_of(event: dg.DagsterEvent) -> str:
    """The step's own error in one line: the innermost cause, not Dagster's wrapper."""
    error = getattr(event.event_specific_data, "error", None)
    while error is not None and getattr(error, "cause", None) is not None:
        error = error.cause
    message = getattr(error, "message", None) or event.message or "a step failed"
    line = message.strip().splitlines()[-1]
    return re.sub(r"^[\w.]+(Error|Exception|Failure): ", "", line)  # the class name said once is noise


def run_simulation(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    version: str,
    verbose: bool = False,
    echo: Callable[[str], None] = print,
) -> SimulationOutcome:
    """A run of the simulation job on the agent version's partition (shown in the UI)."""
    instance.add_dynamic_partitions(AGENT_VERSION_PARTITIONS, [version])
    echo(f"agent version {version}: conversations, scores, summary ...")
    result = run_in_process(
        defs.resolve_job_def(SIMULATION_JOB),
        instance,
        partition_key=version,
        run_config=console_logs(verbose),
        raise_on_error=False,
        tags=cli_tags(),
    )
    outcome = SimulationOutcome(version, result.run_id, failed_checks=_failed_checks(result))
    try:
        outcome.sessions = load_materialization(instance, SIMULATED_SESSIONS, version, result.run_id)
        outcome.scores = load_materialization(instance, SIMULATION_SCORES, version, result.run_id)
        outcome.judged = load_materialization(instance, SIMULATION_JUDGE_SCORES, version, result.run_id)
        outcome.summary = load_materialization(instance, SIMULATION_SUMMARY, version, result.run_id)
    except FileNotFoundError:
        failure = next(
            (_error_of(e) for e in result.all_events if e.event_type_value == "STEP_FAILURE"), None
        )
        outcome.error = (
            "; ".join(outcome.failed_checks) or failure or "the run stored no summary (see the run in the UI)"
        )
    return outcome


def stored_scores(instance: dg.DagsterInstance, version: str) -> tuple[pd.DataFrame, str] | None:
    """The newest stored session scores of an agent version, with their run (None: never run)."""
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(SIMULATION_SCORES), asset_partitions=[version]), limit=1
    ).records
    if not records:
        return None
    run_id = records[0].run_id
    return load_materialization(instance, SIMULATION_SCORES, version, run_id), run_id
