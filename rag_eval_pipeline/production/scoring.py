"""A day's sample as cases the judges score, and the day's summary: production traffic has no
reference answer, so each judge measures only what needs none (faithfulness, context relevance,
reference-free context precision, answer relevancy, rubrics marked ``reference_free``); the
contexts judged are the ones the agent served."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from rag_eval_pipeline.judges.score_cases import OVER_BUDGET
from rag_eval_pipeline.language.detect import resolve_languages
from rag_eval_pipeline.metrics.budgets import BUDGET, Budget, BudgetResult, budget_rows, check_budgets
from rag_eval_pipeline.metrics.gates import GateResult, check_gates
from rag_eval_pipeline.metrics.schema import USAGE
from rag_eval_pipeline.metrics.settings import OVERALL, Gate, IntervalMethod
from rag_eval_pipeline.metrics.summary import summarize
from rag_eval_pipeline.production.settings import USERS

PRODUCTION_CONFIG = "production"  # the answer_config of a production case: the agent as it served
VERSION_GROUP = "agent_version"
UNKNOWN_ANSWERABILITY = ("false_answer_rate", "over_abstention_rate")


def production_cases(sample: pd.DataFrame) -> pd.DataFrame:
    """The sampled interactions as the joined cases ``score_cases`` takes: the served answer
    and contexts, no ground truth and no gold labels (their metrics are absent), each in the
    language detected from its question and answer (traffic comes in whatever language users
    write)."""
    rows = []
    records = sample.to_dict(orient="records")
    languages = resolve_languages([f"{r['question']}\n{r['answer']}" for r in records])
    for record, language in zip(records, languages):
        contexts = list(record["contexts"])
        ids = list(record["context_ids"])
        titles = list(record["context_titles"])
        rows.append(
            {
                "qid": record["interaction_id"],
                "repeat": 0,
                "question": record["question"],
                "answer": record["answer"],
                "answer_config": PRODUCTION_CONFIG,
                "status": "ok",
                "error": None,
                "retrieved_ids": [i or f"context-{n}" for n, i in enumerate(ids, start=1)],
                "retrieved_titles": [t or f"context {n}" for n, t in enumerate(titles, start=1)],
                "retrieved_passages": contexts,
                "retrieved_scores": [None] * len(contexts),
                "contexts_known": bool(record["contexts_known"]),
                "ground_truth": None,
                "gold_titles": [],
                "gold_facts": [],
                "type": "production",
                "level": "production",
                "tags": [],
                "answerable": True,
                "language": language.code,
                VERSION_GROUP: record["agent_version"],
            }
        )
    return pd.DataFrame(rows)


def with_versions(scores: pd.DataFrame, sample: pd.DataFrame) -> pd.DataFrame:
    """The scores with each case's agent version, the group a day is summarized by."""
    versions = dict(zip(sample["interaction_id"], sample["agent_version"]))
    return scores.assign(**{VERSION_GROUP: scores["qid"].map(versions)})


def served_cases(sample: pd.DataFrame) -> pd.DataFrame:
    """What each sampled interaction took and cost as the agent served it, in the per-case shape
    the budget figures read: the root span's duration or the log's latency, the log's cost
    (unknown where it says none, never 0). Every served interaction was answered."""
    absent = pd.Series([None] * len(sample), index=sample.index, dtype="float64")
    return pd.DataFrame(
        {
            "qid": sample["interaction_id"].astype(str),
            "repeat": 0,
            "status": "ok",
            "latency_s": pd.to_numeric(sample.get("latency_s", absent), errors="coerce"),
            "cost_usd": pd.to_numeric(sample.get("cost_usd", absent), errors="coerce"),
            "from_cache": False,
        }
    )


def summarize_day(
    scores: pd.DataFrame,
    declared: Mapping[str, Sequence[str]],
    method: IntervalMethod | str,
    min_cases: int,
    sample: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Each judge's reference-free metrics over the day's sample, with 95% intervals, overall
    and per agent version; a case the budget left unjudged counts as neither scored nor 0. With
    the ``sample``, the budget figures too (latency p50 / p95 / max, cost per case; group
    ``budget``, ``budget:agent_version=V``), as an evaluation's summary has them."""
    summary = summarize(scores, None, method, min_cases, declared, group_by=(VERSION_GROUP,))
    # whether a question could be answered is unknown here: only the answer rate means something
    summary = summary[~summary["metric"].isin(UNKNOWN_ANSWERABILITY)]
    if sample is not None and len(sample):
        versioned = scores if VERSION_GROUP in scores else with_versions(scores, sample)
        rows = budget_rows(served_cases(sample), versioned, (VERSION_GROUP,))
        summary = pd.concat([summary, pd.DataFrame(rows, columns=summary.columns)], ignore_index=True)
    return summary.reset_index(drop=True)


def day_budgets(summary: pd.DataFrame, budgets: Sequence[Budget]) -> list[BudgetResult]:
    """The day against its budgets (``metrics.budgets``: the lines `rag-eval gate` prints); a
    budget on an agent version that served no traffic that day is not live and is left out."""
    served = {g.removeprefix(f"{BUDGET}:") for g in summary["group"].astype(str)}
    live = [b for b in budgets if not b.group.startswith(f"{VERSION_GROUP}=") or b.group in served]
    return check_budgets(summary, live)


def over_budget(scores: pd.DataFrame) -> int:
    """Cases the budget left unjudged (counted once, whichever judge ran out)."""
    return int(scores.loc[scores["status"] == OVER_BUDGET, "qid"].nunique()) if len(scores) else 0


def day_gates(summary: pd.DataFrame, gates: Sequence[Gate], min_cases: int) -> list[GateResult]:
    """The day against its thresholds. A threshold on one agent version holds only on a day that
    version served traffic: on another it is not live (passed, said), while a metric no judge
    measured on traffic that was served still fails."""
    served = set(summary["group"])
    live = [g for g in gates if not g.group.startswith(f"{VERSION_GROUP}=") or g.group in served]
    absent = [
        GateResult(
            g.metric,
            g.judge_id,
            None,
            g.threshold,
            True,
            f"no traffic of {g.group} this day",
            g.group,
            g.bound,
        )
        for g in gates
        if g not in live
    ]
    # users' feedback is self-selected and often scarce: its gate holds on a day with enough of it
    for gate in [g for g in live if g.judge_id == USERS]:
        mine = (summary["judge_id"] == USERS) & (summary["metric"] == gate.metric)
        given = summary[mine & (summary["group"] == gate.group)]
        n = int(given["n"].max()) if len(given) and given["n"].notna().any() else 0
        if n < min_cases:
            live.remove(gate)
            note = f"{n} feedback this day, fewer than {min_cases} (statistics.min_cases)"
            absent.append(
                GateResult(gate.metric, USERS, None, gate.threshold, True, note, gate.group, gate.bound)
            )
    return check_gates(summary, live, min_cases=min_cases) + absent


def day_cost(summary: pd.DataFrame) -> float:
    """Dollars the day's judgements cost (NaN: a judge whose model has no price)."""
    usage = summary[(summary["group"] == USAGE) & (summary["metric"] == "cost_usd")]
    return float(usage["total"].sum(min_count=1)) if len(usage) else 0.0


def trend_rows(
    summaries: Mapping[str, pd.DataFrame], results: Mapping[str, list[GateResult]]
) -> pd.DataFrame:
    """One row per day, judge, metric and group (overall, each agent version): the mean, its
    interval and n, with the day's threshold on the metric and whether the day passed it."""
    frames = []
    for day, summary in sorted(summaries.items()):
        # scores only: the budget figures (seconds, dollars) are not on a score's scale
        scored = summary[
            (summary["group"] != USAGE)
            & ~summary["group"].astype(str).str.startswith(BUDGET)
            & summary["mean"].notna()
        ]
        gates = {(r.judge_id, r.metric, r.group): r for r in results.get(day, [])}
        for row in scored.itertuples():
            gate = gates.get((row.judge_id, row.metric, row.group))
            frames.append(
                {
                    "day": day,
                    "judge_id": row.judge_id,
                    "metric": row.metric,
                    "group": row.group,
                    "agent_version": "all" if row.group == OVERALL else row.group.split("=", 1)[1],
                    "mean": row.mean,
                    "ci_low": row.ci_low,
                    "ci_high": row.ci_high,
                    "n": row.n,
                    "threshold": gate.threshold if gate else float("nan"),
                    "passed": None if gate is None else gate.passed,
                    "cost_usd": day_cost(summary),
                }
            )
    columns = [
        "day",
        "judge_id",
        "metric",
        "group",
        "agent_version",
        "mean",
        "ci_low",
        "ci_high",
        "n",
        "threshold",
        "passed",
        "cost_usd",
    ]
    return pd.DataFrame(frames, columns=columns)
