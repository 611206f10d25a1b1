"""The rule that adopts an aligned prompt, on the cases a run meets: a defined kappa against a
defined one, a current judge that said one thing on every held-out case (kappa undefined), and a
candidate whose kappa is undefined."""

import math

import pytest

from rag_eval_pipeline.judges.alignment import agrees_better

NAN = math.nan


@pytest.mark.parametrize(
    ("current", "candidate", "adopted"),
    [
        (0.57, 1.0, True),
        (0.57, 0.57, False),  # as good is not better
        (0.57, 0.2, False),
        (NAN, 0.4, True),  # a constant judge is beaten by one that agrees beyond chance
        (NAN, -0.07, False),  # ... but not by one that agrees less than chance (SmolLM2 did)
        (NAN, 0.0, False),
        (0.1, NAN, False),
        (NAN, NAN, False),
    ],
)
def test_an_aligned_prompt_is_adopted_only_when_it_agrees_better_than_chance_and_the_current(
    current, candidate, adopted
):
    assert agrees_better(current, candidate) is adopted
