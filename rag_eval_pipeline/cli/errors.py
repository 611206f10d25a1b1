"""What every command says when the user can fix something: one ``error:`` line (exit 2), with
the configuration's secrets masked in it and in whatever else the command prints (``say``)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from rag_eval_pipeline.common.secrets import Redactor


class CommandError(Exception):
    """A problem the user can fix, said in one line (exit 2)."""


@dataclass
class _Output:
    """What this process prints through: the secrets a command's configuration names, set once
    the command has read it (a process runs one command)."""

    redact: Redactor = field(default_factory=Redactor)


OUTPUT = _Output()


def mask_secrets(redactor: Redactor) -> None:
    """From now on, what this process prints masks these secrets too."""
    OUTPUT.redact = OUTPUT.redact.merged(redactor)


def say(text: str) -> None:
    """A line on stdout, secrets masked."""
    print(OUTPUT.redact(text))


def error(message: str) -> None:
    print(f"error: {OUTPUT.redact(message)}", file=sys.stderr)
