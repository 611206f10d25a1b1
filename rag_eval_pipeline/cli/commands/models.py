"""`models`: the answer-model partitions of the instance."""

from __future__ import annotations

from rag_eval_pipeline.cli.commands import Commands, Handler, add_group


def register(commands: Commands) -> None:
    model_commands = add_group(commands, "models", "list, add or remove answer-model partitions")
    model_commands.add_parser("list", help="the registered answer models").set_defaults(
        handler=Handler("models", "handle_list")
    )
    add = model_commands.add_parser("add", help="register answer models (partitions)")
    add.add_argument("names", nargs="+", help="MODEL or MODEL@MODE-kK")
    add.set_defaults(handler=Handler("models", "handle_add"))
    remove = model_commands.add_parser("remove", help="unregister answer models")
    remove.add_argument("names", nargs="+")
    remove.set_defaults(handler=Handler("models", "handle_remove"))
