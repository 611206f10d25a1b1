"""Text as it enters the pipeline, read whole and in one form: a user's file is decoded as UTF-8
(a byte-order mark accepted) or refused in one line naming the encoding it seems to be in, and
every string is brought to Unicode's NFC, so a decomposed "한양" (as macOS writes file names) or
"é" is the same text as its composed form wherever it is compared, indexed or looked up.

Every boundary where text comes in (documents and their names, judgement lists, HotpotQA files,
agents' replies, production logs) calls ``nfc`` / ``nfc_values`` / ``read_text`` from here."""

from __future__ import annotations

import codecs
import unicodedata
from pathlib import Path
from typing import TypeVar

UTF8_BOM = codecs.BOM_UTF8
SNIFFED_BYTES = 64_000  # what the encoding of a refused file is guessed from
T = TypeVar("T")


class FileEncodingError(ValueError):
    """A file that is not text in the encoding it is read in: the message names the file, the
    encoding it looks like and the remedy."""

    def __init__(
        self,
        path: str | Path,
        found: str | None,
        configured: str | None = None,
        settable: bool = True,
        line: int | None = None,
    ) -> None:
        self.path = str(path)
        self.found = found
        self.line = line
        read_as = configured or "UTF-8"
        looks = f"it looks like {found}" if found else "its encoding could not be told; is it a binary file?"
        key = f"dataset.encoding: {found}" if found else "dataset.encoding"
        remedy = f", or set {key} in the configuration file" if settable else ""
        where = f" from line {line}" if line else ""
        self.reason = f"not {read_as} text{where} ({looks}): re-save it as UTF-8{remedy}"
        super().__init__(f"{path}: {self.reason}")


def nfc(text: str) -> str:
    """``text`` in Unicode's composed form (NFC); text already in it is returned as it is."""
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def nfc_values(value: T) -> T:
    """``value`` with every string inside it (dict keys and values, list items) in NFC: a JSON
    record or an agent's reply as it enters."""
    if isinstance(value, str):
        return nfc(value)  # type: ignore[return-value]
    if isinstance(value, dict):
        return {nfc_values(k): nfc_values(v) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, list):
        return [nfc_values(v) for v in value]  # type: ignore[return-value]
    if isinstance(value, tuple):
        return tuple(nfc_values(v) for v in value)  # type: ignore[return-value]
    return value


def guessed_encoding(data: bytes) -> str | None:
    """The encoding ``data`` most likely is in, by charset-normalizer (``cp949``,
    ``shift_jis``, ``utf_16``, ...); None when it cannot tell (a binary file)."""
    from charset_normalizer import from_bytes

    best = from_bytes(data[:SNIFFED_BYTES]).best()
    return best.encoding if best is not None else None


def decode(data: bytes, path: str | Path, encoding: str | None = None) -> str:
    """The text of a file's bytes in NFC: UTF-8 (a leading byte-order mark dropped) unless
    ``encoding`` says otherwise; bytes that are not text in it are a ``FileEncodingError``."""
    wanted = encoding or "utf-8"
    if codecs.lookup(wanted).name == "utf-8":
        wanted = "utf-8-sig"  # a BOM is accepted, and dropped
    try:
        return nfc(data.decode(wanted))
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise FileEncodingError(path, guessed_encoding(data), encoding, line=line) from None


def read_text(path: str | Path, encoding: str | None = None) -> str:
    """A user's text file, whole, as ``decode`` reads it."""
    return decode(Path(path).read_bytes(), path, encoding)


def read_named_file(path: Path, holds: str, error: type[Exception]) -> str:
    """A file the user named, whole (as ``read_text``), or ``error`` in one line naming it: not
    there (with ``holds``, what it should hold), not UTF-8 text, not readable."""
    try:
        return read_text(path)
    except FileNotFoundError:
        raise error(f"{path}: no such file ({holds})") from None
    except FileEncodingError as err:
        raise error(str(err)) from None
    except OSError as err:
        raise error(f"{path}: not readable ({err})") from None


def known_encoding(name: str) -> str:
    """``name`` if Python has a codec of that name; a ValueError naming it otherwise (for the
    configuration's ``encoding:``)."""
    try:
        codecs.lookup(name)
    except LookupError:
        raise ValueError(f"unknown encoding '{name}' (e.g. utf-8, cp949, shift_jis, utf-16)") from None
    return name


ELLIPSIS = "…"


def clip_at_word(text: str, most: int) -> str:
    """``text`` with its runs of whitespace made one space, cut to at most ``most`` characters at
    a word's end with an ellipsis ("…is October" never "…is October 19" of "October 1922"); a
    text with no space in its second half (Chinese, a long identifier) is cut at ``most - 1``."""
    flat = " ".join(text.split())
    if len(flat) <= most:
        return flat
    if most <= 1:
        return ELLIPSIS[:most]
    room = flat[: most - 1]
    if flat[most - 1] != " ":  # the cut falls inside a word: back to its start
        space = room.rfind(" ")
        if space >= (most - 1) // 2:
            room = room[:space]
    return room.rstrip(" ,;:") + ELLIPSIS
