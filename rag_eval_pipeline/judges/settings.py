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


MAX_JUDGE_REPEATS = 25  # each re-score is a paid call per case: more than this is a typo
JUDGE_REPEATS_FIELD = Field(
    default=1,
    description="ask each LLM judge this many times per case (independent calls, each cached apart): "
    "a number for every LLM judge, or {judge id: number} for some; the summaries use each case's "
    "median and add <metric>_flip_rate, the share of cases whose re-scores differ",
)
JURY_FIELD = Field(
    default=None,
    description="add the judge 'jury': per case the median of the run's LLM judges (its jurors), with "
    "Krippendorff's alpha between them; 'weighted' weighs each juror by its agreement with the "
    "people's labels (fitted on half the labelled questions, measured on the other half)",
)
JUDGE_TEMPERATURE_FIELD = Field(
    default=None,
    ge=0,
    le=1,
    description="the sampling temperature of every LLM judge (unset: 0); re-scores at 0 measure what "
    "a provider varies on its own, above 0 also what sampling does",
)
JuryMode = Literal["median", "weighted"]
JudgeRepeats = int | dict[str, int]


def checked_repeats(repeats: JudgeRepeats) -> JudgeRepeats:
    """1 to ``MAX_JUDGE_REPEATS`` re-scores, for every judge or by judge id."""
    for who, count in repeats.items() if isinstance(repeats, dict) else [("every judge", repeats)]:
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_JUDGE_REPEATS:
            raise ValueError(
                f"judge_repeats of {who}: {count!r} is not a whole number from 1 to {MAX_JUDGE_REPEATS}"
            )
    return repeats
