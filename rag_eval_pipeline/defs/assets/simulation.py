"""Simulated users talking to the team's agent, a partition per agent version: the
conversations (every trial of every scenario, their transcripts in the metadata), each session
scored (the trajectory figures and task success) and the summary with pass^k, held to its
thresholds. Calls to the agent and to the simulating model are cached by scenario, trial and
turn: a re-run pays for nothing unless ``cache.refresh`` (`--rerun`) asks it to."""

import asyncio
from pathlib import Path

import dagster as dg
import pandas as pd

from rag_eval_pipeline.answering.agents.provider import conversation_agent
from rag_eval_pipeline.defs.assets.progress import progress_logger
from rag_eval_pipeline.defs.assets.sessions import (
    AGENT_VERSIONS,
    SessionDefinitions,
    judged_sessions,
    judges_metadata,
    session_definitions,
)
from rag_eval_pipeline.defs.names import SIMULATION, SIMULATION_SCENARIOS
from rag_eval_pipeline.defs.resources import LLMResource, SettingsResource
from rag_eval_pipeline.defs.session_sources import SESSION_SOURCES
from rag_eval_pipeline.judges.engine import JudgeCaller
from rag_eval_pipeline.llm.providers import parse_llm_name
from rag_eval_pipeline.metrics.agreement import SESSION_METRICS, SIMULATION_PREFIX
from rag_eval_pipeline.reporting.markdown import to_markdown
from rag_eval_pipeline.reporting.simulation import simulation_section
from rag_eval_pipeline.trajectories.sessions import reconstruct
from rag_eval_pipeline.trajectories.settings import TrajectorySettings
from rag_eval_pipeline.trajectories.simulation.conversation import ReplyReader
from rag_eval_pipeline.trajectories.simulation.run import judge_rubrics, simulate
from rag_eval_pipeline.trajectories.simulation.scenarios import Scenario, read_scenarios
from rag_eval_pipeline.trajectories.simulation.settings import SimulationSettings
from rag_eval_pipeline.trajectories.simulation.tables import (
    TASK_SUCCESS,
    render_transcript,
    score_simulation,
    simulated_frame,
    summarize_simulation,
    worst_transcript,
)
from rag_eval_pipeline.trajectories.simulation.traced import with_traced_calls
from rag_eval_pipeline.trajectories.simulation.users import LLMUser, ScriptedUser, SimulatedUser, user_note
from rag_eval_pipeline.trajectories.sources import read_traces
from rag_eval_pipeline.trajectories.tables import sessions_of_frame, summarize_scores

TRANSCRIPTS_SHOWN = 30  # sessions whose transcript the metadata shows (the worst first)
UNVERSIONED = "unversioned"


def _chosen(settings: SettingsResource) -> SimulationSettings:
    chosen = settings.settings.simulation
    if chosen is None or not chosen.scenarios or not chosen.agent:
        raise dg.Failure("no simulation section with scenarios and agent (rag-eval simulate writes it)")
    return chosen


def _scenarios(chosen: SimulationSettings) -> list[Scenario]:
    return read_scenarios(Path(str(chosen.scenarios))).scenarios


def _transcripts(frame: pd.DataFrame, order: list[str]) -> str:
    rows = frame.set_index("session_id", drop=False)
    shown = [render_transcript(rows.loc[s].to_dict()) for s in order[:TRANSCRIPTS_SHOWN] if s in rows.index]
    more = len(order) - len(shown)
    return "\n\n".join(shown) + (f"\n\n… and {more} more sessions" if more > 0 else "")


def scenarios_frame(scenarios: list[Scenario]) -> pd.DataFrame:
    """A row per scenario as the users' list shows it: its task, goal, who plays the user and what
    success needs."""
    rows = [
        {
            "task_id": s.task_id,
            "line": s.line,
            "goal": s.goal,
            "user": "scripted" if s.user_turns is not None else "simulated",
            "turns": len(s.user_turns) if s.user_turns is not None else s.max_turns,
            "success_needs": ", ".join(
                need
                for need, given in (
                    ("tool calls", s.success.expected_tool_calls is not None),
                    ("reply text", bool(s.success.reply_contains)),
                    ("rubric", bool(s.success.rubric)),
                )
                if given
            ),
        }
        for s in scenarios
    ]
    return pd.DataFrame(rows, columns=["task_id", "line", "goal", "user", "turns", "success_needs"])


@dg.asset(name=SIMULATION_SCENARIOS, group_name=SIMULATION, code_version="1")
def simulation_scenarios(context: dg.AssetExecutionContext, settings: SettingsResource) -> pd.DataFrame:
    """The scenarios file as read: a row per scenario (task, goal, scripted or simulated user, what
    success needs), the lines that are not scenarios named. Unpartitioned, every agent version's
    conversations follow from it: the simulation is one family of its own in a whole-lineage
    backfill, beside the answer models, never a second root partitioning."""
    chosen = _chosen(settings)
    read = read_scenarios(Path(str(chosen.scenarios)))
    for problem in read.errors:
        context.log.warning(f"skipped: {problem}")
    frame = scenarios_frame(read.scenarios)
    context.add_output_metadata(
        {
            "scenarios": len(frame),
            "file": str(chosen.scenarios),
            "skipped_lines": "; ".join(read.errors) or "none",
            "list": dg.MetadataValue.md(to_markdown(frame) if len(frame) else "none"),
        }
    )
    return frame


@dg.asset(
    group_name=SIMULATION, partitions_def=AGENT_VERSIONS, deps=[SIMULATION_SCENARIOS], code_version="1"
)
def simulated_sessions(
    context: dg.AssetExecutionContext, settings: SettingsResource, llm: LLMResource
) -> pd.DataFrame:
    """Every trial of every scenario as a conversation with the agent, to its end (the user's
    ###STOP###, max turns, an agent error or timeout, a loop), a row per session in the
    trajectories' layout with its transcript and stop reason; the transcripts in the metadata."""
    chosen = _chosen(settings)
    entry = settings.settings.answer_model(str(chosen.agent))
    if entry is None:
        raise dg.Failure(f"no answer_models entry named {chosen.agent}")
    version = getattr(entry, "version", None) or UNVERSIONED
    if context.partition_key != version:
        raise dg.Failure(f"partition {context.partition_key} is not agent {entry.name}'s version ({version})")
    services = llm.services()
    agent, mapping = conversation_agent(entry, services)
    target = parse_llm_name(chosen.user)
    model_user: SimulatedUser | None = None
    closing = []
    if target is not None:
        client = services.client(target.endpoint)
        model_user, closing = LLMUser(chosen.user, client, target.model_id), [client.aclose]
    scripted = ScriptedUser()

    def user_for(scenario: Scenario) -> SimulatedUser:
        if scenario.user_turns is not None:
            return scripted
        if model_user is None:
            raise dg.Failure(
                f"scenario {scenario.task_id} has no user_turns: give a simulated user (--user MODEL)"
            )
        return model_user

    scenarios = _scenarios(chosen)
    simulated = asyncio.run(
        simulate(
            scenarios,
            chosen.trials,
            user_for,
            agent,
            ReplyReader(mapping, chosen.tool_calls),
            version,
            lambda s: f"{chosen.scenarios}, line {s.line}",
            chosen.concurrency,
            progress_logger(context, "conversations"),
            closing,
        )
    )
    if chosen.traces:  # the agent's own spans say which tools it called
        traced, _ = reconstruct(read_traces(TrajectorySettings(traces=chosen.traces)))
        simulated = with_traced_calls(simulated, traced)
    frame = simulated_frame(simulated)
    stops = frame["stop_reason"].value_counts().to_dict()
    counts = {k: int(frame[k].sum()) for k in ("agent_calls", "agent_cached", "user_calls", "user_cached")}
    context.add_output_metadata(
        {
            "sessions": len(frame),
            "agent": f"{entry.name}@{version}",
            "simulated_user": user_note(scenarios, chosen.user) or chosen.user,
            "stop_reasons": ", ".join(f"{k}: {v}" for k, v in sorted(stops.items())),
            "simulator_faults": int(frame["simulator_fault"].notna().sum()),
            "tool_calls_from": ", ".join(sorted(set(frame["calls_from"]))) if len(frame) else "none",
            **counts,
            "transcripts": dg.MetadataValue.md(_transcripts(frame, list(frame["session_id"]))),
        }
    )
    return frame


@dg.asset(group_name=SIMULATION, partitions_def=AGENT_VERSIONS, code_version="1")
def simulation_scores(
    context: dg.AssetExecutionContext,
    simulated_sessions: pd.DataFrame,
    settings: SettingsResource,
    llm: LLMResource,
) -> pd.DataFrame:
    """Each session scored: task success (every criterion of its scenario met, ended by the
    user), its criteria (tool calls, reply_contains, rubric), and the trajectory figures."""
    chosen = _chosen(settings)
    scenarios = {s.task_id: s for s in _scenarios(chosen)}
    rubrics: dict = {}
    services = llm.services()
    if chosen.judge and any(s.success.rubric for s in scenarios.values()):
        target = parse_llm_name(chosen.judge)
        if target is None:
            raise dg.Failure(f"judge {chosen.judge} is not an LLM name")
        client, prices = services.client(target.endpoint), services.prices_for(target.endpoint)
        rubrics = asyncio.run(
            judge_rubrics(
                simulated_sessions,
                scenarios,
                lambda: JudgeCaller(client, target.model_id, prices),
                settings.settings.concurrency,
                client.aclose,
            )
        )
    scores = score_simulation(simulated_sessions, list(scenarios.values()), chosen.trials, rubrics)
    worst = (
        scores.sort_values([TASK_SUCCESS, "turns", "session_id"], na_position="first")["session_id"].tolist()
        if len(scores)
        else []
    )
    per_task = (
        scores.groupby("task_id")[TASK_SUCCESS].agg(["mean", "count"]).reset_index()
        if len(scores)
        else pd.DataFrame()
    )
    context.add_output_metadata(
        {
            "sessions": len(scores),
            "judge": chosen.judge or "none",
            "judge_api_calls": services.api_calls,
            "task_success_by_scenario": dg.MetadataValue.md(
                to_markdown(per_task.round(4)) if len(per_task) else "none"
            ),
            "worst_session": dg.MetadataValue.md(
                _transcripts(simulated_sessions, worst[:1]) if worst else "none"
            ),
        }
    )
    return scores


@dg.asset(group_name=SIMULATION, partitions_def=AGENT_VERSIONS, code_version="1")
def simulation_judge_scores(
    context: dg.AssetExecutionContext,
    simulated_sessions: pd.DataFrame,
    settings: SettingsResource,
    llm: LLMResource,
) -> pd.DataFrame:
    """Each session judged as traced sessions are (goal completion against the scenario's goal,
    turn relevancy, knowledge retention) by ``simulation.session_judges``; none: empty."""
    chosen = _chosen(settings)
    sessions = sessions_of_frame(simulated_sessions)
    tasks = {
        sid: task for task in (s.task(chosen.trials) for s in _scenarios(chosen)) for sid in task.session_ids
    }
    services = llm.services()
    scores = judged_sessions(context, chosen.session_judges, sessions, tasks, services, settings, False)
    context.add_output_metadata(judges_metadata(chosen.session_judges, services))
    return scores


@dg.asset(group_name=SIMULATION, partitions_def=AGENT_VERSIONS, code_version="1")
def simulation_summary(
    context: dg.AssetExecutionContext,
    simulation_scores: pd.DataFrame,
    simulation_judge_scores: pd.DataFrame,
    simulated_sessions: pd.DataFrame,
    settings: SettingsResource,
) -> pd.DataFrame:
    """task_success and the trajectory figures with their 95% intervals, pass^k for k = 1..trials
    over the scenarios, and the sessions the simulated user spoiled (counted, left out); the
    report's section (scenarios, pass^k, the worst transcript) in its metadata."""
    method = settings.settings.statistics.interval_method
    summary = summarize_simulation(simulation_scores, method)
    if len(simulation_judge_scores):  # the session judges' means, beside (over every session judged)
        judged = pd.DataFrame(summarize_scores(simulation_judge_scores, SESSION_METRICS, method))
        summary = pd.concat([summary, judged], ignore_index=True)
    metadata = {"summary": dg.MetadataValue.md(to_markdown(summary.drop(columns=["note"])))}
    if len(simulation_scores):
        title = f"{_chosen(settings).agent}@{context.partition_key}"
        worst = worst_transcript(simulated_sessions, simulation_scores)
        section = simulation_section(title, simulation_scores, summary, worst, narrow=True)
        metadata["report"] = dg.MetadataValue.md(section)  # the scenarios narrow: it fits 1,440 px
    context.add_output_metadata(metadata)
    return summary


SIMULATION_ASSETS = [
    simulation_scenarios,
    simulated_sessions,
    simulation_scores,
    simulation_judge_scores,
    simulation_summary,
]


def build_simulation() -> SessionDefinitions:
    return session_definitions(
        SESSION_SOURCES[SIMULATION_PREFIX],
        SIMULATION_ASSETS,
        [],
        "One agent version in simulated conversations: talk, score, summarize.",
    )
