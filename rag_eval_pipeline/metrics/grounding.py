"""Image retrieval and visual grounding metrics: which images an answer was given from, and
whether the regions it points at are the gold ones.

A box is ``(x0, y0, x1, y1)`` in pixels with exclusive ends (x0 < x1, y0 < y1). Every metric
returns ``None`` (absent) rather than 0 when the case has no gold images or boxes, or when the
agent does not say what it needs (no images, boxes or heat maps mapped); each docstring says when.
The definitions are written out in docs/judges-and-statistics.md.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rag_eval_pipeline.metrics.reference import context_precision
from rag_eval_pipeline.metrics.scales import THREE_POINT, MetricScale, per_item

Box = tuple[int, int, int, int]
# the judgement list's columns of image labels (data/visual_labels.py writes them)
GOLD_IMAGES, GOLD_BOXES, GOLD_IMAGE_SIZES = "gold_images", "gold_boxes", "gold_image_sizes"
GROUNDING_IOU = 0.5  # RefCOCO's convention: a box is found when its IoU with the gold is >= 0.5
IMAGE_PREFIX = "image:"  # the passage id of an image's caption: ``image:<its id>``
IMAGE_METRICS = (
    "image_context_precision",
    "image_context_recall",
    "grounding_accuracy",
    "grounding_miou",
    "pointing_accuracy",
)
# what a vision judge (judges/vision.py) gives a case: here, beside the image metrics, so that the
# summary's breakdowns and the report name them without importing a judge
VISION_METRICS = ("visual_relevance", "image_text_consistency")
# their scales, read by the vision judge and the checks alike: visual relevance is one verdict per
# judged image (0 / 0.5 / 1), stored as the case's mean on [0, 1] with the verdicts kept apart;
# image-text consistency is one verdict on all the images
VISION_SCALES: dict[str, MetricScale] = {
    "visual_relevance": per_item("image"),
    "image_text_consistency": THREE_POINT,
}


def iou_text(value: float) -> str:
    """An IoU as shown, to two decimals rounded down: a box under ``GROUNDING_IOU`` (0.4988)
    never reads as one on it ("0.50") beside "not found"."""
    return f"{math.floor(value * 100 + 1e-9) / 100:.2f}"


def image_passage_id(image_id: str) -> str:
    return f"{IMAGE_PREFIX}{image_id}"


def image_of_passage(passage_id: str) -> str | None:
    """The image a retrieved passage is the caption of (None: a text passage); a long
    caption's chunk ``image:<id>#<n>`` is its image's."""
    if not passage_id.startswith(IMAGE_PREFIX):
        return None
    return re.sub(r"#\d+$", "", passage_id[len(IMAGE_PREFIX) :])


def images_of_passages(passage_ids: Sequence[str]) -> list[str]:
    """The images among retrieved passages, in rank order, each once."""
    return list(dict.fromkeys(i for p in passage_ids if (i := image_of_passage(p)) is not None))


@dataclass(frozen=True)
class PredictedBox:
    """A region an agent says it looked at: its image, the box and the agent's own score."""

    image: str
    box: Box
    score: float | None = None


@dataclass(frozen=True)
class VisualAnswer:
    """What an answer says it looked at; None in a field: the agent does not say (absent)."""

    images: tuple[str, ...] | None = None
    boxes: tuple[PredictedBox, ...] | None = None
    heatmaps: Mapping[str, str] | None = None  # image id -> a path or data URI of a grayscale PNG

    @property
    def empty(self) -> bool:
        return self.images is None and self.boxes is None and self.heatmaps is None


@dataclass(frozen=True)
class VisualLabels:
    """A case's gold images and boxes, with each labelled image's (width, height)."""

    images: tuple[str, ...] = ()
    boxes: Mapping[str, tuple[Box, ...]] = field(default_factory=dict)
    sizes: Mapping[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.images and not any(self.boxes.values())


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes with exclusive ends (0.0 when they do not overlap)."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return 0.0
    inter = width * height
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union


def image_context_precision(retrieved: Sequence[str] | None, gold: Sequence[str]) -> float | None:
    """``context_precision`` (RAGAS's rank-weighted definition) over image ids. None when the
    case has no gold images, the agent says nothing of images, or it returned none."""
    if retrieved is None:
        return None
    return context_precision(list(retrieved), list(gold))


def image_context_recall(retrieved: Sequence[str] | None, gold: Sequence[str]) -> float | None:
    """Share of the gold images among those retrieved. None when the case has no gold images
    or the agent says nothing of images; no image retrieved scores 0.0."""
    wanted = set(gold)
    if not wanted or retrieved is None:
        return None
    return len(wanted & set(retrieved)) / len(wanted)


def best_ious(
    gold: Mapping[str, Sequence[Box]], predicted: Sequence[PredictedBox]
) -> list[tuple[str, Box, float]]:
    """Each gold box with the highest IoU of a predicted box on the same image (0.0 if none)."""
    out = []
    for image, boxes in gold.items():
        on_image = [p.box for p in predicted if p.image == image]
        for box in boxes:
            out.append((image, box, max((iou(box, p) for p in on_image), default=0.0)))
    return out


def grounding_accuracy(
    gold: Mapping[str, Sequence[Box]], predicted: Sequence[PredictedBox] | None
) -> float | None:
    """Share of gold boxes whose best-matching predicted box on the same image has IoU >= 0.5.
    None when the case has no gold boxes or the agent returns no boxes at all (not mapped)."""
    matched = best_ious(gold, predicted) if predicted is not None else []
    if not matched:
        return None
    return sum(1 for *_, value in matched if value >= GROUNDING_IOU) / len(matched)


def grounding_miou(
    gold: Mapping[str, Sequence[Box]], predicted: Sequence[PredictedBox] | None
) -> float | None:
    """Mean over the gold boxes of their best IoU with a predicted box on the same image (0.0
    where there is none). None when the case has no gold boxes or the agent returns no boxes."""
    matched = best_ious(gold, predicted) if predicted is not None else []
    if not matched:
        return None
    return sum(value for *_, value in matched) / len(matched)


def inside(point: tuple[int, int], box: Box) -> bool:
    x, y = point
    return box[0] <= x < box[2] and box[1] <= y < box[3]


def pointing_accuracy(
    gold: Mapping[str, Sequence[Box]], peaks: Mapping[str, tuple[int, int]] | None
) -> float | None:
    """The pointing game: over the images with gold boxes, the share whose heat map's maximum
    (``peaks``: image -> (x, y), the first maximal pixel in reading order) lies inside one of
    their gold boxes; an image without a heat map is a miss. None when the case has no gold
    boxes or the agent returns no heat maps at all."""
    labelled = [image for image, boxes in gold.items() if boxes]
    if not labelled or peaks is None:
        return None
    hits = sum(
        1 for image in labelled if image in peaks and any(inside(peaks[image], b) for b in gold[image])
    )
    return hits / len(labelled)


def image_scores(
    labels: VisualLabels, answer: VisualAnswer, peaks: Mapping[str, tuple[int, int]] | None
) -> dict[str, float | None]:
    """Every image metric of one case (all absent for a case without gold images or boxes)."""
    boxes = {image: tuple(b) for image, b in labels.boxes.items() if b}
    gold_images = list(dict.fromkeys([*labels.images, *boxes]))
    return {
        "image_context_precision": image_context_precision(answer.images, gold_images),
        "image_context_recall": image_context_recall(answer.images, gold_images),
        "grounding_accuracy": grounding_accuracy(boxes, answer.boxes),
        "grounding_miou": grounding_miou(boxes, answer.boxes),
        "pointing_accuracy": pointing_accuracy(boxes, peaks),
    }


# ---- stored forms: the tables keep these as JSON text (parquet has no dict of lists of boxes)


def boxes_json(boxes: Mapping[str, Sequence[Box]] | None) -> str | None:
    return None if not boxes else json.dumps({k: [list(b) for b in v] for k, v in boxes.items()})


def boxes_of_json(text: Any) -> dict[str, tuple[Box, ...]]:
    if not isinstance(text, str) or not text:
        return {}
    return {k: tuple(tuple(int(c) for c in b) for b in v) for k, v in json.loads(text).items()}  # type: ignore[misc]


def predicted_json(boxes: Sequence[PredictedBox] | None) -> str | None:
    if boxes is None:
        return None
    return json.dumps([{"image": p.image, "box": list(p.box), "score": p.score} for p in boxes])


def predicted_of_json(text: Any) -> tuple[PredictedBox, ...] | None:
    if not isinstance(text, str) or not text:
        return None
    return tuple(
        PredictedBox(str(p["image"]), tuple(int(c) for c in p["box"]), p.get("score"))  # type: ignore[arg-type]
        for p in json.loads(text)
    )
