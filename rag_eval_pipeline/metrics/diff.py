"""What changed between two evaluations, case by case: the cases added, removed or asked anew,
then per judge and metric (overall and per tag) how many cases regressed, improved or stayed,
the mean change with its paired interval, the exact paired test and Holm's adjustment, and the
regressed cases worst first with what changed in their lineage. Pure: two tables in, tables out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rag_eval_pipeline.metrics.directions import lower_is_better
from rag_eval_pipeline.metrics.schema import ANSWER_MODEL_ROW, metric_columns, per_case
from rag_eval_pipeline.metrics.settings import (
    MIN_CASES,
    MONTE_CARLO_DRAWS,
    OVERALL,
    SIGNIFICANCE,
    StatisticsSettings,
)
from rag_eval_pipeline.metrics.statistics import holm_adjusted, paired_difference, sign_flip_test

# what an answer's lineage is, as `candidate_answers` records it: a change here explains a change
LINEAGE_COLUMNS = ("model_id", "prompt_version", "retrieval_mode", "top_k", "kb_version")
TOLERANCE = 1e-9  # two scores this close are the same score


@dataclass(frozen=True)
class DiffSpec:
    """How a diff decides: the test level, the fewest cases a tag is tested on, and the smallest
    mean worsening that counts as a regression (``--min-effect``)."""

    significance: float = SIGNIFICANCE
    min_cases: int = MIN_CASES
    min_effect: float = 0.0
    draws: int = MONTE_CARLO_DRAWS

    @classmethod
    def of(
        cls, statistics: StatisticsSettings, min_cases: int | None = None, min_effect: float = 0.0
    ) -> DiffSpec:
        """The configured statistics, with a command's own overrides."""
        return cls(
            significance=statistics.significance_level,
            min_cases=min_cases if min_cases is not None else statistics.min_cases,
            min_effect=min_effect,
            draws=statistics.monte_carlo_draws,
        )


@dataclass(frozen=True)
class Evaluation:
    """One side of a diff: which run of which model, its scores, the answers they judged and the
    judgement list they were scored on (``cases``; absent when no longer kept)."""

    label: str
    model: str
    run_id: str
    scores: pd.DataFrame
    answers: pd.DataFrame | None = None
    cases: pd.DataFrame | None = None
    judgement_list: str | None = None  # the list's version (content hash)

    def judges(self) -> list[str]:
        """Each judge with its prompt version: what ``baseline`` requires to be the same."""
        pairs = self.scores[["judge_id", "prompt_version"]].drop_duplicates()
        named = {
            f"{judge} ({version})" if isinstance(version, str) and version else str(judge)
            for judge, version in zip(pairs["judge_id"], pairs["prompt_version"])
        }
        return sorted(named)

    def describe(self) -> dict[str, str | None]:
        return {
            "label": self.label,
            "model": self.model,
            "run_id": self.run_id,
            "judgement_list": self.judgement_list,
        }


@dataclass(frozen=True)
class RunDiff:
    """Everything a diff reports: ``metrics`` (one row per group, judge and metric), ``cases``
    (every paired case's score on both sides), ``regressions`` (worst first) and
    ``case_changes`` (added, removed, asked anew: never counted as a regression)."""

    before: Evaluation
    after: Evaluation
    spec: DiffSpec
    metrics: pd.DataFrame
    cases: pd.DataFrame
    regressions: pd.DataFrame
    case_changes: pd.DataFrame
    notes: list[str] = field(default_factory=list)

    def overall(self) -> pd.DataFrame:
        return self.metrics[self.metrics["group"] == OVERALL]

    def significant_regressions(self) -> pd.DataFrame:
        """The metrics significantly worse over every case after Holm's adjustment, by at least
        ``min_effect``: what ``--fail-on-regression`` fails on. Its chance of failing two runs that
        differ only by chance is at most the level (one Holm family); a tag's rows are a family
        of their own, shown but not gated (two families would let false alarms add up)."""
        return self.metrics[self.metrics["worse"] & (self.metrics["group"] == OVERALL)]

    def worse_tags(self) -> pd.DataFrame:
        return self.metrics[self.metrics["worse"] & (self.metrics["group"] != OVERALL)]


CHANGE_COLUMNS = ["qid", "change", "before", "after"]


def case_changes(before: Evaluation, after: Evaluation) -> pd.DataFrame:
    """Cases only one side evaluated, and cases whose question or ground truth changed between
    the two judgement lists: a changed truth makes a score change mean nothing."""
    before_ids, after_ids = set(before.scores["qid"]), set(after.scores["qid"])
    rows = [
        {"qid": q, "change": "removed", "before": None, "after": None} for q in sorted(before_ids - after_ids)
    ]
    rows += [
        {"qid": q, "change": "added", "before": None, "after": None} for q in sorted(after_ids - before_ids)
    ]
    if before.cases is not None and after.cases is not None:
        both = before.cases.merge(after.cases, on="qid", suffixes=("_before", "_after"))
        both = both[both["qid"].isin(before_ids & after_ids)]
        for column, change in (("question", "question changed"), ("answer", "truth changed")):
            differs = both[both[f"{column}_before"].astype(str) != both[f"{column}_after"].astype(str)]
            rows += [
                {"qid": q, "change": change, "before": b, "after": a}
                for q, b, a in zip(differs["qid"], differs[f"{column}_before"], differs[f"{column}_after"])
            ]
    return pd.DataFrame(rows, columns=CHANGE_COLUMNS)


def _harm(metric: str, change: np.ndarray) -> np.ndarray:
    """How much worse each case got (positive: worse), whichever direction the metric improves
    (``metrics.directions``: a judge's flip rate, an error rate, better lower)."""
    return change if lower_is_better(metric) else -change


def paired_cases(before: Evaluation, after: Evaluation, excluded: set[str]) -> pd.DataFrame:
    """Every case scored on both sides by the same judge on the same metric (repeats averaged),
    long: qid, judge_id, metric, before, after, change (after - before), harm."""
    a, b = per_case(before.scores), per_case(after.scores)
    frames = []
    for judge_id in sorted(set(a["judge_id"]) & set(b["judge_id"])):
        ja, jb = a[a["judge_id"] == judge_id], b[b["judge_id"] == judge_id]
        for metric in [m for m in metric_columns(jb) if m in set(metric_columns(ja))]:
            pairs = ja[["qid", metric]].merge(jb[["qid", metric]], on="qid", suffixes=("_b", "_a"))
            pairs = pairs[~pairs["qid"].isin(excluded)].dropna()
            if pairs.empty:
                continue
            change = pairs[f"{metric}_a"].to_numpy(float) - pairs[f"{metric}_b"].to_numpy(float)
            change[np.abs(change) < TOLERANCE] = 0.0
            frames.append(
                pd.DataFrame(
                    {
                        "qid": pairs["qid"].to_numpy(),
                        "judge_id": judge_id,
                        "metric": metric,
                        "before": pairs[f"{metric}_b"].to_numpy(float),
                        "after": pairs[f"{metric}_a"].to_numpy(float),
                        "change": change,
                        "harm": _harm(metric, change),
                    }
                )
            )
    columns = ["qid", "judge_id", "metric", "before", "after", "change", "harm"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


BUDGET_COLUMNS = ("latency_s", "cost_usd")  # what a case took and cost, from the answers


def paired_budgets(before: Evaluation, after: Evaluation, excluded: set[str]) -> pd.DataFrame:
    """Each case's latency and cost on both sides (repeats averaged; a cached answer at its
    first latency, a case without one left out), long like ``paired_cases`` under the judge
    ``answer_model``: what the answers took, beside what the judges said of them."""
    columns = ["qid", "judge_id", "metric", "before", "after", "change", "harm"]
    if before.answers is None or after.answers is None:
        return pd.DataFrame(columns=columns)
    frames = []
    for metric in BUDGET_COLUMNS:
        if metric not in before.answers or metric not in after.answers:
            continue
        sides = [
            side[side["status"] == "ok"].groupby("qid")[metric].mean().rename(name)
            for side, name in ((before.answers, "before"), (after.answers, "after"))
        ]
        pairs = pd.concat(sides, axis=1, join="inner").dropna()
        pairs = pairs[~pairs.index.isin(list(excluded))]
        if pairs.empty:
            continue
        change = pairs["after"].to_numpy(float) - pairs["before"].to_numpy(float)
        change[np.abs(change) < TOLERANCE] = 0.0
        frames.append(
            pd.DataFrame(
                {
                    "qid": pairs.index.to_numpy(),
                    "judge_id": ANSWER_MODEL_ROW,
                    "metric": metric,
                    "before": pairs["before"].to_numpy(float),
                    "after": pairs["after"].to_numpy(float),
                    "change": change,
                    "harm": _harm(metric, change),
                }
            )
        )
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def budget_changes(pairs: pd.DataFrame, spec: DiffSpec) -> pd.DataFrame:
    """Latency and cost per case, before and after, with the paired interval and the exact
    paired test: a family of their own (they never loosen or tighten the scores' Holm family),
    reported and never counted as a score's regression (``worse`` stays false: a budget gate
    holds them, ``rag-eval gate --max``)."""
    if pairs.empty:
        return pd.DataFrame(columns=METRIC_COLUMNS)
    changes = metric_changes(pairs, {}, spec)
    return changes.assign(worse=False)


def _with_budgets(metrics: pd.DataFrame, budgets: pd.DataFrame) -> pd.DataFrame:
    """The scores' rows, then the budgets' (where there are both)."""
    if budgets.empty:
        return metrics
    if metrics.empty:
        return budgets.reset_index(drop=True)
    return pd.concat([metrics, budgets], ignore_index=True).astype({"worse": bool})


def _groups(scores: pd.DataFrame) -> dict[str, set[str]]:
    """The cases of each tag: ``type:<t>``, ``level:<l>``, ``language:<code>`` and ``tag:<team tag>``."""
    groups: dict[str, set[str]] = {}
    cases = scores.drop_duplicates("qid")
    for column in ("type", "level", "language"):
        if column in cases:
            for value, qids in cases.groupby(cases[column].astype(str))["qid"]:
                if value and value not in ("nan", "None"):
                    groups[f"{column}:{value}"] = set(qids)
    if "tags" in cases:
        for qid, tags in zip(cases["qid"], cases["tags"]):
            for tag in tags if isinstance(tags, (list, tuple, np.ndarray)) else ():
                groups.setdefault(f"tag:{tag}", set()).add(qid)
    return groups


def _metric_row(group: str, judge_id: str, metric: str, pairs: pd.DataFrame, spec: DiffSpec) -> dict:
    interval = paired_difference(pairs["after"], pairs["before"])
    test = sign_flip_test(pairs["change"].to_numpy(), draws=spec.draws)
    return {
        "group": group,
        "judge_id": judge_id,
        "metric": metric,
        "n": len(pairs),
        "regressed": int((pairs["harm"] > 0).sum()),
        "improved": int((pairs["harm"] < 0).sum()),
        "unchanged": int((pairs["harm"] == 0).sum()),
        "mean_before": float(pairs["before"].mean()),
        "mean_after": float(pairs["after"].mean()),
        "mean_change": float(pairs["change"].mean()),
        "ci_low": interval.low,
        "ci_high": interval.high,
        "p_value": test.p_value,
        "lower_is_better": lower_is_better(metric),
    }


METRIC_COLUMNS = [
    "group", "judge_id", "metric", "n", "regressed", "improved", "unchanged", "mean_before",
    "mean_after", "mean_change", "ci_low", "ci_high", "p_value", "p_adjusted", "lower_is_better",
    "worse",
]  # fmt: skip


# what every view of a diff shows of a metric row, in this order
SHOWN_COLUMNS = [
    "judge_id", "metric", "n", "regressed", "improved", "unchanged", "mean_before", "mean_after",
    "mean_change", "ci_low", "ci_high", "p_value", "p_adjusted",
]  # fmt: skip


def metric_changes(cases: pd.DataFrame, groups: dict[str, set[str]], spec: DiffSpec) -> pd.DataFrame:
    """One row per group, judge and metric. Holm's adjustment runs over the overall rows as one
    family and over the tag rows as another (a tag's test never loosens the overall verdict);
    a tag is tested only where it has at least ``min_cases`` paired cases."""
    rows = []
    cases = cases.assign(qid=cases["qid"].astype(object))  # isin on Arrow strings runs a Python loop
    for (judge_id, metric), pairs in cases.groupby(["judge_id", "metric"], sort=True):
        rows.append(_metric_row(OVERALL, str(judge_id), str(metric), pairs, spec))
        for group, qids in sorted(groups.items()):
            within = pairs[pairs["qid"].isin(qids)]
            if spec.min_cases <= len(within) < len(pairs):  # (a tag of every case is the overall row)
                rows.append(_metric_row(group, str(judge_id), str(metric), within, spec))
    metrics = pd.DataFrame(rows)
    if metrics.empty:
        return pd.DataFrame(columns=METRIC_COLUMNS)
    overall = metrics["group"] == OVERALL
    metrics["p_adjusted"] = np.nan
    for family in (overall, ~overall):
        if family.any():
            metrics.loc[family, "p_adjusted"] = holm_adjusted(metrics.loc[family, "p_value"].tolist())
    harm = np.array([_harm(m, np.float64(c)) for m, c in zip(metrics["metric"], metrics["mean_change"])])
    metrics["worse"] = (
        (metrics["p_adjusted"] < spec.significance) & (harm > 0) & (harm >= spec.min_effect)
    ).astype(bool)
    return metrics[METRIC_COLUMNS]


def _first_rows(table: pd.DataFrame | None, columns: Sequence[str]) -> pd.DataFrame:
    """One row per case (its first repeat), indexed by qid, with the columns that exist."""
    if table is None or table.empty:
        return pd.DataFrame(columns=list(columns))
    kept = [c for c in columns if c in table.columns]
    return table.drop_duplicates("qid").set_index("qid")[kept]


def regressed_cases(cases: pd.DataFrame, before: Evaluation, after: Evaluation) -> pd.DataFrame:
    """One row per regressed case and judge, worst first (the largest single drop, then the
    most metrics dropped): the question, both answers, each dropped metric's two scores, both
    diagnoses, and what changed in the lineage (answer model and version, prompt, retrieval,
    index, the judge's prompt). Built from columns: a diff of 20,000 cases regressed took 28 s
    a case at a time."""
    dropped = cases[cases["harm"] > 0]
    if dropped.empty:
        return pd.DataFrame(columns=REGRESSION_COLUMNS)
    keys = ["qid", "judge_id"]
    worst_first = dropped.sort_values("harm", ascending=False, kind="stable")
    said = worst_first["metric"].astype(str) + [
        f" {b:.3f} → {a:.3f}" for b, a in zip(worst_first["before"], worst_first["after"])
    ]
    table = (
        worst_first.assign(said=said)
        .groupby(keys, sort=False)
        .agg(dropped=("said", "; ".join), worst_drop=("harm", "first"), metrics_dropped=("metric", "size"))
        .reset_index()
    )
    table = dropped[keys].drop_duplicates().merge(table, on=keys, how="left")  # the cases' own order
    answers_before = _first_rows(before.answers, ["question", "answer", *LINEAGE_COLUMNS])
    answers_after = _first_rows(after.answers, ["question", "answer", *LINEAGE_COLUMNS])
    scores_before = before.scores.drop_duplicates(keys).set_index(keys)
    scores_after = after.scores.drop_duplicates(keys).set_index(keys)
    qids, pairs = pd.Index(table["qid"]), pd.MultiIndex.from_frame(table[keys])
    question_after = _texts(answers_after, qids, "question")
    question_before = _texts(answers_before, qids, "question")
    table["question"] = [a if a is not None else b for a, b in zip(question_after, question_before)]
    table["answer_before"] = _texts(answers_before, qids, "answer")
    table["answer_after"] = _texts(answers_after, qids, "answer")
    table["diagnosis_before"] = _texts(scores_before, pairs, "diagnosis")
    table["diagnosis_after"] = _texts(scores_after, pairs, "diagnosis")
    table["worst_drop"] = table["worst_drop"].astype(float)
    table["lineage_change"] = _lineage_changes(
        table, answers_before, answers_after, scores_before, scores_after, pairs
    )
    return (
        table[REGRESSION_COLUMNS]
        .sort_values(["worst_drop", "metrics_dropped", "qid"], ascending=[False, False, True], kind="stable")
        .reset_index(drop=True)
    )


def _texts(table: pd.DataFrame, keys: pd.Index, column: str) -> list[str | None]:
    """One column of a table indexed by case (or by case and judge) at ``keys``, as text; None
    where the key or the value is absent."""
    if column not in table.columns:
        return [None] * len(keys)
    values = table[column].reindex(keys)
    return [None if v is None or (isinstance(v, float) and np.isnan(v)) else str(v) for v in values]


def _lineage_changes(
    table: pd.DataFrame,
    answers_before: pd.DataFrame,
    answers_after: pd.DataFrame,
    scores_before: pd.DataFrame,
    scores_after: pd.DataFrame,
    pairs: pd.MultiIndex,
) -> list[str]:
    """What changed in each case's lineage: ``top_k 2 → 6; model_id a → b`` ("" when nothing
    did, "unknown" when either side's answers are no longer kept); the judge's prompt last."""
    known = table["qid"].isin(answers_before.index) & table["qid"].isin(answers_after.index)
    qids = pd.Index(table.loc[known, "qid"])
    shared = [c for c in LINEAGE_COLUMNS if c in answers_before.columns and c in answers_after.columns]
    sides = [
        (
            column,
            answers_before.loc[qids, column].map(str).tolist(),
            answers_after.loc[qids, column].map(str).tolist(),
        )
        for column in shared
    ]
    sides.append(
        (
            "judge_prompt",
            [str(v) for v in _texts(scores_before, pairs[known.to_numpy()], "prompt_version")],
            [str(v) for v in _texts(scores_after, pairs[known.to_numpy()], "prompt_version")],
        )
    )
    changes = pd.Series("unknown", index=table.index, dtype=object)
    changes[known] = [
        "; ".join(f"{column} {was[i]} → {now[i]}" for column, was, now in sides if was[i] != now[i])
        for i in range(len(qids))
    ]
    return changes.tolist()


REGRESSION_COLUMNS = [
    "qid", "judge_id", "question", "dropped", "worst_drop", "metrics_dropped", "answer_before",
    "answer_after", "diagnosis_before", "diagnosis_after", "lineage_change",
]  # fmt: skip


def diff_evaluations(before: Evaluation, after: Evaluation, spec: DiffSpec = DiffSpec()) -> RunDiff:
    """The diff of ``after`` against ``before`` (the baseline)."""
    changes = case_changes(before, after)
    asked_anew = set(changes.loc[changes["change"].str.endswith("changed"), "qid"])
    cases = paired_cases(before, after, asked_anew)
    notes = []
    if before.cases is None or after.cases is None:
        notes.append(
            "questions and truths were not compared: the judgement list of "
            f"{'run ' + before.run_id[:8] if before.cases is None else 'run ' + after.run_id[:8]} "
            "is no longer kept"
        )
    only_before = sorted(set(before.scores["judge_id"]) - set(after.scores["judge_id"]))
    only_after = sorted(set(after.scores["judge_id"]) - set(before.scores["judge_id"]))
    if only_before or only_after:
        notes.append(
            "judges on one side only (not compared): "
            + ", ".join([*(f"{j} (before)" for j in only_before), *(f"{j} (after)" for j in only_after)])
        )
    return RunDiff(
        before=before,
        after=after,
        spec=spec,
        metrics=_with_budgets(
            metric_changes(cases, _groups(after.scores), spec),
            budget_changes(paired_budgets(before, after, asked_anew), spec),
        ),
        cases=cases[["qid", "judge_id", "metric", "before", "after", "change"]],
        regressions=regressed_cases(cases, before, after),
        case_changes=changes,
        notes=notes,
    )
