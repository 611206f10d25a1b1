"""Correctness the sentence rule cannot read is absent, never 0, wherever a mean of it is shown
(issue 78, "right or loud"): over any mix of scored and absent cases the summary's mean is over
the scored ones and its note says how many and why, the comparison says it beside the mean, a
pair is compared on the cases both sides scored and says which were left out, and the report's
means table says it in the cell, on hover and in a line under the table."""

import math

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_eval_pipeline.language.inflection import ABSENT_NOTE, reading
from rag_eval_pipeline.metrics.comparison import paired_comparisons, unpaired_notes
from rag_eval_pipeline.metrics.summary import (
    CORRECTNESS_ABSENT,
    absence_reasons,
    case_absence,
    compare_models,
    language_breakdown,
    scored_of,
    summarize,
)
from rag_eval_pipeline.reporting.report import absence_html, means_table

NOTE = f"{ABSENT_NOTE}negation, hedges, options and contrasts not read in Latin; an LLM judge reads them"
REASON = reading("la").absence_reason
# a case: its score (0, 0.5, 1) or None, absent because the rule could not read its Latin
CASES = st.lists(st.sampled_from([0.0, 0.5, 1.0, None]), min_size=1, max_size=12)


def _scores(values: list[float | None]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "qid": [f"q{n}" for n in range(len(values))],
            "judge_id": "reference",
            "status": "ok",
            "language": ["la" if v is None else "de" for v in values],
            "correctness": pd.array(values, dtype="float64"),
            "notes": [NOTE if v is None else None for v in values],
        }
    )


def _summarize(values: list[float | None]) -> pd.DataFrame:
    """As metric_summary summarizes: the judge's declared metrics kept, with none of their values."""
    return summarize(_scores(values), declared_metrics={"reference": ["correctness"]})


def _overall(summary: pd.DataFrame) -> dict:
    rows = summary[(summary["metric"] == "correctness") & (summary["group"] == "all")]
    return rows.iloc[0].to_dict()


@settings(max_examples=30, deadline=None)
@given(CASES)
def test_a_mean_is_over_the_scored_cases_and_says_how_many_are_absent_and_why(values):
    scored = [v for v in values if v is not None]
    absent = len(values) - len(scored)
    summary = _summarize(values)
    row = _overall(summary)
    assert row["n"] == len(scored) and row["n_cases"] == len(values)
    if scored:
        assert math.isclose(row["mean"], sum(scored) / len(scored))
    else:
        assert math.isnan(row["mean"])  # every case absent: no number, never 0
    said = f"{len(scored)} of {len(values)} cases scored; {absent} absent: {REASON}"
    assert (said in str(row["note"])) == bool(absent)
    assert absence_reasons(summary) == ([REASON] if absent else [])
    comparison = compare_models({"latin": summary}).iloc[0].to_dict()
    if absent:
        assert comparison[CORRECTNESS_ABSENT] == said
        assert scored_of(comparison[CORRECTNESS_ABSENT]) == f"{len(scored)} of {len(values)} scored"
    else:
        assert CORRECTNESS_ABSENT not in comparison


@settings(max_examples=20, deadline=None)
@given(CASES)
def test_a_pair_is_compared_on_the_cases_both_scored_and_says_which_it_left_out(values):
    other = [1.0] * len(values)  # every case scored on the other side
    paired = paired_comparisons({"a-latin": _scores(values), "b-scored": _scores(other)}, min_cases=1)
    scored = sum(v is not None for v in values)
    if not scored:  # nothing to pair: no difference is claimed
        assert paired.empty or "correctness" not in set(paired["metric"])
        return
    row = paired[paired["metric"] == "correctness"].iloc[0]
    assert row["n"] == scored
    absent = len(values) - scored
    notes = unpaired_notes(paired)
    if absent:
        assert notes == [
            f"a-latin vs b-scored (reference): paired on {scored} of {len(values)} cases both were "
            f"judged on; {absent} absent for a-latin: {REASON}"
        ]
    else:
        assert notes == [] and row["unpaired_note"] == ""


def test_the_reports_means_say_absent_in_the_cell_on_hover_and_under_the_table():
    summary = _summarize([1.0, None, 0.0, None])
    rows = summary[summary["group"] == "all"].assign(model="latin")
    table, hovers = means_table(rows, ["correctness"])
    assert table.loc[0, "correctness"].endswith("(2 of 4 scored)")
    assert hovers == {(0, "correctness"): f"2 of 4 cases scored; 2 absent: {REASON}"}
    under = absence_html({"latin": summary})
    assert "latin (reference): 2 of 4 cases scored, 2 absent" in under and "Latin" in under
    assert absence_html({"latin": _summarize([1.0, 0.0])}) == ""
    # by language: the Latin cases are all absent, the German ones all scored
    by_language = language_breakdown({"latin": summary}).set_index("language")
    assert by_language.loc["la", "correctness_scored"] == "0 of 2 scored"
    assert pd.isna(by_language.loc["de", "correctness_scored"])
    assert by_language.loc["de", "correctness"] == 0.5


def test_a_cases_reason_is_read_from_its_notes_whatever_came_before():
    assert case_absence(f"image not found; {NOTE}") == NOTE
    assert case_absence(None) == "" and case_absence("image not found") == ""
