"""The stored tables of a simulation, in the trajectories' layouts: the sessions (a row each,
the session whole as JSON, plus the transcript and why it ended), their scores (the trajectory
figures plus ``task_success``) and the summary (``metric_summary``'s layout: gates and diffs
read it as they read any). Sessions the simulated user spoiled (a loop, an error, the goal
given away in the first message) are counted apart and left out of the agent's figures."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import pandas as pd

from rag_eval_pipeline.metrics.settings import OVERALL, IntervalMethod
from rag_eval_pipeline.reporting.markdown import markdown_text
from rag_eval_pipeline.reporting.simulation import LAST_WORDS, SimulatedVersion, transcript_entries
from rag_eval_pipeline.trajectories.simulation.conversation import SimulatedSession, StopReason
from rag_eval_pipeline.trajectories.simulation.scenarios import Scenario
from rag_eval_pipeline.trajectories.simulation.success import missing_strings
from rag_eval_pipeline.trajectories.simulation.users import Message
from rag_eval_pipeline.trajectories.tables import (
    SCORE_METRICS,
    SUMMARY_COLUMNS,
    TRAJECTORY_JUDGE,
    pass_hat_k_rows,
    score_frame,
    sessions_frame,
    sessions_of_frame,
    summarize_scores,
)

TASK_SUCCESS = "task_success"
SIMULATOR_FAULTS = "simulator_faults"
SIMULATION_COLUMNS = [
    "task_id", "trial", "stop_reason", "stop_detail", "goal_leak", "simulator_fault", "transcript",
    "agent_calls", "agent_cached", "user_calls", "user_cached", "calls_from",
]  # fmt: skip
RubricVerdicts = Mapping[str, tuple[bool | None, str]]  # session -> (passed, reason); None: not judged


def simulated_frame(simulated: Sequence[SimulatedSession]) -> pd.DataFrame:
    """A row per session: the trajectories' session columns, and the simulation's own."""
    frame = sessions_frame([s.session for s in simulated])
    extra = pd.DataFrame(
        [
            {
                "task_id": s.scenario.task_id,
                "trial": s.trial,
                "stop_reason": s.stop_reason.value,
                "stop_detail": s.detail,
                "goal_leak": s.goal_leak,
                "simulator_fault": s.simulator_fault,
                "transcript": json.dumps([m.as_chat() for m in s.transcript], ensure_ascii=False),
                **{
                    k: s.counts.get(k, 0)
                    for k in ("agent_calls", "agent_cached", "user_calls", "user_cached")
                },
                "calls_from": s.calls_from,
            }
            for s in simulated
        ],
        columns=SIMULATION_COLUMNS,
    )
    return pd.concat([frame, extra], axis=1)


def transcript_of(row: Mapping[str, object]) -> list[Message]:
    return [Message(m["role"], m["content"]) for m in json.loads(str(row["transcript"]))]


def score_simulation(
    frame: pd.DataFrame, scenarios: Sequence[Scenario], trials: int, rubrics: RubricVerdicts
) -> pd.DataFrame:
    """A row per session: the trajectory figures (absent where the scenario expects no tool
    calls), each success criterion and ``task_success`` (every criterion met and the session
    ended by the user's stop; absent when the rubric's judge gave no verdict)."""
    by_task = {s.task_id: s for s in scenarios}
    held = [s for s in scenarios if s.task_id in set(frame["task_id"])]
    scores, _ = score_frame(sessions_of_frame(frame), [s.task(trials) for s in held])
    if scores.empty:
        return scores
    rows = frame.set_index("session_id")
    sessions = {s.session_id: s for s in sessions_of_frame(frame)}
    records = []
    for score in scores.to_dict("records"):
        session_id = score["session_id"]
        row = rows.loc[session_id]
        scenario = by_task[score["task_id"]]
        success = scenario.success
        turns = sessions[session_id].turns
        final = turns[-1].answer if turns else None
        ended = row["stop_reason"] == StopReason.USER_STOP.value
        criteria: dict[str, bool | None] = {"ended_by_user": ended}
        if success.expected_tool_calls is not None:
            criteria["tool_calls"] = (
                bool(score[f"match_{success.match_mode.value}"]) and not score["forbidden_calls"]
            )
        else:
            score.update({m: None for m in SCORE_METRICS if m in score})
        missing: list[str] = []
        if success.reply_contains:
            missing = missing_strings(final, success.reply_contains, scenario.language)
            criteria["reply_contains"] = not missing
        if success.reply_contains_any_form:
            in_no_form = missing_strings(final, success.reply_contains_any_form, scenario.language, True)
            criteria["reply_contains_any_form"] = not in_no_form
            missing += in_no_form
        reason = ""
        if success.rubric:
            passed, reason = rubrics.get(session_id, (None, "not judged"))
            criteria["rubric"] = passed
        values = list(criteria.values())
        task_success = None if None in values else all(values)
        records.append(
            {
                **score,
                "trial": int(row["trial"]),
                "turns": len(turns),
                "stop_reason": row["stop_reason"],
                "stop_detail": row["stop_detail"],
                "simulator_fault": row["simulator_fault"],
                "reply_missing": "; ".join(missing),
                "rubric_passed": criteria.get("rubric"),
                "rubric_reason": reason,
                TASK_SUCCESS: None if task_success is None else float(task_success),
                "succeeded": task_success,  # what pass^k counts
            }
        )
    return pd.DataFrame(records)


def summarize_simulation(
    scores: pd.DataFrame, method: IntervalMethod | str = IntervalMethod.CLOPPER_PEARSON
) -> pd.DataFrame:
    """task_success and the trajectory figures over the sessions the simulated user did not
    spoil, pass^k over those trials per task, and how many were spoiled (left out)."""
    if scores.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    faulted = scores["simulator_fault"].notna()
    agent = scores[~faulted]
    measured = agent[agent[TASK_SUCCESS].notna()]
    rows = summarize_scores(agent, (TASK_SUCCESS, *SCORE_METRICS), method)
    rows += pass_hat_k_rows(measured.assign(succeeded=measured["succeeded"].astype(bool)))
    rows.append(
        {
            "judge_id": TRAJECTORY_JUDGE,
            "metric": SIMULATOR_FAULTS,
            "group": OVERALL,
            "mean": float(faulted.mean()),
            "ci_low": None,
            "ci_high": None,
            "n": int(faulted.sum()),
            "ci_method": "",
            "note": "spoiled by the simulated user (loop, error, goal leak): out of the agent's figures",
        }
    )
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def worst_session(sessions: pd.DataFrame, scores: pd.DataFrame) -> dict[str, object]:
    """The worst session's row: failed (or not measured) first, then the shortest."""
    ordered = scores.sort_values([TASK_SUCCESS, "turns", "session_id"], na_position="first")
    return sessions.set_index("session_id", drop=False).loc[ordered["session_id"].iloc[0]].to_dict()


def worst_transcript(sessions: pd.DataFrame, scores: pd.DataFrame) -> str:
    """The transcript of the worst session, in markdown."""
    return render_transcript(worst_session(sessions, scores))


def report_versions(
    summaries: Mapping[str, pd.DataFrame],
    scores: Mapping[str, pd.DataFrame],
    sessions: Mapping[str, pd.DataFrame],
) -> dict[str, SimulatedVersion]:
    """What the HTML report shows of each agent version simulated (and scored)."""
    return {
        version: SimulatedVersion(scores[version], summary, worst_session(sessions[version], scores[version]))
        for version, summary in summaries.items()
        if version in scores and len(scores[version]) and version in sessions
    }


def render_transcript(row: Mapping[str, object]) -> str:
    """A session's transcript in markdown: each message, the agent's tool calls, how it ended."""
    detail = f": {row['stop_detail']}" if row.get("stop_detail") else ""
    lines = [f"**{row['session_id']}** — {row['stop_reason']}{detail}", ""]
    for entry in transcript_entries(row):
        if entry.role == "tool":
            lines.append(f"  - tool {markdown_text(entry.text)} {markdown_text(entry.arguments)}")
        elif entry.role == LAST_WORDS:
            lines.append(f"- **user** (last): {markdown_text(entry.text)}")
        else:
            lines.append(f"- **{entry.role}**: {markdown_text(entry.text)}")
    return "\n".join(lines)
