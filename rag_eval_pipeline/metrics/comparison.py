"""Model comparison on the same cases, and validation of LLM judges against the reference judge."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations

import pandas as pd

from rag_eval_pipeline.metrics.reference import REFERENCE_JUDGE_ID
from rag_eval_pipeline.metrics.schema import metric_columns
from rag_eval_pipeline.metrics.statistics import (
    MONTE_CARLO_DRAWS,
    SIGNIFICANCE,
    cohen_kappa,
    confusion,
    mcnemar_exact,
    paired_difference,
    paired_verdict,
    sign_flip_test,
)

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
    "differences gives p below {level} and the paired bootstrap interval of the difference "
    "excludes 0; otherwise: no difference shown."
)


def paired_comparisons(
    scores_by_model: Mapping[str, pd.DataFrame],
    significance: float = SIGNIFICANCE,
    draws: int = MONTE_CARLO_DRAWS,
) -> pd.DataFrame:
    """For every pair of models, judge and metric, on the cases both have scores for: the mean
    difference (a - b) with a paired bootstrap interval, the exact sign-flip test's p-value, and
    for correctness an exact McNemar test on fully correct answers. The verdict follows
    ``VERDICT_RULE``: a unanimous small sample has a zero-width bootstrap interval, so the
    interval alone never decides."""
    rows = []
    for (name_a, a), (name_b, b) in combinations(sorted(scores_by_model.items()), 2):
        for judge_id in sorted(set(a["judge_id"]) & set(b["judge_id"])):
            ja = a[(a["judge_id"] == judge_id) & (a["status"] == "ok")]
            jb = b[(b["judge_id"] == judge_id) & (b["status"] == "ok")]
            for metric in sorted(set(metric_columns(ja)) & set(metric_columns(jb))):
                pairs = (
                    ja[["qid", metric]].merge(jb[["qid", metric]], on="qid", suffixes=("_a", "_b")).dropna()
                )
                if pairs.empty:
                    continue
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
                    "verdict": paired_verdict(name_a, name_b, diff, test.p_value, significance),
                    "mcnemar_only_a": None,
                    "mcnemar_only_b": None,
                    "mcnemar_p": None,
                }
                if metric == "correctness":
                    only_a, only_b, p = mcnemar_exact(
                        pairs["correctness_a"] == 1.0, pairs["correctness_b"] == 1.0
                    )
                    row.update(mcnemar_only_a=only_a, mcnemar_only_b=only_b, mcnemar_p=p)
                rows.append(row)
    return pd.DataFrame(rows)


def judge_validation(
    scores_by_model: Mapping[str, pd.DataFrame],
    expected_correctness: Mapping[str, float | None],
) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Agreement of each LLM judge with the reference judge per axis (accuracy, Cohen's kappa;
    between two definitions of the axis, named in ``definitions_compared``),
    the confusion tables, and a calibration flag: on the calibration models (their
    ``expected_correctness``, from each partition's AnswerSpec: oracle 1, null 0) a sound judge
    gives correctness within 0.1 of it."""
    rows, tables = [], {}
    for model, scores in sorted(scores_by_model.items()):
        ok = scores[scores["status"] == "ok"]
        reference = ok[ok["judge_id"] == REFERENCE_JUDGE_ID]
        expected = expected_correctness.get(model)
        for judge_id in sorted(set(ok["judge_id"]) - {REFERENCE_JUDGE_ID}):
            judged = ok[ok["judge_id"] == judge_id]
            for axis in THREE_POINT_AXES:
                if axis not in judged or judged[axis].isna().all():
                    continue
                row = {
                    "answer_model": model,
                    "judge_id": judge_id,
                    "axis": axis,
                    "definitions_compared": DEFINITIONS_COMPARED[axis],
                    "n": 0,
                    "accuracy": float("nan"),
                    "kappa": float("nan"),
                    "judge_mean": float(judged[axis].mean()),
                }
                if axis in reference:
                    pairs = (
                        reference[["qid", axis]]
                        .merge(judged[["qid", axis]], on="qid", suffixes=("_ref", "_judge"))
                        .dropna()
                    )
                    if len(pairs):
                        ref, jud = pairs[f"{axis}_ref"].tolist(), pairs[f"{axis}_judge"].tolist()
                        row.update(
                            n=len(pairs),
                            accuracy=float((pairs[f"{axis}_ref"] == pairs[f"{axis}_judge"]).mean()),
                            kappa=cohen_kappa(ref, jud),
                        )
                        tables[f"{model} / {judge_id} / {axis}"] = confusion(ref, jud, [0.0, 0.5, 1.0])
                row["calibration_expected"] = None
                row["calibration_ok"] = None
                if expected is not None and axis == "correctness":
                    row["calibration_expected"] = expected
                    row["calibration_ok"] = abs(row["judge_mean"] - expected) <= CALIBRATION_TOLERANCE
                rows.append(row)
    return pd.DataFrame(rows), tables
