"""`rag-eval`: a thin command line over the Dagster definitions and the persistent instance. One
module per command; each registers its parser and its handler."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence

from dagster import DagsterExecutionInterruptedError  # what Dagster raises on a signal

from rag_eval_pipeline.cli import agents, generate, init, inspect, models, plan, production, review, run, ui
from rag_eval_pipeline.cli.context import CommandError
from rag_eval_pipeline.cli.output import error
from rag_eval_pipeline.instance.home import fail_own_unfinished_runs

COMMANDS = (run, inspect, plan, models, agents, review, production, generate, ui, init)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rag-eval", description="Evaluate RAG answer models and agents with a Dagster asset graph."
    )
    parser.add_argument(
        "--dagster-home", help="Dagster instance folder (default: $DAGSTER_HOME, else ./.dagster_home)"
    )
    parser.add_argument(
        "--config", help="configuration file (default: $RAG_EVAL_CONFIG, else ./rag_eval.yaml if present)"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.register(commands)
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM, as an interrupt: the same clean stop as Ctrl-C."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated()


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
    try:
        return args.handler(args)
    except CommandError as err:
        error(str(err))
        return 2
    except (KeyboardInterrupt, DagsterExecutionInterruptedError) as err:
        what = (
            "terminated"
            if isinstance(err, Terminated) or not isinstance(err, KeyboardInterrupt)
            else "interrupted"
        )
        failed = fail_own_unfinished_runs(f"rag-eval was {what}")
        runs = f" (run {', '.join(r[:8] for r in failed)} marked failed)" if failed else ""
        error(f"{what}{runs}: run the command again to resume; paid calls that returned are in the cache")
        return 143 if what == "terminated" else 130


if __name__ == "__main__":
    sys.exit(main())
