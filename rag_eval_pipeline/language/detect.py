"""Which language a case or a document is in, found without being told: Lingua (Apache-2.0,
n-gram models in Rust) over the languages of the table, in its high-accuracy mode, which tells
short texts apart (a question and its answer). A language set by the user (the dataset's
``language:``, a row's ``language``) is never second-guessed; a text too short or too mixed to
tell takes the language most of its set is in, and is counted so the run can say so.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rag_eval_pipeline.language.table import ENGLISH, LANGUAGES, language

# below this confidence (Lingua's share for the best language) a text is too short or too mixed
# to tell, and takes the language of the rest of its set
MIN_CONFIDENCE = 0.5
DETECTED_CHARS = 2_000  # a document is told by its beginning


@dataclass(frozen=True)
class Detected:
    """A text's language: ``code``, and whether it was ``told`` (set by the user or detected
    with confidence) rather than taken from the rest of its set."""

    code: str
    told: bool = True


@functools.cache
def _detector():  # type: ignore[no-untyped-def]
    from lingua import IsoCode639_1, LanguageDetectorBuilder
    from lingua import Language as LinguaLanguage

    table = [LinguaLanguage.from_iso_code_639_1(getattr(IsoCode639_1, code.upper())) for code in LANGUAGES]
    return LanguageDetectorBuilder.from_languages(*table).build()


def detect_one(text: str) -> tuple[str | None, float]:
    """The most likely language of ``text`` among the table's, and Lingua's confidence in it
    (None for a text with no letters)."""
    text = text[:DETECTED_CHARS]
    if not any(c.isalpha() for c in text):
        return None, 0.0
    values = _detector().compute_language_confidence_values(text)
    if not values:
        return None, 0.0
    best = values[0]
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
