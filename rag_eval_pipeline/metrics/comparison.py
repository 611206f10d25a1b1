"""Model comparison on the same cases, and validation of LLM judges against the reference judge."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations

import numpy as np
import pandas as pd

from rag_eval_pipeline.metrics.directions import lower_is_better
from rag_eval_pipeline.metrics.reference import REFERENCE_JUDGE_ID
from rag_eval_pipeline.metrics.schema import AGREEMENT_FIGURES, metric_columns, per_case
from rag_eval_pipeline.metrics.settings import MIN_CASES, MONTE_CARLO_DRAWS, SIGNIFICANCE
from rag_eval_pipeline.metrics.stability import is_flip_column, rescore_spread
from rag_eval_pipeline.metrics.statistics import (
    NO_DIFFERENCE,
    confusion,
    detectable_difference,
    holm_adjusted,
    mcnemar_exact,
    paired_difference,
    paired_verdict,
    sign_flip_test,
    weighted_kappa,
    weighted_kappa_interval,
)
from rag_eval_pipeline.metrics.summary import ABSENT_COUNTS, absent_note

THREE_POINT_AXES = ("correctness", "context_relevance")
# The judge and the reference judge define each axis differently: the agreement figures measure
# how often two definitions coincide, not how often the judge is right.
DEFINITIONS_COMPARED = {
    "correctness": "judge's rubric vs reference rule (exact match, contained answer or F1 >= 0.5)",
    "context_relevance": "judge's 'passages hold what is needed' vs reference 'gold titles retrieved'",
}
CALIBRATION_TOLERANCE = 0.1


VERDICT_RULE = (
    "A model is called better only when the exact paired sign-flip test on the per-case "
    "differences, Holm-adjusted within its family (one judge and metric, every pair of models), "
    "gives p below {level} and the paired bootstrap interval of the difference excludes 0, on at "
    "least {min_cases} paired cases (fewer reach no conclusion, as a mean does); otherwise: no "
    "difference shown. detectable_difference is the smallest difference these "
    "cases would show with 80% power."
)


def paired_comparisons(
    scores_by_model: Mapping[str, pd.DataFrame],
    significance: float = SIGNIFICANCE,
    draws: int = MONTE_CARLO_DRAWS,
    min_cases: int = MIN_CASES,
) -> pd.DataFrame:
    """For every pair of models, judge and metric, on the cases both have scores for: the mean
    difference (a - b) with a paired bootstrap interval, the exact sign-flip test's p-value
    (raw, and Holm-adjusted within the family of one judge and metric over every pair), the
    smallest difference these cases would detect with 80% power, and for correctness an exact
    McNemar test on fully correct answers. The verdict follows ``VERDICT_RULE``: a unanimous
    small sample has a zero-width bootstrap interval, so the interval alone never decides."""
    rows = []
    cases = {model: per_case(scores) for model, scores in scores_by_model.items()}  # repeats averaged
    for (name_a, a), (name_b, b) in combinations(sorted(cases.items()), 2):
        for judge_id in sorted(set(a["judge_id"]) & set(b["judge_id"])):
            ja = a[(a["judge_id"] == judge_id) & (a["status"] == "ok")]
            jb = b[(b["judge_id"] == judge_id) & (b["status"] == "ok")]
            raw_a, raw_b = (
                scores_by_model[name][scores_by_model[name]["judge_id"] == judge_id]
                for name in (name_a, name_b)
            )
            shared = set(metric_columns(ja)) & set(metric_columns(jb))
            metrics = sorted(m for m in shared if not is_flip_column(m))
            # one join of the pair's cases for every metric (a join per metric was a third of the step)
            joined = ja[["qid", *metrics]].merge(jb[["qid", *metrics]], on="qid", suffixes=("_a", "_b"))
            for metric in metrics:
                pairs = joined[["qid", f"{metric}_a", f"{metric}_b"]].dropna()
                if pairs.empty:
                    continue
                unpaired = unpaired_note(metric, joined["qid"], {name_a: ja, name_b: jb}, len(pairs))
                diff = paired_difference(pairs[f"{metric}_a"], pairs[f"{metric}_b"])
                test = sign_flip_test(pairs[f"{metric}_a"] - pairs[f"{metric}_b"], draws=draws)
                row = {
                    "model_a": name_a,
                    "model_b": name_b,
                    "judge_id": judge_id,
                    "metric": metric,
                    "n": len(pairs),
                    "mean_a": float(pairs[f"{metric}_a"].mean()),
                    "mean_b": float(pairs[f"{metric}_b"].mean()),
                    "difference": diff.estimate,
                    "ci_low": diff.low,
                    "ci_high": diff.high,
                    "test": f"sign-flip {test.method}",
                    "p_value": test.p_value,
                    "detectable_difference": detectable_difference(
                        (pairs[f"{metric}_a"] - pairs[f"{metric}_b"]).tolist(), significance
                    ),
                    "_interval": diff,
                    "mcnemar_only_a": None,
                    "mcnemar_only_b": None,
                    "mcnemar_p": None,
                    "judge_noise": rescore_spread(raw_a, raw_b, metric, pairs["qid"].tolist()),
                    "unpaired_note": unpaired,
                }
                if metric == "correctness":
                    only_a, only_b, p = mcnemar_exact(
                        pairs["correctness_a"] == 1.0, pairs["correctness_b"] == 1.0
                    )
                    row.update(mcnemar_only_a=only_a, mcnemar_only_b=only_b, mcnemar_p=p)
                rows.append(row)
    return _decide(pd.DataFrame(rows), significance, min_cases)


def unpaired_note(metric: str, shared: pd.Series, sides: Mapping[str, pd.DataFrame], paired: int) -> str:
    """Where a side's rule could not score some of the cases both models were judged on (correctness
    of a sentence in a language without a lexicon): the pair is compared on the rest only, and
    says so, with each side's count and reason; "" where every shared case is paired."""
    said = []
    for name, rows in sides.items():
        note = absent_note(rows[rows["qid"].isin(shared)], metric)
        if note:
            _, _, absent, reason = ABSENT_COUNTS.match(note).groups()  # type: ignore[union-attr]
            said.append(f"{absent} absent for {name}: {reason}")
    if not said:
        return ""
    return f"paired on {paired} of {len(shared)} cases both were judged on; " + "; ".join(said)


def unpaired_notes(paired: pd.DataFrame | None, metric: str = "correctness") -> list[str]:
    """Each pair compared on ``metric`` over fewer cases than both were judged on, and why: what
    the comparison's page says beside the verdicts."""
    if paired is None or paired.empty or "unpaired_note" not in paired:
        return []
    rows = paired[(paired["metric"] == metric) & paired["unpaired_note"].fillna("").astype(str).ne("")]
    return [f"{r.model_a} vs {r.model_b} ({r.judge_id}): {r.unpaired_note}" for r in rows.itertuples()]


def _of_judge(scores: pd.DataFrame, judge_id: str) -> pd.DataFrame:
    return scores[scores["judge_id"] == judge_id]


FAMILY = ["judge_id", "metric"]


def _decide(comparisons: pd.DataFrame, significance: float, min_cases: int = MIN_CASES) -> pd.DataFrame:
    """Holm-adjusted p within each family (one judge and metric, every pair of models), and
    the verdict on it (none on fewer than ``min_cases`` paired cases)."""
    if comparisons.empty:
        return comparisons
    comparisons["family_size"] = comparisons.groupby(FAMILY)["p_value"].transform("size").astype(int)
    comparisons["p_adjusted"] = comparisons.groupby(FAMILY)["p_value"].transform(
        lambda p: holm_adjusted(p.tolist())
    )
    comparisons["verdict"] = [
        paired_verdict(a, b, interval, p, significance, lower_is_better(metric))
        if n >= min_cases
        else NO_DIFFERENCE
        for a, b, interval, p, metric, n in zip(
            comparisons["model_a"],
            comparisons["model_b"],
            comparisons["_interval"],
            comparisons["p_adjusted"],
            comparisons["metric"],
            comparisons["n"],
        )
    ]
    ordered = [
        "model_a",
        "model_b",
        "judge_id",
        "metric",
        "n",
        "mean_a",
        "mean_b",
        "difference",
        "ci_low",
        "ci_high",
        "test",
        "p_value",
        "p_adjusted",
        "family_size",
        "verdict",
        "detectable_difference",
        "mcnemar_only_a",
        "mcnemar_only_b",
        "mcnemar_p",
        "judge_noise",
        "judge_noise_note",
        "unpaired_note",
    ]
    comparisons["judge_noise_note"] = [
        NOISE_NOTE.format(noise=noise) if noise is not None and not pd.isna(noise) and abs(d) <= noise else ""
        for d, noise in zip(comparisons["difference"], comparisons["judge_noise"])
    ]
    return comparisons[ordered]


# said beside a difference that re-scoring the same answers alone can produce
NOISE_NOTE = (
    "smaller than the judge's own instability: its re-scores alone move this difference by {noise:.3f}"
)


POOLED = "all models"


def _agreement(reference: list[float], judged: list[float]) -> dict[str, object]:
    """Accuracy and linearly weighted kappa with a bootstrap interval, or why kappa is undefined
    (no case both judges scored, as context relevance without relevance labels)."""
    if not reference:
        nan = float("nan")
        note = "undefined: no case scored by both judges"
        return {
            "n": 0,
            "accuracy": nan,
            "kappa": nan,
            "kappa_low": nan,
            "kappa_high": nan,
            "kappa_note": note,
        }
    kappa = weighted_kappa(reference, judged)
    low, high = weighted_kappa_interval(reference, judged)
    note = "" if not np.isnan(kappa) else "undefined: one label only on both sides"
    return {
        "n": len(reference),
        "accuracy": float(np.mean(np.asarray(reference) == np.asarray(judged))),
        "kappa": kappa,
        "kappa_low": low,
        "kappa_high": high,
        "kappa_note": note,
    }


def judge_validation(
    scores_by_model: Mapping[str, pd.DataFrame],
    expected_correctness: Mapping[str, float | None],
) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Each LLM judge against the reference judge per axis, pooled over every answer model (a
    calibration model alone agrees trivially, so per-model agreement collapses): accuracy and
    Cohen's kappa linearly weighted on the 0 / 0.5 / 1 scale with a bootstrap interval
    ("undefined" where a single label on both sides leaves nothing to agree beyond chance),
    between two definitions of the axis (``definitions_compared``), and the pooled confusion
    table. Beside them, a calibration row per calibration model: on the oracle and the null
    model (their ``expected_correctness``, from each partition's AnswerSpec: 1 and 0) a sound
    judge gives correctness within 0.1 of it."""
    pooled: dict[tuple[str, str], pd.DataFrame] = {}
    calibration_rows = []
    for model, scores in sorted(scores_by_model.items()):
        ok = scores[scores["status"] == "ok"]
        reference = ok[ok["judge_id"] == REFERENCE_JUDGE_ID]
        expected = expected_correctness.get(model)
        for judge_id in sorted(set(ok["judge_id"]) - {REFERENCE_JUDGE_ID}):
            judged = ok[ok["judge_id"] == judge_id]
            for axis in THREE_POINT_AXES:
                if axis not in judged or judged[axis].isna().all():
                    continue
                if axis in reference:
                    keys = ["qid", "repeat"] if "repeat" in reference and "repeat" in judged else ["qid"]
                    pairs = (
                        reference[[*keys, axis]]
                        .merge(judged[[*keys, axis]], on=keys, suffixes=("_ref", "_judge"))
                        .drop(columns=keys)
                        .dropna()
                    )
                    pooled.setdefault((judge_id, axis), pd.DataFrame())
                    pooled[(judge_id, axis)] = pd.concat([pooled[(judge_id, axis)], pairs], ignore_index=True)
                if expected is not None and axis == "correctness":
                    mean = float(judged[axis].mean())
                    calibration_rows.append(
                        {
                            "judge_id": judge_id,
                            "axis": axis,
                            "answer_model": model,
                            "n": int(judged[axis].notna().sum()),
                            "judge_mean": mean,
                            "calibration_expected": expected,
                            "calibration_ok": abs(mean - expected) <= CALIBRATION_TOLERANCE,
                        }
                    )
    rows, tables = [], {}
    for (judge_id, axis), pairs in sorted(pooled.items()):
        ref, jud = pairs[f"{axis}_ref"].tolist(), pairs[f"{axis}_judge"].tolist()
        rows.append(
            {
                "judge_id": judge_id,
                "axis": axis,
                "answer_model": POOLED,
                **_agreement(ref, jud),
                "judge_mean": float(np.mean(jud)) if jud else float("nan"),
                "reference_mean": float(np.mean(ref)) if ref else float("nan"),
                "definitions_compared": DEFINITIONS_COMPARED[axis],
            }
        )
        if len(pairs):
            tables[f"{judge_id} / {axis}"] = confusion(ref, jud, [0.0, 0.5, 1.0])
    return pd.DataFrame([*rows, *calibration_rows], columns=VALIDATION_COLUMNS), tables


VALIDATION_COLUMNS = [
    "judge_id",
    "axis",
    "answer_model",
    "n",
    *AGREEMENT_FIGURES,
    "judge_mean",
    "reference_mean",
    "definitions_compared",
    "calibration_expected",
    "calibration_ok",
]


def standing(paired: pd.DataFrame | None, metric: str = "correctness") -> dict[tuple[str, str], str]:
    """(model, judge) -> where the model stands on ``metric`` by the paired verdicts, in as few
    words as Dagster's side panel holds: ``above a, b; below c``, or "no difference"; a model in
    no pair has no entry. What the comparison's narrow table says beside each mean."""
    if paired is None or paired.empty or "verdict" not in paired:
        return {}
    rows = paired[paired["metric"] == metric]
    better: dict[tuple[str, str], list[str]] = {}
    worse: dict[tuple[str, str], list[str]] = {}
    seen: set[tuple[str, str]] = set()
    for row in rows.itertuples():
        a, b, judge = str(row.model_a), str(row.model_b), str(row.judge_id)
        seen |= {(a, judge), (b, judge)}
        if row.verdict == f"{a} better":
            better.setdefault((a, judge), []).append(b)
            worse.setdefault((b, judge), []).append(a)
        elif row.verdict == f"{b} better":
            better.setdefault((b, judge), []).append(a)
            worse.setdefault((a, judge), []).append(b)
    said = {}
    for key in seen:
        parts = []
        if key in better:
            parts.append("above " + ", ".join(sorted(better[key])))
        if key in worse:
            parts.append("below " + ", ".join(sorted(worse[key])))
        said[key] = "; ".join(parts) or "no difference"
    return said
