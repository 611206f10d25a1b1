"""The custom metrics of the configuration file (``custom_metrics:``), as settings: a rubric an
LLM scores, or a Python callable. Pydantic only, so reading a configuration imports no judge."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from rag_eval_pipeline.common.settings import Strict

# a custom metric's name becomes a column, a Prometheus label value and a report header
_METRIC_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")


class _CustomMetric(Strict):
    name: str
    reference_free: bool = Field(
        default=False,
        description="it scores a case without a reference answer (production traffic): the rubric "
        "is then shown no ground truth, the callable gets ground_truth None",
    )

    @field_validator("name")
    @classmethod
    def _plain_name(cls, name: str) -> str:
        if not _METRIC_NAME.fullmatch(name):
            raise ValueError(
                f"custom metric name {name!r}: use a letter, then letters, digits and _ "
                "(at most 64): it becomes a column, a label and a header"
            )
        return name


class RubricMetricSettings(_CustomMetric):
    """An LLM-scored metric declared in the configuration file (e.g. the RAGAS article's style
    consistency)."""

    kind: Literal["rubric"] = "rubric"
    instructions: str
    allowed_scores: list[float] = Field(default=[0.0, 0.5, 1.0], min_length=2)
    model: str = "claude-sonnet-4-6"


class PythonMetricSettings(_CustomMetric):
    """A pure Python metric ``(case) -> score | None`` named by ``module:function``."""

    kind: Literal["python"] = "python"
    callable: str


CustomMetricSettings = RubricMetricSettings | PythonMetricSettings
