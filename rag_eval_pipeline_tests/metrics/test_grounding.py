"""Image retrieval and grounding metrics against hand computation (docs/judges-and-statistics.md)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_eval_pipeline.metrics.grounding import (
    PredictedBox,
    VisualAnswer,
    VisualLabels,
    image_scores,
    images_of_passages,
    iou,
)

# six gold boxes on plan.png; the answer's best box for each has IoU 1, 1/3, 1/2, 0, none and
# (the last) 1 from a second box, beside a worse one of IoU 1/2
GOLD = {
    "plan.png": (
        (0, 0, 10, 10),
        (20, 0, 30, 10),
        (0, 20, 10, 30),
        (0, 40, 10, 50),
        (0, 60, 10, 70),
        (0, 80, 10, 90),
    )
}
PREDICTED = (
    PredictedBox("plan.png", (0, 0, 10, 10)),
    PredictedBox("plan.png", (20, 0, 50, 10)),
    PredictedBox("plan.png", (0, 20, 20, 30)),
    PredictedBox("plan.png", (10, 40, 20, 50)),
    PredictedBox("plan.png", (0, 80, 20, 90)),
    PredictedBox("plan.png", (0, 80, 10, 90)),
    PredictedBox("other.png", (0, 60, 10, 70)),  # the fifth gold box, but on another image
)


def test_the_right_image_second_and_boxes_at_known_ious_score_as_computed_by_hand():
    labels = VisualLabels(("plan.png",), GOLD, {"plan.png": (100, 100)})
    answer = VisualAnswer(("photo.png", "plan.png"), PREDICTED, None)
    scores = image_scores(labels, answer, None)
    assert scores["image_context_precision"] == pytest.approx(0.5)  # precision@2 = 1/2
    assert scores["image_context_recall"] == pytest.approx(1.0)
    assert scores["grounding_accuracy"] == pytest.approx(0.5)  # IoU 1, 1/2, 1 of six
    assert scores["grounding_miou"] == pytest.approx(0.472222, abs=1e-6)  # (1+1/3+1/2+0+0+1)/6
    assert scores["pointing_accuracy"] is None  # no heat maps: absent, not 0


def test_right_answer_scores_one_and_wrong_images_zero():
    labels = VisualLabels(("plan.png",), GOLD, {"plan.png": (100, 100)})
    right = VisualAnswer(("plan.png",), tuple(PredictedBox("plan.png", b) for b in GOLD["plan.png"]), None)
    assert set(image_scores(labels, right, None).values()) - {None} == {1.0}
    wrong = VisualAnswer(("photo.png",), (), None)
    scores = image_scores(labels, wrong, None)
    assert scores["image_context_precision"] == scores["image_context_recall"] == 0.0
    assert scores["grounding_accuracy"] == scores["grounding_miou"] == 0.0


def test_a_text_only_case_has_every_image_metric_absent():
    answer = VisualAnswer(("plan.png",), PREDICTED, {"plan.png": "x.png"})
    assert set(image_scores(VisualLabels(), answer, {"plan.png": (1, 1)}).values()) == {None}


def test_an_agent_that_says_nothing_of_images_is_absent_not_zero():
    labels = VisualLabels(("plan.png",), GOLD, {"plan.png": (100, 100)})
    assert set(image_scores(labels, VisualAnswer(), None).values()) == {None}


def test_pointing_game_counts_an_image_without_a_heat_map_as_a_miss():
    gold = {"a.png": ((0, 0, 10, 10),), "b.png": ((5, 5, 8, 8),)}
    labels = VisualLabels(("a.png", "b.png"), gold, {})
    scores = image_scores(labels, VisualAnswer(heatmaps={"a.png": "a"}), {"a.png": (9, 9)})
    assert scores["pointing_accuracy"] == 0.5
    scores = image_scores(labels, VisualAnswer(heatmaps={}), {"a.png": (10, 10)})  # ends are exclusive
    assert scores["pointing_accuracy"] == 0.0


def test_images_of_passages_are_the_caption_hits_in_rank_order_once():
    assert images_of_passages(["p_1", "image:a.png", "image:b/c.png", "image:a.png"]) == ["a.png", "b/c.png"]


boxes = st.tuples(st.integers(0, 50), st.integers(0, 50), st.integers(1, 50), st.integers(1, 50)).map(
    lambda t: (t[0], t[1], t[0] + t[2], t[1] + t[3])
)


@given(boxes, boxes)
def test_iou_is_symmetric_bounded_and_one_on_itself(a, b):
    assert iou(a, b) == pytest.approx(iou(b, a))
    assert 0.0 <= iou(a, b) <= 1.0
    assert iou(a, a) == 1.0
