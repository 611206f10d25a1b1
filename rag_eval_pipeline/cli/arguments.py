"""Argument types shared by the commands: numbers are checked when parsed, not after work began."""

from __future__ import annotations

import argparse
import datetime as dt
from collections.abc import Callable


def comma_list(value: str) -> list[str]:
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise argparse.ArgumentTypeError("expected a comma-separated list")
    return items


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type for whole numbers from ``minimum`` (0 or 1) up."""
    expected = "a positive number" if minimum == 1 else f"{minimum} or a positive number"

    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
        if number < minimum:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {value}")
        return number

    return parse


positive = at_least(1)
non_negative = at_least(0)


def share(value: str) -> float:
    """A number between 0 and 1 (a score difference, a threshold)."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {value!r}") from None
    if not 0 < number <= 1:
        raise argparse.ArgumentTypeError(f"expected a number above 0 and at most 1, got {value}")
    return number


def day(value: str) -> str:
    """A day as YYYY-MM-DD (a production partition)."""
    try:
        return dt.date.fromisoformat(value).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a day as YYYY-MM-DD, got {value!r}") from None


def share_or_zero(value: str) -> float:
    """A number from 0 to 1 (an allowed share of failures)."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {value!r}") from None
    if not 0 <= number <= 1:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {value}")
    return number
