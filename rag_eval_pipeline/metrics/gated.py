"""The sections held to thresholds or budgets (the evaluation, production, traced and simulated
sessions) read them with one validator each, so a key that does not parse is refused in the same
words whichever section it is in. Each section declares its own ``thresholds`` / ``budgets``
field (its own description and default) and inherits how it is checked."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import field_validator

from rag_eval_pipeline.common.settings import Strict
from rag_eval_pipeline.metrics.budgets import budgets_of
from rag_eval_pipeline.metrics.settings import Gate, ThresholdSettings, checked_thresholds, gates_of


class Gated(Strict):
    """A section with ``thresholds``: checked when read, each resolved once into a gate."""

    if TYPE_CHECKING:
        thresholds: dict[str, float | ThresholdSettings]

    @field_validator("thresholds", check_fields=False)
    @classmethod
    def _gates_read(
        cls, thresholds: dict[str, float | ThresholdSettings]
    ) -> dict[str, float | ThresholdSettings]:
        return dict(checked_thresholds(thresholds))

    def gates(self) -> list[Gate]:
        """The thresholds, each resolved once into a gate."""
        return gates_of(self.thresholds)


class Budgeted(Strict):
    """A section with ``budgets``: each key's grammar and figure checked when read."""

    @field_validator("budgets", check_fields=False)
    @classmethod
    def _budgets_read(cls, budgets: dict[str, float]) -> dict[str, float]:
        budgets_of(budgets)  # the key's grammar and the figure's name, said now
        return budgets
