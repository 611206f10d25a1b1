"""The exact paired test holds at any number of changed cases (it overflowed to p = 1 past about
1,030 before), and every metric a summary can hold says which way it improves."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import bdtr
from scipy.stats import binomtest

from rag_eval_pipeline.judges.claims import CLAIM_METRICS
from rag_eval_pipeline.judges.ragas import RAGAS_METRICS
from rag_eval_pipeline.judges.reference import REFERENCE_METRICS
from rag_eval_pipeline.judges.strict import STRICT_METRICS
from rag_eval_pipeline.metrics.directions import Direction, direction
from rag_eval_pipeline.metrics.reliability import ALPHA_SUFFIX
from rag_eval_pipeline.metrics.schema import ANSWER_METRICS, ANSWER_VARIABILITY
from rag_eval_pipeline.metrics.stability import FLIP_SUFFIX
from rag_eval_pipeline.metrics.statistics import sign_flip_test


def test_the_issues_example():
    result = sign_flip_test([1.0] * 566 + [-1.0] * 464)
    assert result.method == "exact" and result.n_nonzero == 1030
    assert result.p_value == pytest.approx(binomtest(566, 1030).pvalue, rel=1e-9)
    assert round(result.p_value, 4) == 0.0016


@pytest.mark.parametrize("n", [1, 2, 3, 10, 101, 1000, 1029, 1030, 1031, 2000, 5000, 20_000, 100_000])
def test_one_step_size_equals_the_exact_binomial_at_every_size(n):
    """Every changed case moved by the same step (0 -> 1 or 1 -> 0): the two-sided binomial p,
    for an even split, a slight lean and a clear one."""
    for share in (0.5, 0.51, 0.6):
        up = min(n, math.ceil(share * n))
        p = sign_flip_test([1.0] * up + [-1.0] * (n - up)).p_value
        assert p == pytest.approx(binomtest(up, n).pvalue, rel=1e-9, abs=1e-300), (n, up)


def _two_sizes_reference(c1: int, c2: int, observed: int) -> float:
    """P(|S| >= observed), S = (2 K1 - c1) + 2 (2 K2 - c2), K ~ Binomial(c, 1/2): summed over K2,
    each inner tail from the binomial CDF (an independent computation of the exact p)."""
    k2 = np.arange(c2 + 1)
    from scipy.special import gammaln

    weights = np.exp(gammaln(c2 + 1) - gammaln(k2 + 1) - gammaln(c2 - k2 + 1) - c2 * math.log(2))
    shift = 2 * (2 * k2 - c2)  # the second size's part of the sum
    # |2 K1 - c1 + shift| >= observed: K1 <= (c1 - shift - observed) / 2 or K1 >= (c1 - shift + observed) / 2
    low = np.floor((c1 - shift - observed) / 2)
    high = np.ceil((c1 - shift + observed) / 2)
    below = np.where(low >= 0, bdtr(np.clip(low, 0, c1), c1, 0.5), 0.0)
    above = np.where(high <= c1, 1.0 - bdtr(np.clip(high - 1, 0, c1), c1, 0.5), 0.0)
    above = np.where(high <= 0, 1.0, above)
    return float(np.sum(weights * np.minimum(1.0, below + above)))


@pytest.mark.parametrize("scale", [200, 5_000, 100_000])
def test_mixed_step_sizes_equal_an_independent_exact_computation_at_scale(scale):
    """0 / 0.5 / 1 scores: cases that moved by a half and by a whole, up to 100,000 of them."""
    halves_up, halves_down = int(0.22 * scale), int(0.20 * scale)
    wholes_up, wholes_down = (
        int(0.30 * scale),
        scale - int(0.22 * scale) - int(0.20 * scale) - int(0.30 * scale),
    )
    differences = [0.5] * halves_up + [-0.5] * halves_down + [1.0] * wholes_up + [-1.0] * wholes_down
    result = sign_flip_test(differences)
    observed = abs((halves_up - halves_down) + 2 * (wholes_up - wholes_down))  # in halves
    expected = _two_sizes_reference(halves_up + halves_down, wholes_up + wholes_down, observed)
    assert result.method == "exact" and result.n_nonzero == scale
    assert result.p_value == pytest.approx(expected, rel=1e-6, abs=1e-12)


# the metrics better lower, named; every other metric a summary can hold is better higher
LOWER = {"error_rate", "false_answer_rate", "over_abstention_rate", ANSWER_VARIABILITY}


def test_every_metric_a_summary_can_hold_says_which_way_it_improves():
    scores = {*REFERENCE_METRICS, *STRICT_METRICS, *RAGAS_METRICS, *CLAIM_METRICS}
    rates = {*ANSWER_METRICS, ANSWER_VARIABILITY}
    flips = {f"{metric}{FLIP_SUFFIX}" for metric in scores}
    alphas = {f"{axis}{ALPHA_SUFFIX}" for axis in STRICT_METRICS}
    for metric in scores | rates | flips | alphas:
        expected = Direction.LOWER if metric in LOWER or metric in flips else Direction.HIGHER
        assert direction(metric) is expected, metric
    assert direction("answer_rate") is Direction.HIGHER
    assert direction("judge_error_rate") is Direction.LOWER  # any rate of errors or failures


def _rescored(flips: int, cases: int = 60) -> pd.DataFrame:
    """A judge asked three times per case, scoring correctness 1 each time, except on ``flips``
    cases where its second re-score says 0 (its median stays 1: only its steadiness differs)."""

    rows = []
    for case in range(cases):
        for repeat in range(3):
            flipped = case < flips and repeat == 1
            rows.append(
                {
                    "qid": f"q{case:03d}",
                    "repeat": 0,
                    "judge_repeat": repeat,
                    "judge_id": "j",
                    "judge_kind": "strict",
                    "status": "ok",
                    "prompt_version": "v1",
                    "answer_config": "m",
                    "correctness": 0.0 if flipped else 1.0,
                }
            )
    return pd.DataFrame(rows)


def test_a_diff_reads_a_judges_flip_rate_as_better_lower():
    """Only the judge's steadiness changes between the two runs: steadier is no regression,
    flipping more is one (its flip rate rose)."""
    from rag_eval_pipeline.metrics.diff import Evaluation, diff_evaluations

    steady, shaky = _rescored(0), _rescored(40)
    calmer = diff_evaluations(Evaluation("before", "m", "r1", shaky), Evaluation("after", "m", "r2", steady))
    assert calmer.significant_regressions().empty
    row = calmer.overall().set_index("metric").loc["correctness_flip_rate"]
    assert row["lower_is_better"] and row["improved"] == 40 and row["regressed"] == 0
    worse = diff_evaluations(Evaluation("before", "m", "r1", steady), Evaluation("after", "m", "r2", shaky))
    assert list(worse.significant_regressions()["metric"]) == ["correctness_flip_rate"]


def test_a_gate_and_a_paired_verdict_read_a_rate_better_lower():

    from rag_eval_pipeline.metrics.gates import check_gates, failed_gates_line
    from rag_eval_pipeline.metrics.settings import Bound, parse_gate
    from rag_eval_pipeline.metrics.statistics import Interval, paired_verdict

    summary = pd.DataFrame(
        [
            {
                "judge_id": "j",
                "metric": "error_rate",
                "group": "all",
                "mean": 0.2,
                "ci_low": 0.1,
                "ci_high": 0.35,
                "n": 40,
            }
        ]
    )
    assert check_gates(summary, [parse_gate("error_rate", 0.3)])[0].passed  # 0.2 <= 0.3
    strict = check_gates(summary, [parse_gate("error_rate", 0.3, Bound.LOWER)])
    assert not strict[0].passed and "upper bound 0.350 > threshold 0.3" in failed_gates_line(strict)
    fewer_errors = Interval(-0.2, -0.3, -0.1)  # a - b: model a fails less often
    assert paired_verdict("a", "b", fewer_errors, 0.001, lower_is_better=True) == "a better"
    assert paired_verdict("a", "b", fewer_errors, 0.001) == "b better"  # a score: b higher
