"""Security probes' figures: errors and empty replies counted apart (over valid replies and over
all), Clopper-Pearson intervals, paired utility, retrieval, and paired verdicts with Holm."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from rag_eval_pipeline.metrics.directions import lower_is_better
from rag_eval_pipeline.metrics.security import (
    PROBE_COLUMNS,
    probe_comparisons,
    probe_results,
    probe_summary_rows,
)
from rag_eval_pipeline.metrics.statistics import clopper_pearson_interval


def _row(model, qid, status="ok", success=1.0, clean=1.0, attacked=1.0, recall=1.0, language="en"):
    row = dict.fromkeys(PROBE_COLUMNS)
    row.update(
        model=model,
        attack="injection",
        language=language,
        qid=qid,
        status=status,
        success=success if status == "ok" else math.nan,
        correct_clean=clean,
        correct_attacked=attacked if status == "ok" else math.nan,
        planted_recall=recall,
    )
    return row


def test_errors_and_empty_replies_are_counted_apart():
    rows = [_row("a", f"q{i}") for i in range(6)]
    rows += [_row("a", "q6", success=0.0), _row("a", "q7", "error"), _row("a", "q8", "empty")]
    result = probe_results(pd.DataFrame(rows)).iloc[0]
    assert (
        result["n"] == 7
        and result["asr"] == pytest.approx(6 / 7)
        and result["asr_all"] == pytest.approx(6 / 9)
    )
    assert result["errors"] == 1 and result["empty"] == 1
    low, high = clopper_pearson_interval(6 / 7, 7)
    assert (result["ci_low"], result["ci_high"]) == (pytest.approx(float(low)), pytest.approx(float(high)))


def test_utility_under_attack_is_paired_on_the_cases_answered_both_ways():
    rows = [_row("a", f"q{i}", clean=1.0, attacked=0.0 if i < 8 else 1.0) for i in range(10)]
    rows.append(_row("a", "q10", "error", clean=1.0))  # no attacked reply: not in the pairs
    result = probe_results(pd.DataFrame(rows)).iloc[0]
    assert result["utility_clean"] == 1.0 and result["utility_attacked"] == pytest.approx(0.2)
    assert result["utility_p"] < 0.01


def test_no_valid_reply_is_absent_not_zero():
    result = probe_results(pd.DataFrame([_row("a", "q0", "error"), _row("a", "q1", "error")])).iloc[0]
    assert (
        result["n"] == 0 and (result["asr"] is None or math.isnan(result["asr"])) and result["asr_all"] == 0
    )


def test_the_paired_verdict_names_the_model_that_resists_more():
    rows = [_row("leaky", f"q{i}", success=1.0) for i in range(12)]
    rows += [_row("tight", f"q{i}", success=0.0) for i in range(12)]
    rows += [_row("tight2", f"q{i}", success=0.0) for i in range(12)]
    comparisons = probe_comparisons(pd.DataFrame(rows))
    by_pair = {(c["model_a"], c["model_b"]): c for c in comparisons}
    assert by_pair[("leaky", "tight")]["more_resistant"] == "tight"
    assert by_pair[("leaky", "tight")]["p_holm"] >= by_pair[("leaky", "tight")]["p_value"]
    assert by_pair[("tight", "tight2")]["more_resistant"] is None
    assert by_pair[("tight", "tight2")]["verdict"] == "no difference shown"


def test_summary_rows_hold_attack_success_as_a_metric_better_lower():
    rows = [_row("a", f"q{i}", language="en") for i in range(3)] + [
        _row("a", "z", success=0.0, language="zh")
    ]
    summary = probe_summary_rows(pd.DataFrame(rows)).set_index("group")
    assert summary.loc["all", "metric"] == "asr_injection" and summary.loc["all", "mean"] == 0.75
    assert summary.loc["language=zh", "mean"] == 0.0
    assert lower_is_better("asr_injection") and lower_is_better("asr_exfiltration")


def test_probes_join_each_models_summary_once_and_a_probed_only_model_gets_its_own():
    from rag_eval_pipeline.metrics.security import with_probes
    from rag_eval_pipeline.metrics.summary import SUMMARY_COLUMNS, compare_models

    judged = pd.DataFrame(
        [{**dict.fromkeys(SUMMARY_COLUMNS), "judge_id": "reference", "metric": "correctness", "group": "all"}]
    ).assign(mean=0.9, ci_low=0.8, ci_high=1.0, n=10, n_cases=10, n_failed=0)
    probes = pd.DataFrame([_row("a", f"q{i}") for i in range(4)] + [_row("b", "q0", "error")])
    merged = with_probes({"a": judged}, probes)
    assert set(merged) == {"a", "b"} and list(merged["a"].columns)[: len(SUMMARY_COLUMNS)] == SUMMARY_COLUMNS
    again = with_probes(merged, probes)["a"]  # merged twice, its probe rows are still there once
    assert again.equals(merged["a"]) and set(again["group"]) == {"all", "language=en"}
    comparison = compare_models(merged).set_index(["answer_model", "judge_id"])
    probed = comparison.loc[("a", "probe")]
    low, high = clopper_pearson_interval(1.0, 4)
    assert probed["asr_injection"] == 1.0 and probed["n_cases"] == 4
    assert (probed["asr_injection_ci_low"], probed["asr_injection_ci_high"]) == (
        pytest.approx(float(low)),
        pytest.approx(float(high)),
    )
    assert math.isnan(comparison.loc[("b", "probe"), "asr_injection"])  # no valid reply: absent
    assert comparison.loc[("b", "probe"), "n_failed"] == 1
    assert with_probes({"a": judged}, None)["a"] is judged
