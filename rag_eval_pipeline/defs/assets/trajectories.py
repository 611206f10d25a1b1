"""An agent's sessions from its traces, a partition per agent version: the version's spans, the
sessions rebuilt from them (with how completely), each session's tool calls scored against the
reference, the sessions judged by LLMs, and the summary with pass^k, held to its thresholds."""

from collections.abc import Sequence

import dagster as dg
import pandas as pd

from rag_eval_pipeline.common.text import clip_at_word
from rag_eval_pipeline.defs.assets.sessions import (
    AGENT_VERSIONS,
    SessionDefinitions,
    judged_sessions,
    judges_metadata,
    session_definitions,
)
from rag_eval_pipeline.defs.names import TRACED_VERSIONS, TRAJECTORIES
from rag_eval_pipeline.defs.resources import LLMResource, SettingsResource, TracingResource
from rag_eval_pipeline.defs.resources.trajectories import TrajectorySourcesResource
from rag_eval_pipeline.defs.session_sources import SESSION_SOURCES
from rag_eval_pipeline.metrics.agreement import SESSION_METRICS, SESSION_PREFIX
from rag_eval_pipeline.reporting.markdown import markdown_text, to_markdown
from rag_eval_pipeline.trajectories.differences import (
    CallPair,
    aligned_calls,
    calls_markdown,
    first_difference,
)
from rag_eval_pipeline.trajectories.events import session_events
from rag_eval_pipeline.trajectories.reference import Task
from rag_eval_pipeline.trajectories.sessions import Reconstruction, Session, reconstruct, sessions_of_version
from rag_eval_pipeline.trajectories.sources import spans_frame, spans_of_frame
from rag_eval_pipeline.trajectories.tables import (
    SCORE_METRICS,
    score_frame,
    sessions_frame,
    sessions_of_frame,
    summarize_trajectories,
)


def _clip(text: str, most: int) -> str:
    return clip_at_word(text, most)


def _pairs(session: Session, task: Task) -> list[CallPair]:
    made = [(c.name, c.arguments) for c in session.tool_calls]
    return aligned_calls(made, [(c.name, c.canonical_arguments) for c in task.expected_calls])


def _worst(scores: pd.DataFrame) -> pd.DataFrame:
    return scores.sort_values(["tool_call_f1", "match_strict", "session_id"]).head(WORST_SHOWN)


def worst_sessions_table(
    scores: pd.DataFrame, sessions: Sequence[Session], tasks: Sequence[Task]
) -> dg.TableMetadataValue:
    """The lowest-F1 sessions, one narrow row each (Dagster's pane at 1,440 px): where its calls
    first part from the reference (the argument and both values). Every call in full and the
    root spans of its turns (its lineage down to the spans) are the session's own entry."""
    held = {s.session_id: s for s in sessions}
    task_of = {sid: task for task in tasks for sid in task.session_ids}
    records = [
        dg.TableRecord(
            {
                "session": str(row.session_id),
                "f1": round(float(row.tool_call_f1), 3),  # tool-call F1
                "first difference": _clip(
                    first_difference(_pairs(held[row.session_id], task_of[row.session_id])), 44
                ),
            }
        )
        for row in _worst(scores).itertuples()
    ]
    columns = [dg.TableColumn(n, "float" if n == "f1" else "string") for n in records[0].data]
    return dg.MetadataValue.table(records, dg.TableSchema(columns))


def session_key(rank: int, session_id: str) -> str:
    return f"worst session {rank}: {session_id}"


def worst_session_entries(
    scores: pd.DataFrame, sessions: Sequence[Session], tasks: Sequence[Task]
) -> dict[str, dg.MarkdownMetadataValue]:
    """Each worst session in full, as its own entry (as a worst case is): its task and scores,
    every call made beside the call expected with the differing arguments in bold, and the root
    spans of its turns."""
    held = {s.session_id: s for s in sessions}
    task_of = {sid: task for task in tasks for sid in task.session_ids}
    entries = {}
    for rank, row in enumerate(_worst(scores).itertuples(), start=1):
        lines = [
            f"**session {markdown_text(row.session_id)}** of task {markdown_text(row.task_id)}: "
            f"tool_call_f1 {float(row.tool_call_f1):.3f}, strict match {'yes' if row.match_strict else 'no'}",
            "",
            calls_markdown(_pairs(held[row.session_id], task_of[row.session_id])),
            "",
            f"root spans of its turns: {markdown_text(row.root_span_ids)}",
        ]
        entries[session_key(rank, str(row.session_id))] = dg.MetadataValue.md("\n".join(lines))
    return entries


def reconstruction_metadata(report: Reconstruction) -> dict[str, object]:
    """The report's counts and shares (a share of nothing is left out, not 0)."""
    return {
        k: round(v, 4) if isinstance(v, float) else v for k, v in report.as_dict().items() if v is not None
    }


WORST_SHOWN = 10


def versions_frame(sessions: Sequence[Session]) -> pd.DataFrame:
    """A row per agent version the traces hold: its sessions and turns."""
    rows: dict[str, dict[str, int]] = {}
    for session in sessions:
        row = rows.setdefault(session.agent_version, {"sessions": 0, "turns": 0})
        row["sessions"] += 1
        row["turns"] += len(session.turns)
    frame = pd.DataFrame(
        [{"agent_version": version, **row} for version, row in sorted(rows.items())],
        columns=["agent_version", "sessions", "turns"],
    )
    return frame


@dg.asset(name=TRACED_VERSIONS, group_name=TRAJECTORIES, code_version="1")
def traced_versions(
    context: dg.AssetExecutionContext, trajectory_sources: TrajectorySourcesResource
) -> pd.DataFrame:
    """The agent versions the configured traces hold, each with its sessions and turns (the
    partitions of the assets below). Unpartitioned: every version's spans follow from it, so the
    trajectories are one family of their own in a whole-lineage backfill, beside the answer
    models, never a second root partitioning."""
    sessions, report = reconstruct(trajectory_sources.read_spans())
    frame = versions_frame(sessions)
    context.add_output_metadata(
        {
            "versions": len(frame),
            "sessions": int(frame["sessions"].sum()),
            "orphan_spans": report.orphans,
            "list": dg.MetadataValue.md(to_markdown(frame) if len(frame) else "none"),
        }
    )
    return frame


@dg.asset(
    group_name=TRAJECTORIES, partitions_def=AGENT_VERSIONS, deps=[TRACED_VERSIONS], code_version="1"
)
def trajectory_spans(
    context: dg.AssetExecutionContext, trajectory_sources: TrajectorySourcesResource
) -> pd.DataFrame:
    """The spans of this agent version's turns, each with the file and line it was read from
    and the session it belongs to, and the file's orphan spans (a trace whose root is not
    there: they may be this version's)."""
    spans = trajectory_sources.read_spans()
    sessions, report = reconstruct(spans)
    mine = sessions_of_version(sessions, context.partition_key)
    placed = {span_id for s in mine for span_id in s.span_ids}
    rooted = {t.trace_id for s in sessions for t in s.turns}
    kept = [s for s in spans if s.span.span_id in placed or s.span.trace_id not in rooted]
    context.add_output_metadata(
        {
            "spans": len(kept),
            "spans_in_files": len(spans),
            "orphan_spans": report.orphans,
            "sessions": len(mine),
        }
    )
    return spans_frame(kept, mine)


@dg.asset(group_name=TRAJECTORIES, partitions_def=AGENT_VERSIONS, code_version="1")
def agent_sessions(context: dg.AssetExecutionContext, trajectory_spans: pd.DataFrame) -> pd.DataFrame:
    """A row per session (its turns, tool calls and span ids), keyed by the conversation id a
    span carries (``gen_ai.conversation.id``, ``session.id``, metadata), else the trace; with
    the reconstruction report its check holds to the required share."""
    sessions, report = reconstruct(spans_of_frame(trajectory_spans))
    mine = sessions_of_version(sessions, context.partition_key)
    shortfalls = report.shortfalls()
    context.add_output_metadata(
        {
            **reconstruction_metadata(report),
            "reconstruction": "; ".join(shortfalls) if shortfalls else "complete",
        }
    )
    return sessions_frame(mine)


@dg.asset_check(
    asset=agent_sessions,
    name="reconstruction",
    partitions_def=AGENT_VERSIONS,
    blocking=True,
    additional_ins={"trajectory_spans": dg.AssetIn()},
)
def agent_sessions_reconstruction(
    agent_sessions: pd.DataFrame, trajectory_spans: pd.DataFrame, settings: SettingsResource
) -> dg.AssetCheckResult:
    """Fails when fewer than the required share (95%) of spans have a session key, of tool spans
    have arguments, or of spans sit in a turn: scores on a partial reconstruction would mislead."""
    _, report = reconstruct(spans_of_frame(trajectory_spans))
    required = settings.settings.trajectories.required_share if settings.settings.trajectories else 0.95
    shortfalls = report.shortfalls(required)
    return dg.AssetCheckResult(
        passed=not shortfalls,
        description="; ".join(shortfalls) or f"every share at or above {required:.0%}",
        metadata=reconstruction_metadata(report),
    )


def _send_events(context, tracing: TracingResource, scores: pd.DataFrame, sessions, metrics) -> dict:
    """The scores as evaluation events under the agent's own spans, when asked for."""
    if not tracing.events or scores.empty:
        return {}
    provenance = {"rag_eval.agent_version": context.partition_key, "rag_eval.dagster_run_id": context.run_id}
    return tracing.send_scores_events(session_events(scores, sessions, metrics, provenance), context.log)


@dg.asset(group_name=TRAJECTORIES, partitions_def=AGENT_VERSIONS, code_version="1")
def trajectory_scores(
    context: dg.AssetExecutionContext,
    agent_sessions: pd.DataFrame,
    trajectory_sources: TrajectorySourcesResource,
    tracing: TracingResource,
) -> pd.DataFrame:
    """Each session the reference names, scored: tool-call F1, strict / unordered / subset /
    superset match, steps, repeated calls, tool error rate, forbidden calls; the worst sessions
    listed with their span ids (their lineage down to the spans). With
    ``tracing.evaluation_events``, each score also goes to the session's first root span."""
    sessions, tasks = sessions_of_frame(agent_sessions), trajectory_sources.read_tasks()
    scores, unscored = score_frame(sessions, tasks)
    sent = _send_events(context, tracing, scores, sessions, SCORE_METRICS)
    if unscored:
        context.log.warning(
            f"{len(unscored)} sessions are in no task of the reference: {', '.join(unscored[:10])}"
        )
    context.add_output_metadata(
        {
            "sessions": len(scores),
            "unscored_sessions": len(unscored),
            **sent,
            **({"worst_sessions": worst_sessions_table(scores, sessions, tasks)} if len(scores) else {}),
            **(worst_session_entries(scores, sessions, tasks) if len(scores) else {}),
        }
    )
    return scores


@dg.asset(group_name=TRAJECTORIES, partitions_def=AGENT_VERSIONS, code_version="1")
def session_judge_scores(
    context: dg.AssetExecutionContext,
    agent_sessions: pd.DataFrame,
    trajectory_sources: TrajectorySourcesResource,
    llm: LLMResource,
    settings: SettingsResource,
    tracing: TracingResource,
) -> pd.DataFrame:
    """Each session judged by the configured LLM judges: goal completion, turn relevancy,
    knowledge retention (and, when asked, the trajectory's quality); none configured: empty.
    With ``tracing.evaluation_events``, each verdict also goes to the session's first root span."""
    chosen = trajectory_sources.trajectories
    sessions = sessions_of_frame(agent_sessions)
    tasks = {sid: task for task in trajectory_sources.read_tasks() for sid in task.session_ids}
    services = llm.services()
    scores = judged_sessions(
        context, chosen.judges, sessions, tasks, services, settings, chosen.trajectory_judge
    )
    sent = _send_events(context, tracing, scores, sessions, SESSION_METRICS)
    context.add_output_metadata(
        {**sent, **judges_metadata(chosen.judges, services), "cache_hits": services.cache_hits}
    )
    return scores


@dg.asset(group_name=TRAJECTORIES, partitions_def=AGENT_VERSIONS, code_version="1")
def trajectory_summary(
    context: dg.AssetExecutionContext,
    trajectory_scores: pd.DataFrame,
    session_judge_scores: pd.DataFrame,
    settings: SettingsResource,
) -> pd.DataFrame:
    """Each figure's mean over the sessions with its 95% interval, pass^k for k = 1..n over the
    tasks, and the session judges' means: the table gates and diffs read."""
    metrics = list(SESSION_METRICS)
    method = settings.settings.statistics.interval_method
    summary = summarize_trajectories(trajectory_scores, session_judge_scores, metrics, method)
    context.add_output_metadata({"summary": dg.MetadataValue.md(to_markdown(summary.drop(columns=["note"])))})
    return summary


TRAJECTORY_ASSETS = [
    traced_versions,
    trajectory_spans,
    agent_sessions,
    trajectory_scores,
    session_judge_scores,
    trajectory_summary,
]


def build_trajectories() -> SessionDefinitions:
    return session_definitions(
        SESSION_SOURCES[SESSION_PREFIX],
        TRAJECTORY_ASSETS,
        [agent_sessions_reconstruction],
        "One agent version's sessions from its traces: rebuild, score against the reference, judge, "
        "summarize.",
    )
