"""The one table of languages: for each, how its text is segmented, stemmed and stopped, how its
answers are normalised for exact match and F1, and what Elasticsearch calls its analyzer.

English keeps HotpotQA's official answer normalisation. Arabic, German, Spanish, Hindi,
Vietnamese and Chinese follow the MLQA evaluation script's definition (Unicode punctuation
removed, per-language articles, Chinese by mixed segmentation: each Han character a token);
Japanese, Korean and Thai extend it the same way (each character of their scripts a token), and
the other languages split at spaces after removing their articles. A language without a row of
its own (any ISO 639-1 code Lingua or ICU names) is segmented by ICU's word break and scored on
whitespace tokens; its sentence rule reads inflection through simplemma and Snowball and leaves
what it cannot read absent (``language/inflection.py``). A text in a script no detected
language writes is ``unknown``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import Enum

from rag_eval_pipeline.language.lexicon import LEXICONS, Lexicon

ENGLISH = "en"
# what a case's language is recorded as when its script is one no language the detector knows
# writes (Amharic's Ethiopic, Khmer, Sinhala): never another language's code
UNKNOWN = "unknown"


class Segmentation(str, Enum):
    """How a language's text becomes words."""

    ENGLISH = "english"  # HotpotQA's and bm25s's English, unchanged
    SPACED = "spaced"  # runs of letters, marks and digits between spaces and punctuation
    JIEBA = "jieba"  # Chinese: jieba's dictionary (rjieba)
    SUDACHI = "sudachi"  # Japanese: Sudachi's morphological analysis (core dictionary)
    ICU = "icu"  # ICU's dictionary word break (PyICU): Thai, and the languages without a row

    @property
    def library(self) -> str | None:
        """The segmenter's library name in ``language/segmenters.py`` (None: built in)."""
        return {"jieba": "jieba", "sudachi": "sudachi", "icu": "icu"}.get(self.value)


# characters that are each a token in exact match and F1 (MLQA's mixed segmentation): Chinese is
# MLQA's own range; the others extend it to their scripts
HAN_MLQA = "\u4e00-\u9fa5"
JAPANESE_CHARACTERS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
HANGUL_CHARACTERS = "\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f"
THAI_CHARACTERS = "\u0e00-\u0e7f"


@dataclass(frozen=True)
class Language:
    """One language's analysis, resolved once from its code.

    ``stop_words`` names a list: ``bm25s:<name>`` (the Snowball/NLTK lists bm25s ships) or
    ``iso:<code>`` (stopwords-iso). ``articles`` are removed from answers before exact match
    and F1 (as ``\\b(...)\\b``), unless ``article_pattern`` says otherwise (MLQA's Arabic).
    ``answer_characters`` (a character class) makes each such character one token there.
    ``inside_words``: a word may stand inside a longer run of text (no spaces between words, or
    particles joined to them), so finding a word is finding it inside, not among, words."""

    code: str
    name: str
    segmentation: Segmentation
    stemmer: str | None = None
    stop_words: str | None = None
    articles: tuple[str, ...] = ()
    article_pattern: str | None = None
    answer_characters: str | None = None
    mlqa: bool = False
    inside_words: bool = False
    index_bigrams: bool = False  # Korean: an index term per two syllables (Lucene's CJK bigrams)
    icu_locale: str | None = None
    es_analyzer: str | None = None
    own_row: bool = True
    morphology: str | None = None  # "kiwi": the sentence rule reads Korean's content morphemes
    cased: bool = True  # the script has capital letters, which mark names

    @property
    def morphology_library(self) -> str | None:
        """What installs the morphology the sentence rule reads (None: built in)."""
        return {"kiwi": "kiwipiepy kiwipiepy-model"}.get(self.morphology or "")

    @property
    def lexicon(self) -> Lexicon | None:
        """The closed word classes the sentence rule reads; None for a language without them."""
        return LEXICONS.get(self.code)

    @property
    def is_english(self) -> bool:
        return self.code == ENGLISH


def _spaced(code: str, name: str, stemmer: str | None, stop_words: str, **more: object) -> Language:
    return Language(code, name, Segmentation.SPACED, stemmer, stop_words, **more)  # type: ignore[arg-type]


LANGUAGES: dict[str, Language] = {
    row.code: row
    for row in (
        Language(
            ENGLISH,
            "English",
            Segmentation.ENGLISH,
            "english",
            "bm25s:english",
            ("a", "an", "the"),
            es_analyzer="english",
        ),
        _spaced(
            "es",
            "Spanish",
            "spanish",
            "bm25s:spanish",
            articles=("un", "una", "unos", "unas", "el", "la", "los", "las"),
            mlqa=True,
            es_analyzer="spanish",
        ),
        _spaced(
            "de",
            "German",
            "german",
            "bm25s:german",
            articles=(
                "ein",
                "eine",
                "einen",
                "einem",
                "eines",
                "einer",
                "der",
                "die",
                "das",
                "den",
                "dem",
                "des",
            ),
            mlqa=True,
            es_analyzer="german",
        ),
        _spaced(
            "fr",
            "French",
            "french",
            "bm25s:french",
            articles=("le", "la", "les", "l", "un", "une", "des"),
            es_analyzer="french",
        ),
        _spaced(
            "it",
            "Italian",
            "italian",
            "bm25s:italian",
            articles=("il", "lo", "la", "i", "gli", "le", "l", "un", "uno", "una"),
            es_analyzer="italian",
        ),
        _spaced(
            "pt",
            "Portuguese",
            "portuguese",
            "bm25s:portuguese",
            articles=("o", "a", "os", "as", "um", "uma", "uns", "umas"),
            es_analyzer="portuguese",
        ),
        _spaced("nl", "Dutch", "dutch", "bm25s:dutch", articles=("de", "het", "een"), es_analyzer="dutch"),
        _spaced("ru", "Russian", "russian", "bm25s:russian", es_analyzer="russian"),
        _spaced(
            "ar",
            "Arabic",
            "arabic",
            "iso:ar",
            article_pattern="\\sال^|ال",
            mlqa=True,
            es_analyzer="arabic",
            cased=False,
        ),
        _spaced("hi", "Hindi", "hindi", "iso:hi", mlqa=True, es_analyzer="hindi", cased=False),
        _spaced("tr", "Turkish", "turkish", "iso:tr", es_analyzer="turkish"),
        _spaced("id", "Indonesian", "indonesian", "iso:id", es_analyzer="indonesian"),
        _spaced(
            "vi", "Vietnamese", None, "iso:vi", articles=("của", "là", "cái", "chiếc", "những"), mlqa=True
        ),
        Language(
            "zh",
            "Chinese",
            Segmentation.JIEBA,
            None,
            "bm25s:chinese",
            answer_characters=HAN_MLQA,
            mlqa=True,
            inside_words=True,
            es_analyzer="cjk",
            cased=False,
        ),
        Language(
            "ja",
            "Japanese",
            Segmentation.SUDACHI,
            None,
            "iso:ja",
            answer_characters=JAPANESE_CHARACTERS,
            inside_words=True,
            es_analyzer="cjk",
            cased=False,
        ),
        _spaced(
            "ko",
            "Korean",
            None,
            "bm25s:korean",
            answer_characters=HANGUL_CHARACTERS,
            inside_words=True,
            index_bigrams=True,
            es_analyzer="cjk",
            morphology="kiwi",
            cased=False,
        ),
        Language(
            "th",
            "Thai",
            Segmentation.ICU,
            None,
            "iso:th",
            answer_characters=THAI_CHARACTERS,
            inside_words=True,
            icu_locale="th",
            es_analyzer="thai",
            cased=False,
        ),
    )
}
MLQA_LANGUAGES = tuple(code for code, row in LANGUAGES.items() if row.mlqa)


# languages without a row whose script writes no spaces between words (Khmer, Lao, Burmese,
# Tibetan, Dzongkha): a word stands inside a longer run, as in Thai; and those whose script has
# no capitals, so the passages, not a capital, mark a longer name
UNSPACED = frozenset({"km", "lo", "my", "bo", "dz"})
UNCASED = frozenset(
    ("am", "bn", "fa", "gu", "he", "ka", "kn", "ml", "mr", "ne", "pa", "si", "ta", "te", "ur", "yi")
    + ("ps", "sd", "ti", "dv", "or", "as", "ug")
)


class UnknownLanguageError(ValueError):
    """A language code this project cannot analyse: the message names those it can."""


def supported_codes() -> str:
    return ", ".join(LANGUAGES)


@functools.cache
def _other_language_names() -> dict[str, str]:
    """ISO 639-1 codes of the languages the detector's library knows, with their English names:
    what ``language:`` accepts beyond the table (segmented by ICU)."""
    from lingua import Language as LinguaLanguage

    return {
        member.iso_code_639_1.name.lower(): member.name.replace("_", " ").title()
        for member in LinguaLanguage.all()
    }


@functools.cache
def _two_letter_code(code: str) -> str | None:
    """The ISO 639-1 code of a language given by its three-letter ISO 639-2/3 code, where it has one."""
    if not code.isalpha():
        return None
    import icu

    two = icu.Locale.createCanonical(code).getLanguage()
    return two if len(two) == 2 else None


@functools.cache
def _icu_language_name(code: str) -> str | None:
    """The English name ICU gives an ISO 639 code the detector does not know (Amharic, Khmer,
    Sinhala, Nepali, Uzbek; Asturian's "ast", which has no two-letter code), None for a code it
    does not know either."""
    if len(code) not in (2, 3) or not code.isalpha():
        return None
    import icu

    name = icu.Locale(code).getDisplayLanguage(icu.Locale("en"))
    return name if name and name != code else None


def language(code: str) -> Language:
    """The row of ``code`` (ISO 639-1, any case; ``zh-CN`` reads as ``zh``); a language without a
    row of its own but with an ISO code gets ICU's word break and no lexicon; ``unknown`` is
    a case whose script no detected language writes. An unknown
    code is an ``UnknownLanguageError`` naming the supported ones."""
    key = str(code).strip().lower().replace("_", "-").split("-")[0]
    if key in LANGUAGES:
        return LANGUAGES[key]
    if key == UNKNOWN:
        name = "an unknown language"
        return Language(UNKNOWN, name, Segmentation.ICU, None, None, own_row=False, cased=False)
    if len(key) == 3 and (two := _two_letter_code(key)):
        return language(two)  # "deu" is German's row, "eng" English's
    name = _other_language_names().get(key) or _icu_language_name(key)
    if name:
        unspaced = key in UNSPACED
        return Language(
            key,
            name,
            Segmentation.ICU,
            None,
            f"iso:{key}",
            icu_locale=key,
            own_row=False,
            inside_words=unspaced,
            cased=not unspaced and key not in UNCASED,
        )
    raise UnknownLanguageError(
        f"unknown language '{code}': use an ISO 639-1 code, one of {supported_codes()} (each with its "
        "own analysis), or another ISO 639 code for ICU's word break"
    )
