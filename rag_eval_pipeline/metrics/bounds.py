"""What must clear a threshold, as a name the command line and the configuration accept (an enum
of its own, so that parsing a command builds no settings model)."""

from __future__ import annotations

from enum import Enum


class Bound(str, Enum):
    """What must clear a threshold: the mean, or the lower end of its interval."""

    MEAN = "mean"
    LOWER = "lower"
