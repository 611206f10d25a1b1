"""Latency and cost budgets per case: what one answer took (the answer model's or agent's call,
a cached answer at its first latency) and cost, summarised as p50 / p95 / max latency and mean /
max cost per case, overall and per group of cases, and held to a gate's maxima.

The figures are rows of the summary (judge ``answer_model``, group ``budget`` or
``budget:<group>``, the figure in ``mean``, the three worst cases in ``note``), so a gate reads
them from the summary alone. A case whose latency was not recorded (a cache from before
latencies were kept, a file of served answers) or whose cost is unknown (an agent that does not
report its spending, an unpriced model) is left out of that figure, never counted as 0; a figure
no case has is absent, and a gate on it fails as not measured."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rag_eval_pipeline.metrics.schema import ANSWER_MODEL_ROW, case_set_id
from rag_eval_pipeline.metrics.settings import OVERALL, parse_gate

if TYPE_CHECKING:  # the configuration parses budgets: numpy and pandas only where figures are made
    import numpy as np
    import pandas as pd

BUDGET = "budget"
WORST_SHOWN = 3


@dataclass(frozen=True)
class BudgetFigure:
    """One figure a budget can bound: the per-case column it reads, how it aggregates, and the
    words and unit its failure line says it in."""

    column: str
    quantile: float | None  # None: the mean
    words: str
    unit: str

    def of(self, values: np.ndarray) -> float:
        import numpy as np

        if self.quantile is None:
            return float(values.mean())
        # numpy's default (linear) interpolation: p95 of 10 cases lies between the two slowest
        return float(np.quantile(values, self.quantile))

    def say(self, value: float) -> str:
        return f"${value:.4g}" if self.unit == "USD" else f"{value:.3g} {self.unit}"


BUDGET_FIGURES: dict[str, BudgetFigure] = {
    "latency_p50_s": BudgetFigure("latency_s", 0.5, "latency p50", "s"),
    "latency_p95_s": BudgetFigure("latency_s", 0.95, "latency p95", "s"),
    "latency_max_s": BudgetFigure("latency_s", 1.0, "latency max", "s"),
    "cost_per_case_usd": BudgetFigure("cost_usd", None, "cost per case", "USD"),
    "cost_max_usd": BudgetFigure("cost_usd", 1.0, "cost max", "USD"),
}


def budget_group(group: str) -> str:
    """The summary group a budget figure of ``group`` (overall, ``tag=x``...) is stored under."""
    return BUDGET if group == OVERALL else f"{BUDGET}:{group}"


def _groups(judge_scores: pd.DataFrame | None, group_by: Sequence[str]) -> list[tuple[str, set[str]]]:
    """Each group of cases (its name and qids) the judges' rows say: type, level, language, tag."""
    if judge_scores is None or judge_scores.empty:
        return []
    cases = judge_scores.drop_duplicates("qid")
    found: list[tuple[str, set[str]]] = []
    for column in [c for c in group_by if c in cases]:
        for value, rows in cases.groupby(column, sort=True):
            found.append((f"{column}={value}", set(rows["qid"])))
    if "tags" in cases and cases["tags"].map(lambda t: t is not None and len(t) > 0).any():
        exploded = cases.explode("tags").dropna(subset=["tags"])
        found += [(f"tag={tag}", set(rows["qid"])) for tag, rows in exploded.groupby("tags", sort=True)]
    return found


def _worst(rows: pd.DataFrame, column: str, figure: BudgetFigure) -> str:
    top = rows.dropna(subset=[column]).nlargest(WORST_SHOWN, column)
    cached = top["from_cache"].fillna(False).astype(bool) if "from_cache" in top else [False] * len(top)
    marked = column == "latency_s"  # a cached answer's latency is its first call's: said so
    shown = [
        f"{qid} {figure.say(float(value))}{' (cached: first latency)' if hit and marked else ''}"
        for qid, value, hit in zip(top["qid"], top[column], cached)
    ]
    return "worst: " + ", ".join(shown) if shown else ""


def _rows_of(answers: pd.DataFrame, group: str) -> list[dict[str, object]]:
    import pandas as pd

    out = []
    for metric, figure in BUDGET_FIGURES.items():
        if figure.column not in answers:
            continue
        values = pd.to_numeric(answers[figure.column], errors="coerce")
        if figure.column == "cost_usd":  # a failed call's cost is not known: only answered cases
            values = values[answers["status"] == "ok"]
        known = values.dropna().to_numpy(dtype=float)
        cached = int(answers["from_cache"].fillna(False).astype(bool).sum()) if "from_cache" in answers else 0
        notes = (
            [_worst(answers.assign(**{figure.column: values}), figure.column, figure)] if len(known) else []
        )
        if cached and figure.column == "latency_s":
            notes.append(f"{cached} cached, counted at their first latency")
        out.append(
            {
                "judge_id": ANSWER_MODEL_ROW,
                "metric": metric,
                "group": budget_group(group),
                "mean": figure.of(known) if len(known) else float("nan"),
                "ci_low": float("nan"),
                "ci_high": float("nan"),
                "n": int(len(known)),
                "n_cases": int(len(answers)),
                "n_failed": int((answers["status"] != "ok").sum()),
                "n_judge_errors": 0,
                "case_set": case_set_id(answers["qid"]),
                "total": float("nan"),
                "ci_method": "",
                "note": "; ".join(n for n in notes if n),
            }
        )
    return out


def budget_rows(
    candidate_answers: pd.DataFrame, judge_scores: pd.DataFrame | None, group_by: Sequence[str]
) -> list[dict[str, object]]:
    """The budget figures of every answer (each repeat counts), overall and per group of cases
    (from the judges' rows: type, level, language, tag). A failed call's latency counts (its
    time was spent), its cost does not (unknown)."""
    if candidate_answers.empty:
        return []
    overall = _rows_of(candidate_answers, OVERALL)
    rows = list(overall)
    for group, qids in _groups(judge_scores, group_by):
        members = candidate_answers[candidate_answers["qid"].isin(qids)]
        if len(members) == len(candidate_answers):  # every case (one language): the same figures
            rows += [{**row, "group": budget_group(group)} for row in overall]
        elif len(members):
            rows += _rows_of(members, group)
    return rows


@dataclass(frozen=True)
class Budget:
    """One maximum: a budget figure, in one group of cases, must stay at or below ``limit``."""

    metric: str
    limit: float
    group: str = OVERALL

    @property
    def figure(self) -> BudgetFigure:
        return BUDGET_FIGURES[self.metric]


def parse_budget(key: str, limit: float) -> Budget:
    """``latency_p95_s`` or ``tag:multi-hop/cost_per_case_usd`` with its maximum (seconds or
    dollars); a judge or an unknown figure is refused, naming the ones there are."""
    if limit < 0:
        raise ValueError(f"budget '{key}' must be 0 or more, got {limit:g}")
    gate = parse_gate(key, 0.5)  # the same group grammar as every threshold
    if gate.metric not in BUDGET_FIGURES or gate.judge_id:
        raise ValueError(
            f"budget '{key}': expected [tag:|type:|level:|language:GROUP/]FIGURE, a figure among "
            f"{', '.join(BUDGET_FIGURES)}"
        )
    return Budget(gate.metric, float(limit), gate.group)


def budgets_of(maxima: Mapping[str, float] | Iterable[tuple[str, float]]) -> list[Budget]:
    items = maxima.items() if isinstance(maxima, Mapping) else maxima
    return [parse_budget(key, value) for key, value in items]


@dataclass(frozen=True)
class BudgetResult:
    budget: Budget
    value: float | None
    passed: bool
    line: str  # what a failure says, in the shape teams know; empty when it passed


def check_budgets(summary: pd.DataFrame, budgets: Iterable[Budget]) -> list[BudgetResult]:
    """Each budget against its figure in the summary: passes at or below the limit; a figure
    that was not measured (no summary rows for it, or no case with a value) fails, saying so."""
    results = []
    kept = bool(summary["group"].astype(str).str.startswith(BUDGET).any()) if len(summary) else False
    for budget in budgets:
        figure = budget.figure
        where = "" if budget.group == OVERALL else f" in {budget.group}"
        rows = summary[
            (summary["group"] == budget_group(budget.group))
            & (summary["metric"] == budget.metric)
            & (summary["n"] > 0)
        ]
        if rows.empty:
            what = "cost" if figure.column == "cost_usd" else "latency"
            why = (
                f"no case{where} recorded its {what}"
                if kept
                else "the summary was made before budgets were kept: evaluate again"
            )
            results.append(
                BudgetResult(
                    budget,
                    None,
                    False,
                    f"{figure.words}{where} is not measured ({why}); the budget cannot pass",
                )
            )
            continue
        row = rows.iloc[0]
        value = float(row["mean"])
        passed = value <= budget.limit
        worst = f" ({row['note']})" if isinstance(row.get("note"), str) and row["note"] else ""
        line = (
            ""
            if passed
            else f"{figure.words}{where} {figure.say(value)} is greater than the threshold "
            f"{figure.say(budget.limit)}{worst}"
        )
        results.append(BudgetResult(budget, value, passed, line))
    return results


def budget_table(results: Sequence[BudgetResult]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "budget": r.budget.metric,
                "group": r.budget.group,
                "value": r.value if r.value is not None else float("nan"),
                "max": r.budget.limit,
                "result": "pass" if r.passed else "FAIL",
            }
            for r in results
        ]
    )
