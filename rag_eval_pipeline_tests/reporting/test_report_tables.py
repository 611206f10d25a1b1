"""What the report draws from its tables, over the shapes of input they come in: every value of
any column type shown on one line, absent (None, NaN, NA) as "–" and never as ``nan`` or
``None``; the paired differences drawn with an absent one said, not put at 0; one colour per
model whichever charts it is in."""

import math
import re

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from rag_eval_pipeline.reporting.charts import model_colours
from rag_eval_pipeline.reporting.report import forest_svg, table_html

ABSENT = st.sampled_from([None, math.nan, pd.NA])
VALUES = st.one_of(
    ABSENT,
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.integers(-(10**6), 10**6),
    st.text(max_size=30),
    st.booleans(),
    st.lists(st.integers(0, 9), max_size=3),
)


@given(st.lists(st.lists(VALUES, min_size=3, max_size=3), min_size=1, max_size=6))
def test_a_table_shows_absent_as_a_dash_and_never_nan_or_none(rows):
    frame = pd.DataFrame(rows, columns=["a", "b", "c"])
    shown = table_html(frame)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", shown, flags=re.S)
    assert len(cells) == frame.size
    for value, cell in zip(frame.to_numpy().ravel(), cells):
        absent = value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))
        if absent:
            assert cell == "–"
        assert cell not in ("nan", "None", "NaN", "<NA>")
    # the whole value on hover, whatever a cell's width cuts
    assert len(re.findall(r'<td title="', shown)) == frame.size


def _pairs(rows: list[tuple[str, str, float | None, str]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "model_a": a, "model_b": b, "judge_id": "reference", "metric": "correctness", "n": 40,
                "difference": d, "ci_low": None if d is None else d - 0.1,
                "ci_high": None if d is None else d + 0.1, "p_adjusted": 0.01, "verdict": verdict,
            }
            for a, b, d, verdict in rows
        ]
    )  # fmt: skip


def test_the_forest_draws_each_pair_in_the_better_models_colour_and_says_an_absent_difference():
    colours = model_colours(["oracle", "null", "baseline"])
    drawn = forest_svg(
        _pairs(
            [
                ("null", "oracle", -0.9, "oracle better"),
                ("baseline", "null", 0.02, "no difference shown"),
                ("baseline", "oracle", None, "no difference shown"),
            ]
        ),
        "correctness",
        colours,
    )
    dots = re.findall(r'<circle [^>]*fill="([^"]+)"', drawn)
    assert dots == [colours["oracle"], "#9a9a9a"]  # the absent difference has no dot
    assert "baseline − oracle</text><text" in drawn and ">–</text>" in drawn
    assert "oracle better; p adjusted 0.010; 40 cases" in drawn


@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=15, unique=True))
def test_a_model_has_one_colour_whatever_order_the_charts_name_it_in(models):
    every = model_colours(models + models[:2])  # a model named by several inputs: one colour
    assert set(every) == set(models) and len(set(every.values())) == min(len(models), 10)
    assert every == model_colours(list(reversed(models)))  # the order models come in does not matter
