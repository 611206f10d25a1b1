"""`rag-eval models list|add|remove`: the answer-model partitions of the instance."""

from __future__ import annotations

import argparse

from rag_eval_pipeline.cli.context import history_of, instance_of, settings_of
from rag_eval_pipeline.cli.errors import CommandError


def handle_list(args: argparse.Namespace) -> int:
    """A model a line; where a worker ran its newest run, which one (name@host)."""
    history = history_of(args)
    for key in history.registered_models() or []:
        newest = history.newest_finished_run(key)
        print(f"{key}\tlast run on worker {newest.worker}" if newest is not None and newest.worker else key)
    return 0


def handle_add(args: argparse.Namespace) -> int:
    from rag_eval_pipeline.defs.partitions import add_models

    registry = settings_of(args).answer_registry()
    instance = instance_of(args)
    try:
        added = add_models(instance, args.names, registry.resolve)
    except ValueError as err:
        raise CommandError(str(err)) from None
    print(f"added: {', '.join(added) or 'nothing new'}")
    return 0


def handle_remove(args: argparse.Namespace) -> int:
    from rag_eval_pipeline.defs.partitions import registered_models, remove_models

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
