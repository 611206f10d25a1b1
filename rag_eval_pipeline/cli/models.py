"""`rag-eval models list|add|remove`: the answer-model partitions of the instance."""

from __future__ import annotations

import argparse

from rag_eval_pipeline.cli.context import CommandError, instance_of, settings_of
from rag_eval_pipeline.defs.partitions import add_models, registered_models, remove_models
from rag_eval_pipeline.defs.resources import SettingsResource


def register(commands: argparse._SubParsersAction) -> None:
    models = commands.add_parser("models", help="list, add or remove answer-model partitions")
    model_commands = models.add_subparsers(dest="models_command", required=True)
    model_commands.add_parser("list", help="the registered answer models").set_defaults(handler=handle_list)
    add = model_commands.add_parser("add", help="register answer models (partitions)")
    add.add_argument("names", nargs="+", help="MODEL or MODEL@MODE-kK")
    add.set_defaults(handler=handle_add)
    remove = model_commands.add_parser("remove", help="unregister answer models")
    remove.add_argument("names", nargs="+")
    remove.set_defaults(handler=handle_remove)


def handle_list(args: argparse.Namespace) -> int:
    settings_of(args)  # a broken configuration is said here too
    for key in registered_models(instance_of(args, reads_only=True)):
        print(key)
    return 0


def handle_add(args: argparse.Namespace) -> int:
    registry = SettingsResource.from_settings(settings_of(args)).answer_registry()
    instance = instance_of(args)
    try:
        added = add_models(instance, args.names, registry.resolve)
    except ValueError as err:
        raise CommandError(str(err)) from None
    print(f"added: {', '.join(added) or 'nothing new'}")
    return 0


def handle_remove(args: argparse.Namespace) -> int:
    settings_of(args)
    instance = instance_of(args, reads_only=True)
    registered = registered_models(instance)
    unknown = sorted(set(args.names) - set(registered))
    if unknown:
        raise CommandError(
            f"not registered: {', '.join(unknown)} (registered: {', '.join(registered) or 'none'})"
        )
    print(f"removed: {', '.join(remove_models(instance, args.names))}")
    return 0
