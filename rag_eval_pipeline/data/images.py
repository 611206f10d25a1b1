"""Images in the documents folder: PNG, JPEG, GIF and WebP files are documents whose id is their
path in the folder. An ``images.jsonl`` beside them (``{"file", "caption", "alt_text"?,
"title"?}``, ``file`` relative to the sidecar's folder) gives their text: caption and alt text
become one searchable passage per image, ``image:<id>``, so every backend finds images by text.

Each file's problems (unreadable, too large, a duplicate of another) are named in the catalog
and none stops the others. Pixels are decoded with Pillow (the ``images`` extra).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # tables only where a catalog is stored or read back: the settings import this
    import pandas as pd

from rag_eval_pipeline.data.rows import jsonl_objects
from rag_eval_pipeline.metrics.grounding import image_passage_id

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
SIDECAR = "images.jsonl"
DEFAULT_MAX_IMAGE_BYTES = 20_000_000  # larger than any provider takes even after resizing is sensible
MAX_IMAGE_SIDE = 20_000  # decoding beyond this is a decompression bomb, not a document
# path: where the file was read (what overlays in explain refer to; never its bytes)
CATALOG_COLUMNS = ["image_id", "sha256", "width", "height", "type", "bytes", "caption", "problems", "path"]
PILLOW_MISSING = "images need Pillow: pip install 'rag-eval-pipeline[images]'"


def pillow() -> Any:
    """Pillow's Image module, or an ImportError saying which extra brings it."""
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - the dev extra installs it
        raise ImportError(PILLOW_MISSING) from None
    return Image


def is_image(path: Path) -> bool:
    return path.suffix.lower() in IMAGE_SUFFIXES


def is_image_file(path: Path) -> bool:
    """An image or the sidecar of captions: files this module reads, not text documents."""
    return is_image(path) or path.name == SIDECAR


@dataclass(frozen=True)
class ImageInfo:
    """One image of the catalog: its id, content hash, size, type and what is wrong with it."""

    image_id: str
    path: Path
    sha256: str
    width: int
    height: int
    type: str
    bytes: int
    caption: str = ""
    problems: tuple[str, ...] = ()

    @property
    def usable(self) -> bool:
        """Decoded and within limits (a duplicate is usable: its twin's pixels are its own)."""
        return self.width > 0 and not any(p.startswith(("unreadable", "too large")) for p in self.problems)


@dataclass
class ImageCatalog:
    """Every image of a documents folder by id, and the problems of the sidecar files."""

    images: dict[str, ImageInfo] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # of images.jsonl (a line, an unknown file)

    def all_problems(self) -> list[str]:
        """One line per problem: the sidecars', then each image's."""
        return [*self.problems, *(f"{i.image_id}: {p}" for i in self.images.values() for p in i.problems)]

    def size(self, image_id: str) -> tuple[int, int] | None:
        info = self.images.get(image_id)
        return (info.width, info.height) if info is not None and info.usable else None

    def sizes(self) -> dict[str, tuple[int, int]]:
        """(width, height) of every usable image: what a judgement list's labels are checked against."""
        return {i: s for i in self.images if (s := self.size(i)) is not None}

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        rows = [
            {
                "image_id": i.image_id,
                "sha256": i.sha256,
                "width": i.width,
                "height": i.height,
                "type": i.type,
                "bytes": i.bytes,
                "caption": i.caption,
                "problems": list(i.problems),
                "path": str(i.path.resolve()),
            }
            for i in self.images.values()
        ]
        return pd.DataFrame(rows, columns=CATALOG_COLUMNS)

    @classmethod
    def of_frame(cls, frame: pd.DataFrame, folder: str | Path) -> ImageCatalog:
        """The catalog as the ``image_catalog`` asset stored it, its files under ``folder``."""
        folder = Path(folder)
        images = {
            r["image_id"]: ImageInfo(
                r["image_id"],
                folder / r["image_id"],
                r["sha256"],
                int(r["width"]),
                int(r["height"]),
                r["type"],
                int(r["bytes"]),
                r["caption"] or "",
                tuple(r["problems"]),
            )
            for r in frame.to_dict(orient="records")
        }
        return cls(images)


def image_sizes(frame: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """(width, height) of every usable image of a stored catalog (what labels are checked against)."""
    return {
        r["image_id"]: (int(r["width"]), int(r["height"]))
        for r in frame.to_dict(orient="records")
        if int(r["width"]) > 0
        and not any(str(p).startswith(("unreadable", "too large")) for p in r["problems"])
    }


def _describe(path: Path, image_id: str, data: bytes, max_bytes: int) -> ImageInfo:
    digest = hashlib.sha256(data).hexdigest()
    if len(data) > max_bytes:
        problem = f"too large: {len(data) / 1e6:.1f} MB is over the {max_bytes / 1e6:.1f} MB limit"
        return ImageInfo(image_id, path, digest, 0, 0, "", len(data), problems=(problem,))
    image_module = pillow()
    try:
        with image_module.open(path) as image:
            width, height, kind = image.width, image.height, image.format or ""
            if max(width, height) > MAX_IMAGE_SIDE:
                problem = f"too large: {width}x{height} px (at most {MAX_IMAGE_SIDE} px a side)"
                return ImageInfo(image_id, path, digest, 0, 0, kind, len(data), problems=(problem,))
            image.load()  # a truncated or corrupt file fails here, not when a judge needs it
    except Exception as err:  # Pillow raises many kinds on bad data; each is the file's problem
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        return ImageInfo(image_id, path, digest, 0, 0, "", len(data), problems=(f"unreadable ({reason})",))
    return ImageInfo(image_id, path, digest, width, height, kind, len(data))


def _sidecar_rows(folder: Path, sidecars: Iterable[Path]) -> tuple[dict[str, dict], list[str]]:
    """Captions by image id from every ``images.jsonl``, and their problems (file and line)."""
    captions: dict[str, dict] = {}
    problems: list[str] = []
    for sidecar in sidecars:
        name = sidecar.relative_to(folder).as_posix()
        try:
            text = sidecar.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            problems.append(f"{name}: {err}")
            continue
        rows, unread = jsonl_objects(text, "an object with file and caption")
        problems += [f"{name}, {problem}" for problem in unread]
        for number, row in rows:
            file = row.get("file")
            if not isinstance(file, str) or not file.strip():
                problems.append(f"{name}, line {number}: expected an object with file and caption")
                continue
            image_id = (sidecar.parent / file).relative_to(folder).as_posix()
            captions[image_id] = {**row, "_where": f"{name}, line {number}"}
    return captions, problems


def image_catalog(folder: str | Path, max_bytes: int = DEFAULT_MAX_IMAGE_BYTES) -> ImageCatalog:
    """Every image of the folder and its subfolders (hidden ones left out), decoded once, with
    its captions; duplicates (the same bytes under two names) are named after the first."""
    folder = Path(folder)
    if not folder.is_dir():
        return ImageCatalog()
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
    captions, problems = _sidecar_rows(folder, [p for p in files if p.name == SIDECAR])
    images: dict[str, ImageInfo] = {}
    first_of: dict[str, str] = {}
    for path in (p for p in files if is_image(p)):
        image_id = path.relative_to(folder).as_posix()
        try:
            data = path.read_bytes()
        except OSError as err:
            images[image_id] = ImageInfo(image_id, path, "", 0, 0, "", 0, problems=(f"unreadable ({err})",))
            continue
        info = _describe(path, image_id, data, max_bytes)
        twin = first_of.setdefault(info.sha256, image_id)
        if twin != image_id:
            info = ImageInfo(**{**info.__dict__, "problems": (*info.problems, f"duplicate of {twin}")})
        caption = captions.get(image_id, {})
        text = " ".join(str(caption.get(k) or "").strip() for k in ("caption", "alt_text")).strip()
        images[image_id] = ImageInfo(**{**info.__dict__, "caption": text})
    problems += [
        f"{row['_where']}: {image_id} is not an image of the folder ({', '.join(IMAGE_SUFFIXES)})"
        for image_id, row in captions.items()
        if image_id not in images
    ]
    return ImageCatalog(images, problems)


@dataclass(frozen=True)
class Caption:
    """The searchable text of one image: what becomes its passage ``image:<id>``."""

    passage_id: str
    title: str
    text: str
    image_id: str


def image_captions(catalog: ImageCatalog, folder: str | Path) -> list[Caption]:
    """One caption per captioned, usable image (its caption and alt text), titled by the
    sidecar's ``title`` or the file's name."""
    folder = Path(folder)
    titles, _ = _sidecar_rows(folder, sorted(folder.rglob(SIDECAR))) if folder.is_dir() else ({}, [])
    return [
        Caption(
            image_passage_id(info.image_id),
            str(titles.get(info.image_id, {}).get("title") or "").strip() or Path(info.image_id).stem,
            info.caption,
            info.image_id,
        )
        for info in catalog.images.values()
        if info.caption and info.usable
    ]
