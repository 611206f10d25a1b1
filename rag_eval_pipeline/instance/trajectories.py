"""Trajectories through the instance, as `rag-eval trajectories` drives them: the traces and
the reference read and checked before any run, an agent-version partition registered per
version the traces hold, a run of the trajectory job each, and each run's tables read back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
import pandas as pd

from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.defs.names import (
    AGENT_VERSION_PARTITIONS,
    SESSION_JUDGE_SCORES,
    TRAJECTORY_JOB,
    TRAJECTORY_SCORES,
    TRAJECTORY_SUMMARY,
)
from rag_eval_pipeline.instance.lineage import load_materialization
from rag_eval_pipeline.instance.preflight import endpoint_problems
from rag_eval_pipeline.instance.runs import cli_tags, console_logs, run_in_process
from rag_eval_pipeline.judges.registry import JudgeRegistry, UnknownJudgeError
from rag_eval_pipeline.llm.targets import LLMEndpoint
from rag_eval_pipeline.trajectories.reference import ReferenceError, Task, read_reference, unknown_sessions
from rag_eval_pipeline.trajectories.sessions import Reconstruction, Session, reconstruct
from rag_eval_pipeline.trajectories.sources import read_traces
from rag_eval_pipeline.trajectories.traces import TraceInputError


class TrajectoryInputError(ValueError):
    """Traces, a reference or judges that cannot be used: one line, before any run."""


@dataclass(frozen=True)
class ReadTrajectories:
    sessions: list[Session]
    report: Reconstruction
    tasks: list[Task]

    @property
    def versions(self) -> list[str]:
        return sorted({s.agent_version for s in self.sessions})


def read_trajectories(
    settings: Settings, llm_missing: Callable[[LLMEndpoint], str | None]
) -> ReadTrajectories:
    """The traces and reference, checked: a file that is not OTLP, a tool call whose arguments
    are not JSON, a reference line that is not a task or names a session no trace has, a judge
    without its key: the first such problem, in one line."""
    chosen = settings.trajectories
    if chosen is None or not chosen.reference:
        raise TrajectoryInputError(
            "give the reference: --reference FILE (a task per line, docs/trajectories.md)"
        )
    try:
        sessions, report = reconstruct(read_traces(chosen))
        tasks = read_reference(Path(chosen.reference))
    except (TraceInputError, ReferenceError) as err:
        raise TrajectoryInputError(str(err)) from None
    missing = unknown_sessions(tasks, {s.session_id for s in sessions}, Path(chosen.reference))
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise TrajectoryInputError(f"{missing[0]}{more}")
    registry = JudgeRegistry(settings.custom_metrics, settings.abstention())
    try:
        judges = [registry.resolve(j) for j in chosen.judges]
    except UnknownJudgeError as err:
        raise TrajectoryInputError(f"trajectories.judges: {err}") from None
    not_llm = [j.judge_id for j in judges if j.endpoint is None]
    if not_llm:
        raise TrajectoryInputError(
            f"trajectories.judges: {', '.join(not_llm)} is not an LLM (a session judge reads the "
            "conversation: claude-sonnet-4-6, openai:<model>, local:<model>)"
        )
    problems = endpoint_problems([], judges, llm_missing)
    if problems:
        raise TrajectoryInputError(problems[0])
    return ReadTrajectories(sessions, report, tasks)


@dataclass
class VersionOutcome:
    """One agent version as its run left it; ``error`` when a table is missing (a blocking
    check stopped the run, or a step failed)."""

    version: str
    run_id: str
    scores: pd.DataFrame | None = None
    judged: pd.DataFrame | None = None
    summary: pd.DataFrame | None = None
    failed_checks: list[str] = field(default_factory=list)
    error: str | None = None


def _failed_checks(result: dg.ExecuteInProcessResult) -> list[str]:
    said = []
    for event in result.all_events:
        evaluation = event.event_specific_data if event.event_type_value == "ASSET_CHECK_EVALUATION" else None
        if evaluation is not None and not evaluation.passed:
            said.append(f"{evaluation.check_name}: {evaluation.description}")
    return said


def run_trajectories(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    versions: list[str],
    verbose: bool = False,
    echo: Callable[[str], None] = print,
) -> list[VersionOutcome]:
    """A run of the trajectory job per agent version (each a partition, shown in the UI)."""
    instance.add_dynamic_partitions(AGENT_VERSION_PARTITIONS, versions)
    job = defs.resolve_job_def(TRAJECTORY_JOB)
    outcomes = []
    for number, version in enumerate(versions, start=1):
        echo(f"[version {number}/{len(versions)}] {version}: spans, sessions, scores, judges, summary ...")
        result = run_in_process(
            job,
            instance,
            partition_key=version,
            run_config=console_logs(verbose),
            raise_on_error=False,
            tags=cli_tags(),
        )
        outcome = VersionOutcome(version, result.run_id, failed_checks=_failed_checks(result))
        try:
            outcome.scores = load_materialization(instance, TRAJECTORY_SCORES, version, result.run_id)
            outcome.judged = load_materialization(instance, SESSION_JUDGE_SCORES, version, result.run_id)
            outcome.summary = load_materialization(instance, TRAJECTORY_SUMMARY, version, result.run_id)
        except FileNotFoundError:
            outcome.error = (
                "; ".join(outcome.failed_checks) or "the run stored no summary (see the run in the UI)"
            )
        outcomes.append(outcome)
    return outcomes
