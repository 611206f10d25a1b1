"""`rag-eval`: a thin command line over the Dagster definitions and the persistent instance. One
module per command; each registers its parser and its handler."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rag_eval_pipeline.cli import init, inspect, models, plan, run
from rag_eval_pipeline.cli.context import CommandError
from rag_eval_pipeline.cli.output import error

COMMANDS = (run, inspect, plan, models, init)


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


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except CommandError as err:
        error(str(err))
        return 2
    except KeyboardInterrupt:
        error("interrupted: the run is marked failed; run the command again to resume from the cache")
        return 130


if __name__ == "__main__":
    sys.exit(main())
