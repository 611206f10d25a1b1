"""A case's gold boxes as the asset page's case entry lists them: each with the predicted box that
overlaps it most and their IoU; absent (never 0) where the answer returned no boxes at all."""

import base64
import io
import json

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from PIL import Image

from rag_eval_pipeline.reporting.images import (
    OVERLAY_BYTES,
    OVERLAY_SIZE,
    gold_images_read,
    grounding_rows,
    overlay_markdown,
    overlay_png,
)
from rag_eval_pipeline_tests.support.images import draw

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
    assert gold_images_read(said, TRUTH) == "1/1 (#2)" and gold_images_read({"images": None}, TRUTH) == "?/1"
    assert gold_images_read({"images": ["photo.png"]}, TRUTH) == "0/1"
    assert gold_images_read(said, {"gold_images": [], "gold_boxes": None}) is None


BOX = st.tuples(st.integers(0, 50), st.integers(0, 50), st.integers(1, 50), st.integers(1, 50)).map(
    lambda b: [b[0], b[1], b[0] + b[2], b[1] + b[3]]
)


@given(st.lists(BOX, min_size=1, max_size=4), st.lists(BOX, max_size=4))
@example(gold=[[34, 25, 73, 44]], predicted=[[35, 27, 83, 52]])  # IoU 0.4988: shown 0.49, not found
def test_a_row_per_gold_box_whatever_was_predicted(gold, predicted):
    """Found exactly when the IoU shown clears 0.5: the value is rounded down, so a box just under
    the threshold never reads "0.50" beside "no"."""
    truth = {"gold_images": ["a.png"], "gold_boxes": json.dumps({"a.png": gold})}
    said = {"images": ["a.png"], "boxes": json.dumps([{"image": "a.png", "box": b} for b in predicted])}
    rows = grounding_rows(said, truth)
    assert len(rows) == len(gold)
    for row in rows.itertuples():
        value = float(row.IoU)
        assert 0.0 <= value <= 1.0
        assert (row.found == "yes") == (value >= 0.5)


def _drawn(lines: list[str]) -> Image.Image:
    data = lines[-1].split("(data:image/png;base64,")[1].rstrip(")")
    return Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")


def test_the_overlay_draws_the_gold_box_green_and_the_best_predicted_red_with_the_iou(tmp_path):
    draw(tmp_path / "plan.png", size=(80, 60))  # white, enlarged 4 times to fit 320 x 240
    predicted = [[20, 0, 50, 10], [0, 40, 5, 45]]
    boxes = json.dumps([{"image": "plan.png", "box": box} for box in predicted])
    lines = overlay_markdown({"boxes": boxes}, TRUTH, tmp_path)
    assert lines[1] == "**Overlay**: plan.png: gold boxes green, the best predicted red; IoU 0.33, 0.00"
    image = _drawn(lines)
    assert image.size == OVERLAY_SIZE
    assert image.getpixel((4 * 30 - 2, 20)) == (26, 152, 80)  # the gold box's right edge (#1a9850)
    assert image.getpixel((4 * 50 - 1, 20)) == (215, 48, 39)  # the predicted box's right edge (#d73027)
    assert image.getpixel((4 * 2, 4 * 42)) == (255, 255, 255)  # a box overlapping no gold box: not drawn
    # no boxes returned: the gold alone, the IoU absent; an image not found is said, not drawn
    assert overlay_markdown({"boxes": None}, TRUTH, tmp_path)[1].endswith("IoU – (none returned)")
    assert "was not found at" in overlay_markdown({"boxes": boxes}, TRUTH, tmp_path / "elsewhere")[1]
    (tmp_path / "bad" / "plan.png").parent.mkdir()
    (tmp_path / "bad" / "plan.png").write_bytes(b"not a png")
    assert "cannot be read" in overlay_markdown({"boxes": boxes}, TRUTH, tmp_path / "bad")[1]
    unboxed = {"gold_images": ["plan.png"], "gold_boxes": None}
    assert overlay_markdown({"boxes": boxes}, unboxed, tmp_path) == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.tuples(st.integers(1, 3000), st.integers(1, 3000)),
    st.lists(st.tuples(*[st.integers(-20, 3100)] * 4), max_size=3),
)
def test_an_overlay_is_small_whatever_the_image_and_boxes(tmp_path, size, boxes):
    """Any image size (a sliver, a poster) fits OVERLAY_SIZE; boxes past the edges or inverted draw."""
    source = draw(tmp_path / "any.png", size=size)
    data = overlay_png(source, boxes, boxes)
    with Image.open(io.BytesIO(data)) as image:
        assert image.width <= OVERLAY_SIZE[0] and image.height <= OVERLAY_SIZE[1]
        assert image.width == OVERLAY_SIZE[0] or image.height == OVERLAY_SIZE[1]  # it fills one side
    assert len(data) <= OVERLAY_BYTES


def test_a_busy_photo_is_drawn_smaller_until_its_overlay_is_small(tmp_path):
    """Noise compresses worst: the overlay shrinks until it is at most OVERLAY_BYTES, so three
    on the scores' page keep its metadata small whatever the images."""
    import random

    rng = random.Random(0)
    noise = Image.new("RGB", (800, 600))
    noise.putdata([(rng.randrange(256), rng.randrange(256), rng.randrange(256)) for _ in range(800 * 600)])
    noise.save(tmp_path / "photo.png")
    data = overlay_png(tmp_path / "photo.png", [(100, 100, 400, 300)], [(120, 100, 400, 320)])
    with Image.open(io.BytesIO(data)) as image:
        assert len(data) <= OVERLAY_BYTES and 32 <= image.width < OVERLAY_SIZE[0]
