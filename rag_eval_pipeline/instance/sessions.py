"""An agent version's sessions through the instance, whatever their source (traced, simulated):
the version a partition, a run of the source's job on it, and the run's tables read back. The
source's row of ``defs.session_sources`` names the job and the tables."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import dagster as dg
import pandas as pd

from rag_eval_pipeline.defs.names import AGENT_VERSION_PARTITIONS
from rag_eval_pipeline.defs.session_sources import SessionSource
from rag_eval_pipeline.instance.lineage import load_materialization
from rag_eval_pipeline.instance.runs import run_partition


@dataclass
class VersionOutcome:
    """One agent version as its run left it; ``error`` when a table is missing (a blocking
    check stopped the run, or a step failed)."""

    version: str
    run_id: str
    sessions: pd.DataFrame | None = None
    scores: pd.DataFrame | None = None
    judged: pd.DataFrame | None = None
    summary: pd.DataFrame | None = None
    failed_checks: list[str] = field(default_factory=list)
    error: str | None = None


def failed_checks(result: dg.ExecuteInProcessResult) -> list[str]:
    """Each check the run failed: its name and what it said."""
    said = []
    for event in result.all_events:
        evaluation = event.event_specific_data if event.event_type_value == "ASSET_CHECK_EVALUATION" else None
        if evaluation is not None and not evaluation.passed:
            said.append(f"{evaluation.check_name}: {evaluation.description}")
    return said


def _error_of(event: dg.DagsterEvent) -> str:
    """The step's own error in one line: the innermost cause, not Dagster's wrapper."""
    error = getattr(event.event_specific_data, "error", None)
    while error is not None and getattr(error, "cause", None) is not None:
        error = error.cause
    message = getattr(error, "message", None) or event.message or "a step failed"
    line = message.strip().splitlines()[-1]
    return re.sub(r"^[\w.]+(Error|Exception|Failure): ", "", line)  # the class name said once is noise


def run_version(
    defs: dg.Definitions, instance: dg.DagsterInstance, source: SessionSource, version: str, verbose: bool
) -> VersionOutcome:
    """A run of the source's job on the agent version's partition (registered first, shown in
    the UI), and the tables it stored; what stopped it in ``error`` when one is missing."""
    instance.add_dynamic_partitions(AGENT_VERSION_PARTITIONS, [version])
    result = run_partition(defs.resolve_job_def(source.job), instance, version, verbose)
    outcome = VersionOutcome(version, result.run_id, failed_checks=failed_checks(result))
    try:
        outcome.sessions = load_materialization(instance, source.sessions, version, result.run_id)
        outcome.scores = load_materialization(instance, source.scores, version, result.run_id)
        outcome.judged = load_materialization(instance, source.judge_scores, version, result.run_id)
        outcome.summary = load_materialization(instance, source.summary, version, result.run_id)
    except FileNotFoundError:
        failure = next(
            (_error_of(e) for e in result.all_events if e.event_type_value == "STEP_FAILURE"), None
        )
        outcome.error = (
            "; ".join(outcome.failed_checks) or failure or "the run stored no summary (see the run in the UI)"
        )
    return outcome


def stored_scores(
    instance: dg.DagsterInstance, source: SessionSource, version: str
) -> tuple[pd.DataFrame, str] | None:
    """The newest stored session scores of an agent version, with their run (None: never run)."""
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(source.scores), asset_partitions=[version]), limit=1
    ).records
    if not records:
        return None
    run_id = records[0].run_id
    return load_materialization(instance, source.scores, version, run_id), run_id
