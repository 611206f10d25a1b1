"""A judgement list's image labels: ``gold_images`` (image ids, a list or ';'-separated text) and
``gold_boxes`` (``{image_id: [[x0, y0, x1, y1], ...]}`` in pixels, exclusive ends, x0 < x1,
y0 < y1), each checked against the image catalog: the image exists and is readable, the box
lies inside its size. Every problem names the row, so one pass fixes them all."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rag_eval_pipeline.data.rows import cell_list, empty_cell
from rag_eval_pipeline.metrics.grounding import GOLD_BOXES, GOLD_IMAGE_SIZES, GOLD_IMAGES, Box, boxes_json

VISUAL_LABEL_COLUMNS = [GOLD_IMAGES, GOLD_BOXES, GOLD_IMAGE_SIZES]


def _box(value: Any) -> Box | None:
    if hasattr(value, "tolist"):
        value = value.tolist()
    if not isinstance(value, list | tuple) or len(value) != 4:
        return None
    if not all(
        isinstance(c, int | float) and not isinstance(c, bool) and float(c).is_integer() for c in value
    ):
        return None
    return tuple(int(c) for c in value)  # type: ignore[return-value]


def visual_labels(
    row: Mapping[str, Any], location: str, sizes: Mapping[str, tuple[int, int]] | None, problems: list[str]
) -> dict[str, Any]:
    """The row's image labels as stored (ids, boxes as JSON, each labelled image's size as
    JSON); each bad id or box is a problem naming ``location``. ``sizes`` is every usable image
    of the catalog (None: the knowledge base holds no images)."""
    known = sizes or {}
    images = list(dict.fromkeys(cell_list(row.get(GOLD_IMAGES))))
    for image in images:
        if image not in known:
            problems.append(
                f"{location}: gold image '{image}' is not a readable image of the documents folder"
            )
    raw = row.get(GOLD_BOXES)
    if isinstance(raw, str) and raw.strip():
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as err:
            problems.append(f"{location}: gold_boxes is not JSON ({err.msg})")
            raw = None
    boxes: dict[str, list[Box]] = {}
    if not empty_cell(raw) and raw is not None:
        if not isinstance(raw, Mapping):
            problems.append(f"{location}: gold_boxes must be {{image_id: [[x0, y0, x1, y1], ...]}}")
            raw = {}
        for image, listed in raw.items():
            if image not in known:
                problems.append(
                    f"{location}: gold box image '{image}' is not a readable image of the documents folder"
                )
                continue
            width, height = known[image]
            if hasattr(listed, "tolist"):
                listed = listed.tolist()
            for value in listed if isinstance(listed, list) else [listed]:
                box = _box(value)
                if box is None:
                    problems.append(
                        f"{location}: gold box {value!r} of '{image}' is not [x0, y0, x1, y1] in whole pixels"
                    )
                elif not (0 <= box[0] < box[2] <= width and 0 <= box[1] < box[3] <= height):
                    problems.append(
                        f"{location}: gold box {list(box)} of '{image}' is not inside its "
                        f"{width}x{height} pixels (x0 < x1 <= width, y0 < y1 <= height, ends exclusive)"
                    )
                else:
                    boxes.setdefault(image, []).append(box)
    labelled = list(dict.fromkeys([*images, *boxes]))
    return {
        GOLD_IMAGES: images,
        GOLD_BOXES: boxes_json(boxes),
        GOLD_IMAGE_SIZES: json.dumps({i: list(known[i]) for i in labelled if i in known})
        if labelled
        else None,
    }
