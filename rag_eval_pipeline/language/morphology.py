"""What a language's morphology knows of a sentence, for the sentence rule and the lexical
proxies: the content morphemes of a Korean sentence by Kiwi (its particles, copula and endings
are not words of a claim: "광화문입니다" is 광화문 + 이 + ㅂ니다), and Arabic's orthographic
variants folded as Lucene's ``ArabicNormalizer`` folds them. Kiwi is loaded when a Korean text
first needs it; a missing library is one error naming what to install."""

from __future__ import annotations

import functools
import re
from typing import Any

from rag_eval_pipeline.language.segmenters import SegmenterMissingError

# Kiwi's tags (Sejong's tag set) of the morphemes that carry no claim: case and auxiliary
# particles (J*, but not the conjunctive JC, which lists: 광화문과 경복궁), the copula (VCP),
# endings (E*), derivational suffixes (XS*), punctuation and symbols (S*, except numbers SN,
# foreign words SL and Chinese characters SH, which are the words of many answers)
_KIWI_FUNCTION = re.compile(r"^(J(?!C)|VCP|E|XS|S(?![NLH]))")

# Arabic: vowel marks (harakat, tanwin, shadda, sukun, dagger alef) and tatweel dropped; hamza
# forms of alef, alef maqsura and ta marbuta folded (Lucene's ArabicNormalizer)
_ARABIC_MARKS = re.compile("[\u064b-\u065f\u0670\u0640]")
_ARABIC_FOLD = str.maketrans({"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ى": "ي", "ة": "ه"})


# "and": و joined to a word of three letters or more is the conjunction (والبصرة is "and Basra",
# وعمر "and Umar"), said apart, as Lucene's ArabicStemmer strips it
_ARABIC_AND = re.compile(r"(?<![\w\u0600-\u06ff])و(?=[\w\u0600-\u06ff]{3,})")
# Hindi: chandrabindu as anusvara, nukta dropped (Lucene's HindiNormalizer): शाहजहाँ is शाहजहां
_HINDI_FOLD = str.maketrans({"\u0901": "\u0902", "\u093c": None})


def fold_arabic(text: str) -> str:
    """Arabic as it is compared: "الكُوفَة" and "الكوفه" are one word, "أبو" and "ابو" too."""
    return _ARABIC_AND.sub("و ", _ARABIC_MARKS.sub("", text).translate(_ARABIC_FOLD))


def fold_hindi(text: str) -> str:
    return text.translate(_HINDI_FOLD)


@functools.cache
def _digits() -> dict[int, str]:
    """Every script's decimal digits as ASCII digits (١٩٠٨, १९४७ and ๒๕๔๙ are numbers as
    1908, 1947 and 2549 are)."""
    import sys
    import unicodedata

    return {
        c: str(unicodedata.digit(chr(c)))
        for c in range(128, sys.maxunicode + 1)
        if unicodedata.category(chr(c)) == "Nd"
    }


def ascii_digits(text: str) -> str:
    return text.translate(_digits()) if not text.isascii() else text


@functools.cache
def _kiwi() -> Any:
    try:
        from kiwipiepy import Kiwi
    except ImportError:
        raise SegmenterMissingError(
            "Korean answers need Kiwi (not installed): pip install kiwipiepy kiwipiepy-model"
        ) from None
    return Kiwi()


_KIWI_MARK = re.compile(r"^S(?![NLH])")


@functools.lru_cache(maxsize=16_384)
def korean_content(text: str) -> tuple[tuple[str, bool], ...]:
    """The content morphemes of a Korean text, each in its dictionary form (아닙니다 -> 아니,
    한양이었습니다 -> 한양) with whether a punctuation mark follows it: nouns, verbs,
    adjectives, adverbs, numbers, conjunctive particles; case particles, the copula and endings
    dropped. The whole text is analysed at once: a particle is told by what follows it."""
    found: list[tuple[str, bool]] = []
    for token in _kiwi().tokenize(text):
        if _KIWI_MARK.match(token.tag):
            if found:
                found[-1] = (found[-1][0], True)
        elif not _KIWI_FUNCTION.match(token.tag):
            found.append((token.form, False))
    return tuple(found)


def morphology_problem(code: str) -> str | None:
    """One line when the morphology a language's answers are read with is not installed."""
    import importlib.util

    from rag_eval_pipeline.language.table import language

    row = language(code)
    install = row.morphology_library
    if install is None or all(
        importlib.util.find_spec(m) is not None for m in ("kiwipiepy", "kiwipiepy_model")
    ):
        return None
    shown = f"{row.name} ({row.code})"
    return f"{shown} answers need their morphology, which is not installed: pip install {install}"
