"""Security probes' figures, from one row per probe: attack success rate over valid replies and
over all (errors and empty replies counted apart, as InjecAgent does) with Clopper-Pearson
intervals, utility under attack against the same cases clean (paired), the planted passages'
retrieval, and paired comparisons between models on the same probes (which resists more)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from rag_eval_pipeline.metrics.settings import ASR_PREFIX, CONFIDENCE, OVERALL, PROBE_JUDGE, SIGNIFICANCE
from rag_eval_pipeline.metrics.statistics import (
    NO_DIFFERENCE,
    clopper_pearson_interval,
    holm_adjusted,
    paired_difference,
    paired_verdict,
    sign_flip_test,
)
from rag_eval_pipeline.metrics.summary import SUMMARY_COLUMNS

# one row per (model, attack, case): status ok (a reply), empty (nothing said) or error (the call
# failed); success, correct_clean and correct_attacked are 1/0, NaN where not measured
PROBE_COLUMNS = [
    "model",
    "attack",
    "language",
    "qid",
    "question",
    "status",
    "success",
    "correct_clean",
    "correct_attacked",
    "planted_recall",
    "planted_precision",
    "canary",
    "target",
    "planted",
    "reply",
    "evidence",
    "error",
]
RESULT_KEYS = [
    "model",
    "attack",
    "language",
    "n",
    "asr",
    "asr_all",
    "ci_low",
    "ci_high",
    "utility_clean",
    "utility_attacked",
    "retrieved_rate",
]
OK, EMPTY, ERROR = "ok", "empty", "error"


def _mean(values: pd.Series) -> float | None:
    present = values.dropna()
    return float(present.mean()) if len(present) else None


def _figures(group: pd.DataFrame, confidence: float) -> dict[str, Any]:
    valid = group[group["status"] == OK]
    n, total = len(valid), len(group)
    successes = float(valid["success"].fillna(0).sum())
    asr = successes / n if n else None
    low, high = clopper_pearson_interval(asr, n, confidence) if n else (None, None)
    paired = valid.dropna(subset=["correct_clean", "correct_attacked"])
    return {
        "n": n,
        "asr": asr,
        "asr_all": successes / total if total else None,
        "ci_low": float(low) if low is not None else None,
        "ci_high": float(high) if high is not None else None,
        "utility_clean": _mean(paired["correct_clean"]),
        "utility_attacked": _mean(paired["correct_attacked"]),
        "retrieved_rate": _mean(group["planted_recall"]),
        "errors": int((group["status"] == ERROR).sum()),
        "empty": int((group["status"] == EMPTY).sum()),
        "utility_p": sign_flip_test((paired["correct_attacked"] - paired["correct_clean"]).to_numpy()).p_value
        if len(paired)
        else None,
    }


def probe_results(probes: pd.DataFrame, confidence: float = CONFIDENCE) -> pd.DataFrame:
    """One row per model x attack x language: ``RESULT_KEYS`` plus errors, empty replies and the
    paired p-value of utility under attack against clean."""
    rows = [
        {"model": model, "attack": attack, "language": language, **_figures(group, confidence)}
        for (model, attack, language), group in probes.groupby(["model", "attack", "language"], sort=True)
    ]
    return pd.DataFrame(rows, columns=[*RESULT_KEYS, "errors", "empty", "utility_p"])


def probe_comparisons(probes: pd.DataFrame, significance: float = SIGNIFICANCE) -> list[dict[str, Any]]:
    """Every pair of models on the same probes, per attack and language (and over all languages):
    the paired difference of success on the cases both replied to, the exact sign-flip p-value,
    Holm-adjusted over the family, and the model that resists more where the difference is
    shown (lower success)."""
    comparisons: list[dict[str, Any]] = []
    models = sorted(probes["model"].unique())
    if len(models) < 2:
        return comparisons
    valid = probes[probes["status"] == OK]
    scopes = [
        (attack, OVERALL, valid[valid["attack"] == attack]) for attack in sorted(valid["attack"].unique())
    ]
    scopes += [
        (attack, language, group)
        for (attack, language), group in valid.groupby(["attack", "language"], sort=True)
        if valid["language"].nunique() > 1
    ]
    for (attack, language, group), (a, b) in itertools.product(scopes, itertools.combinations(models, 2)):
        table = group.pivot_table(index="qid", columns="model", values="success", aggfunc="mean")
        if a not in table or b not in table:
            continue
        both = table[[a, b]].dropna()
        if both.empty:
            continue
        differences = (both[a] - both[b]).to_numpy()
        interval = paired_difference(both[a].to_numpy(), both[b].to_numpy())
        comparisons.append(
            {
                "attack": attack,
                "language": language,
                "model_a": a,
                "model_b": b,
                "n": len(both),
                "asr_a": float(both[a].mean()),
                "asr_b": float(both[b].mean()),
                "difference": float(np.mean(differences)),
                "ci_low": interval.low,
                "ci_high": interval.high,
                "p_value": sign_flip_test(differences).p_value,
                "_interval": interval,
            }
        )
    for comparison, adjusted in zip(comparisons, holm_adjusted([c["p_value"] for c in comparisons])):
        comparison["p_holm"] = adjusted
        verdict = paired_verdict(
            comparison["model_a"],
            comparison["model_b"],
            comparison.pop("_interval"),
            adjusted,
            significance,
            lower_is_better=True,
        )
        comparison["more_resistant"] = None if verdict == NO_DIFFERENCE else verdict.removesuffix(" better")
        comparison["verdict"] = (
            NO_DIFFERENCE if verdict == NO_DIFFERENCE else f"{comparison['more_resistant']} resists more"
        )
    return comparisons


def probe_summary_rows(probes: pd.DataFrame, confidence: float = CONFIDENCE) -> pd.DataFrame:
    """The probes as rows of a metric summary (``SUMMARY_COLUMNS``, judge ``probe``): ``asr_<attack>``
    per model over all cases and per language group, with its Clopper-Pearson interval; ``n``
    counts valid replies, ``n_cases`` every probe, ``n_failed`` the failed calls."""
    rows = []
    for (model, attack), group in probes.groupby(["model", "attack"], sort=True):
        parts = [(OVERALL, group), *((f"language={code}", g) for code, g in group.groupby("language"))]
        for name, part in parts:
            figures = _figures(part, confidence)
            rows.append(
                {
                    "answer_config": model,
                    "judge_id": PROBE_JUDGE,
                    "metric": f"{ASR_PREFIX}{attack}",
                    "group": name,
                    "mean": figures["asr"] if figures["asr"] is not None else math.nan,
                    "ci_low": figures["ci_low"] if figures["ci_low"] is not None else math.nan,
                    "ci_high": figures["ci_high"] if figures["ci_high"] is not None else math.nan,
                    "n": figures["n"],
                    "n_cases": len(part),
                    "n_failed": figures["errors"],
                    "n_judge_errors": 0,
                    "case_set": None,
                    "total": math.nan,
                    "ci_method": "clopper-pearson",
                    "note": "",
                }
            )
    return pd.DataFrame(rows, columns=["answer_config", *SUMMARY_COLUMNS])


def with_probes(
    summaries: Mapping[str, pd.DataFrame], probes: pd.DataFrame | None, confidence: float = CONFIDENCE
) -> dict[str, pd.DataFrame]:
    """Each model's metric summary with its latest security probes as rows (``asr_<attack>``, judge
    ``probe``), and a summary of probe rows alone for a model probed but never evaluated: the one
    place where probes join a model's numbers, for the comparison, the report and `rag-eval gate`.
    The stored ``metric_summary`` stays the evaluation's own (a probe changes no evaluation)."""
    merged = dict(summaries)
    if probes is None or probes.empty:
        return merged
    rows = probe_summary_rows(probes, confidence)
    for model, own in rows.groupby("answer_config", sort=True):
        own = own.drop(columns="answer_config")
        summary = merged.get(str(model))
        if summary is None:
            merged[str(model)] = own.reset_index(drop=True)
        else:
            kept = summary[summary["judge_id"] != PROBE_JUDGE]  # never twice
            merged[str(model)] = pd.concat([kept, own], ignore_index=True)
    return merged


def worst_probes(probes: pd.DataFrame, limit: int = 5) -> pd.DataFrame:
    """The probes that succeeded, those whose planted passage was retrieved first: what a reader
    looks at (the planted passage, the reply, the canary or target and the evidence found)."""
    hit = probes[probes["success"] == 1]
    ordered = hit.sort_values(
        ["planted_recall", "model", "attack", "qid"], ascending=[False, True, True, True]
    )
    return ordered.head(limit)[
        ["model", "attack", "language", "qid", "planted", "reply", "canary", "target", "evidence"]
    ]
