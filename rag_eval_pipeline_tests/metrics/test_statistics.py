"""Statistics against hand-computed examples."""

import math

import numpy as np
import pandas as pd
import pytest

from rag_eval_pipeline.metrics.comparison import judge_validation, paired_comparisons
from rag_eval_pipeline.metrics.settings import MIN_CASES
from rag_eval_pipeline.metrics.statistics import (
    bootstrap_mean,
    cohen_kappa,
    confusion,
    mcnemar_exact,
    paired_difference,
)
from rag_eval_pipeline_tests.support import REPO_ROOT


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


def test_judge_validation_pools_models_weights_kappa_and_flags_a_miscalibrated_judge():
    """Agreement is pooled over the answer models (per model it collapses: on the null model a
    judge that always agrees shows kappa 0 or an undefined 1), linearly weighted on the
    ordinal scale, with an interval; calibration stays per calibration model."""
    reference = _scores("reference", [1.0] * 10)
    lenient = _scores("lenient", [1.0] * 10)
    oracle = pd.concat([reference, lenient])
    null = pd.concat([_scores("reference", [0.0] * 10), _scores("lenient", [1.0] * 8 + [0.0] * 2)])
    agreement, tables = judge_validation({"oracle": oracle, "null": null}, {"oracle": 1.0, "null": 0.0})
    rows = agreement[agreement["axis"] == "correctness"].set_index("answer_model")
    pooled = rows.loc["all models"]
    assert pooled["n"] == 20 and pooled["accuracy"] == pytest.approx(12 / 20)
    # by hand: weighted disagreement observed 8/20 = 0.4, by chance 0.5 * 0.9 + 0.5 * 0.1 = 0.5
    assert pooled["kappa"] == pytest.approx(1 - 0.4 / 0.5)
    assert pooled["kappa_low"] <= pooled["kappa"] <= pooled["kappa_high"]
    assert rows.loc["oracle", "calibration_ok"] and not rows.loc["null", "calibration_ok"]
    assert rows.loc["null", "judge_mean"] == pytest.approx(0.8)  # says 0.8 of a model always wrong
    # the agreement is between two definitions of the axis, and the table says which
    relevance = agreement[agreement["axis"] == "context_relevance"].iloc[0]
    assert "gold titles retrieved" in relevance["definitions_compared"]
    assert "reference rule" in pooled["definitions_compared"]
    assert "lenient / correctness" in tables and int(tables["lenient / correctness"].to_numpy().sum()) == 20


def test_weighted_kappa_by_hand_and_undefined_on_one_label():
    from rag_eval_pipeline.metrics.statistics import weighted_kappa

    # a 0.5 against a 1 is half a disagreement: observed 0.25 / 3, by chance from the marginals
    a, b = [0.0, 0.5, 1.0], [0.0, 1.0, 1.0]
    chance = sum(
        abs(i - j) / 2 * pa * pb
        for i, pa in enumerate([1 / 3, 1 / 3, 1 / 3])
        for j, pb in enumerate([1 / 3, 0.0, 2 / 3])
    )
    assert weighted_kappa(a, b) == pytest.approx(1 - (0.5 / 3) / chance)
    assert math.isnan(weighted_kappa([0.0] * 5, [0.0] * 5))  # 34 of 35 agreements is not kappa 1
    assert weighted_kappa([0.0, 1.0], [0.0, 1.0]) == 1.0 and math.isnan(weighted_kappa([], []))


# --- small samples: exact paired tests and intervals that keep their width ---------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from rag_eval_pipeline.metrics.coverage import SCORE_DISTRIBUTIONS, simulated_coverage  # noqa: E402
from rag_eval_pipeline.metrics.statistics import (  # noqa: E402
    IntervalMethod,
    mean_interval,
    sign_flip_test,
)
from rag_eval_pipeline.metrics.summary import summarize  # noqa: E402


def test_three_unanimous_cases_are_no_evidence():
    """The issue's example: oracle right, baseline wrong on all three questions. The bootstrap
    interval of identical differences has zero width; the exact test says p = 2 / 2**3."""
    oracle = _scores("reference", [1.0, 1.0, 1.0])
    baseline = _scores("reference", [0.0, 0.0, 0.0])
    table = paired_comparisons({"oracle": oracle, "extractive-baseline": baseline})
    row = table[table["metric"] == "correctness"].iloc[0]
    assert row["difference"] == -1.0 and row["ci_low"] == row["ci_high"] == -1.0
    assert row["p_value"] == pytest.approx(0.25) and row["test"] == "sign-flip exact"
    assert row["mcnemar_p"] == pytest.approx(0.25)
    assert row["verdict"] == "no difference shown"
    # the same unanimous pattern on 10 cases is evidence: p = 2 / 2**10
    ten = paired_comparisons(
        {"oracle": _scores("reference", [1.0] * 10), "extractive-baseline": _scores("reference", [0.0] * 10)}
    )
    decided = ten[ten["metric"] == "correctness"].iloc[0]
    assert decided["p_value"] == pytest.approx(2 / 1024) and decided["verdict"] == "oracle better"


def test_fewer_paired_cases_than_min_cases_reach_no_conclusion():
    """The README's rule holds for paired verdicts as for means: eight unanimous cases give an
    exact p of 2 / 2**8, below 0.05, yet under statistics.min_cases (10) nothing is called."""
    eight = {"oracle": _scores("reference", [1.0] * 8), "null": _scores("reference", [0.0] * 8)}
    row = paired_comparisons(eight).set_index("metric").loc["correctness"]
    assert row["p_value"] == pytest.approx(2 / 256) and row["verdict"] == "no difference shown"
    assert paired_comparisons(eight, min_cases=8).set_index("metric").loc["correctness", "verdict"] == (
        "oracle better"
    )
    readme = (REPO_ROOT / "README.md").read_text()
    assert f"fewer than {MIN_CASES} cases reach\n  no conclusion" in readme


def test_the_significance_level_is_a_setting():
    table = paired_comparisons(
        {"oracle": _scores("reference", [1.0] * 10), "b": _scores("reference", [0.0] * 10)},
        significance=0.001,
    )
    assert table[table["metric"] == "correctness"].iloc[0]["verdict"] == "no difference shown"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=40))
def test_sign_flip_on_binary_outcomes_is_mcnemar_exact(pairs):
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    differences = [float(x) - float(y) for x, y in pairs]
    assert sign_flip_test(differences).p_value == pytest.approx(mcnemar_exact(a, b)[2], rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0, 0.25, -0.75]), min_size=1, max_size=10))
def test_sign_flip_matches_brute_force_enumeration(differences):
    import itertools

    observed = abs(sum(differences))
    flips = list(itertools.product([-1, 1], repeat=len(differences)))
    extreme = sum(abs(sum(s * d for s, d in zip(signs, differences))) >= observed - 1e-9 for signs in flips)
    assert sign_flip_test(differences).p_value == pytest.approx(extreme / len(flips))


def test_sign_flip_monte_carlo_above_the_exact_limit_says_so():
    rng = np.random.default_rng(3)
    differences = rng.uniform(-1, 1, size=60) + 0.3  # continuous: too many distinct sums to enumerate
    result = sign_flip_test(differences, draws=5000)
    assert result.method == "monte carlo (5000 draws)" and result.n_nonzero == 60
    assert result.p_value < 0.01
    assert sign_flip_test([0.0, 0.0]).p_value == 1.0


def test_intervals_keep_their_width_on_unanimous_small_samples():
    interval, method = mean_interval([1.0] * 5)
    assert method is IntervalMethod.CLOPPER_PEARSON
    # Clopper-Pearson with 5 of 5: lower bound (0.025) ** (1 / 5) by hand
    assert interval.estimate == 1.0 and interval.high == 1.0
    assert interval.low == pytest.approx(0.025**0.2)
    wilson, _ = mean_interval([1.0] * 5, IntervalMethod.WILSON)
    # Wilson with p = 1, n = 5, z = 1.96: (1 + z^2/10 - z*sqrt(z^2/100)) / (1 + z^2/5) = 5 / (5 + z^2)
    assert wilson.low == pytest.approx(5 / (5 + 1.959964**2), abs=1e-6)
    collapsed, _ = mean_interval([1.0] * 5, IntervalMethod.PERCENTILE)
    assert collapsed.low == collapsed.high == 1.0  # the old default: no width at all
    # a cosine similarity below 0 is outside [0, 1]: the bootstrap is used, and said
    _, used = mean_interval([-0.2, 0.4, 0.9])
    assert used is IntervalMethod.PERCENTILE
    assert math.isnan(mean_interval([])[0].estimate)


def test_default_interval_covers_at_least_93_percent_from_ten_cases():
    """Measured coverage at nominal 95% over 0/1 and 0/0.5/1 score distributions, from the
    bounds to the middle (the README's table comes from the same simulation)."""
    for n in (10, 35, 150):
        for name, probabilities in SCORE_DISTRIBUTIONS.items():
            coverage = simulated_coverage(probabilities, n, IntervalMethod.CLOPPER_PEARSON, seed=n)
            assert coverage >= 0.93, (n, name, coverage)


def test_coverage_simulation_catches_an_interval_that_collapses():
    """The same measurement fails the percentile bootstrap near the bound: it can fail."""
    near_one = SCORE_DISTRIBUTIONS["0/1, mean 0.98"]
    assert simulated_coverage(near_one, 10, IntervalMethod.PERCENTILE) < 0.5
    assert simulated_coverage(near_one, 10, IntervalMethod.WILSON) >= 0.93


def test_summary_marks_too_few_cases_and_names_its_interval_method():
    scores = pd.DataFrame(
        {
            "qid": [f"q{i}" for i in range(12)],
            "judge_id": "reference",
            "judge_kind": "reference",
            "status": "ok",
            "type": ["bridge"] * 4 + ["comparison"] * 8,
            "level": "hard",
            "correctness": [1.0] * 12,
        }
    )
    summary = summarize(scores, min_cases=10).set_index(["group", "metric"])
    overall = summary.loc[("all", "correctness")]
    assert overall["note"] == "" and overall["ci_method"] == "clopper_pearson"
    assert overall["ci_low"] < 1.0 == overall["ci_high"]
    assert summary.loc[("type=bridge", "correctness"), "note"] == "too few cases to conclude"


# --- many models, any scores: exact tests that stay exact, and multiplicity -------------------


def _brute_force_p(differences: list[float]) -> float:
    """Every sign assignment, summed exactly (fractions): the definition the test must match."""
    import itertools
    from fractions import Fraction

    exact = [Fraction(d) for d in differences]
    observed = abs(sum(exact))
    flips = list(itertools.product([-1, 1], repeat=len(exact)))
    return sum(abs(sum(s * d for s, d in zip(signs, exact))) >= observed for signs in flips) / len(flips)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 1, allow_nan=False), st.floats(0, 1, allow_nan=False)), min_size=1, max_size=10
    )
)
def test_sign_flip_is_exact_for_continuous_scores(pairs):
    """Continuous scores (F1, shares) on the integer grid: the p-value is the brute-force one
    for the scores as the grid holds them (rounded to a millionth), never too small."""
    from fractions import Fraction

    differences = [round(a, 6) - round(b, 6) for a, b in pairs]
    # the grid's values as exact fractions: millionths as binary floats do not sum exactly
    # (-0.164062 - 0.835938 + 2 is not 1.0 in floats), which made the oracle, not the test, wrong
    expected = _brute_force_p([Fraction(round(d * 10**6), 10**6) for d in differences])
    assert sign_flip_test(differences).p_value == pytest.approx(expected, abs=1e-12)


def test_sign_flip_on_the_audits_continuous_samples_is_never_too_small():
    """The audit's finding: 1,000 random continuous samples at n <= 12 got p too low 69 times
    (up to 0.125 at n = 4) when partial sums were rounded. None now."""
    rng = np.random.default_rng(11)
    too_low = 0
    for _ in range(300):
        n = int(rng.integers(2, 10))
        a, b = rng.uniform(0, 1, n).round(6), rng.uniform(0, 1, n).round(6)
        differences = (a - b).tolist()
        if sign_flip_test(differences).p_value < _brute_force_p([round(d, 6) for d in differences]) - 1e-12:
            too_low += 1
    assert too_low == 0


def test_holm_by_hand_and_verdicts_rest_on_the_adjusted_p():
    from rag_eval_pipeline.metrics.statistics import holm_adjusted

    # p sorted 0.01, 0.02, 0.04 -> x3, x2, x1 = 0.03, 0.04, 0.04 (made monotone)
    assert holm_adjusted([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert holm_adjusted([0.5, 0.6]) == pytest.approx([1.0, 1.0]) and holm_adjusted([]) == []
    # three models, one clearly better on 10 cases: its two pairs survive the adjustment, the
    # family is named, and the raw p stays beside the adjusted one
    table = paired_comparisons(
        {
            "a": _scores("reference", [1.0] * 10),
            "b": _scores("reference", [0.0] * 10),
            "c": _scores("reference", [0.0] * 9 + [1.0]),
        }
    )
    rows = table[table["metric"] == "correctness"].set_index(["model_a", "model_b"])
    assert (rows["family_size"] == 3).all()
    assert rows.loc[("a", "b"), "p_value"] == pytest.approx(2 / 1024)
    assert rows.loc[("a", "b"), "p_adjusted"] == pytest.approx(3 * 2 / 1024)
    assert rows.loc[("a", "b"), "verdict"] == "a better" and rows.loc[("a", "c"), "verdict"] == "a better"
    assert rows.loc[("b", "c"), "verdict"] == "no difference shown"


def test_equal_models_rarely_give_a_false_verdict_after_holm():
    """Six equal models, 15 pairs at n = 35 on a 0/0.5/1 scale: without adjustment a false
    'better' appears in about a quarter of the families; with Holm at most 5% (the benchmark
    measures it on 2,000 families; a smaller simulation here)."""
    from rag_eval_pipeline.metrics.simulation import Draws, false_verdict_rate

    assert false_verdict_rate(models=6, n=35, families=Draws(150, seed=1)) <= 0.08


def test_the_sign_flip_p_is_exact_on_fractional_scores():
    """The audit's example: [1/3, 1/3, -1/3, -2/3] has p = 1 exactly (every assignment's sum is at
    least 1/3 in magnitude); rounding each difference to a millionth made it 0.875."""
    assert sign_flip_test([1 / 3, 1 / 3, -1 / 3, -2 / 3]).p_value == 1.0
    assert sign_flip_test([1 / 3, 1 / 3, -1 / 3, -2 / 3]).p_value == _brute_force_p_tied(
        [1 / 3, 1 / 3, -1 / 3, -2 / 3]
    )


def _brute_force_p_tied(differences: list[float], tolerance: float = 1e-9) -> float:
    """Every sign assignment, with sums within ``tolerance`` of the observed counted as ties:
    the definition for scores that are floats of intended fractions (0.1 + 0.2 is 0.3)."""
    import itertools

    observed = abs(sum(differences))
    flips = list(itertools.product([-1, 1], repeat=len(differences)))
    hits = sum(abs(sum(s * d for s, d in zip(signs, differences))) >= observed - tolerance for signs in flips)
    return hits / len(flips)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-12, 12), st.sampled_from([2, 3, 6, 12, 7])), min_size=1, max_size=10))
def test_sign_flip_matches_brute_force_on_rational_scores(fractions):
    """Means over repeats (thirds, sixths), 0/0.5/1, sevenths: exact sums over the common
    denominator, so ties between sums are ties."""
    from fractions import Fraction

    differences = [numerator / denominator for numerator, denominator in fractions]
    expected = _brute_force_p([Fraction(n, d) for n, d in fractions])
    assert sign_flip_test(differences).p_value == pytest.approx(expected, abs=1e-12)


def test_sign_flip_matches_brute_force_on_continuous_and_tied_scores():
    rng = np.random.default_rng(5)
    for _ in range(150):
        n = int(rng.integers(1, 11))
        if rng.random() < 0.5:  # continuous: no two sums alike
            differences = rng.uniform(-1, 1, n).tolist()
        else:  # a few continuous values repeated: ties between sums that floats break
            values = rng.uniform(-1, 1, 3)
            differences = [float(values[i]) for i in rng.integers(0, 3, n)] + [float(values[0] + values[1])]
        assert sign_flip_test(differences).p_value == pytest.approx(
            _brute_force_p_tied(differences), abs=1e-12
        )


def test_the_exact_power_is_the_tests_own_rejection_rate():
    """For 0/1 differences the power sums, over every count of wins, losses and ties, the chance
    of the counts times whether the project's test rejects them: exact_power must equal it."""
    from math import comb

    from rag_eval_pipeline.metrics.statistics import exact_power

    for n, difference, discordance in ((12, 0.3, 0.5), (20, 0.1, 0.4), (25, 0.2, 0.2)):
        win, loss = (discordance + difference) / 2, (discordance - difference) / 2
        expected = 0.0
        for wins in range(n + 1):
            for losses in range(n - wins + 1):
                ties = n - wins - losses
                chance = (
                    comb(n, wins)
                    * comb(n - wins, losses)
                    * win**wins
                    * loss**losses
                    * (1 - discordance) ** ties
                )
                test = sign_flip_test([1.0] * wins + [-1.0] * losses + [0.0] * ties)
                expected += chance * (test.p_value < 0.05)
        assert exact_power(n, difference, discordance) == pytest.approx(expected, abs=1e-9)


def test_the_planned_cases_reach_the_stated_power():
    """The audit's case: a difference of 0.10 at 40% discordance. The normal approximation said
    312 cases (exact power 0.778); the plan now gives the smallest n whose exact power reaches
    0.8 and stays there, and a simulation of the project's own test at that n agrees with it
    within what 1,500 draws can tell (3 standard errors)."""
    from rag_eval_pipeline.metrics.statistics import cases_needed, exact_power, power_curve

    planned = cases_needed(0.1, 0.4)
    assert 320 <= planned <= 340
    assert exact_power(312, 0.1, 0.4) == pytest.approx(0.778, abs=0.002)
    assert all(exact_power(m, 0.1, 0.4) >= 0.8 for m in range(planned, planned + 30))
    curve = dict(power_curve(planned, 0.1, 0.4))
    assert curve[planned] >= 0.8 and min(curve) < planned < max(curve)
    assert curve[min(curve)] < 0.8 < curve[max(curve)]
    rng = np.random.default_rng(2)
    draws = 1500
    outcomes = rng.choice([1.0, -1.0, 0.0], p=[0.25, 0.15, 0.6], size=(draws, planned))
    rejected = sum(sign_flip_test(row).p_value < 0.05 for row in outcomes)
    standard_error = (0.8 * 0.2 / draws) ** 0.5
    assert abs(rejected / draws - exact_power(planned, 0.1, 0.4)) <= 3 * standard_error
    with pytest.raises(ValueError, match="needs a discordance of at least"):
        cases_needed(0.1, 0.05)


def test_the_detectable_difference_is_the_inverse_of_the_exact_power():
    from rag_eval_pipeline.metrics.statistics import detectable_difference, exact_power

    differences = [1.0] * 4 + [-1.0] * 3 + [0.0] * 28  # 7 discordant cases of 35
    mde = detectable_difference(differences)
    discordance = max(7 / 35, mde)
    assert exact_power(35, mde, discordance) >= 0.8 > exact_power(35, mde * 0.95, max(7 / 35, mde * 0.95))
    # more disagreement, more noise: a larger difference is needed to be seen
    assert detectable_difference([1.0] * 20 + [-1.0] * 15) > mde
    assert detectable_difference([1.0]) == 1.0  # one case shows nothing


def test_the_kappa_interval_from_the_table_equals_the_bootstrap_over_the_pairs():
    """Resampling the 3 x 3 table's counts is resampling the pairs: the vectorised interval
    agrees with the loop over the pairs up to Monte Carlo noise, on 1,500 labels and on few."""
    from rag_eval_pipeline.metrics.statistics import (
        bootstrap_statistic,
        weighted_kappa,
        weighted_kappa_interval,
    )

    rng = np.random.default_rng(3)
    for n in (1500, 25):
        human = rng.choice([0.0, 0.5, 1.0], size=n, p=[0.3, 0.2, 0.5])
        judged = np.where(rng.random(n) < 0.7, human, rng.choice([0.0, 0.5, 1.0], size=n))
        loop = bootstrap_statistic([human, judged], weighted_kappa)
        table = weighted_kappa_interval(human, judged)
        assert table[0] <= weighted_kappa(human, judged) <= table[1]
        assert table == pytest.approx(loop, abs=0.03 if n > 100 else 0.08), n
    assert all(np.isnan(weighted_kappa_interval([1.0] * 5, [1.0, 0.0, 1.0, 1.0, 0.5])))  # one label


def corrected_by_definition(judged, f, h) -> tuple[float, float, float, float]:
    """PPI++ as the docs define it, written out: lambda the labels' regression slope on the
    judge's scores in [0, 1]; estimate lambda * mean(all judged) + mean(label - lambda * judge);
    variance var(residual, ddof 2) / n + var(labels) / N; t on n - 2; the labels alone (t on
    n - 1) where narrower. Returns estimate, low, high, lambda."""
    from scipy import stats

    n, big_n = len(h), len(judged)
    labels_half = stats.t.ppf(0.975, n - 1) * np.std(h, ddof=1) / np.sqrt(n)
    alone = (np.mean(h), np.mean(h) - labels_half, np.mean(h) + labels_half, 0.0)
    slope = float(np.clip(np.cov(h, f, ddof=0)[0, 1] / np.var(f), 0, 1)) if np.var(f) > 0 else 0.0
    residual = np.asarray(h) - slope * np.asarray(f)
    estimate = slope * np.mean(judged) + residual.mean()
    half = stats.t.ppf(0.975, n - 2) * np.sqrt(residual.var(ddof=2) / n + np.var(h, ddof=1) / big_n)
    if slope == 0.0 or half >= labels_half:
        return alone
    return estimate, estimate - half, estimate + half, slope


def test_the_corrected_mean_borrows_the_judge_by_its_regression_slope_and_never_widens():
    """lambda is the labels' regression slope on the judge's scores (PPI++ with the labelled
    cases among the N), the interval as written out above, never wider than the labels alone,
    which a judge that tells nothing gets."""
    from rag_eval_pipeline.metrics.agreement import corrected_mean

    rng = np.random.default_rng(5)
    big_n = 400
    human = rng.choice([0.0, 0.5, 1.0], size=big_n, p=[0.35, 0.15, 0.5])
    judged = np.where(rng.random(big_n) < 0.75, human, 1.0)  # lenient: a quarter passed regardless
    blind = rng.choice([0.0, 0.5, 1.0], size=big_n)  # a judge whose score says nothing
    for n in (30, 80):
        labelled = rng.choice(big_n, size=n, replace=False)
        h = human[labelled]
        estimate, low, high, slope = corrected_by_definition(judged, judged[labelled], h)
        result = corrected_mean(judged, judged[labelled], h)
        assert 0 < result.judge_weight == pytest.approx(slope)
        assert (result.interval.estimate, result.interval.low, result.interval.high) == pytest.approx(
            (estimate, low, high)
        )
        alone = corrected_by_definition(blind, blind[labelled], h)
        result = corrected_mean(blind, blind[labelled], h)
        assert (result.interval.low, result.interval.high) == pytest.approx(alone[1:3])
        labels_width = corrected_by_definition(judged, np.zeros(n), h)  # lambda 0: the labels alone
        assert result.interval.high - result.interval.low <= labels_width[2] - labels_width[1] + 1e-12


def test_the_monte_carlo_p_value_agrees_with_every_sign_assignment():
    """The drawn sign assignments (random bits, a set bit flipping a sign) estimate the p-value
    of all 2**12 assignments within four standard errors, on differences of many sizes."""
    import itertools

    from rag_eval_pipeline.metrics.statistics import _monte_carlo

    rng = np.random.default_rng(11)
    every = np.array(list(itertools.product([-1, 1], repeat=12)))
    for trial in range(5):
        differences = rng.uniform(-1, 1, 12) + 0.15
        magnitudes, observed = np.abs(differences), abs(differences.sum()) - 1e-9
        exact = float(np.mean(np.abs(every @ magnitudes) >= observed))
        drawn = _monte_carlo(magnitudes, observed, 20_000, trial).p_value
        assert abs(drawn - exact) <= 4 * np.sqrt(exact * (1 - exact) / 20_000) + 1e-4, (trial, exact, drawn)
