"""Images the tests draw with Pillow: solid colours with coloured rectangles, in any format."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageDraw


def draw(
    path: Path,
    size: tuple[int, int] = (64, 48),
    colour: str = "white",
    rectangles: Sequence[tuple[tuple[int, int, int, int], str]] = (),
    format: str | None = None,
) -> Path:
    """A ``size`` image of ``colour`` with filled rectangles (x0, y0, x1, y1 exclusive ends)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.new("RGB", size, colour)
    pen = ImageDraw.Draw(image)
    for (x0, y0, x1, y1), fill in rectangles:
        pen.rectangle((x0, y0, x1 - 1, y1 - 1), fill=fill)
    image.save(path, format=format)
    return path
