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
    read = ["qid", *[c for c in group_by if c in judge_scores and c != "qid"]]
    cases = judge_scores[read + (["tags"] if "tags" in judge_scores and "tags" not in read else [])]
    cases = cases.drop_duplicates("qid")
    found: list[tuple[str, set[str]]] = []
    qids = cases["qid"].tolist()
    for column in read[1:]:  # as groupby(column, sort=True) would say them, a missing value in none
        members: dict[object, set[str]] = {}
        for qid, value, missing in zip(qids, cases[column].tolist(), cases[column].isna().tolist()):
            if not missing:
                members.setdefault(value, set()).add(qid)
        found += [(f"{column}={value}", members[value]) for value in sorted(members)]
    if "tags" in cases and cases["tags"].map(lambda t: t is not None and len(t) > 0).any():
        exploded = cases.explode("tags").dropna(subset=["tags"])
        found += [(f"tag={tag}", set(rows["qid"])) for tag, rows in exploded.groupby("tags", sort=True)]
    return found


# the columns the figures read: a group's rows are taken of these alone, never of the whole
# answers table (its passages and prompts made each copy cost more than the figures)
_READ = ("qid", "status", "from_cache", *dict.fromkeys(f.column for f in BUDGET_FIGURES.values()))


def _worst(qids: pd.Series, values: np.ndarray, cached: np.ndarray, column: str, figure: BudgetFigure) -> str:
    """The three largest values, the first case first among equals (as ``nlargest`` keeps)."""
    import numpy as np

    known = np.flatnonzero(~np.isnan(values))
    top = known[np.argsort(-values[known], kind="stable")[:WORST_SHOWN]]
    marked = column == "latency_s"  # a cached answer's latency is its first call's: said so
    shown = [
        f"{qids.iloc[i]} {figure.say(float(values[i]))}"
        + (" (cached: first latency)" if cached[i] and marked else "")
        for i in top
    ]
    return "worst: " + ", ".join(shown) if shown else ""


def _rows_of(answers: pd.DataFrame, group: str) -> list[dict[str, object]]:
    import numpy as np
    import pandas as pd

    ok = (answers["status"] == "ok").to_numpy()
    cached = (
        answers["from_cache"].fillna(False).astype(bool).to_numpy()
        if "from_cache" in answers
        else np.zeros(len(answers), dtype=bool)
    )
    # what every figure of the group says alike, computed once
    n_cases, n_failed, case_set = int(len(answers)), int((~ok).sum()), case_set_id(answers["qid"])
    columns: dict[str, tuple[np.ndarray, str]] = {}  # column -> its values and worst cases
    out = []
    for metric, figure in BUDGET_FIGURES.items():
        if figure.column not in answers:
            continue
        if figure.column not in columns:
            numbers = pd.to_numeric(answers[figure.column], errors="coerce")
            values = numbers.to_numpy(dtype=float, na_value=np.nan)
            if figure.column == "cost_usd":  # a failed call's cost is not known: only answered cases
                values = np.where(ok, values, np.nan)
            worst = _worst(answers["qid"], values, cached, figure.column, figure) if len(values) else ""
            columns[figure.column] = values, worst
        values, worst = columns[figure.column]
        known = values[~np.isnan(values)]
        notes = [worst] if len(known) else []
        if cached.any() and figure.column == "latency_s":
            notes.append(f"{int(cached.sum())} cached, counted at their first latency")
        out.append(
            {
                "judge_id": ANSWER_MODEL_ROW,
                "metric": metric,
                "group": budget_group(group),
                "mean": figure.of(known) if len(known) else float("nan"),
                "ci_low": float("nan"),
                "ci_high": float("nan"),
                "n": int(len(known)),
                "n_cases": n_cases,
                "n_failed": n_failed,
                "n_judge_errors": 0,
                "case_set": case_set,
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
    import numpy as np

    answers = candidate_answers[[c for c in _READ if c in candidate_answers]]
    overall = _rows_of(answers, OVERALL)
    rows = list(overall)
    asked = answers["qid"].tolist()
    for group, qids in _groups(judge_scores, group_by):
        members = np.fromiter((qid in qids for qid in asked), dtype=bool, count=len(asked))
        if members.all():  # every case (one language): the same figures
            rows += [{**row, "group": budget_group(group)} for row in overall]
        elif members.any():
            rows += _rows_of(answers[members], group)
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
