"""Where an agent version's sessions are stored, per source: its traces (`rag-eval
trajectories`) or simulated users (`rag-eval simulate`). One table, read by the review queue,
the labels, the judges' agreement and `rag-eval gate`, so ``simulation:VERSION`` goes through
the same code paths as ``trajectories:VERSION``; the assets' shared helpers, the instance's
runs and the checks take their names from the same row. A new source is a row here, its
assets and its reader."""

from __future__ import annotations

from dataclasses import dataclass

from rag_eval_pipeline.defs.names import (
    AGENT_SESSIONS,
    SESSION_JUDGE_SCORES,
    SIMULATED_SESSIONS,
    SIMULATION_JOB,
    SIMULATION_JUDGE_SCORES,
    SIMULATION_SCORES,
    SIMULATION_SUMMARY,
    TRAJECTORY_JOB,
    TRAJECTORY_SCORES,
    TRAJECTORY_SUMMARY,
)
from rag_eval_pipeline.metrics.agreement import SESSION_PREFIX, SIMULATION_PREFIX


@dataclass(frozen=True)
class SessionSource:
    prefix: str  # what the pseudo-model's name starts with
    section: str  # the settings' section: its thresholds, and whether its assets are defined
    sessions: str  # the sessions' table (the trajectories' layout)
    judge_scores: str  # the session judges' scores (goal completion, ...)
    summary: str  # metric_summary's layout: gates read it
    command: str  # what stores them
    judges_option: str  # how its sessions get session judges
    scores: str  # each session scored (tool calls against the reference, or task success)
    job: str  # the job that stores one agent version's tables
    noun: str  # what its thresholds are called in a check's words ("no trajectory threshold set")


SESSION_SOURCES = {
    SESSION_PREFIX: SessionSource(
        SESSION_PREFIX,
        "trajectories",
        AGENT_SESSIONS,
        SESSION_JUDGE_SCORES,
        TRAJECTORY_SUMMARY,
        "rag-eval trajectories",
        "--judge <an LLM>` (or set trajectories.judges)",
        TRAJECTORY_SCORES,
        TRAJECTORY_JOB,
        "trajectory",
    ),
    SIMULATION_PREFIX: SessionSource(
        SIMULATION_PREFIX,
        "simulation",
        SIMULATED_SESSIONS,
        SIMULATION_JUDGE_SCORES,
        SIMULATION_SUMMARY,
        "rag-eval simulate",
        "--session-judge <an LLM>` (or set simulation.session_judges)",
        SIMULATION_SCORES,
        SIMULATION_JOB,
        "simulation",
    ),
}
