"""The grounding judge: image retrieval and visual grounding from the judgement list's gold
images and boxes, no LLM (the formulas are ``metrics/grounding.py``). It joins every run whose
judgement list labels images; on a case without such labels each of its metrics is absent."""

from __future__ import annotations

import base64
import binascii
import io
import json
import math
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from rag_eval_pipeline.judges.base import JudgeCase, JudgeOutcome
from rag_eval_pipeline.metrics.grounding import (
    GOLD_BOXES,
    GOLD_IMAGE_SIZES,
    GOLD_IMAGES,
    IMAGE_METRICS,
    VisualAnswer,
    VisualLabels,
    boxes_of_json,
    image_scores,
    predicted_of_json,
)

GROUNDING_JUDGE_ID = "grounding"


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def case_labels(case: Mapping[str, Any]) -> VisualLabels:
    """A joined case row's gold images, boxes and image sizes (none for a text-only case)."""
    images = case.get(GOLD_IMAGES)
    sizes = case.get(GOLD_IMAGE_SIZES)
    return VisualLabels(
        () if _missing(images) else tuple(str(i) for i in images),
        boxes_of_json(case.get(GOLD_BOXES)),
        {k: (int(v[0]), int(v[1])) for k, v in json.loads(sizes).items()} if isinstance(sizes, str) else {},
    )


def case_visual(case: Mapping[str, Any]) -> VisualAnswer | None:
    """What a candidate answer's row says it looked at (None: nothing, or a table stored before)."""
    images, heatmaps = case.get("images"), case.get("heatmaps")
    answer = VisualAnswer(
        None if _missing(images) else tuple(str(i) for i in images),
        predicted_of_json(case.get("boxes")),
        json.loads(heatmaps) if isinstance(heatmaps, str) else None,
    )
    return None if answer.empty else answer


def has_image_labels(judgement_list: Any) -> bool:
    """Whether any case labels an image: the grounding judge then joins the run's judges."""
    return GOLD_IMAGE_SIZES in judgement_list and bool(judgement_list[GOLD_IMAGE_SIZES].notna().any())


def with_grounding(judge_ids: Sequence[str], labelled: bool) -> list[str]:
    """The run's judges, the grounding judge added when the judgement list labels images."""
    return (
        [*judge_ids, GROUNDING_JUDGE_ID]
        if labelled and GROUNDING_JUDGE_ID not in judge_ids
        else list(judge_ids)
    )


def reads_images(specs: Sequence[Any]) -> bool:
    """Whether a judge of the run reads the knowledge base's images (a vision judge)."""
    return any(getattr(s, "kind", None) == "vision" for s in specs)


def heatmap_bytes(source: str) -> bytes:
    """A heat map's PNG bytes from a ``data:image/png;base64,...`` URI or an absolute file path
    (a relative one is a ValueError: relative to what?)."""
    if source.startswith("data:"):
        header, _, payload = source.partition(",")
        if ";base64" not in header:
            raise ValueError("a heat map data URI must be base64")
        try:
            return base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("the heat map data URI is not valid base64") from None
    path = Path(source)
    if not path.is_absolute():  # not wherever rag-eval happens to run
        raise ValueError(
            f"relative path {source!r}: an agent's reply gives a data URI or an absolute path "
            "(an answers file's paths are read relative to its folder)"
        )
    return path.read_bytes()


def heatmap_peak(data: bytes, size: tuple[int, int] | None) -> tuple[int, int]:
    """(x, y) of the heat map's maximum: its first maximal pixel in reading order, as a
    grayscale image; a ValueError when it is not an image of ``size``."""
    import numpy as np

    from rag_eval_pipeline.data.images import pillow

    image_module = pillow()
    try:
        with image_module.open(io.BytesIO(data)) as image:
            gray = np.asarray(image.convert("L"))
    except Exception as err:  # Pillow's many kinds of bad data
        raise ValueError(f"not a readable image ({err})") from None
    height, width = gray.shape
    if size is not None and (width, height) != tuple(size):
        raise ValueError(f"is {width}x{height}, not its image's {size[0]}x{size[1]}")
    y, x = np.unravel_index(int(np.argmax(gray)), gray.shape)
    return int(x), int(y)


class GroundingJudge:
    """Image context precision and recall against the gold images; grounding accuracy, mIoU and
    the pointing game against the gold boxes. An image id the knowledge base does not hold, or
    a heat map that cannot be read, is a note on its case (the rest of the case is scored; a bad
    heat map leaves pointing absent, never a miss)."""

    judge_id = GROUNDING_JUDGE_ID
    kind = "grounding"
    metrics = IMAGE_METRICS
    reference_free_metrics = IMAGE_METRICS  # gold images and boxes, not the reference answer
    prompt_version = None

    def __init__(self, known_images: Collection[str] | None = None) -> None:
        self._known = None if known_images is None else frozenset(known_images)

    async def judge(self, case: JudgeCase) -> JudgeOutcome:
        return self.score(case)

    def score(self, case: JudgeCase) -> JudgeOutcome:
        answer = case.visual or VisualAnswer()
        notes = self._unknown(answer)
        peaks: dict[str, tuple[int, int]] | None = None
        bad_heatmap = False
        if answer.heatmaps is not None and not case.gold_visual.empty:
            peaks = {}
            for image, source in answer.heatmaps.items():
                try:
                    data = heatmap_bytes(source)  # answers files' paths made absolute on reading
                    peaks[image] = heatmap_peak(data, case.gold_visual.sizes.get(image))
                except (OSError, ValueError) as err:
                    notes.append(f"heat map of {image}: {err}")
                    bad_heatmap = True
        scores = image_scores(case.gold_visual, answer, peaks)
        if bad_heatmap:
            scores["pointing_accuracy"] = None
        return JudgeOutcome(scores, notes=notes)

    def _unknown(self, answer: VisualAnswer) -> list[str]:
        if self._known is None:
            return []
        named = [*(answer.images or ()), *(b.image for b in answer.boxes or ()), *(answer.heatmaps or {})]
        return [
            f"the reply names image '{image}', not an image of the knowledge base"
            for image in dict.fromkeys(named)
            if image not in self._known
        ]
