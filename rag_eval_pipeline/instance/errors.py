"""A failure inside Dagster's wrappers, as the user's own error in one line."""

from __future__ import annotations

import dagster as dg


def root_cause(err: BaseException) -> BaseException:
    """The user's exception inside Dagster's wrappers (a failed step re-raised by the run, a
    ``dagster.Failure`` a stage raised from the error that stopped it)."""
    while True:
        wrapper = isinstance(err, (dg.DagsterError, dg.Failure))
        inner = getattr(err, "user_exception", None) or (
            err.__cause__ if wrapper and err.__cause__ is not None else None
        )
        if inner is None:
            return err
        err = inner


def one_line(err: BaseException) -> str:
    """The error's first line, and the lines it introduces when it ends with a colon (Dagster's
    failed checks name the asset and check there)."""
    lines = [line.strip() for line in str(err).strip().splitlines() if line.strip()]
    if not lines:
        return type(err).__name__
    return " ".join(lines[:4]) if lines[0].endswith(":") else lines[0]
