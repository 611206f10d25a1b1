"""What every command starts from: the settings (one profile applied) and the instance, opened
once and refused in one line when a command that only reads names a home that does not exist."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from rag_eval_pipeline.cli.errors import CommandError, mask_secrets
from rag_eval_pipeline.config import ConfigError, Settings, load_settings
from rag_eval_pipeline.instance.location import (
    DamagedHistoryError,
    FallbackHistory,
    dagster_home_path,
    instance_exists,
    local_history,
)

if TYPE_CHECKING:
    import dagster as dg

    from rag_eval_pipeline.instance.lineage import History


def settings_of(args: argparse.Namespace) -> Settings:
    """The command's settings; from here on what it prints masks their secrets."""
    try:
        settings = load_settings(args.config).with_profile(getattr(args, "profile", None))
    except ConfigError as err:
        raise CommandError(str(err)) from None
    mask_secrets(settings.redactor())
    return settings


def _refuse_missing(args: argparse.Namespace) -> None:
    if not instance_exists(args.dagster_home):
        raise CommandError(
            f"no Dagster instance at {dagster_home_path(args.dagster_home)}: `rag-eval run` creates one "
            "there; or point --dagster-home (or DAGSTER_HOME) at yours"
        )


def registered_models_of(args: argparse.Namespace) -> list[str]:
    """The instance's answer models: from a local home's index without Dagster, else as the
    opened instance lists them."""
    return history_of(args).registered_models() or []


def history_of(args: argparse.Namespace) -> History:
    """What a reading command reads of the instance: a local home's SQLite files without Dagster
    where they can answer, else the opened instance (which marks a dead process's runs failed)."""
    settings_of(args)  # a broken configuration is said first
    _refuse_missing(args)
    try:
        local = local_history(args.dagster_home)
    except DamagedHistoryError as err:
        raise CommandError(str(err)) from None

    def opened() -> History:
        from rag_eval_pipeline.instance.lineage import InstanceHistory

        return InstanceHistory(instance_of(args, reads_only=True))

    if local is None:
        return opened()

    def unreadable(why: str) -> CommandError:
        home = dagster_home_path(args.dagster_home)
        return CommandError(
            f"the run history of {home} cannot be read ({why}): nothing is said of its evaluations; "
            "restore the history files from their .backup copies, or evaluate again"
        )

    return FallbackHistory(local, opened, unreadable)


def _storage_of(settings: Settings):
    from rag_eval_pipeline.instance.home import InstanceStorage

    return InstanceStorage.of(settings.storage, workers=settings.workers)


def instance_of(args: argparse.Namespace, reads_only: bool = False) -> dg.DagsterInstance:
    # Dagster is imported here, by the commands that open the instance: 1.5 s the others skip
    from rag_eval_pipeline.instance.home import InstanceSettingsError, open_instance

    if reads_only:
        _refuse_missing(args)
    try:
        return open_instance(args.dagster_home, _storage_of(settings_of(args)))
    except InstanceSettingsError as err:
        raise CommandError(str(err)) from None
