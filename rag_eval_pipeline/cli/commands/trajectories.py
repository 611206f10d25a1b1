"""`trajectories`: an agent's traced sessions scored against a reference."""

from __future__ import annotations

from rag_eval_pipeline.cli.arguments import positive
from rag_eval_pipeline.cli.commands import Commands, Handler
from rag_eval_pipeline.cli.options import add_fail_on_regression, add_session_output, add_verbose


def register(commands: Commands) -> None:
    trajectories = commands.add_parser(
        "trajectories",
        help="score an agent's tool calls and sessions from its traces against a reference",
        description="""Reads OTLP/JSON traces (OpenInference or GenAI conventions), rebuilds the sessions (a
        turn per root span, tool calls in start order), materializes each agent version as a partition (spans,
        sessions, scores, session judges, summary) and prints every session's tool-call F1 and matches, and
        pass^k. Exit 1 when a threshold or the reconstruction check fails; 2 on input that cannot be read.""",
    )
    trajectories.add_argument(
        "--traces",
        nargs="+",
        metavar="FILE",
        help="OTLP/JSON files or folders (default: trajectories.traces)",
    )
    trajectories.add_argument(
        "--reference", metavar="FILE", help="JSONL, a task per line (default: trajectories.reference)"
    )
    add_session_output(
        trajectories,
        "e.g. match_strict=0.8 or pass^2=0.5; repeatable (default: trajectories.thresholds)",
        judge_flag="--judge",
        judges_default="trajectories.judges",
    )
    trajectories.add_argument(
        "--diff", nargs=2, metavar=("BEFORE", "AFTER"), help="compare two agent versions trial by trial"
    )
    add_fail_on_regression(trajectories, "with --diff: exit 1 when AFTER is significantly worse")
    trajectories.add_argument("--min-cases", type=positive, help="fewest paired sessions a diff tests")
    add_verbose(trajectories)
    trajectories.set_defaults(handler=Handler("trajectories"))
