"""What an agent says it looked at, read through its reply mapping: ``images`` (the ranked ids it
retrieved or used), ``boxes`` (``[{"image", "box": [x0, y0, x1, y1], "score"?}]``) and
``heatmaps`` (``{image_id: a path or data URI of a grayscale PNG of the image's size}``).

Each field is optional in a reply: a path that finds nothing leaves it unknown (its metrics
absent, never 0); a value of the wrong shape is an error naming the path.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from jsonpath_ng.exceptions import JSONPathError
from jsonpath_ng.ext import parse

from rag_eval_pipeline.metrics.grounding import (
    PredictedBox,
    VisualAnswer,
    boxes_of_json,
    images_of_passages,
    predicted_json,
)

# candidate_answers' columns of what an answer looked at: image ids (a list; None: not said),
# boxes and heat maps as JSON text (None: not said)
VISUAL_COLUMNS = ["images", "boxes", "heatmaps"]


class VisualReplyError(ValueError):
    """An images, boxes or heat-maps field of the wrong shape, naming its path."""


def _compiled(path: str | None) -> tuple[str, Any] | None:
    if path is None:
        return None
    try:
        return path, parse(path)
    except (JSONPathError, Exception) as err:  # the lexer raises plain exceptions on odd characters
        raise ValueError(f"JSONPath {path!r} does not compile: {err}") from None


def _value(field: tuple[str, Any] | None, document: Any) -> Any:
    """What the path finds (a single list found is the list), or None when it finds nothing."""
    if field is None:
        return None
    found = [m.value for m in field[1].find(document)]
    if not found or found == [None]:
        return None
    return found[0] if len(found) == 1 else found


def _box(value: Any, where: str) -> tuple[int, int, int, int]:
    if not isinstance(value, list | tuple) or len(value) != 4:
        raise VisualReplyError(f"{where}: a box is [x0, y0, x1, y1], got {value!r}")
    try:
        x0, y0, x1, y1 = (round(float(c)) for c in value)
    except (TypeError, ValueError):
        raise VisualReplyError(f"{where}: a box is four numbers, got {value!r}") from None
    if not (x0 < x1 and y0 < y1):
        raise VisualReplyError(f"{where}: box {value!r} needs x0 < x1 and y0 < y1")
    return x0, y0, x1, y1


@dataclass(frozen=True)
class VisualMapping:
    """The compiled paths of the three fields (None: not mapped, the field is unknown).
    ``heatmap_folder``: where a relative heat-map path is read from (an answers file's own
    folder); None for a live agent, whose relative paths stay as said and are refused by the
    grounding judge (a path means nothing on the evaluator's machine unless absolute)."""

    images: tuple[str, Any] | None = None
    boxes: tuple[str, Any] | None = None
    heatmaps: tuple[str, Any] | None = None
    heatmap_folder: Path | None = None

    @classmethod
    def of(cls, images: str | None, boxes: str | None, heatmaps: str | None) -> VisualMapping:
        return cls(_compiled(images), _compiled(boxes), _compiled(heatmaps))

    def relative_to(self, folder: Path) -> VisualMapping:
        """This mapping with relative heat-map paths read from ``folder``."""
        return replace(self, heatmap_folder=folder)

    def read(self, document: Any) -> VisualAnswer | None:
        """The reply's images, boxes and heat maps (None when it says nothing of any)."""
        answer = VisualAnswer(self._images(document), self._boxes(document), self._heatmaps(document))
        return None if answer.empty else answer

    def _images(self, document: Any) -> tuple[str, ...] | None:
        value = _value(self.images, document)
        if value is None:
            return None
        if isinstance(value, str):  # a CSV cell: ids separated by ';'
            value = [v.strip() for v in value.split(";") if v.strip()]
        values = value if isinstance(value, list | tuple) else [value]
        if not all(isinstance(v, str) for v in values):
            raise VisualReplyError(f"{self.images[0]}: images are a list of image ids, got {value!r}")  # type: ignore[index]
        return tuple(dict.fromkeys(values))

    def _boxes(self, document: Any) -> tuple[PredictedBox, ...] | None:
        value = _value(self.boxes, document)
        if value is None:
            return None
        path = self.boxes[0]  # type: ignore[index]
        values = value if isinstance(value, list | tuple) else [value]
        boxes = []
        for number, item in enumerate(values, start=1):
            if not isinstance(item, dict) or not isinstance(item.get("image"), str) or "box" not in item:
                raise VisualReplyError(f"{path}[{number}]: expected {{image, box, score?}}, got {item!r}")
            score = item.get("score")
            boxes.append(
                PredictedBox(
                    item["image"],
                    _box(item["box"], f"{path}[{number}]"),
                    float(score) if isinstance(score, int | float) else None,
                )
            )
        return tuple(boxes)

    def _heatmaps(self, document: Any) -> dict[str, str] | None:
        value = _value(self.heatmaps, document)
        if value is None:
            return None
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise VisualReplyError(
                f"{self.heatmaps[0]}: heat maps are {{image_id: a path or data URI}}, got {str(value)[:80]!r}"  # type: ignore[index]
            )
        return {str(k): self._located(v) for k, v in value.items()}

    def _located(self, source: str) -> str:
        """A relative path made absolute against ``heatmap_folder`` (a data URI, an absolute
        path, or a relative one with no folder to read it from, as said)."""
        if self.heatmap_folder is None or source.startswith("data:") or Path(source).is_absolute():
            return source
        return str(self.heatmap_folder / source)

    def preview(self, document: Any) -> list[tuple[str, str, str]]:
        rows = []
        for name in ("images", "boxes", "heatmaps"):
            mapped = getattr(self, name)
            if mapped is None:
                rows.append((name, "(not mapped)", ""))
            else:
                value = _value(mapped, document)
                rows.append((name, mapped[0], "(nothing found)" if value is None else repr(value)[:300]))
        return rows


def visual_columns(visual: VisualAnswer | None, passage_ids: list[str] | None = None) -> dict[str, Any]:
    """A case's stored images, boxes and heat maps: what the answer returned, else (a model of
    ours) the images whose captions its retrieval found, in rank order."""
    images = visual.images if visual is not None and visual.images is not None else None
    heatmaps = visual.heatmaps if visual is not None else None
    if images is None and passage_ids is not None:
        images = tuple(images_of_passages(passage_ids))
    return {
        "images": None if images is None else list(images),
        "boxes": predicted_json(visual.boxes if visual is not None else None),
        "heatmaps": None if heatmaps is None else json.dumps(dict(heatmaps)),
    }


def gold_visual(case: Mapping[str, Any]) -> VisualAnswer | None:
    """A judgement-list case's gold images and boxes as an answer (what the oracle returns)."""
    images = case.get("gold_images")
    boxes = boxes_of_json(case.get("gold_boxes"))
    listed = [] if images is None or (isinstance(images, float)) else [str(i) for i in images]
    if not listed and not boxes:
        return None
    ranked = tuple(dict.fromkeys([*listed, *boxes]))
    return VisualAnswer(ranked, tuple(PredictedBox(i, b) for i, bs in boxes.items() for b in bs), None)
