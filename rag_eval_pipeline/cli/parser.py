"""The command line, assembled: the instance options every command takes, then each command as
``cli/commands/<name>.py`` declares it. Parsing (``--help``, a wrong flag) imports no command's
dependencies, so it answers at once; a command's handler is imported only when it runs."""

from __future__ import annotations

import argparse

from rag_eval_pipeline.cli.commands import (
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

# in the order `rag-eval --help` lists them
COMMANDS = (
    run,
    inspect,
    diff,
    plan,
    models,
    agents,
    titles,
    images,
    review,
    judges,
    production,
    health,
    trajectories,
    simulate,
    generate,
    ui,
    report,
    worker,
    init,
    probe,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rag-eval", description="Evaluate RAG answer models and agents with a Dagster asset graph."
    )
    add_instance_options(parser)
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.register(commands)
    return parser
