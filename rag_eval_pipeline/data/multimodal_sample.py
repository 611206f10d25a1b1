"""A small multimodal sample, drawn on the spot (no download): a floor plan, a bar chart, a photo
and a sign as PNG images with captions, a text document, and questions with gold images and
boxes. ``rag-eval run --dataset multimodal-sample`` evaluates it offline."""

from __future__ import annotations

import json
from pathlib import Path

from rag_eval_pipeline.data.images import pillow

MULTIMODAL_SAMPLE = "multimodal-sample"

# image -> (size, background, [(box, colour)]): boxes with exclusive ends, as the labels are
DRAWINGS: dict[str, tuple[tuple[int, int], str, list[tuple[tuple[int, int, int, int], str]]]] = {
    "plans/ground_floor.png": ((120, 90), "white", [((10, 10, 50, 40), "red"), ((70, 50, 110, 80), "blue")]),
    "charts/sales.png": ((100, 80), "white", [((10, 50, 30, 80), "gray"), ((40, 20, 60, 80), "green")]),
    "photos/garden.png": ((80, 60), "green", [((30, 5, 50, 20), "yellow")]),
    "photos/sign.png": ((64, 64), "red", [((16, 28, 48, 36), "white")]),
}
CAPTIONS = [
    {
        "file": "plans/ground_floor.png",
        "caption": "Floor plan of the ground floor with the kitchen and the bathroom",
        "title": "Ground floor plan",
    },
    {"file": "charts/sales.png", "caption": "Bar chart of sales in 2023 and 2024", "alt_text": "sales chart"},
    {"file": "photos/garden.png", "caption": "Photo of the garden behind the office"},
    {"file": "photos/sign.png", "caption": "Photo of the stop sign at the car park exit"},
]
DOCUMENTS = {
    "hours.md": "The office is open from nine to five on weekdays. It is closed on public holidays.",
    "parking.md": "Visitors park behind the office and leave the car park past the stop sign.",
}
QUESTIONS = [
    {
        "id": "kitchen",
        "question": "Where is the red kitchen on the ground floor plan?",
        "answer": "top left",
        "gold_images": ["plans/ground_floor.png"],
        "gold_boxes": {"plans/ground_floor.png": [[10, 10, 50, 40]]},
        "tags": ["floor plan"],
    },
    {
        "id": "bathroom",
        "question": "Where is the blue bathroom on the ground floor plan?",
        "answer": "bottom right",
        "gold_images": ["plans/ground_floor.png"],
        "gold_boxes": {"plans/ground_floor.png": [[70, 50, 110, 80]]},
        "tags": ["floor plan"],
    },
    {
        "id": "sales",
        "question": "Which year had the higher green bar in the sales chart?",
        "answer": "2024",
        "gold_images": ["charts/sales.png"],
        "gold_boxes": {"charts/sales.png": [[40, 20, 60, 80]]},
        "tags": ["chart"],
    },
    {
        "id": "garden",
        "question": "What colour is the garden in the photo behind the office?",
        "answer": "green",
        "gold_images": ["photos/garden.png"],
        "tags": ["photo"],
    },
    {
        "id": "sign",
        "question": "Is the stop sign at the car park exit red?",
        "answer": "yes, it is red",
        "gold_images": ["photos/sign.png"],
        "gold_boxes": {"photos/sign.png": [[0, 0, 64, 64]]},
        "tags": ["photo"],
    },
    {
        "id": "hours",
        "question": "When is the office open?",
        "answer": "from nine to five on weekdays",
        "relevant_titles": ["hours"],
        "tags": ["text"],
    },
]


def write_multimodal_sample(folder: str | Path) -> tuple[Path, Path]:
    """Draw the sample into ``folder``: its documents folder and its judgement list (the same
    bytes every time, so a re-run is served from the cache)."""
    folder = Path(folder)
    documents = folder / "documents"
    image_module = pillow()
    from PIL import ImageDraw

    for name, (size, background, rectangles) in DRAWINGS.items():
        path = documents / name
        path.parent.mkdir(parents=True, exist_ok=True)
        image = image_module.new("RGB", size, background)
        pen = ImageDraw.Draw(image)
        for (x0, y0, x1, y1), colour in rectangles:
            pen.rectangle((x0, y0, x1 - 1, y1 - 1), fill=colour)
        image.save(path, format="PNG", optimize=False)
    (documents / "images.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CAPTIONS), encoding="utf-8")
    for name, text in DOCUMENTS.items():
        (documents / name).write_text(text, encoding="utf-8")
    questions = folder / "questions.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    return documents, questions
