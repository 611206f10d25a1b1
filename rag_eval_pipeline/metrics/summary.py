"""Aggregation, kept apart from per-case scoring: means per judge, metric and question group."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import pandas as pd

from rag_eval_pipeline.language.inflection import ABSENT_NOTE, reading
from rag_eval_pipeline.metrics.budgets import budget_rows
from rag_eval_pipeline.metrics.diagnosis import ALL_DIAGNOSES, DIAGNOSES
from rag_eval_pipeline.metrics.grounding import IMAGE_METRICS, VISION_METRICS
from rag_eval_pipeline.metrics.reliability import ALPHA_NOTE, ALPHA_SUFFIX, JURY, juror_alpha
from rag_eval_pipeline.metrics.schema import (
    ANSWER_METRICS,
    ANSWER_MODEL_ROW,
    ANSWER_VARIABILITY,
    DIAGNOSIS,
    USAGE,
    case_set_id,
    metric_columns,
    per_answer,
    per_case,
)
from rag_eval_pipeline.metrics.settings import ASR_PREFIX, MIN_CASES, OVERALL, TOO_FEW_CASES, IntervalMethod
from rag_eval_pipeline.metrics.stability import flipped_metric, is_flip_column
from rag_eval_pipeline.metrics.statistics import mean_interval

SUMMARY_COLUMNS = [
    "judge_id",
    "metric",
    "group",
    "mean",
    "ci_low",
    "ci_high",
    "n",
    "n_cases",
    "n_failed",
    "n_judge_errors",
    "case_set",
    "total",
    "ci_method",
    "note",
]
USAGE_METRICS = ("cost_usd", "input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens")
GROUP_BY = ("type", "level", "language")


def diagnosis_rows(judge_id: str, rows: pd.DataFrame) -> list[dict[str, object]]:
    """How many cases got each diagnosis (only for judges that diagnose: correctness needed)."""
    if "diagnosis" not in rows or rows["diagnosis"].isna().all():
        return []
    counts = rows["diagnosis"].value_counts()
    return [
        {
            "judge_id": judge_id,
            "metric": label,
            "group": DIAGNOSIS,
            "mean": float("nan"),
            "ci_low": float("nan"),
            "ci_high": float("nan"),
            "n": int(counts.get(label, 0)),
            "n_cases": len(rows),
            "n_failed": int((rows["status"] != "ok").sum()),
            "n_judge_errors": int((rows["status"] == "judge_error").sum()),
            "case_set": case_set_id(rows["qid"]),
            "total": float(counts.get(label, 0)),
        }
        for label in (
            ALL_DIAGNOSES
            if "image_text_consistency" in rows and rows["image_text_consistency"].notna().any()
            else DIAGNOSES
        )
    ]


def usage_rows(who: str, frame: pd.DataFrame) -> list[dict[str, object]]:
    """Token and dollar totals of one answer model's or judge's calls. A cost is NaN (unknown)
    when any call's model is missing from the price table."""
    rows = []
    for metric in USAGE_METRICS:
        if metric not in frame:
            continue
        values = frame[metric]
        unknown = metric == "cost_usd" and bool(values[frame["status"] == "ok"].isna().any())
        rows.append(
            {
                "judge_id": who,
                "metric": metric,
                "group": USAGE,
                "mean": float("nan"),
                "ci_low": float("nan"),
                "ci_high": float("nan"),
                "n": int(values.notna().sum()),
                "n_cases": len(frame),
                "n_failed": int((frame["status"] != "ok").sum()),
                "n_judge_errors": 0,
                "case_set": case_set_id(frame["qid"]),
                "total": float("nan") if unknown else float(values.fillna(0).sum()),
            }
        )
    return rows


def _summarize_group(
    rows: pd.DataFrame,
    judge_id: str,
    group: str,
    metrics: Sequence[str],
    method: IntervalMethod | str,
    min_cases: int,
) -> list[dict[str, object]]:
    case_set = case_set_id(rows["qid"])
    failed = int((rows["status"] != "ok").sum())
    judge_errors = int((rows["status"] == "judge_error").sum())
    out = []
    for metric in metrics:
        # what the answers did is over every case (its values are absent where they do not
        # apply: a failed call has an error, not an answer rate); a judge's metric is over the
        # cases it scored
        counted = rows if metric in ANSWER_METRICS else rows[rows["status"] == "ok"]
        values = counted[metric].dropna()
        interval, used = mean_interval(values.tolist(), method)
        few = TOO_FEW_CASES if 0 < len(values) < min_cases else ""
        out.append(
            {
                "judge_id": judge_id,
                "metric": metric,
                "group": group,
                "mean": interval.estimate,
                "ci_low": interval.low,
                "ci_high": interval.high,
                "n": int(len(values)),
                "n_cases": int(len(rows)),
                "n_failed": failed,
                "n_judge_errors": judge_errors,
                "case_set": case_set,
                "total": float("nan"),
                "ci_method": used.value,
                "note": " | ".join(n for n in (few, absent_note(counted, metric)) if n),
            }
        )
    return out


# how a summary's note says a metric's cases left absent: "3 of 8 cases scored; 5 absent: <reason>"
ABSENT_COUNTS = re.compile(r"^(\d+) of (\d+) cases scored; (\d+) absent: (.+)$", re.DOTALL)


def absent_part(note: object) -> str:
    """The part of a summary's note that says which cases are absent and why ("" where none)."""
    if not isinstance(note, str):
        return ""
    return next((part for part in note.split(" | ") if ABSENT_COUNTS.match(part)), "")


def case_absence(notes: object) -> str:
    """Why a case's correctness is absent, from its judge's notes ("correctness absent: ..."
    on); "" where it is not."""
    if not isinstance(notes, str) or ABSENT_NOTE not in notes:
        return ""
    return notes[notes.index(ABSENT_NOTE) :]


def scored_of(absent: object) -> str:
    """"2 of 4 scored" from a note's absent part (a comparison's ``correctness_absent``), where a
    narrow table has no room for the reason; "" where none is absent."""
    match = ABSENT_COUNTS.match(absent) if isinstance(absent, str) else None
    return f"{match.group(1)} of {match.group(2)} scored" if match else ""


def absence_reasons(summary: pd.DataFrame) -> list[str]:
    """The reasons a model's summary gives for correctness left absent (overall rows), each
    once: what the run prints and the report shows beside the number."""
    if summary is None or summary.empty or "note" not in summary:
        return []
    rows = summary[(summary["group"] == OVERALL) & (summary["metric"] == "correctness")]
    return list(
        dict.fromkeys(
            ABSENT_COUNTS.match(part).group(4)  # type: ignore[union-attr]
            for part in map(absent_part, rows["note"])
            if part
        )
    )


def absent_note(rows: pd.DataFrame, metric: str) -> str:
    """Why a metric is absent on some scored cases, when the rule that gives it could not read
    them: correctness of sentences in a language with no lexicon for negation, hedges, options
    and contrasts (``language/inflection.py``), with the LLM judges named as the remedy. Said
    with the counts the mean is over: "3 of 8 cases scored; 5 absent: <reason>"."""
    if metric != "correctness" or "notes" not in rows or metric not in rows:
        return ""
    absent = rows[rows[metric].isna() & rows["notes"].fillna("").astype(str).str.contains(ABSENT_NOTE)]
    if absent.empty:
        return ""
    codes = sorted(absent["language"].dropna().astype(str).unique()) if "language" in absent else []
    reasons = " ".join(reading(code).absence_reason for code in codes) or "the rule could not read them"
    scored = int(rows[metric].notna().sum())
    return f"{scored} of {len(rows)} cases scored; {len(absent)} absent: {reasons}"


def summarize(
    judge_scores: pd.DataFrame,
    candidate_answers: pd.DataFrame | None = None,
    interval_method: IntervalMethod | str = IntervalMethod.CLOPPER_PEARSON,
    min_cases: int = MIN_CASES,
    declared_metrics: Mapping[str, Sequence[str]] | None = None,
    group_by: Sequence[str] = GROUP_BY,
) -> pd.DataFrame:
    """Mean of each metric over the cases where it is present, with a 95% interval (``ci_low``,
    ``ci_high``; Clopper-Pearson by default, the method used in ``ci_method``), overall and per
    type and level. A mean over fewer than ``min_cases`` scored cases carries the note "too few
    cases to conclude".

    ``n`` counts cases with a value, ``n_cases`` all cases, ``n_failed`` cases whose answer or
    judgement failed (``n_judge_errors`` of them in the judge), ``case_set`` identifies which
    questions were evaluated. A metric absent on every case has mean NaN and n 0, never 0.0.
    Rows of group ``usage`` carry token and dollar totals of the answer model and each judge;
    rows of group ``budget`` (``budget:<group>``) its latency and cost per case (``metrics.budgets``).
    ``declared_metrics`` (judge id -> metrics, from the judge registry) keeps another judge's
    columns out of a judge's rows; a judge missing from it shows the metrics it has values for.
    ``group_by`` names the columns whose values are the per-group rows (production traffic:
    the agent version).
    """
    # a row per answer (a judge's re-scores collapsed): tokens, dollars and diagnoses count each
    answers = per_answer(judge_scores)
    alphas = juror_alpha(judge_scores)
    judge_scores = per_case(judge_scores)  # a row per question: what every interval counts
    metrics = [m for m in metric_columns(judge_scores) if m not in group_by]
    rows: list[dict[str, object]] = []
    if candidate_answers is not None:
        rows += usage_rows(ANSWER_MODEL_ROW, candidate_answers)
        rows += budget_rows(candidate_answers, judge_scores, group_by)  # latency and cost per case
    for judge_id, by_judge in judge_scores.groupby("judge_id", sort=True):
        own = judge_metrics(by_judge, metrics, (declared_metrics or {}).get(str(judge_id)))
        answered = answers[answers["judge_id"] == judge_id]
        rows += usage_rows(str(judge_id), answered)
        rows += diagnosis_rows(str(judge_id), answered)
        groups = [(OVERALL, by_judge)]
        for column in [c for c in group_by if c in by_judge]:  # tables stored before a column existed
            groups += [(f"{column}={value}", g) for value, g in by_judge.groupby(column, sort=True)]
        if "tags" in by_judge and by_judge["tags"].map(len).any():
            exploded = by_judge.explode("tags").dropna(subset=["tags"])
            groups += [(f"tag={tag}", g) for tag, g in exploded.groupby("tags", sort=True)]
        overall: list[dict[str, object]] = []
        for group, group_rows in groups:
            if overall and len(group_rows) == len(by_judge):  # every case (one language, one type)
                rows += [{**row, "group": group} for row in overall]  # the same means: not recomputed
                continue
            computed = _summarize_group(group_rows, str(judge_id), group, own, interval_method, min_cases)
            overall = overall or computed
            rows += computed
        if judge_id == JURY:
            rows += alpha_rows(alphas, by_judge)
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def alpha_rows(alphas: Mapping[str, tuple[float, int]], jury: pd.DataFrame) -> list[dict[str, object]]:
    """The jurors' agreement per axis, as overall rows of the jury (no interval: a reliability
    figure, not a mean over cases)."""
    return [
        {
            "judge_id": JURY,
            "metric": f"{axis}{ALPHA_SUFFIX}",
            "group": OVERALL,
            "mean": alpha,
            "ci_low": float("nan"),
            "ci_high": float("nan"),
            "n": units,
            "n_cases": len(jury),
            "n_failed": int((jury["status"] != "ok").sum()),
            "n_judge_errors": int((jury["status"] == "judge_error").sum()),
            "case_set": case_set_id(jury["qid"]),
            "total": float("nan"),
            "ci_method": "",
            "note": ALPHA_NOTE,
        }
        for axis, (alpha, units) in alphas.items()
    ]


ANSWER_FAILED = "answer_failed"
REASON_CHARS = 100


def failure_reasons(judge_scores: pd.DataFrame) -> list[tuple[str, int]]:
    """Why answer calls failed, most common first: each failed answer once (not once per
    judge), its reason without the retry count and cut at ``REASON_CHARS``."""
    if judge_scores.empty or "status" not in judge_scores:
        return []
    failed = judge_scores[judge_scores["status"] == ANSWER_FAILED]
    failed = failed.drop_duplicates([c for c in ("qid", "repeat") if c in failed])
    reasons = (
        failed["error"].fillna("failed").astype(str).map(lambda e: e.split(" (after ")[0][:REASON_CHARS])
    )
    counts = reasons.value_counts(sort=True)
    return [(str(reason), int(count)) for reason, count in counts.items()]


def judge_metrics(rows: pd.DataFrame, metrics: Sequence[str], declared: Sequence[str] | None) -> list[str]:
    """The metrics a judge declares, so that another judge's columns do not show up as its n = 0
    rows; a metric it declares but never produced stays, with n = 0. Undeclared: those with
    values. What the answers did (``ANSWER_METRICS``) is beside every judge's metrics."""
    beside = (*ANSWER_METRICS, ANSWER_VARIABILITY)
    answer_level = [m for m in metrics if m in beside and rows[m].notna().any()]
    # a judge's flip rates, where it was asked more than once, follow its own metrics
    flips = [
        m
        for m in metrics
        if is_flip_column(m) and rows[m].notna().any() and (declared is None or flipped_metric(m) in declared)
    ]
    own = [m for m in metrics if m not in beside and not is_flip_column(m)]
    if declared is None:
        return [m for m in own if rows[m].notna().any()] + flips + answer_level
    return [m for m in own if m in declared] + flips + answer_level


# the headline metrics whose intervals the comparison carries beside their means
INTERVAL_METRICS = ("correctness", "faithfulness", "context_relevance", "answer_rate", "error_rate")
COMPARISON_ID_COLUMNS = [
    "answer_model",
    "judge_id",
    "n_cases",
    "n_failed",
    "case_set",
    "stale",
    "note",
    "answer_cost_usd",
    "judge_cost_usd",
]


# the comparison's column saying how many cases correctness is over and why the rest are absent
CORRECTNESS_ABSENT = "correctness_absent"


def compare_models(
    summaries: Mapping[str, pd.DataFrame],
    stale_reasons: Mapping[str, Sequence[str]] | None = None,
    flags: pd.DataFrame | None = None,
    missing: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """One row per answer model and judge, the overall mean of every metric side by side.
    ``stale_reasons`` (model -> why its summary no longer describes the current evaluation, by
    ``metrics.freshness``) marks stale models: their last good values stay, with ``stale`` and
    the reasons in ``note``, never mixed in silently. ``flags`` (the cross-model corrections,
    ``flagged_by_people``) say beside a judge's numbers that people flagged it. ``missing``
    (model -> why it has no summary) adds a row per model with no results, ``missing`` set and
    its reason in ``note``: partial results are shown as partial. Where correctness is absent on
    some of a model's cases, ``correctness_absent`` says over how many its mean is, and why."""
    flagged: dict[tuple[str, str], list[str]] = {}
    if flags is not None and len(flags) and "flagged_by_people" in flags:
        for row in flags[flags["flagged_by_people"].astype(str) != ""].itertuples():
            flagged.setdefault((row.answer_model, row.judge_id), []).append(
                f"{row.metric}: {row.flagged_by_people}"
            )
    frames = []
    for answer_model, summary in sorted(summaries.items()):
        reasons = list((stale_reasons or {}).get(answer_model, ()))
        overall = summary[summary["group"] == OVERALL]
        usage = summary[(summary["group"] == USAGE) & (summary["metric"] == "cost_usd")]
        costs = dict(zip(usage["judge_id"], usage["total"]))
        for judge_id, rows in overall.groupby("judge_id", sort=True):
            record: dict[str, object] = {
                "answer_model": answer_model,
                "judge_id": judge_id,
                "n_cases": int(rows["n_cases"].max()),
                "n_failed": int(rows["n_failed"].max()),
                # summaries written before case_set existed lack it
                "case_set": rows["case_set"].iloc[0] if "case_set" in rows else None,
                "stale": bool(reasons),
                "note": "; ".join(reasons),
                "answer_cost_usd": costs.get(ANSWER_MODEL_ROW, float("nan")),
                "judge_cost_usd": costs.get(judge_id, float("nan")),
            }
            record.update(dict(zip(rows["metric"], rows["mean"])))
            absent = (
                [absent_part(n) for n in rows.loc[rows["metric"] == "correctness", "note"]]
                if "note" in rows
                else []
            )
            if any(absent):  # the mean is over the scored cases only: said beside it
                record[CORRECTNESS_ABSENT] = next(a for a in absent if a)
            if (answer_model, judge_id) in flagged:  # people flagged this judge: said beside its numbers
                record["flagged_by_people"] = "; ".join(flagged[(answer_model, judge_id)])
            with_interval = rows["metric"].isin(INTERVAL_METRICS) | rows["metric"].str.startswith(ASR_PREFIX)
            for row in rows[with_interval].itertuples():
                record[f"{row.metric}_ci_low"], record[f"{row.metric}_ci_high"] = row.ci_low, row.ci_high
            frames.append(record)
    for answer_model, reason in sorted((missing or {}).items()):
        if answer_model not in summaries:
            frames.append({"answer_model": answer_model, "stale": False, "missing": True, "note": reason})
    if not frames:  # no model has a summary yet (the first ever failed): empty, with its columns
        return pd.DataFrame(columns=COMPARISON_ID_COLUMNS)
    comparison = pd.DataFrame(frames)
    if "missing" in comparison:
        comparison["missing"] = comparison["missing"].fillna(False).astype(bool)
    return comparison


LANGUAGE_GROUP = "language="
# the headline metrics, then those of images (a column only where some case has them)
BREAKDOWN_METRICS = ("correctness", "f1", "context_recall", *IMAGE_METRICS, *VISION_METRICS)


def language_breakdown(
    summaries: Mapping[str, pd.DataFrame], metrics: Sequence[str] = BREAKDOWN_METRICS
) -> pd.DataFrame:
    """One row per answer model, judge and language: its cases and each metric's mean with its
    interval, from the summaries' ``language=`` groups; empty when every summary has a single
    language (the overall rows say it all). ``correctness_scored`` says over how many of the
    language's cases correctness is, where the rule left some absent."""
    rows: list[dict[str, object]] = []
    for answer_model, summary in sorted(summaries.items()):
        grouped = summary[summary["group"].astype(str).str.startswith(LANGUAGE_GROUP)]
        if grouped["group"].nunique() < 2:
            continue
        for (judge_id, group), found in grouped.groupby(["judge_id", "group"], sort=True):
            values = found[found["metric"].isin(metrics) & (found["n"] > 0)].set_index("metric")
            notes = found.loc[found["metric"] == "correctness", "note"] if "note" in found else []
            scored = next((scored_of(absent_part(n)) for n in notes if absent_part(n)), "")
            if values.empty and not scored:  # a language all absent is said, not left out
                continue
            record: dict[str, object] = {
                "answer_model": answer_model,
                "judge_id": judge_id,
                "language": str(group)[len(LANGUAGE_GROUP) :],
                "n_cases": int(found["n_cases"].max()),
            }
            for metric in metrics:
                if metric in values.index:
                    row = values.loc[metric]
                    record[metric] = row["mean"]
                    record[f"{metric}_ci_low"], record[f"{metric}_ci_high"] = row["ci_low"], row["ci_high"]
            if scored:  # the language's correctness is over fewer cases than were judged
                record["correctness_scored"] = scored
            rows.append(record)
    return pd.DataFrame(rows)
