"""`init`: a commented example configuration file."""

from __future__ import annotations

from rag_eval_pipeline.cli.commands import Commands, Handler


def register(commands: Commands) -> None:
    init = commands.add_parser("init", help="write a commented example configuration file")
    init.add_argument("path", nargs="?", default="rag_eval.yaml")
    init.set_defaults(handler=Handler("init"))
