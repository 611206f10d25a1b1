"""Quality gates: metric thresholds checked against a metric summary (asset checks, `rag-eval gate`).

A gate is resolved once from its key and value: ``[GROUP/][JUDGE/]METRIC`` where GROUP is
``tag:<tag>``, ``type:<type>``, ``level:<level>`` or (production traffic)
``agent_version:<version>`` (the summary's per-group rows), with a
threshold and a bound: the mean must clear it, or (``bound: lower``, as a release gate should)
the pessimistic end of its 95% interval must. A metric better lower (an error rate, a judge's
flip rate: ``metrics.directions``) must stay at or below its threshold, its interval's upper end
under ``bound: lower``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pandas as pd

from rag_eval_pipeline.metrics.directions import lower_is_better
from rag_eval_pipeline.metrics.settings import MIN_CASES, OVERALL, TOO_FEW_CASES, Bound, Gate, parse_gate


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
    def lower_is_better(self) -> bool:
        return lower_is_better(self.metric)

    @property
    def checked(self) -> float | None:
        """The value held against the threshold: the mean, or its interval's pessimistic end
        (the lower end of a score, the upper end of a metric better lower)."""
        if self.bound is not Bound.LOWER:
            return self.mean
        return self.ci_high if self.lower_is_better else self.ci_low

    def clears(self) -> bool:
        assert self.checked is not None
        return self.checked <= self.threshold if self.lower_is_better else self.checked >= self.threshold


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
                result = _with(result, passed=bool(result.clears()))
            results.append(result)
    return results


ERROR_RATE = "error_rate"


def error_rate_gate(summary: pd.DataFrame, allowed: float) -> GateResult:
    """The share of failed answer calls against the most a gate allows (a gate must not pass on
    the cases that happened to get a reply): it passes at or below ``allowed``. Summaries from
    before failures were counted apart have no error rate: then the failed cases count."""
    rows = summary[(summary["group"] == OVERALL) & (summary["metric"] == ERROR_RATE) & (summary["n"] > 0)]
    if len(rows):
        rate = float(rows["mean"].iloc[0])
    else:
        overall = summary[summary["group"] == OVERALL]
        cases = int(overall["n_cases"].max()) if len(overall) else 0
        answered = summary[(summary["group"] == OVERALL) & (summary["metric"] == "answer_rate")]
        failed = int(answered["n_failed"].max()) if len(answered) else 0
        rate = failed / cases if cases else 0.0
    passed = rate <= allowed
    note = "" if passed else f"{rate:.3f} of the answer calls failed; at most {allowed:g} allowed"
    return GateResult(ERROR_RATE, None, rate, allowed, passed, note, OVERALL, Bound.MEAN, None, None)


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
        if r.lower_is_better:
            value = "upper bound" if r.bound is Bound.LOWER else "mean"
            parts.append(f"{r.metric}{where}{group} {value} {r.checked:.3f} > threshold {r.threshold:g}")
            continue
        value = "lower bound" if r.bound is Bound.LOWER else "mean"
        parts.append(f"{r.metric}{where}{group} {value} {r.checked:.3f} < threshold {r.threshold:g}")
    parts += [f"stale: {reason}" for reason in stale]
    return "; ".join(parts)
