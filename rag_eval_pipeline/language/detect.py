"""Which language a case or a document is in, found without being told: Lingua (Apache-2.0,
n-gram models in Rust) in its high-accuracy mode (a text mostly in a script none of its languages
writes is ``unknown``, never a neighbour's code), which tells short texts apart (a question and
its answer), over the languages of the table and any other the text may be in. Which others is
asked first of Lingua's fast mode over all its 75 languages (its high-accuracy mode over all of
them would hold a gigabyte): a Turkish text is then told between Turkish and the table's
languages, and comes out Turkish (segmented by ICU's word break, as every language without a
row), never its nearest supported neighbour, Spanish. A language set by the user (the
dataset's ``language:``, a row's ``language``) is never second-guessed; a text too short or too
mixed to tell takes the language most of its set is in, and is counted so the run can say so.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rag_eval_pipeline.language.table import ENGLISH, LANGUAGES, UNKNOWN, language

# the scripts the detector's languages are written in: a text mostly in another (Ethiopic,
# Khmer, Sinhala, Myanmar) is in a language it does not know, recorded as ``UNKNOWN``
_KNOWN_SCRIPTS = (
    *("Latin", "Cyrillic", "Greek", "Arabic", "Hebrew", "Devanagari", "Bengali", "Gurmukhi", "Gujarati"),
    *("Tamil", "Telugu", "Thai", "Hangul", "Han", "Hiragana", "Katakana", "Georgian", "Armenian"),
)

# below this confidence (Lingua's share for the best language) a text is too short or too mixed
# to tell, and takes the language of the rest of its set
MIN_CONFIDENCE = 0.5
# a language outside the table is taken only when Lingua is this sure of it: on a short text it
# confuses close neighbours (a Hindi question read as Marathi at 0.64, "Kim yazdı?" as Azerbaijani
# at 0.60), where a Turkish, Polish or Greek sentence of a few words scores 0.98 and more
OUTSIDE_MIN_CONFIDENCE = 0.9
DETECTED_CHARS = 2_000  # a document is told by its beginning


@dataclass(frozen=True)
class Detected:
    """A text's language: ``code``, and whether it was ``told`` (set by the user or detected
    with confidence) rather than taken from the rest of its set."""

    code: str
    told: bool = True


@functools.cache
def _detector(others: frozenset[str] = frozenset()):  # type: ignore[no-untyped-def]
    """Lingua's high-accuracy detector over the table's languages and ``others`` (ISO codes);
    its models are loaded as a text first needs them."""
    from lingua import IsoCode639_1, LanguageDetectorBuilder
    from lingua import Language as LinguaLanguage

    codes = [*LANGUAGES, *sorted(others - set(LANGUAGES))]
    table = [LinguaLanguage.from_iso_code_639_1(getattr(IsoCode639_1, code.upper())) for code in codes]
    return LanguageDetectorBuilder.from_languages(*table).build()


@functools.cache
def _wide_detector():  # type: ignore[no-untyped-def]
    """Lingua's fast mode over every language it knows: which language outside the table a
    text may be in (about 100 MB, where the high-accuracy mode over all would hold a gigabyte)."""
    from lingua import LanguageDetectorBuilder

    return LanguageDetectorBuilder.from_all_languages().with_low_accuracy_mode().build()


def _candidate_outside_table(text: str) -> str | None:
    """The language outside the table the fast mode finds most likely for ``text``, if any."""
    found = _wide_detector().detect_language_of(text)
    if found is None:
        return None
    code = found.iso_code_639_1.name.lower()
    return None if code in LANGUAGES else code


@functools.cache
def _scripts():  # type: ignore[no-untyped-def]
    import regex

    known = "".join(f"\\p{{Script={name}}}" for name in _KNOWN_SCRIPTS)
    return regex.compile(r"\p{L}"), regex.compile(f"[{known}]")


def _unknown_script(text: str) -> bool:
    """Whether most of the text's letters are in a script none of the detector's languages use."""
    letter, known = _scripts()
    letters = letter.findall(text)
    return bool(letters) and len(known.findall(text)) * 2 < len(letters)


def detect_one(text: str) -> tuple[str | None, float]:
    """The most likely language of ``text`` and Lingua's confidence in it (None for a text with
    no letters): among the table's languages and, when the fast mode over all languages finds
    one outside the table likely, that one too, taken only when Lingua is sure of it
    (``OUTSIDE_MIN_CONFIDENCE``)."""
    text = text[:DETECTED_CHARS]
    if not any(c.isalpha() for c in text):
        return None, 0.0
    if _unknown_script(text):
        return UNKNOWN, 1.0
    other = _candidate_outside_table(text)
    values = _detector(frozenset({other} if other else ())).compute_language_confidence_values(text)
    if not values:
        return None, 0.0
    best = values[0]
    if other and best.language.iso_code_639_1.name.lower() == other and best.value < OUTSIDE_MIN_CONFIDENCE:
        # not sure enough of a language without a row: the best of the table's, at its own
        # (lower) confidence, so a short text that cannot be told takes its set's language
        best = values[1] if len(values) > 1 else best
    return best.language.iso_code_639_1.name.lower(), float(best.value)


def resolve_languages(
    texts: Sequence[str], declared: str | None = None, per_text: Sequence[str | None] | None = None
) -> list[Detected]:
    """The language of each text: its own setting (``per_text``), else the set's (``declared``),
    else detected; a text that cannot be told takes the language most told texts are in
    (English when none can be told). Every code is checked against the table (an
    ``UnknownLanguageError`` names the supported ones)."""
    own = list(per_text) if per_text is not None else [None] * len(texts)
    if declared:
        declared = language(declared).code
    found: list[tuple[str | None, bool]] = []  # (language, told)
    for text, setting in zip(texts, own):
        if setting:
            found.append((language(setting).code, True))
        elif declared:
            found.append((declared, True))
        else:
            code, confidence = detect_one(text)
            found.append((code, code is not None and confidence >= MIN_CONFIDENCE))
    told = Counter(code for code, sure in found if sure and code)
    fallback = told.most_common(1)[0][0] if told else ENGLISH
    # an uncertain guess stands where the set has texts told in that language (a short Spanish
    # question in a Spanish and Chinese list); otherwise the set's most common language
    return [Detected(code if code and (sure or code in told) else fallback, sure) for code, sure in found]
