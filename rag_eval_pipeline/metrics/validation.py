"""Pure validators behind the asset checks: each returns a list of problems (empty = valid)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from rag_eval_pipeline.metrics.schema import metric_columns

_THREE_POINT_SCALE = {0.0, 0.5, 1.0}


def passage_problems(passages: pd.DataFrame) -> list[str]:
    problems = []
    duplicated = passages["passage_id"][passages["passage_id"].duplicated()].unique().tolist()
    if duplicated:
        problems.append(f"{len(duplicated)} duplicate passage ids, e.g. {duplicated[:3]}")
    empty = passages.loc[passages["passage"].str.strip() == "", "title"].tolist()
    if empty:
        problems.append(f"{len(empty)} empty passages, e.g. {empty[:3]}")
    return problems


def gold_title_problems(judgement_list: pd.DataFrame, passages: pd.DataFrame) -> list[str]:
    """Gold supporting titles that the knowledge base lacks make the retrieval metrics meaningless."""
    known = set(passages["title"])
    missing = sorted({t for titles in judgement_list["gold_titles"] for t in titles} - known)
    if missing:
        return [f"{len(missing)} gold titles not in the knowledge base, e.g. {missing[:3]}"]
    return []


def coverage_problems(judgement_list: pd.DataFrame, candidate_answers: pd.DataFrame) -> list[str]:
    """Every question answered or recorded as failed, and no case that is not in the list."""
    expected, got = set(judgement_list["qid"]), set(candidate_answers["qid"])
    problems = []
    if expected - got:
        problems.append(f"{len(expected - got)} questions have no candidate answer")
    if got - expected:
        problems.append(f"{len(got - expected)} answers for questions not in the judgement list")
    return problems


def score_range_problems(
    judge_scores: pd.DataFrame, three_point_metrics: Mapping[str, Sequence[str]]
) -> list[str]:
    """Scores lie in [0, 1]; the metrics a judge declares on the three-point scale (the Elastic
    LLM-as-a-judge article's axes) take exactly 0, 0.5 or 1. ``three_point_metrics`` maps judge
    id -> those metrics, as the judge registry declares them."""
    problems = []
    for metric in metric_columns(judge_scores):
        values = judge_scores[metric].dropna()
        out_of_range = values[(values < 0) | (values > 1)]
        if len(out_of_range):
            problems.append(f"{metric}: {len(out_of_range)} values outside [0, 1]")
        on_scale = judge_scores["judge_id"].map(lambda j, m=metric: m in three_point_metrics.get(j, ()))
        scaled = judge_scores.loc[on_scale, metric].dropna()
        off_scale = scaled[~scaled.isin(_THREE_POINT_SCALE)]
        if len(off_scale):
            problems.append(f"{metric}: {len(off_scale)} values not in {{0, 0.5, 1}}")
    return problems


def scoring_completeness_problems(judge_scores: pd.DataFrame, candidate_answers: pd.DataFrame) -> list[str]:
    """Every case has a row per judge (per re-score of a judge asked several times), each scored
    or recorded as failed (never silently missing)."""
    problems = []
    for judge_id, rows in judge_scores.groupby("judge_id", sort=True):
        asked = int(rows["judge_repeat"].max()) + 1 if "judge_repeat" in rows and len(rows) else 1
        expected = len(candidate_answers) * asked
        if len(rows) != expected:
            times = f" x {asked} re-scores" if asked > 1 else ""
            problems.append(f"{judge_id}: {len(rows)} score rows for {len(candidate_answers)} cases{times}")
    unknown = set(judge_scores["status"]) - {"ok", "answer_failed", "judge_error"}
    if unknown:
        problems.append(f"unknown statuses: {sorted(unknown)}")
    unscored = judge_scores[
        (judge_scores["status"] == "ok") & judge_scores[metric_columns(judge_scores)].isna().all(axis=1)
    ]
    if len(unscored):
        problems.append(f"{len(unscored)} rows marked ok without any score")
    return problems


def judge_error_share_problems(judge_scores: pd.DataFrame, max_share: float) -> list[str]:
    problems = []
    for judge_id, rows in judge_scores.groupby("judge_id"):
        share = float((rows["status"] == "judge_error").mean())
        if share > max_share:
            problems.append(f"{judge_id}: {share:.1%} judge errors (allowed {max_share:.1%})")
    return problems
