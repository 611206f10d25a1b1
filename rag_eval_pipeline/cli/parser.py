"""The command line, assembled: the instance options every command takes, then each command as
``cli/commands/<name>.py`` declares it. Parsing (``--help``, a wrong flag) imports no command's
dependencies, so it answers at once; a command's handler is imported only when it runs."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from rag_eval_pipeline.cli.commands import (
    Commands,
    agents,
    diff,
    generate,
    health,
    images,
    init,
    inspect,
    judges,
    models,
    plan,
    probe,
    production,
    report,
    review,
    run,
    simulate,
    titles,
    trajectories,
    ui,
    worker,
)
from rag_eval_pipeline.cli.options import add_instance_options

# every top-level command, in the order `rag-eval --help` lists them
COMMANDS: tuple[Callable[[Commands], None], ...] = (
    run.register,
    inspect.explain_command,
    inspect.worst_command,
    inspect.gate_command,
    diff.diff_command,
    diff.baseline_command,
    plan.register,
    models.register,
    agents.register,
    titles.register,
    images.register,
    review.register,
    judges.register,
    production.register,
    health.register,
    trajectories.register,
    simulate.register,
    generate.register,
    ui.register,
    report.register,
    worker.register,
    init.register,
    probe.register,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rag-eval", description="Evaluate RAG answer models and agents with a Dagster asset graph."
    )
    add_instance_options(parser)
    commands = parser.add_subparsers(dest="command", required=True)
    for register in COMMANDS:
        register(commands)
    return parser
