"""What the configuration says about numbers, as names and settings: how intervals are made,
the significance level and minimum cases, and the thresholds a quality gate holds a summary to.
Standard library and pydantic only, so reading a configuration file imports no numerics; the
evaluation's and production's thresholds share this one parser and its one validator.

``Bound`` (re-exported here) lives in ``bounds.py``, so that parsing a command builds no settings
model."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from pydantic import Field

from rag_eval_pipeline.common.settings import Strict
from rag_eval_pipeline.metrics.bounds import Bound

CONFIDENCE = 0.95
SIGNIFICANCE = 0.05
MIN_CASES = 10  # below this many scored cases a summary or gate says "too few cases to conclude"
MONTE_CARLO_DRAWS = 20_000  # sign flips drawn when exact enumeration would be too large
TOO_FEW_CASES = "too few cases to conclude"
OVERALL = "all"  # the summary group over every case
# a security probe's attack success rate as a summary metric: asr_injection, asr_poisoning, ...
ASR_PREFIX = "asr_"
PROBE_JUDGE = "probe"  # the judge_id of the probes' summary rows (no judge scores them)


class IntervalMethod(str, Enum):
    """How a mean's interval is computed: ``clopper_pearson`` (default) or ``wilson`` for scores
    in [0, 1], or the seeded bootstrap (``percentile``, ``bca``), which collapses on identical
    values."""

    CLOPPER_PEARSON = "clopper_pearson"
    WILSON = "wilson"
    PERCENTILE = "percentile"
    BCA = "bca"


class StatisticsSettings(Strict):
    """How means and comparisons are reported (docs: Judges and statistics)."""

    interval_method: IntervalMethod = IntervalMethod.CLOPPER_PEARSON
    significance_level: float = Field(default=SIGNIFICANCE, gt=0, lt=1)
    min_cases: int = Field(default=MIN_CASES, ge=1, description="fewer scored cases: no conclusion")
    monte_carlo_draws: int = Field(default=MONTE_CARLO_DRAWS, ge=1000)


_GROUP = re.compile(r"^(tag|type|level|language|agent_version):(.+)$")


@dataclass(frozen=True)
class Gate:
    """One threshold: a metric (of one judge, or of every judge that measured it) in one group of
    cases (all of them, a tag, a question type or level) must reach ``threshold``."""

    metric: str
    threshold: float
    judge_id: str | None = None
    group: str = OVERALL
    bound: Bound = Bound.MEAN

    @property
    def key(self) -> str:
        parts = [] if self.group == OVERALL else [self.group.replace("=", ":", 1)]
        return "/".join([*parts, *([self.judge_id] if self.judge_id else []), self.metric])


def parse_gate(key: str, threshold: float, bound: Bound | str = Bound.MEAN, judge: str | None = None) -> Gate:
    """``faithfulness``, ``claude-sonnet-4-6/faithfulness`` or ``tag:unanswerable/correctness``
    with its threshold; ``judge`` applies to a key that names none."""
    if not 0 <= threshold <= 1:
        raise ValueError(f"threshold of '{key}' must be a score between 0 and 1, got {threshold}")
    parts = [p.strip() for p in key.split("/")]
    group = OVERALL
    if len(parts) > 1 and (match := _GROUP.match(parts[0])):
        group = f"{match[1]}={match[2]}"
        parts = parts[1:]
    if not parts[-1] or len(parts) > 2:
        raise ValueError(
            f"gate '{key}': expected [tag:|type:|level:|language:|agent_version:GROUP/][JUDGE/]METRIC"
        )
    return Gate(parts[-1], float(threshold), parts[0] if len(parts) == 2 else judge, group, Bound(bound))


class ThresholdSettings(Strict):
    """A threshold with its bound, as a configuration file writes it: ``lower`` passes only when
    the 95% interval's lower end clears it (a release gate); ``mean`` when the mean does."""

    min: float = Field(ge=0, le=1)
    bound: Bound = Bound.MEAN


Thresholds = Mapping[str, "float | ThresholdSettings"]


def checked_thresholds(thresholds: Thresholds) -> Thresholds:
    """A configuration's thresholds, refused in one message when a score is not a share or a key
    does not read as a gate (what both the evaluation's and production's validators say)."""
    wrong = {k: v for k, v in thresholds.items() if isinstance(v, float | int) and not 0 <= v <= 1}
    if wrong:
        raise ValueError(f"thresholds are scores between 0 and 1, got {wrong}")
    for key in thresholds:
        parse_gate(key, 0.5)  # the key's grammar, said now
    return thresholds


def gates_of(thresholds: Thresholds) -> list[Gate]:
    """A configuration's thresholds, each resolved once into a gate."""
    return [
        parse_gate(key, value, Bound.MEAN)
        if isinstance(value, float | int)
        else parse_gate(key, value.min, value.bound)
        for key, value in thresholds.items()
    ]


def parse_threshold(text: str) -> tuple[str, float]:
    """``faithfulness=0.7`` or ``claude-sonnet-4-6/faithfulness=0.7`` -> (key, 0.7)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"expected METRIC=VALUE, got '{text}'")
    try:
        threshold = float(value)
    except ValueError:
        raise ValueError(f"threshold of '{key}' is not a number: '{value}'") from None
    return key.strip(), threshold
