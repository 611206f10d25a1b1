"""Each command's arguments, in a module named as its handler's (``commands/run.py`` declares what
``cli/run.py`` handles): ``register`` adds the command's parser and names its handler, which is
imported only when the command runs. These modules import nothing heavy, so parsing (``--help``,
a wrong flag) answers at once; the options several commands share are in ``cli/options.py``."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from dataclasses import dataclass

Commands = argparse._SubParsersAction


@dataclass(frozen=True)
class Handler:
    """A command's handler: ``function`` in ``rag_eval_pipeline.cli.<module>``, imported when run."""

    module: str
    function: str = "handle"

    def load(self) -> Callable[[argparse.Namespace], int]:
        return getattr(importlib.import_module(f"rag_eval_pipeline.cli.{self.module}"), self.function)


def add_group(commands: Commands, name: str, help: str, *subcommands: Callable[[Commands], None]) -> Commands:
    """A command of subcommands (`rag-eval models list`), the chosen one in ``args.<name>_command``;
    each of ``subcommands`` adds one to it."""
    group = commands.add_parser(name, help=help).add_subparsers(dest=f"{name}_command", required=True)
    for add in subcommands:
        add(group)
    return group
