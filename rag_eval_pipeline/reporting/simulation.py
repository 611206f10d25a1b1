"""The simulated users' section of a report, in Markdown (the command's `--format markdown`, the
summary's metadata in the UI) and in the HTML report: per scenario its trials, successes, task
success and why its sessions ended; pass^k with intervals; the simulator's faults, counted
apart; the transcript of the worst session."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from dataclasses import dataclass

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


def narrow_scenario_table(scores: pd.DataFrame) -> pd.DataFrame:
    """The scenarios in five short columns, for an asset page's pane at 1,440 px: ``success``
    as successes of sessions measured with the rate (``2/3 (0.67)``), the stop reasons, mean
    turns and simulator faults."""
    table = scenario_table(scores)
    if table.empty:
        return table
    measured = table["trials"] - table["simulator_faults"]
    return pd.DataFrame(
        {
            "scenario": table["scenario"],
            "success": [
                f"{ok}/{n} ({rate:.2f})" if n else "–"
                for ok, n, rate in zip(table["successes"], measured, table[TASK_SUCCESS])
            ],
            "stops": table["stop_reasons"],
            "turns": table["turns"].round(1),
            "faults": table["simulator_faults"],
        }
    )


def simulation_section(
    title: str,
    scores: pd.DataFrame,
    summary: pd.DataFrame,
    worst: str,
    heading: str = "## ",
    narrow: bool = False,
) -> str:
    """The section: ``title`` (the agent and its version), the scenarios (``narrow``: in the
    five short columns of an asset page), the summary, and the worst session's transcript
    (already rendered)."""
    faults = summary[summary["metric"] == "simulator_faults"]
    spoiled = int(faults["n"].iloc[0]) if len(faults) else 0
    parts = [
        f"{heading}{title}: {len(scores)} sessions",
        "",
        to_markdown(narrow_scenario_table(scores) if narrow else scenario_table(scores)),
        "",
        to_markdown(summary_table(summary)),
    ]
    if spoiled:
        parts += ["", f"{spoiled} sessions spoiled by the simulated user: left out of the agent's figures."]
    parts += ["", f"{heading}the worst session", "", worst]
    return "\n".join(parts)


@dataclass(frozen=True)
class Entry:
    """One line of a transcript: who (user, tool, agent, or the user's last words), and what."""

    role: str
    text: str
    arguments: str = ""  # a tool call's


LAST_WORDS = "user (last)"


def transcript_entries(row: Mapping[str, object]) -> list[Entry]:
    """A stored session's transcript in order: each turn's user message, the agent's tool calls
    and its reply, then the user's closing words (sent with the stop) or a message never sent."""
    entries = []
    turns = json.loads(str(row["session"]))["turns"]
    for turn in turns:
        entries.append(Entry("user", str(turn["user"])))
        entries += [Entry("tool", str(c["name"]), str(c["arguments"])) for c in turn["tool_calls"]]
        entries.append(Entry("agent", str(turn["answer"])))
    users = [m for m in json.loads(str(row["transcript"])) if m["role"] == "user"]
    if len(users) > len(turns):
        entries.append(Entry(LAST_WORDS, str(users[-1]["content"])))
    return entries


@dataclass(frozen=True)
class SimulatedVersion:
    """What the report shows of one agent version's simulation: its scores, its summary and
    its worst session (a row of the sessions' table)."""

    scores: pd.DataFrame
    summary: pd.DataFrame
    worst: Mapping[str, object]


def _table(frame: pd.DataFrame) -> str:
    return frame.to_html(index=False, float_format=lambda v: f"{v:.3f}", na_rep="–")


def _transcript_html(row: Mapping[str, object]) -> str:
    detail = f": {row['stop_detail']}" if row.get("stop_detail") else ""
    items = []
    for entry in transcript_entries(row):
        if entry.role == "tool":
            items.append(
                f"<li class='tool'>tool <code>{html.escape(entry.text)}</code> "
                f"<code>{html.escape(entry.arguments)}</code></li>"
            )
        else:
            items.append(f"<li><b>{html.escape(entry.role)}</b>: {html.escape(entry.text)}</li>")
    return (
        f"<p><b>{html.escape(str(row['session_id']))}</b> — {html.escape(str(row['stop_reason']))}"
        f"{html.escape(detail)}</p><ul class='transcript'>{''.join(items)}</ul>"
    )


def simulation_html(versions: Mapping[str, SimulatedVersion]) -> str:
    """The HTML report's section, an agent version each; empty when nothing was simulated."""
    if not versions:
        return ""
    parts = [
        '<section id="simulation"><h2>Simulated users</h2><p class="note">Each scenario talked '
        "through several trials (`rag-eval simulate`): task success over the sessions the simulated "
        "user did not spoil, pass^k = C(c, k) / C(n, k) averaged over the scenarios with its 95% "
        "interval; sessions spoiled by the simulated user (goal leak, loop, simulator error) are "
        "counted apart and left out of the agent's figures.</p>"
    ]
    for version, shown in sorted(versions.items()):
        faults = shown.summary[shown.summary["metric"] == "simulator_faults"]
        spoiled = int(faults["n"].iloc[0]) if len(faults) else 0
        parts += [
            f"<h3>agent version {html.escape(version)}: {len(shown.scores)} sessions</h3>",
            _table(scenario_table(shown.scores)),
            _table(summary_table(shown.summary)),
            f"<p class='note'>{spoiled} session(s) spoiled by the simulated user: left out of the "
            "agent's figures.</p>",
            "<h4>The worst session</h4>",
            _transcript_html(shown.worst),
        ]
    return "".join(parts) + "</section>"
