"""What every command starts from: the settings (one profile applied) and the instance, opened
once and refused in one line when a command that only reads names a home that does not exist."""

from __future__ import annotations

import argparse

import dagster as dg

from rag_eval_pipeline.cli.errors import CommandError, mask_secrets
from rag_eval_pipeline.config import ConfigError, Settings, load_settings
from rag_eval_pipeline.instance.home import (
    InstanceSettingsError,
    InstanceStorage,
    dagster_home_path,
    instance_exists,
    open_instance,
)


def settings_of(args: argparse.Namespace) -> Settings:
    """The command's settings; from here on what it prints masks their secrets."""
    try:
        settings = load_settings(args.config).with_profile(getattr(args, "profile", None))
    except ConfigError as err:
        raise CommandError(str(err)) from None
    mask_secrets(settings.redactor())
    return settings


def instance_of(args: argparse.Namespace, reads_only: bool = False) -> dg.DagsterInstance:
    if reads_only and not instance_exists(args.dagster_home):
        raise CommandError(
            f"no Dagster instance at {dagster_home_path(args.dagster_home)}: `rag-eval run` creates one "
            "there; or point --dagster-home (or DAGSTER_HOME) at yours"
        )
    try:
        return open_instance(args.dagster_home, InstanceStorage.of(settings_of(args).storage))
    except InstanceSettingsError as err:
        raise CommandError(str(err)) from None
