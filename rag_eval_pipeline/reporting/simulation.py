"""The simulated users' section of a report, in Markdown (the command's `--format markdown`, the
summary's metadata in the UI): per scenario its trials, successes, task success and why its
sessions ended; pass^k with intervals; the simulator's faults, counted apart; the transcript of
the worst session."""

from __future__ import annotations

import pandas as pd

from rag_eval_pipeline.reporting.markdown import to_markdown

TASK_SUCCESS = "task_success"
PASS_HAT = "pass^"
SHOWN_METRICS = (TASK_SUCCESS, "tool_call_f1", "simulator_faults")


def scenario_table(scores: pd.DataFrame) -> pd.DataFrame:
    """A row per scenario: trials, successes (of the sessions the simulator did not spoil),
    task_success, the stop reasons with their counts, mean turns, simulator faults."""
    rows = []
    for task_id, group in scores.groupby("task_id", sort=False):
        measured = group[group["simulator_fault"].isna()]
        success = pd.to_numeric(measured[TASK_SUCCESS], errors="coerce").dropna()
        reasons = group["stop_reason"].value_counts().sort_index()
        rows.append(
            {
                "scenario": task_id,
                "trials": len(group),
                "successes": int(success.sum()),
                TASK_SUCCESS: float(success.mean()) if len(success) else float("nan"),
                "stop_reasons": ", ".join(f"{k} {v}" for k, v in reasons.items()),
                "turns": float(group["turns"].mean()),
                "simulator_faults": int(group["simulator_fault"].notna().sum()),
            }
        )
    return pd.DataFrame(rows)


def summary_table(summary: pd.DataFrame) -> pd.DataFrame:
    """task_success, tool-call F1, pass^1..n and the simulator's faults, with intervals."""
    shown = summary[summary["metric"].isin(SHOWN_METRICS) | summary["metric"].str.startswith(PASS_HAT)]
    table = shown[["metric", "mean", "ci_low", "ci_high", "n"]].copy()
    table[["mean", "ci_low", "ci_high"]] = table[["mean", "ci_low", "ci_high"]].astype(float)
    return table


def simulation_section(
    title: str, scores: pd.DataFrame, summary: pd.DataFrame, worst: str, heading: str = "## "
) -> str:
    """The section: ``title`` (the agent and its version), the scenarios, the summary, and the
    worst session's transcript (already rendered)."""
    faults = summary[summary["metric"] == "simulator_faults"]
    spoiled = int(faults["n"].iloc[0]) if len(faults) else 0
    parts = [
        f"{heading}{title}: {len(scores)} sessions",
        "",
        to_markdown(scenario_table(scores)),
        "",
        to_markdown(summary_table(summary)),
    ]
    if spoiled:
        parts += ["", f"{spoiled} sessions spoiled by the simulated user: left out of the agent's figures."]
    parts += ["", f"{heading}the worst session", "", worst]
    return "\n".join(parts)
