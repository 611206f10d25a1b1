"""A case's gold boxes as the asset page's case entry lists them: each with the predicted box that
overlaps it most and their IoU; absent (never 0) where the answer returned no boxes at all."""

import json

from hypothesis import given
from hypothesis import strategies as st

from rag_eval_pipeline.reporting.images import gold_images_read, grounding_rows

GOLD = {"plan.png": [[20, 0, 30, 10], [0, 60, 10, 70]]}
TRUTH = {"gold_images": ["plan.png"], "gold_boxes": json.dumps(GOLD)}


def test_each_gold_box_has_its_best_box_and_iou_and_none_returned_is_absent():
    boxes = json.dumps([{"image": "plan.png", "box": [20, 0, 50, 10]}])
    said = {"images": ["photo.png", "plan.png"], "boxes": boxes}
    rows = grounding_rows(said, TRUTH).to_dict(orient="records")
    assert rows[0] == {
        "image": "plan.png", "gold box": "[20, 0, 30, 10]", "best predicted": "[20, 0, 50, 10]",
        "IoU": "0.33", "found": "no",
    }  # fmt: skip
    assert rows[1]["best predicted"] == "none overlaps" and rows[1]["IoU"] == "0.00"
    silent = grounding_rows({"images": None, "boxes": None}, TRUTH)
    assert set(silent["IoU"]) == {"–"} and set(silent["found"]) == {"absent"}
    assert grounding_rows(said, {"gold_images": None, "gold_boxes": None}).empty
    assert gold_images_read(said, TRUTH) == "1/1" and gold_images_read({"images": None}, TRUTH) == "?/1"
    assert gold_images_read(said, {"gold_images": [], "gold_boxes": None}) is None


BOX = st.tuples(st.integers(0, 50), st.integers(0, 50), st.integers(1, 50), st.integers(1, 50)).map(
    lambda b: [b[0], b[1], b[0] + b[2], b[1] + b[3]]
)


@given(st.lists(BOX, min_size=1, max_size=4), st.lists(BOX, max_size=4))
def test_a_row_per_gold_box_whatever_was_predicted(gold, predicted):
    truth = {"gold_images": ["a.png"], "gold_boxes": json.dumps({"a.png": gold})}
    said = {"images": ["a.png"], "boxes": json.dumps([{"image": "a.png", "box": b} for b in predicted])}
    rows = grounding_rows(said, truth)
    assert len(rows) == len(gold)
    for row in rows.itertuples():
        value = float(row.IoU)
        assert 0.0 <= value <= 1.0
        assert (row.found == "yes") == (value >= 0.5)
