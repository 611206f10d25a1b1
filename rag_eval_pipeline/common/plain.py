"""Values as JSON holds them: a numpy scalar as its Python value, NaN (a figure not measured) as
null. One function for every command and report that prints a table's rows as JSON."""

from __future__ import annotations

import math
from typing import Any


def plain(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):  # a numpy scalar
        return plain(value.item())
    return value
