"""What the stand-ins do with images: validate image blocks as the APIs do (a 400 on bad base64,
an image over 5 MB or over 8000 px a side, a type they do not take) and "see" them by decoding
the pixels, so vision judges get verdicts a test can compute by hand.

The simulated eye names each image's colours (the nearest of a small palette, with the share of
pixels). visual_relevance: 1 when the question names the image's dominant colour, 0.5 when it
names a colour the image has (>= 5% of pixels) or names none, 0 when it names only colours the
image lacks. image_text_consistency: 1 when the answer names the dominant colour of an image, 0
when it names a colour no image has, else 0.5.
"""

from __future__ import annotations

import base64
import binascii
import io
import math
import re
from collections import Counter
from typing import Any

from PIL import Image

MAX_BYTES = 5 * 1024 * 1024
MAX_SIDE = 8000
MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
PRESENT_SHARE = 0.05
PALETTE = {
    "red": (255, 0, 0),
    "green": (0, 128, 0),
    "lime": (0, 255, 0),
    "blue": (0, 0, 255),
    "yellow": (255, 255, 0),
    "orange": (255, 165, 0),
    "white": (255, 255, 255),
    "black": (0, 0, 0),
    "gray": (128, 128, 128),
    "purple": (128, 0, 128),
    "brown": (139, 69, 19),
}
SAME_NAME = {"lime": "green", "grey": "gray"}
VISION_TOOLS = ("record_visual_relevance", "record_image_consistency")


def _named(rgb: tuple[int, int, int]) -> str:
    name = min(PALETTE, key=lambda n: sum((a - b) ** 2 for a, b in zip(PALETTE[n], rgb)))
    return SAME_NAME.get(name, name)


def colours(data: bytes) -> list[tuple[str, float]]:
    """The image's colour names with their share of the pixels, most common first."""
    with Image.open(io.BytesIO(data)) as image:
        rgb = image.convert("RGB")
        counts: Counter[str] = Counter()
        for count, pixel in rgb.getcolors(maxcolors=rgb.width * rgb.height) or []:
            counts[_named(pixel)] += count
        total = rgb.width * rgb.height
    return [(name, count / total) for name, count in counts.most_common()]


def _check(data: bytes, where: str) -> str | None:
    if len(data) > MAX_BYTES:
        return f"{where}: image exceeds 5 MB maximum: {len(data)} bytes > {MAX_BYTES} bytes"
    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
    except Exception:
        return f"{where}: Could not process image"
    if max(width, height) > MAX_SIDE:
        return f"{where}: image dimensions exceed max allowed size: {MAX_SIDE} pixels"
    return None


def _decoded(payload: str, where: str) -> tuple[bytes | None, str | None]:
    try:
        return base64.b64decode(payload, validate=True), None
    except (binascii.Error, ValueError):
        return None, f"{where}: invalid base64 data"


def anthropic_images(request: dict[str, Any]) -> tuple[list[bytes], str | None]:
    """The decoded images of a Messages request in order, or the 400 message the API would give."""
    found: list[bytes] = []
    for m, message in enumerate(request.get("messages", [])):
        content = message.get("content")
        for b, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, dict) or block.get("type") != "image":
                continue
            where = f"messages.{m}.content.{b}.image.source"
            source = block.get("source") or {}
            if source.get("type") != "base64":
                return found, f"{where}: only base64 sources are served here (no network)"
            if source.get("media_type") not in MEDIA_TYPES:
                return found, f"{where}.media_type: Input should be {', '.join(MEDIA_TYPES)}"
            data, problem = _decoded(str(source.get("data", "")), f"{where}.base64")
            if problem is None:
                problem = _check(data, f"{where}.base64")  # type: ignore[arg-type]
            if problem is not None:
                return found, problem
            found.append(data)  # type: ignore[arg-type]
    return found, None


def openai_images(request: dict[str, Any]) -> tuple[list[bytes], str | None]:
    """The decoded images of a Chat Completions request (``image_url`` data URLs)."""
    found: list[bytes] = []
    for m, message in enumerate(request.get("messages", [])):
        content = message.get("content")
        for p, part in enumerate(content if isinstance(content, list) else []):
            if not isinstance(part, dict) or part.get("type") != "image_url":
                continue
            where = f"messages[{m}].content[{p}].image_url"
            url = str((part.get("image_url") or {}).get("url", ""))
            match = re.match(r"data:(image/[a-z]+);base64,(.*)$", url, re.S)
            if match is None:
                return found, f"{where}: expected a data URL (no network here)"
            data, problem = _decoded(match.group(2), where)
            if problem is None:
                problem = _check(data, where)  # type: ignore[arg-type]
            if problem is not None:
                return found, problem
            found.append(data)  # type: ignore[arg-type]
    return found, None


def image_tokens(images: list[bytes]) -> int:
    """Anthropic's count for the images: ceil(width * height / 750) each."""
    total = 0
    for data in images:
        with Image.open(io.BytesIO(data)) as image:
            total += math.ceil(image.width * image.height / 750)
    return total


def without_image_data(messages: Any) -> Any:
    """The messages with image bytes left out (what text tokens are counted on)."""
    text = re.sub(r'"data": "[A-Za-z0-9+/=]+"', '"data": ""', str(messages))
    return re.sub(r"base64,[A-Za-z0-9+/=]+", "base64,", text)


def _colour_words(text: str) -> set[str]:
    words = set(re.findall(r"[a-z]+", text.lower()))
    return {SAME_NAME.get(w, w) for w in words if SAME_NAME.get(w, w) in PALETTE}


def _tag(text: str, name: str) -> str:
    match = re.search(rf"<{name}>(.*?)</{name}>", text, re.S)
    return match.group(1).strip() if match else ""


def vision_verdict(tool: str, text: str, images: list[bytes]) -> dict[str, Any]:
    """The simulated eye's verdict (rules in the module docstring)."""
    seen = [colours(data) for data in images]
    present = {name for image in seen for name, share in image if share >= PRESENT_SHARE}
    dominant = {image[0][0] for image in seen if image}
    if tool == "record_visual_relevance":
        named = _colour_words(_tag(text, "question"))
        if named & dominant:
            verdict = 1.0
        elif named & present or not named:
            verdict = 0.5
        else:
            verdict = 0.0
        reason = f"the image is mostly {', '.join(sorted(dominant)) or 'nothing'}"
    elif tool == "record_image_consistency":
        named = _colour_words(_tag(text, "answer"))
        if named & dominant:
            verdict = 1.0
        elif named - present:
            verdict = 0.0
        else:
            verdict = 0.5
        reason = f"the images show {', '.join(sorted(present)) or 'nothing'}"
    else:
        raise ValueError(f"no vision behaviour for tool {tool}")
    return {"verdict": verdict, "reason": reason}
