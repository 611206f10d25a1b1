"""Trajectories through the instance, as `rag-eval trajectories` drives them: the traces and
the reference read and checked before any run, an agent-version partition registered per
version the traces hold, a run of the trajectory job each, and each run's tables read back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.defs.session_sources import SESSION_SOURCES
from rag_eval_pipeline.instance.preflight import endpoint_problems
from rag_eval_pipeline.instance.sessions import VersionOutcome, run_version
from rag_eval_pipeline.judges.registry import JudgeRegistry, UnknownJudgeError
from rag_eval_pipeline.llm.targets import LLMEndpoint
from rag_eval_pipeline.metrics.agreement import SESSION_PREFIX
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


def run_trajectories(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    versions: list[str],
    verbose: bool = False,
    echo: Callable[[str], None] = print,
) -> list[VersionOutcome]:
    """A run of the trajectory job per agent version (each a partition, shown in the UI)."""
    outcomes = []
    for number, version in enumerate(versions, start=1):
        echo(f"[version {number}/{len(versions)}] {version}: spans, sessions, scores, judges, summary ...")
        outcomes.append(run_version(defs, instance, SESSION_SOURCES[SESSION_PREFIX], version, verbose))
    return outcomes
