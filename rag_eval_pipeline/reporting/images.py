"""Where people look at images: each labelled image with its gold boxes and every model's
predicted boxes drawn over it (one SVG overlay referring to the image file, never a copy of its
bytes per model), the IoU of each box, and the image metrics of each model. ``explain`` prints
the same per case."""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from rag_eval_pipeline.metrics.grounding import (
    GOLD_BOXES,
    GOLD_IMAGE_SIZES,
    GOLD_IMAGES,
    GROUNDING_IOU,
    IMAGE_METRICS,
    VISION_METRICS,
    Box,
    PredictedBox,
    boxes_of_json,
    iou,
    iou_text,
    predicted_of_json,
)
from rag_eval_pipeline.metrics.settings import OVERALL

GOLD_COLOUR = "#1a9850"
MODEL_COLOURS = ("#d73027", "#4575b4", "#fdae61", "#984ea3", "#00a0b0", "#8c510a")
MAX_CASES_SHOWN = 20  # labelled cases drawn in the report (the rest are in explain)
DISPLAY_WIDTH = 720  # a report's copy of an image is at most this wide: it is shown, not studied
IMAGES_FOLDER = "images"  # beside the report, under the artifacts folder (`rag-eval ui` serves it)
# a case entry's overlay on the asset page: small enough that a few stay well inside the
# metadata's budget (a palette PNG of a few kilobytes), large enough to see where each box is
OVERLAY_SIZE = (320, 240)
OVERLAY_COLOURS = 32
OVERLAY_BYTES = 8_000  # at most, each: a photo is drawn smaller until it fits (a drawing never needs to)
OVERLAY_CASES = 3  # the worst image cases drawn on the scores' page; the others: explain, the report


@dataclass(frozen=True)
class DisplayImage:
    """A document image as the report shows it: a copy at most ``DISPLAY_WIDTH`` wide, named by
    its content (written once beside the report, inlined by ``--single-file``)."""

    path: str  # relative to the artifacts folder
    original: tuple[int, int]
    shown: tuple[int, int]
    make: Callable[[], bytes]


def display_image(source: Path) -> DisplayImage:
    """The display copy of ``source`` (PNG where it has transparency or a palette, else JPEG)."""
    from PIL import Image

    data = source.read_bytes()
    with Image.open(io.BytesIO(data)) as image:
        original, mode = image.size, image.mode
    scale = min(1.0, DISPLAY_WIDTH / original[0])
    shown = (max(1, round(original[0] * scale)), max(1, round(original[1] * scale)))
    kind = "png" if mode in ("P", "PA", "RGBA", "LA", "1") else "jpeg"

    def make() -> bytes:
        with Image.open(io.BytesIO(data)) as image:
            copy = image.resize(shown) if shown != original else image.copy()
            out = io.BytesIO()
            if kind == "jpeg":
                copy.convert("RGB").save(out, "JPEG", quality=85)
            else:
                copy.save(out, "PNG", optimize=True)
            return out.getvalue()

    extension = "png" if kind == "png" else "jpg"
    name = f"{IMAGES_FOLDER}/{hashlib.sha256(data).hexdigest()[:16]}-{shown[0]}.{extension}"
    return DisplayImage(name, original, shown, make)


@dataclass(frozen=True)
class ImageSection:
    """The report's images section and the display copies it refers to (path -> bytes)."""

    html: str = ""
    files: Mapping[str, Callable[[], bytes]] = field(default_factory=dict)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and pd.isna(value))


def _sizes(truth: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    text = truth.get(GOLD_IMAGE_SIZES)
    return {k: (int(v[0]), int(v[1])) for k, v in json.loads(text).items()} if isinstance(text, str) else {}


def best_match(box: Box, predicted: Sequence[PredictedBox], image: str) -> tuple[float, Box | None]:
    """The predicted box on ``image`` with the highest IoU with ``box`` (0.0 and None if none
    overlaps it)."""
    scored = [(iou(box, p.box), p.box) for p in predicted if p.image == image]
    value, best = max(scored, default=(0.0, None))
    return (value, best) if value > 0 else (0.0, None)


def overlay_png(source: Path, gold: Sequence[Box], predicted: Sequence[Box]) -> bytes:
    """``source`` scaled to fit ``OVERLAY_SIZE`` (a small drawing enlarged, pixels kept sharp)
    with the predicted boxes (red) and the gold boxes (green) over it, as a palette PNG of at
    most ``OVERLAY_BYTES`` (a busy photo drawn smaller until it is): the picture a case's entry
    on the asset page shows inline, whatever the image. Boxes are in the image's own pixels,
    ends exclusive."""
    from PIL import Image

    with Image.open(source) as image:
        original = image.convert("RGB")
    scale = min(OVERLAY_SIZE[0] / original.width, OVERLAY_SIZE[1] / original.height)
    while True:
        data = _drawn_png(original, scale, gold, predicted)
        if len(data) <= OVERLAY_BYTES or max(original.width, original.height) * scale < 64:
            return data
        scale *= 0.7


def _drawn_png(original, scale: float, gold: Sequence[Box], predicted: Sequence[Box]) -> bytes:
    from PIL import Image, ImageDraw

    shown = (max(1, round(original.width * scale)), max(1, round(original.height * scale)))
    sampling = Image.Resampling.NEAREST if scale > 1 else Image.Resampling.BILINEAR
    canvas = original.resize(shown, sampling)
    draw = ImageDraw.Draw(canvas)
    # the predicted boxes wider and first: where one is the gold box, both edges still show
    for boxes, colour, width in ((predicted, MODEL_COLOURS[0], 4), (gold, GOLD_COLOUR, 2)):
        for x0, y0, x1, y1 in boxes:
            corners = [round(x0 * scale), round(y0 * scale), round(x1 * scale) - 1, round(y1 * scale) - 1]
            corners[2], corners[3] = max(corners[0], corners[2]), max(corners[1], corners[3])
            draw.rectangle(corners, outline=colour, width=width)
    out = io.BytesIO()
    canvas.quantize(OVERLAY_COLOURS).save(out, "PNG", optimize=True)
    return out.getvalue()


def overlay_markdown(
    answer: Mapping[str, Any], truth: Mapping[str, Any] | None, folder: str | Path | None
) -> list[str]:
    """Markdown lines drawing a case's first gold image that has boxes, with its gold boxes and
    the predicted box that overlaps each most, and their IoU: an inline PNG (a data URI, which
    Dagster's UI shows in a markdown entry). Said in words, not drawn, when the image is not in
    ``folder`` or cannot be read; empty for a case without gold boxes."""
    gold_boxes = boxes_of_json(truth.get(GOLD_BOXES)) if truth is not None else {}
    image = next((name for name, boxes in gold_boxes.items() if boxes), None)
    if image is None:
        return []
    predicted = predicted_of_json(answer.get("boxes"))
    matches = [best_match(box, predicted or (), image) for box in gold_boxes[image]]
    best = [box for _, box in matches if box is not None]
    ious = "– (none returned)" if predicted is None else ", ".join(iou_text(value) for value, _ in matches)
    caption = f"{image}: gold boxes green, the best predicted red; IoU {ious}"
    source = Path(folder) / image if folder else None
    if source is None or not source.is_file():
        where = f"at {source}" if source else "(no documents folder set)"
        return ["", f"**Overlay**: {caption} (not drawn: {image} was not found {where})"]
    try:
        drawn = base64.b64encode(overlay_png(source, gold_boxes[image], best)).decode()
    except (OSError, ValueError) as err:  # Pillow's UnidentifiedImageError is an OSError
        reason = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else 'unreadable'}"
        return ["", f"**Overlay**: {caption} (not drawn: {image} cannot be read, {reason})"]
    alt = f"{image} with its gold and predicted boxes"
    return ["", f"**Overlay**: {caption}", "", f"![{alt}](data:image/png;base64,{drawn})"]


def image_lines(
    answer: Mapping[str, Any], truth: Mapping[str, Any], catalog: pd.DataFrame | None = None
) -> list[str]:
    """A case's images in plain text: what was retrieved, each gold box with its best predicted
    box and IoU, and each image's sha256 and size (never its bytes)."""
    gold_images = [] if _missing(truth.get(GOLD_IMAGES)) else list(truth[GOLD_IMAGES])
    gold_boxes = boxes_of_json(truth.get(GOLD_BOXES))
    images = answer.get("images")
    predicted = predicted_of_json(answer.get("boxes"))
    if not gold_images and not gold_boxes and (images is None or _missing(images) or not len(images)):
        return []
    hashes = {} if catalog is None else dict(zip(catalog["image_id"], catalog["sha256"]))
    sizes = _sizes(truth)
    lines = ["", "images:"]
    shown = (
        "not said (image metrics absent)"
        if images is None or _missing(images)
        else ", ".join(images) or "none"
    )
    lines.append(f"  retrieved: {shown}")
    for image in dict.fromkeys([*gold_images, *gold_boxes]):
        size = sizes.get(image)
        about = ", ".join(
            part
            for part in (
                f"sha256 {hashes[image][:12]}" if image in hashes else "",
                f"{size[0]}x{size[1]}" if size else "",
            )
            if part
        )
        found = (
            "retrieved"
            if images is not None and not _missing(images) and image in list(images)
            else "NOT retrieved"
        )
        lines.append(f"  [GOLD] {image} ({about}): {found}")
        for box in gold_boxes.get(image, ()):
            value, best = best_match(box, predicted or (), image)
            matched = (
                f"best predicted {list(best)}, IoU {iou_text(value)}"
                if best
                else "no predicted box overlaps it, IoU 0.00"
            )
            lines.append(
                f"    gold box {list(box)}: {matched}{'' if value >= 0.5 else '  (missed: IoU < 0.5)'}"
            )
    if predicted is None and gold_boxes:
        lines.append("  boxes: none returned (grounding absent)")
    return lines


def overlay_svg(
    image: str,
    href: str,
    size: tuple[int, int],
    gold: Sequence[Box],
    predicted: Mapping[str, Sequence[tuple[Box, float]]],
    colours: Mapping[str, str] | None = None,
) -> str:
    """One SVG: the image (by reference) with the gold boxes in green and each model's boxes in
    its own colour (``colours``, the report's one per model), dashed, each titled with its IoU
    against the best gold box."""
    width, height = size
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{max(width, 240)}" role="img" aria-label="{html.escape(image)}">',
        f'<image href="{html.escape(href)}" x="0" y="0" width="{width}" height="{height}"/>' if href else "",
    ]
    stroke = max(1.0, max(width, height) / 200)
    for box in gold:
        parts.append(
            f'<rect class="gold" x="{box[0]}" y="{box[1]}" width="{box[2] - box[0]}" '
            f'height="{box[3] - box[1]}" fill="none" stroke="{GOLD_COLOUR}" '
            f'stroke-width="{stroke * 2:g}"><title>gold {list(box)}</title></rect>'
        )
    for n, (model, boxes) in enumerate(predicted.items()):
        colour = (colours or {}).get(model) or MODEL_COLOURS[n % len(MODEL_COLOURS)]
        for box, value in boxes:
            parts.append(
                f'<rect class="predicted" data-model="{html.escape(model)}" x="{box[0]}" y="{box[1]}" '
                f'width="{box[2] - box[0]}" height="{box[3] - box[1]}" fill="none" stroke="{colour}" '
                f'stroke-width="{stroke:g}" stroke-dasharray="{stroke * 3:g}">'
                f"<title>{html.escape(model)} {list(box)} IoU {iou_text(value)}</title></rect>"
            )
    parts.append("</svg>")
    return "".join(parts)


def _image_metric_table(summaries: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    rows = []
    for model, summary in sorted(summaries.items()):
        overall = summary[
            (summary["group"] == OVERALL) & summary["metric"].isin([*IMAGE_METRICS, *VISION_METRICS])
        ]
        for row in overall.to_dict(orient="records"):
            rows.append(
                {
                    "model": model,
                    "judge": row["judge_id"],
                    "metric": row["metric"],
                    "mean": row["mean"],
                    "n": row["n"],
                }
            )
    if not rows:
        return pd.DataFrame()
    table = pd.DataFrame(rows)
    pivot = table.pivot_table(index=["model", "judge"], columns="metric", values="mean", aggfunc="first")
    pivot.columns.name = None
    return pivot.reset_index()


def images_html(
    summaries: Mapping[str, pd.DataFrame],
    answers_by_model: Mapping[str, pd.DataFrame],
    judgement_list: pd.DataFrame,
    image_folder: str | Path | None,
    colours: Mapping[str, str] | None = None,
) -> ImageSection:
    """The report's "Images" section: each model's image metrics, then each labelled case's
    images with every model's boxes over the gold ones and the IoU of each (absent, "–", for a
    model that returned no boxes). Each image is a display copy beside the report, referred to
    by a relative path (served by `rag-eval ui`, inlined by `--single-file`); an image not found
    is said in its place. Empty when the judgement list labels no image."""
    if GOLD_IMAGE_SIZES not in judgement_list or not judgement_list[GOLD_IMAGE_SIZES].notna().any():
        return ImageSection()
    table = _image_metric_table(summaries)
    parts = [
        '<section id="images"><h2>Images</h2><p class="note">Image context precision and recall '
        "against the gold images, grounding accuracy (IoU >= 0.5) and mean IoU against the gold "
        "boxes, and the vision judges' verdicts (docs/judges-and-statistics.md). Below, each "
        "labelled image once, the gold boxes in green and each model's boxes dashed in its own "
        "colour; hover a box for its IoU.</p>",
        table.to_html(index=False, float_format=lambda v: f"{v:.3f}", na_rep="–") if not table.empty else "",
    ]
    files: dict[str, Callable[[], bytes]] = {}
    folder = Path(image_folder).resolve() if image_folder else None
    labelled = judgement_list[judgement_list[GOLD_IMAGE_SIZES].notna()].head(MAX_CASES_SHOWN)
    for truth in labelled.to_dict(orient="records"):
        gold_boxes = boxes_of_json(truth.get(GOLD_BOXES))
        for image, size in _sizes(truth).items():
            gold = gold_boxes.get(image, ())
            predicted, rows = _models_on_image(str(truth["qid"]), image, gold, answers_by_model)
            source = folder / image if folder else None
            shown = display_image(source) if source is not None and source.is_file() else None
            if shown is not None:
                files[shown.path] = shown.make
            parts.append(
                f'<figure class="overlay"><figcaption>{html.escape(str(truth["qid"]))}: {html.escape(image)} '
                f"({_size_note(size, shown)})</figcaption>{_missing_note(image, source, shown)}"
                + overlay_svg(image, shown.path if shown else "", size, gold, predicted, colours)
                + (
                    pd.DataFrame(rows).to_html(index=False, float_format=lambda v: f"{v:.2f}", na_rep="–")
                    if rows
                    else ""
                )
                + "</figure>"
            )
    parts.append("</section>")
    return ImageSection("".join(parts), files)


def _models_on_image(
    qid: str, image: str, gold: Sequence[Box], answers_by_model: Mapping[str, pd.DataFrame]
) -> tuple[dict[str, list[tuple[Box, float]]], list[dict[str, object]]]:
    """Each model's boxes on one image of the case, scored against the gold ones, and the rows of
    the table under the overlay: per gold box, the model's best match and its IoU."""
    predicted: dict[str, list[tuple[Box, float]]] = {}
    rows: list[dict[str, object]] = []
    for model, answers in sorted(answers_by_model.items()):
        case = answers[answers["qid"] == qid]
        if case.empty:
            continue
        returned = predicted_of_json(case.iloc[0]["boxes"]) if "boxes" in case else None
        boxes = [p for p in returned or () if p.image == image]
        predicted[model] = _scored(boxes, gold)
        for box in gold:
            value, best = best_match(box, boxes, image)
            rows.append(
                {
                    "model": model,
                    "gold box": str(list(box)),
                    # no boxes returned: nothing was measured, so the IoU is absent, not 0
                    "best predicted": (
                        str(list(best)) if best else "–" if returned is not None else "no boxes returned"
                    ),
                    "IoU": value if returned is not None else None,
                }
            )
    return predicted, rows


def _size_note(size: tuple[int, int], shown: DisplayImage | None) -> str:
    """The image's size, and the size it is shown at when the display copy is smaller."""
    if shown is not None and shown.shown != shown.original:
        return f"{size[0]}x{size[1]}; shown at {shown.shown[0]}x{shown.shown[1]}"
    return f"{size[0]}x{size[1]}"


def _missing_note(image: str, source: Path | None, shown: DisplayImage | None) -> str:
    """Said in the image's place when its file was not found: the boxes are drawn without it."""
    if shown is not None:
        return ""
    return (
        f'<p class="image-missing note">{html.escape(image)} was not found '
        f"{'at ' + html.escape(str(source)) if source else '(no documents folder set)'} "
        "when this report was built: its boxes are drawn without it.</p>"
    )


def _scored(boxes: Sequence[PredictedBox], gold: Sequence[Box]) -> list[tuple[Box, float]]:
    """Each predicted box with its IoU against the gold box it overlaps most."""
    return [(p.box, max((iou(p.box, g) for g in gold), default=0.0)) for p in boxes]


def case_overlays(
    qid: str, model: str, answers: pd.DataFrame, judgement_list: pd.DataFrame, catalog: pd.DataFrame
) -> dict[str, str]:
    """One SVG per labelled image of the case: its gold boxes and this model's boxes over the
    image (by reference to the file the ``image_catalog`` read), by a file name for it."""
    paths = dict(zip(catalog["image_id"], catalog["path"])) if "path" in catalog else {}
    truth = judgement_list[judgement_list["qid"] == qid]
    case = answers[answers["qid"] == qid]
    if truth.empty or GOLD_IMAGE_SIZES not in truth:
        return {}
    row = truth.iloc[0].to_dict()
    gold_boxes = boxes_of_json(row.get(GOLD_BOXES))
    boxes = predicted_of_json(case.iloc[0]["boxes"]) if not case.empty and "boxes" in case else None
    drawn = {}
    for image, size in _sizes(row).items():
        gold = gold_boxes.get(image, ())
        scored = _scored([p for p in boxes or () if p.image == image], gold)
        href = Path(paths[image]).as_uri() if image in paths else image
        drawn[f"{image.replace('/', '__')}.svg"] = overlay_svg(image, href, size, gold, {model: scored})
    return drawn


def has_image_labels(judgement_list: pd.DataFrame) -> bool:
    return GOLD_IMAGE_SIZES in judgement_list and bool(judgement_list[GOLD_IMAGE_SIZES].notna().any())


def case_image_label(answer: Mapping[str, Any], truth: Mapping[str, Any] | None) -> str:
    """A case's gold image in a few words, for a table of cases: ``plan.png (retrieved 2nd)``."""
    gold = [] if truth is None or _missing(truth.get(GOLD_IMAGES)) else list(truth[GOLD_IMAGES])
    gold = gold or list(boxes_of_json(truth.get(GOLD_BOXES)) if truth is not None else [])
    if not gold:
        return "–"
    images = answer.get("images")
    ranked = [] if images is None or _missing(images) else list(images)
    rank = next((n for n, image in enumerate(ranked, start=1) if image == gold[0]), None)
    said = (
        "not said"
        if images is None or _missing(images)
        else f"retrieved #{rank}"
        if rank
        else "NOT retrieved"
    )
    more = f" +{len(gold) - 1}" if len(gold) > 1 else ""
    return f"{gold[0]}{more} ({said})"


GROUNDING_COLUMNS = ["image", "gold box", "best predicted", "IoU", "found"]


def grounding_rows(answer: Mapping[str, Any], truth: Mapping[str, Any] | None) -> pd.DataFrame:
    """A case's gold boxes, each with the predicted box that overlaps it most and their IoU, and
    whether it counts as found (IoU >= 0.5), as the asset page's case entry shows them; a gold
    image without boxes is a row saying whether it was retrieved. Empty: the case labels no
    image. Boxes are absent ("none returned"), never an IoU of 0, when the answer gave none."""
    if truth is None:
        return pd.DataFrame(columns=GROUNDING_COLUMNS)
    gold_images = [] if _missing(truth.get(GOLD_IMAGES)) else list(truth[GOLD_IMAGES])
    gold_boxes = boxes_of_json(truth.get(GOLD_BOXES))
    images = answer.get("images")
    retrieved = [] if images is None or _missing(images) else list(images)
    predicted = predicted_of_json(answer.get("boxes"))
    rows = []
    for image in dict.fromkeys([*gold_images, *gold_boxes]):
        boxes = gold_boxes.get(image, ())
        if not boxes:
            said = (
                "not said"
                if images is None or _missing(images)
                else "retrieved"
                if image in retrieved
                else "NOT retrieved"
            )
            rows.append({"image": image, "gold box": "–", "best predicted": "–", "IoU": "–", "found": said})
        for box in boxes:
            if predicted is None:
                absent = {"best predicted": "none returned", "IoU": "–", "found": "absent"}
                rows.append({"image": image, "gold box": str(list(box)), **absent})
                continue
            value, best = best_match(box, predicted, image)
            rows.append(
                {
                    "image": image,
                    "gold box": str(list(box)),
                    "best predicted": str(list(best)) if best else "none overlaps",
                    "IoU": iou_text(value),
                    "found": "yes" if value >= GROUNDING_IOU else "no",
                }
            )
    return pd.DataFrame(rows, columns=GROUNDING_COLUMNS)


def gold_images_read(answer: Mapping[str, Any], truth: Mapping[str, Any] | None) -> str | None:
    """``1/2 (#3)``: of a case's gold images, how many the answer retrieved, and the rank of the
    first it retrieved (None: the case labels none; ``?/2`` when the answer did not say which
    images it read). A table of cases' `gold` cell on an image case: the rank there keeps the
    table narrow, the image's name is in the case's entry."""
    if truth is None:
        return None
    gold = [] if _missing(truth.get(GOLD_IMAGES)) else list(truth[GOLD_IMAGES])
    gold = list(dict.fromkeys([*gold, *boxes_of_json(truth.get(GOLD_BOXES))]))
    if not gold:
        return None
    images = answer.get("images")
    if images is None or _missing(images):
        return f"?/{len(gold)}"
    ranks = [n for n, image in enumerate(images, start=1) if image in gold]
    return f"{len(set(gold) & set(images))}/{len(gold)}" + (f" (#{ranks[0]})" if ranks else "")
