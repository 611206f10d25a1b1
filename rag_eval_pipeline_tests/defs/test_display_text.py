"""Text the asset pages show cut to a cell's room: at a word's end with an ellipsis, never inside
a word ("…is October 19" of "October 1922"); and a paired difference as a signed decimal
("+1.00"), never a bare "1" that reads as a count."""

import math

from hypothesis import given
from hypothesis import strategies as st

from rag_eval_pipeline.common.text import ELLIPSIS, clip_at_word
from rag_eval_pipeline.defs.metadata import signed

WORDS = st.lists(st.text(alphabet="abcdéfghij0123456789一二三", min_size=1, max_size=12), max_size=30)


def test_a_planted_passage_is_cut_after_a_word_not_inside_one():
    passage = "The treaty was signed in October 1922 in Paris."
    assert clip_at_word(passage, 37) == "The treaty was signed in October…"
    assert clip_at_word("short enough", 40) == "short enough"
    assert clip_at_word("一二三四五六七八九十", 5) == "一二三四…"  # no spaces: cut at the room


@given(WORDS, st.integers(min_value=2, max_value=80), st.sampled_from([" ", "  ", "\n", " \t"]))
def test_a_cut_text_fits_ends_with_an_ellipsis_and_keeps_whole_words(words, most, gap):
    text = gap.join(words)
    flat = " ".join(text.split())
    clipped = clip_at_word(text, most)
    assert len(clipped) <= most
    if len(flat) <= most:
        assert clipped == flat
        return
    assert clipped.endswith(ELLIPSIS)
    kept = clipped[: -len(ELLIPSIS)]
    assert flat.startswith(kept)
    cut_inside_a_word = kept and flat[len(kept)] not in " " and kept[-1] != " "
    if cut_inside_a_word:  # only where no word ends in the room's second half
        assert " " not in kept[(most - 1) // 2 :]


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False))
def test_a_difference_reads_as_a_signed_decimal(value):
    shown = signed(value)
    assert shown == "0.00" or shown[0] in "+-"
    assert "." in shown and len(shown.split(".")[1]) == 2
    assert math.isclose(float(shown), value, abs_tol=0.005 + 1e-9 * abs(value))


def test_an_absent_difference_is_a_dash_and_one_is_not_a_count():
    assert signed(float("nan")) == "–" and signed(None) == "–"
    assert signed(1.0) == "+1.00" and signed(-1) == "-1.00" and signed(-0.0001) == "0.00"
