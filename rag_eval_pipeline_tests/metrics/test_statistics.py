"""Statistics against hand-computed examples."""

import math

import numpy as np
import pandas as pd
import pytest

from rag_eval_pipeline.metrics.comparison import judge_validation, paired_comparisons
from rag_eval_pipeline.metrics.statistics import (
    bootstrap_mean,
    cohen_kappa,
    confusion,
    mcnemar_exact,
    paired_difference,
)


def test_bootstrap_mean_edges_and_seeding():
    assert math.isnan(bootstrap_mean([]).estimate)
    single = bootstrap_mean([0.5])
    assert single.estimate == 0.5 and math.isnan(single.low)
    assert bootstrap_mean([1.0, 1.0, 1.0]) == bootstrap_mean([1.0, 1.0]).__class__(1.0, 1.0, 1.0)
    values = [0, 1] * 20  # mean 0.5, sd 0.5, n 40: normal approx half-width 1.96*0.5/sqrt(40) = 0.155
    interval = bootstrap_mean(values)
    assert interval.estimate == 0.5
    assert interval.low == pytest.approx(0.5 - 0.155, abs=0.03) and interval.high == pytest.approx(
        0.5 + 0.155, abs=0.03
    )
    assert bootstrap_mean(values) == interval  # seeded: same numbers every time
    assert bootstrap_mean(values + [math.nan]) == interval  # absent values are not zeros


def test_paired_difference_cancels_case_difficulty():
    hard = np.linspace(0, 0.8, 30)
    a, b = hard + 0.2, hard  # a always 0.2 better on the same case
    diff = paired_difference(a, b)
    assert diff.estimate == pytest.approx(0.2) and diff.low == pytest.approx(0.2) and diff.excludes_zero()
    assert not paired_difference([1, 0, 1, 0], [0, 1, 0, 1]).excludes_zero()
    with pytest.raises(ValueError):
        paired_difference([1, 2], [1])


def test_mcnemar_exact_by_hand():
    # a right on 5 cases b misses, b right on 0 a misses: p = 2 * 0.5**5 = 0.0625
    a = [True] * 5 + [True, False]
    b = [False] * 5 + [True, False]
    assert mcnemar_exact(a, b) == (5, 0, pytest.approx(0.0625))
    assert mcnemar_exact([True, False], [True, False]) == (0, 0, 1.0)


def test_cohen_kappa_by_hand():
    # 10 pairs: agree on 7 (4 yes-yes, 3 no-no); a says yes 6 times, b 5 times
    a = ["y"] * 4 + ["y", "y"] + ["n"] * 3 + ["n"]
    b = ["y"] * 4 + ["n", "n"] + ["n"] * 3 + ["y"]
    # p_o = 0.7; p_e = 0.6*0.5 + 0.4*0.5 = 0.5; kappa = 0.2 / 0.5 = 0.4
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa([1, 1], [1, 1]) == 1.0
    assert math.isnan(cohen_kappa([], []))
    table = confusion([0.0, 1.0, 1.0], [0.0, 1.0, 0.5], [0.0, 0.5, 1.0])
    assert table.loc[1.0, 0.5] == 1 and table.loc[1.0, 1.0] == 1 and int(table.values.sum()) == 3


def _scores(judge, correctness, qids=None):
    qids = qids or [f"q{i}" for i in range(len(correctness))]
    return pd.DataFrame(
        {"qid": qids, "judge_id": judge, "status": "ok", "correctness": correctness, "context_relevance": 1.0}
    )


def test_paired_comparison_marks_better_only_when_the_interval_excludes_zero():
    good = _scores("reference", [1.0] * 30)
    bad = _scores("reference", [0.0] * 25 + [1.0] * 5)
    same = _scores("reference", [1.0] * 30)
    table = paired_comparisons({"good": good, "bad": bad, "same": same})
    correctness = table[table["metric"] == "correctness"].set_index(["model_a", "model_b"])
    assert correctness.loc[("bad", "good"), "verdict"] == "good better"
    assert correctness.loc[("bad", "good"), "mcnemar_p"] < 0.001
    assert correctness.loc[("good", "same"), "verdict"] == "no difference shown"


def test_judge_validation_flags_a_miscalibrated_judge():
    reference = _scores("reference", [1.0] * 10)
    lenient = _scores("lenient", [1.0] * 10)
    oracle = pd.concat([reference, lenient])
    null = pd.concat([_scores("reference", [0.0] * 10), _scores("lenient", [1.0] * 8 + [0.0] * 2)])
    agreement, tables = judge_validation({"oracle": oracle, "null": null})
    rows = agreement[agreement["axis"] == "correctness"].set_index("answer_model")
    assert rows.loc["oracle", "accuracy"] == 1.0 and rows.loc["oracle", "calibration_ok"]
    assert rows.loc["null", "accuracy"] == pytest.approx(0.2)
    assert not rows.loc["null", "calibration_ok"]  # says 0.8 on a model that is always wrong
    assert "null / lenient / correctness" in tables
