"""Images in LLM requests: Anthropic image blocks (base64 source) in the Messages-shaped request,
translated to OpenAI ``image_url`` data URLs; resized to fit a provider's limits; keyed in the
cache by their sha256 (never their bytes) and priced by their provider's token formula.

The bytes only ever travel inside an image block: never in a text block, a trace or a report,
which carry an image's id, sha256 and size.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import io
import math
from dataclasses import dataclass
from typing import Any

MAX_IMAGE_BYTES = 5_000_000  # the Messages API's limit per image (base64-decoded)
MAX_IMAGE_SIDE = 8000  # pixels, either side (the Messages API refuses larger)
TOKENS_PER_PIXEL_DIVISOR = 750  # Anthropic: an image costs about width * height / 750 tokens
MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}


class ImageTooLargeError(ValueError):
    """An image that could not be brought within a provider's limits: its case's judge error."""


@dataclass(frozen=True)
class PreparedImage:
    """An image as sent: its id, the sha256 of the file (what caches and traces name), the
    bytes sent (resized if it had to be), their media type and size."""

    image_id: str
    sha256: str
    data: bytes
    media_type: str
    width: int
    height: int
    resized: bool = False

    def block(self) -> dict[str, Any]:
        """The Anthropic image block (a base64 source)."""
        return {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": self.media_type,
                "data": base64.b64encode(self.data).decode("ascii"),
            },
        }


def image_tokens(width: int, height: int) -> int:
    """Anthropic's cost of an image in input tokens: ceil(width * height / 750)."""
    return math.ceil(width * height / TOKENS_PER_PIXEL_DIVISOR)


def prepare_image(
    image_id: str,
    data: bytes,
    max_bytes: int = MAX_IMAGE_BYTES,
    max_side: int = MAX_IMAGE_SIDE,
) -> PreparedImage:
    """The image as a provider takes it: as it is when within ``max_bytes`` and ``max_side``,
    else scaled down (aspect kept) and re-encoded until it fits; ImageTooLargeError if it cannot
    be read or brought within the limits."""
    from PIL import Image

    digest = hashlib.sha256(data).hexdigest()
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            kind, width, height = image.format or "PNG", image.width, image.height
            if len(data) <= max_bytes and max(width, height) <= max_side and kind in MEDIA_TYPES:
                return PreparedImage(image_id, digest, data, MEDIA_TYPES[kind], width, height)
            scale = min(1.0, max_side / max(width, height))
            for _ in range(8):  # halve the area until the encoding fits
                size = (max(1, int(width * scale)), max(1, int(height * scale)))
                buffer = io.BytesIO()
                image.convert("RGB").resize(size).save(buffer, format="JPEG", quality=85)
                if buffer.tell() <= max_bytes:
                    return PreparedImage(
                        image_id, digest, buffer.getvalue(), "image/jpeg", *size, resized=True
                    )
                scale *= 0.7
    except ImageTooLargeError:
        raise
    except Exception as err:  # Pillow's many kinds of bad data
        raise ImageTooLargeError(f"image {image_id} could not be prepared: {err}") from None
    raise ImageTooLargeError(f"image {image_id} stays over {max_bytes / 1e6:.0f} MB however it is scaled")


def _image_blocks(kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    """The image blocks of a Messages-shaped body, in order."""
    return [
        block
        for message in kwargs.get("messages", [])
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "image"
    ]


def keyed_images(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The body with each image's base64 data replaced by its sha256: what a cache key and a
    budget estimate read (the same image is the same key; a megabyte is not hashed as text)."""
    if not _image_blocks(kwargs):
        return kwargs
    keyed = copy.deepcopy(kwargs)
    for block in _image_blocks(keyed):
        source = block.get("source") or {}
        if source.get("type") == "base64":
            data = base64.b64decode(source.pop("data", ""))
            source["sha256"] = hashlib.sha256(data).hexdigest()
    return keyed


def request_image_tokens(kwargs: dict[str, Any]) -> int:
    """Input tokens the images of a body cost at most (Anthropic's formula on their pixels)."""
    from PIL import Image

    total = 0
    for block in _image_blocks(kwargs):
        source = block.get("source") or {}
        if source.get("type") != "base64":
            continue
        with Image.open(io.BytesIO(base64.b64decode(source["data"]))) as image:
            total += image_tokens(image.width, image.height)
    return total


def openai_content(content: Any, text: str) -> Any:
    """A user turn's content for Chat Completions: its images as ``image_url`` data URLs before
    its text, or the text alone when it holds no image."""
    blocks = content if isinstance(content, list) else []
    images = [b for b in blocks if isinstance(b, dict) and b.get("type") == "image"]
    if not images:
        return text
    parts: list[dict[str, Any]] = []
    for block in images:
        source = block["source"]
        url = (
            source["url"]
            if source.get("type") == "url"
            else f"data:{source['media_type']};base64,{source['data']}"
        )
        parts.append({"type": "image_url", "image_url": {"url": url}})
    return [*parts, {"type": "text", "text": text}]


def with_images_first(request: Any, images: list[PreparedImage]) -> Any:
    """``request`` (an LLMRequest) with ``images`` as image blocks before the text of its first
    user turn; unchanged without images."""
    if not images:
        return request
    from dataclasses import replace

    first, *rest = request.messages
    text = first["content"] if isinstance(first["content"], str) else ""
    content = [*(image.block() for image in images), {"type": "text", "text": text}]
    return replace(request, messages=({**first, "content": content}, *rest))
