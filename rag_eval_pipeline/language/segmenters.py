"""The word segmenters of languages written without spaces between words, each a thin adapter
over its library: jieba (Chinese, the Rust port rjieba), Sudachi (Japanese, with its core
dictionary) and ICU's dictionary word break (Thai, and any language without a row of its own).
Each is loaded when a text first needs it; a missing library is one error naming what to install.
A segmenter with an input limit (Sudachi's 49,149 bytes) is given its text in pieces within it,
here and nowhere else, so no document or answer is too long to analyse.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

# Sudachi refuses an input over 49,149 bytes: at most 4 UTF-8 bytes a character keeps a piece of
# this many characters within it, whatever the script
SUDACHI_MAX_CHARS = 12_000
# where a piece is best cut, in order: a line break, a sentence's end, a space, a comma
_CUT_AFTER = ("\n", "。", "！", "？", ". ", "! ", "? ", " ", "、", "，", ", ")


def bounded_pieces(text: str, max_chars: int) -> list[str]:
    """``text`` in pieces of at most ``max_chars`` characters that join back into it, each cut
    after the last line break, sentence end or space of the second half of its window where
    there is one (so words stay whole), else between two characters."""
    if len(text) <= max_chars:
        return [text]
    pieces = []
    start = 0
    while len(text) - start > max_chars:
        window = text[start : start + max_chars]
        cut = max_chars
        for mark in _CUT_AFTER:
            at = window.rfind(mark, max_chars // 2)
            if at != -1:
                cut = at + len(mark)
                break
        pieces.append(text[start : start + cut])
        start += cut
    pieces.append(text[start:])
    return pieces


class SegmenterMissingError(ValueError):
    """A language's segmenter is not installed: the message names the package to install (a
    problem of the environment the user fixes, said as bad input is)."""


def _require(module: str, language: str, install: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise SegmenterMissingError(
            f"{language} text needs {install} (not installed): pip install {install}"
        ) from None


@functools.cache
def jieba_words() -> Callable[[str], list[str]]:
    """Chinese: jieba's dictionary segmentation (accurate mode): 故宫于1420年建成 -> 故宫 于 1420 年 建成."""
    rjieba = _require("rjieba", "Chinese", "rjieba")
    return rjieba.cut


@functools.cache
def jieba_search_words() -> Callable[[str], list[str]]:
    """Chinese for search: jieba's search mode, which adds the shorter words inside a long one
    (北京大学 -> 北京 大学 北京大学), so a question naming a part still finds the whole."""
    rjieba = _require("rjieba", "Chinese", "rjieba")
    return rjieba.cut_for_search


@functools.cache
def _sudachi() -> Any:
    sudachipy = _require("sudachipy", "Japanese", "sudachipy sudachidict_core")
    try:
        return sudachipy.Dictionary(dict="core").create()
    except Exception as err:  # the dictionary package is separate from the analyser
        raise SegmenterMissingError(
            f"Japanese text needs Sudachi's dictionary ({err}): pip install sudachidict_core"
        ) from None


def sudachi_words(text: str, *, short: bool = False, normalized: bool = False) -> list[str]:
    """Japanese morphemes: the longest units (東京スカイツリー) unless ``short`` (東京 スカイ ツリー,
    what an index matches parts by); ``normalized`` gives Sudachi's normalised forms (附属 ->
    付属, し -> 為る), Japanese's stemming."""
    from sudachipy import SplitMode

    tokenizer = _sudachi()
    mode = SplitMode.A if short else SplitMode.C
    return [
        m.normalized_form() if normalized else m.surface()
        for piece in bounded_pieces(text, SUDACHI_MAX_CHARS)
        for m in tokenizer.tokenize(piece, mode)
    ]


@functools.cache
def _icu_break(locale: str) -> Any:
    icu = _require("icu", f"text in '{locale}'", "PyICU (it builds against libicu-dev)")
    return icu.BreakIterator.createWordInstance(icu.Locale(locale))


def icu_words(text: str, locale: str) -> list[str]:
    """The words of ``text`` by ICU's word break for ``locale`` (dictionary-based for Thai, Lao,
    Khmer, Burmese; Unicode's rules elsewhere): every segment, spaces and marks included, so
    joined they are the text."""
    breaker = _icu_break(locale)
    breaker.setText(text)
    pieces = []
    start = breaker.first()
    for end in breaker:
        pieces.append(text[start:end])
        start = end
    return pieces


# each segmenter's importable modules, and what installs them
_LIBRARIES = {
    "jieba": (("rjieba",), "rjieba"),
    "sudachi": (("sudachipy", "sudachidict_core"), "sudachipy sudachidict_core"),
    "icu": (("icu",), "PyICU (it builds against libicu-dev): pip install 'rag-eval-pipeline[icu]'"),
}


def missing_library(segmenter: str | None) -> str | None:
    """What to install for a segmenter whose library cannot be imported; None when it can (or
    needs none)."""
    import importlib.util

    if segmenter is None or segmenter not in _LIBRARIES:
        return None
    modules, install = _LIBRARIES[segmenter]
    if all(importlib.util.find_spec(module) is not None for module in modules):
        return None
    return install


def segmenter_problem(code: str) -> str | None:
    """One line when a language's text cannot be segmented here (its library is missing)."""
    from rag_eval_pipeline.language.table import language

    row = language(code)
    install = missing_library(row.segmentation.library)
    if install is None:
        return None
    shown = install if install.startswith("PyICU") else f"pip install {install}"
    return f"{row.name} ({row.code}) text needs its word segmenter, which is not installed: {shown}"
