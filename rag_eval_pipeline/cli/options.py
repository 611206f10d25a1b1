"""The options several commands share, each declared once: its flag, type, destination and
default here, its help here unless the command says something of its own."""

from __future__ import annotations

import argparse

from rag_eval_pipeline.cli.arguments import comma_list
from rag_eval_pipeline.metrics.bounds import Bound

DAGSTER_LOG = "Dagster's own log and stack traces"
TRACEBACKS = "show tracebacks"
AS_FOR_GATE = "as for `rag-eval gate`"


def add_instance_options(parser: argparse.ArgumentParser) -> None:
    """Which Dagster instance and which configuration file every command works on."""
    parser.add_argument(
        "--dagster-home", help="Dagster instance folder (default: $DAGSTER_HOME, else ./.dagster_home)"
    )
    parser.add_argument(
        "--config", help="configuration file (default: $RAG_EVAL_CONFIG, else ./rag_eval.yaml if present)"
    )


def add_verbose(parser: argparse.ArgumentParser, help: str = DAGSTER_LOG) -> None:
    parser.add_argument("--verbose", action="store_true", help=help)


def add_format(
    parser: argparse.ArgumentParser,
    choices: tuple[str, ...] = ("table", "markdown", "json"),
    help: str | None = None,
) -> None:
    """``--format``: the first choice is the default."""
    parser.add_argument("--format", choices=list(choices), default=choices[0], help=help)


def add_models(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--models", type=comma_list, help=help)


def add_model(parser: argparse.ArgumentParser, help: str = "answer-model partition") -> None:
    """``--model``, required: the one answer model (or sessions) a command reads."""
    parser.add_argument("--model", required=True, help=help)


def add_dataset(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--dataset", help=help)


def add_thresholds(parser: argparse.ArgumentParser, help: str) -> None:
    """``--min METRIC=VALUE``, repeatable, into ``args.thresholds``."""
    parser.add_argument("--min", dest="thresholds", action="append", metavar="METRIC=VALUE", help=help)


def add_bound(parser: argparse.ArgumentParser, help: str = AS_FOR_GATE) -> None:
    """``--bound``: what must clear each ``--min`` threshold, the mean by default."""
    parser.add_argument("--bound", choices=[b.value for b in Bound], default=Bound.MEAN.value, help=help)


def add_fail_on_regression(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--fail-on-regression", action="store_true", help=help)


def add_session_output(
    parser: argparse.ArgumentParser, thresholds_help: str, judge_flag: str, judges_default: str
) -> None:
    """What the session commands (`trajectories`, `simulate`) judge, print and gate on: an LLM judge
    of each session (repeatable), ``--format``, ``--min`` and ``--bound``, as `rag-eval gate` reads
    them."""
    parser.add_argument(
        judge_flag,
        action="append",
        metavar="MODEL",
        help="an LLM judge of each session: goal completion, turn relevancy, knowledge retention "
        f"(repeatable; default: {judges_default})",
    )
    add_format(parser)
    add_thresholds(parser, thresholds_help)
    add_bound(parser)
