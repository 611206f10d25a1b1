"""Quality gates: metric thresholds checked against a metric summary (asset checks, `rag-eval gate`).

A gate is resolved once from its key and value: ``[GROUP/][JUDGE/]METRIC`` where GROUP is
``tag:<tag>``, ``type:<type>``, ``level:<level>`` or (production traffic)
``agent_version:<version>`` (the summary's per-group rows), with a
threshold and a bound: the mean must clear it, or (``bound: lower``, as a release gate should)
the lower end of its 95% interval must.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from rag_eval_pipeline.metrics.schema import OVERALL
from rag_eval_pipeline.metrics.statistics import MIN_CASES, TOO_FEW_CASES

_GROUP = re.compile(r"^(tag|type|level|agent_version):(.+)$")


class Bound(str, Enum):
    """What must clear a threshold: the mean, or the lower end of its interval."""

    MEAN = "mean"
    LOWER = "lower"


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
        raise ValueError(f"gate '{key}': expected [tag:|type:|level:|agent_version:GROUP/][JUDGE/]METRIC")
    return Gate(parts[-1], float(threshold), parts[0] if len(parts) == 2 else judge, group, Bound(bound))


class ThresholdSettings(BaseModel):
    """A threshold with its bound, as a configuration file writes it: ``lower`` passes only when
    the 95% interval's lower end clears it (a release gate); ``mean`` when the mean does."""

    model_config = ConfigDict(extra="forbid")

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


@dataclass(frozen=True)
class GateResult:
    metric: str
    judge_id: str | None
    mean: float | None
    threshold: float
    passed: bool
    note: str = ""
    group: str = OVERALL
    bound: Bound = Bound.MEAN
    ci_low: float | None = None
    ci_high: float | None = None

    @property
    def checked(self) -> float | None:
        """The value held against the threshold: the mean, or its interval's lower end."""
        return self.ci_low if self.bound is Bound.LOWER else self.mean


def as_gates(thresholds: Mapping[str, float] | Iterable[Gate], judge: str | None = None) -> list[Gate]:
    if isinstance(thresholds, Mapping):
        return [parse_gate(key, value, judge=judge) for key, value in thresholds.items()]
    return list(thresholds)


def check_gates(
    summary: pd.DataFrame,
    thresholds: Mapping[str, float] | Iterable[Gate],
    judge: str | None = None,
    min_cases: int = MIN_CASES,
) -> list[GateResult]:
    """Every gate's (judge, metric) in its group of cases. A bare metric applies to every judge
    that measured it (or to ``judge`` when given). A metric nobody measured fails: a gate must
    not pass on a number that does not exist; nor does one measured on fewer than
    ``min_cases`` cases ("too few cases to conclude")."""
    results = []
    for gate in as_gates(thresholds, judge):
        rows = summary[(summary["group"] == gate.group) & (summary["metric"] == gate.metric)]
        if gate.judge_id:
            rows = rows[rows["judge_id"] == gate.judge_id]
        rows = rows[rows["n"] > 0]
        if rows.empty:
            where = "" if gate.group == OVERALL else f" in {gate.group}"
            results.append(
                GateResult(
                    gate.metric,
                    gate.judge_id,
                    None,
                    gate.threshold,
                    False,
                    f"not measured{where}",
                    gate.group,
                    gate.bound,
                )
            )
            continue
        for row in rows.itertuples():
            low = float(row.ci_low) if "ci_low" in rows and not pd.isna(row.ci_low) else None
            high = float(row.ci_high) if "ci_high" in rows and not pd.isna(row.ci_high) else None
            result = GateResult(
                gate.metric,
                row.judge_id,
                float(row.mean),
                gate.threshold,
                False,
                "",
                gate.group,
                gate.bound,
                low,
                high,
            )
            if row.n < min_cases:
                result = _with(result, note=f"{TOO_FEW_CASES}: n = {row.n} < {min_cases}")
            elif result.checked is None:
                result = _with(result, note="no interval to bound")
            else:
                result = _with(result, passed=bool(result.checked >= gate.threshold))
            results.append(result)
    return results


def _with(result: GateResult, **changes: object) -> GateResult:
    return GateResult(**{**result.__dict__, **changes})


def gate_table(results: list[GateResult]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "metric": r.metric,
                "group": r.group,
                "judge_id": r.judge_id or "–",
                "mean": r.mean if r.mean is not None else float("nan"),
                "ci_low": r.ci_low if r.ci_low is not None else float("nan"),
                "ci_high": r.ci_high if r.ci_high is not None else float("nan"),
                "bound": r.bound.value,
                "threshold": r.threshold,
                "result": "pass" if r.passed else f"FAIL{' (' + r.note + ')' if r.note else ''}",
            }
            for r in results
        ]
    )


def failed_gates_line(results: list[GateResult], stale: Iterable[str] = ()) -> str:
    """What failed, in one line a run page shows: each failing metric with its judge, value and
    threshold (or why it has none), and why the results are stale; empty when all pass."""
    parts = []
    for r in results:
        if r.passed:
            continue
        where = f" ({r.judge_id})" if r.judge_id else ""
        group = "" if r.group == OVERALL else f" in {r.group}"
        if r.checked is None or r.note:
            parts.append(f"{r.metric}{where}{group}: {r.note or 'not measured'}")
            continue
        value = "lower bound" if r.bound is Bound.LOWER else "mean"
        parts.append(f"{r.metric}{where}{group} {value} {r.checked:.3f} < threshold {r.threshold:g}")
    parts += [f"stale: {reason}" for reason in stale]
    return "; ".join(parts)
