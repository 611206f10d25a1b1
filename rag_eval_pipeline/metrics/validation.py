"""Pure validators behind the asset checks: each returns a list of problems (empty = valid)."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pandas as pd

from rag_eval_pipeline.metrics.scales import THREE_POINT_VALUES, MetricScale, Scale
from rag_eval_pipeline.metrics.schema import ITEM_VERDICTS, metric_columns

NAMED_VALUES = 5  # the bad values a problem line names, with their cases


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
    judge_scores: pd.DataFrame, scales: Mapping[str, Mapping[str, MetricScale]]
) -> list[str]:
    """Scores lie in [0, 1], and each metric on the scale its judge declares (``scales``: judge
    id -> metric -> ``MetricScale``, as the judge registry declares them; a judge or metric not
    in it is held to [0, 1]); a metric that aggregates verdicts has each stored verdict held to
    the verdicts' scale. Each problem names the cases, judges and values."""
    problems = []
    qids = judge_scores["qid"] if "qid" in judge_scores else pd.Series("?", index=judge_scores.index)
    for metric in metric_columns(judge_scores):
        values = pd.to_numeric(judge_scores[metric], errors="coerce")
        outside = values.notna() & ((values < 0) | (values > 1))
        three_point = judge_scores["judge_id"].map(
            lambda j, m=metric: _stored_scale(scales, j, m) is Scale.THREE_POINT
        )
        off_scale = values.notna() & ~outside & three_point & ~values.isin(THREE_POINT_VALUES)
        for scale, bad in ((Scale.UNIT, outside), (Scale.THREE_POINT, off_scale)):
            if bad.any():
                found = [
                    f"case {q} ({j}) {v:g}"
                    for q, j, v in zip(qids[bad], judge_scores.loc[bad, "judge_id"], values[bad])
                ]
                problems.append(_named(metric, "values", scale, found))
    if ITEM_VERDICTS in judge_scores:
        problems += _item_verdict_problems(judge_scores, scales)
    return problems


def _stored_scale(scales: Mapping[str, Mapping[str, MetricScale]], judge_id: str, metric: str) -> Scale:
    declared = scales.get(str(judge_id), {}).get(metric)
    return declared.stored if declared is not None else Scale.UNIT


def _named(metric: str, what: str, scale: Scale, found: list[str]) -> str:
    more = len(found) - NAMED_VALUES
    shown = ", ".join(found[:NAMED_VALUES]) + (f" and {more} more" if more > 0 else "")
    where = "outside [0, 1]" if scale is Scale.UNIT else "not in {0, 0.5, 1}"
    return f"{metric}: {len(found)} {what} {where}: {shown}"


def _item_verdict_problems(
    judge_scores: pd.DataFrame, scales: Mapping[str, Mapping[str, MetricScale]]
) -> list[str]:
    """Each stored per-item verdict (``item_verdicts``) on its metric's declared verdict scale."""
    bad: dict[tuple[str, Scale], list[str]] = {}
    for row in judge_scores[judge_scores[ITEM_VERDICTS].notna()].to_dict("records"):
        for metric, items in json.loads(row[ITEM_VERDICTS]).items():
            declared = scales.get(str(row["judge_id"]), {}).get(metric)
            scale = declared.item_scale if declared is not None and declared.item_scale else Scale.UNIT
            for item, verdict in items.items():
                if not scale.accepts(verdict):
                    bad.setdefault((metric, scale), []).append(
                        f"case {row.get('qid')} ({row['judge_id']}) {item} {verdict:g}"
                    )
    return [_named(f"{metric} per item", "verdicts", scale, found) for (metric, scale), found in bad.items()]


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
