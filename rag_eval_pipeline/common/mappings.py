"""Reading span and trace attributes, which arrive flat (``session.id``) or nested."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def dotted_value(attributes: Mapping[str, Any], name: str) -> Any:
    """An attribute by its dotted name, whether stored flat (``gen_ai.conversation.id``) or nested
    (``{"gen_ai": {"conversation": {"id": ...}}}``); None when it is not there."""
    if name in attributes:
        return attributes[name]
    value: Any = attributes
    for part in name.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value
