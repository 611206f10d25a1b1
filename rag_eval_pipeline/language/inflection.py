"""How the sentence rule tells an inflected form of a reference word from another word, in any
language, and what it can read there: resolved once per language into a ``SentenceReading``.

A word of the answer is the reference's word when the two meet in one of three ways, the first
ones where a well-kept library knows the language: simplemma's lemmas (about 50 languages:
"Krakowie" and "Kraków", "Невы" and "Нева", "Turusta" and "Turku"), Snowball's stems (PyStemmer:
"Zalától" and "Zala", a Tamil name with its case suffix), and, in every language, the suffix
rule: the answer's word begins with the first letters of the reference's word, all of a short
one and a few fewer of a longer one (``_kept``: a case ending replacing a final vowel,
"Kostnici" for "Kostnice", a vowel dropped, "Uhrovci" for "Uhrovec"); in Hebrew, Arabic and
Ethiopic script after up to three joined prefix letters (בפלונסק for פלונסק), and after a
mutated or prefixed onset ("Nghaerdydd" for "Caerdydd", Zulu "eThekwini" for "iThekwini";
``_mutated``); numbers meet only as themselves. Where none of these finds the reference in a
language the rule cannot read, ``near_forms`` says whether a word may still be a form of it
(absent, never 0). Letters are counted without combining marks, so a
vowel sign or virama is no letter of its own (measured on ``benchmarks/answer_forms.py``).

Negations, hedges, options and contrasts are read from the language's lexicon
(``language/lexicons.toml``); a language without one has them ``unread``, and the rule reads every
word of its stop list as one that may carry them (``metrics/equivalence.py``).
"""

from __future__ import annotations

import difflib
import functools
import os
import re
import unicodedata
from dataclasses import dataclass

from rag_eval_pipeline.language.table import language

PREFIX_LETTERS = 3  # joined prefixes a Hebrew or Arabic-script word may carry (ו + ב + ה)
_JOINED_PREFIXES = re.compile("[\u0590-\u05ff\u0600-\u06ff\u1200-\u137f]")
MIN_STEM = 3  # letters of a reference word the suffix rule needs before the answer's ending
ONSET_ADDED = 3  # letters a mutation may put for a word's first ("ngh" for the "c" of "Caerdydd")
PREFIX_ADDED = 2  # letters a prefix may put before it ("gC", "yi"); three would take "Ostberlin"
ONSET_REPLACED = 1  # letters of the reference's onset it may replace ("c" of "Caerdydd")
NEAR_LETTERS = 3  # letters in a row an unmatched word shares with the reference: maybe a form of it
ONSET_CORE = 4  # letters that must follow alike, so "Mali" is not "Bali" nor "Rouen" "Jouen"
UNREAD_CHECKS = ("negation", "hedges", "options", "contrasts")
# what reads a language's sentence answers where the offline rule cannot: the LLM judges
LLM_JUDGES = "an LLM judge (claude-sonnet-4-6, openai:<model> or local:smollm2 in --judges)"

# how a case's note begins where its correctness is absent: the summary counts such cases
ABSENT_NOTE = "correctness absent: "


def absent_note(reason: str) -> str:
    """A case's note where its correctness is absent: the checks not made, and the remedy."""
    return f"{ABSENT_NOTE}{reason}; {LLM_JUDGES} reads them"


# Snowball's algorithms (PyStemmer) by ISO 639-1 code, for the languages the table has no
# stemmer for
SNOWBALL = {
    "ar": "arabic",
    "hy": "armenian",
    "eu": "basque",
    "ca": "catalan",
    "cs": "czech",
    "da": "danish",
    "nl": "dutch",
    "en": "english",
    "eo": "esperanto",
    "et": "estonian",
    "fi": "finnish",
    "fr": "french",
    "de": "german",
    "el": "greek",
    "hi": "hindi",
    "hu": "hungarian",
    "id": "indonesian",
    "ga": "irish",
    "it": "italian",
    "lt": "lithuanian",
    "ne": "nepali",
    "nb": "norwegian",
    "no": "norwegian",
    "fa": "persian",
    "pl": "polish",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sr": "serbian",
    "st": "sesotho",
    "es": "spanish",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
    "yi": "yiddish",
}


@dataclass(frozen=True)
class SentenceReading:
    """What the sentence rule reads in one language: whose ``lemmas`` (simplemma) and which
    Snowball ``stemmer`` meet inflected forms, and whether a ``lexicon`` reads negation, hedges,
    options and contrasts; without one those checks are ``unread`` and a sentence holding a word
    they might be in is not judged (absent, with ``absence_reason``)."""

    code: str
    name: str
    lemmas: bool
    stemmer: str | None
    lexicon: bool

    @property
    def covered(self) -> bool:
        """Whether a well-kept lemmatizer or stemmer knows the language's inflection."""
        return self.lemmas or self.stemmer is not None

    @property
    def unread(self) -> tuple[str, ...]:
        return () if self.lexicon else UNREAD_CHECKS

    @property
    def unread_phrase(self) -> str:
        """"negation, hedges, options and contrasts not read in Yoruba" (empty where all are read)."""
        if not self.unread:
            return ""
        *first, last = self.unread
        return f"{', '.join(first)} and {last} not read in {self.name}"

    @property
    def absence_reason(self) -> str:
        """Why a case's correctness is absent, and the remedy: said once per run and by ``explain``."""
        return (
            f"correctness absent where an answer in {self.name} says more than the reference, or "
            "may name it in a form the rule does not know: "
            f"{self.unread_phrase} (no lexicon or library covers them); {LLM_JUDGES} reads them"
        )


@functools.cache
def _simplemma_languages() -> frozenset[str]:
    from simplemma.strategies.dictionaries.dictionary_factory import SUPPORTED_LANGUAGES

    return frozenset(SUPPORTED_LANGUAGES)


@functools.cache
def reading(code: str) -> SentenceReading:
    """The sentence reading of a language code (any code ``language`` accepts)."""
    row = language(code)
    return SentenceReading(
        row.code,
        row.name,
        row.code in _simplemma_languages(),
        row.stemmer or SNOWBALL.get(row.code),
        row.lexicon is not None,
    )


def letters(word: str) -> str:
    """The word without combining marks (a Tamil virama, a Devanagari vowel sign): the letters
    the suffix rule counts."""
    return "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))


class Inflection:
    """Whether two words (case-folded, as written) are forms of one word in a language (see the
    module's docstring). Built once per language by ``inflection(code)``; forms kept per word."""

    def __init__(self, sentence: SentenceReading) -> None:
        self.reading = sentence
        self._stemmer = None
        if sentence.stemmer:
            import Stemmer

            self._stemmer = Stemmer.Stemmer(sentence.stemmer)
        self._forms: dict[str, frozenset[str]] = {}

    def forms(self, word: str) -> frozenset[str]:
        """The word, its lemmas and its stem: two words meet where these do (a lemma may be the
        other word itself: "львом" has "лев", which simplemma reads alone as "левый")."""
        found = self._forms.get(word)
        if found is None:
            kept = {word}
            if self.reading.lemmas:
                import simplemma

                # as written and as a name: "лев" alone is read as the adjective левый
                for spelled in {word, word[:1].upper() + word[1:]}:
                    kept.add(simplemma.lemmatize(spelled, lang=self.reading.code).casefold())
            if self._stemmer is not None:
                kept.add("s:" + self._stemmer.stemWord(word))
            found = self._forms[word] = frozenset(kept)
        return found

    def same(self, answer_word: str, reference_word: str) -> bool:
        """Whether ``answer_word`` is a form of ``reference_word``."""
        if answer_word == reference_word:
            return True
        if any(c.isdigit() for c in answer_word + reference_word):
            return False  # 1958 is not 1959, nor 1958-ban a form to guess at
        if self.forms(answer_word) & self.forms(reference_word):
            return True
        answer, reference = letters(answer_word), letters(reference_word)
        kept = _kept(len(reference))
        if kept < 2:
            return False
        # Hebrew, Arabic and Ethiopic script write prepositions, article and "and" joined before
        # a word (בפלונסק is "in Płońsk", ከጣና "from Tana"): up to PREFIX_LETTERS may stand first
        joined = PREFIX_LETTERS if _JOINED_PREFIXES.match(reference) else 0
        if any(
            answer[skip : skip + kept] == reference[:kept]
            for skip in range(max(0, min(joined, len(answer) - kept)) + 1)
        ):
            return True
        return _mutated(answer, reference)


def _mutated(answer: str, reference: str) -> bool:
    """Whether the answer's word is the reference's with its onset changed: a mutation or a
    class prefix in front ("Nghaerdydd", "Gaerdydd" for "Caerdydd"; "gCorcaigh"; Zulu
    "eThekwini" for "iThekwini", "yiGoli" for "iGoli"): up to ``ONSET_ADDED`` letters stand
    for the first ``ONSET_REPLACED`` of the reference's, or up to ``PREFIX_ADDED`` before it,
    and what follows keeps at least ``ONSET_CORE`` letters as the suffix rule does (a compound,
    "Südafrika" for "Afrika", is another place)."""
    for dropped in range(ONSET_REPLACED + 1):
        rest = reference[dropped:]
        kept = _kept(len(rest))
        if kept < ONSET_CORE:
            break
        for added in range((ONSET_ADDED if dropped else PREFIX_ADDED) + 1):
            if (dropped or added) and answer[added : added + kept] == rest[:kept]:
                return True
    return False


def _kept(letters: int) -> int:
    """How many first letters of a reference word an inflected form keeps: all of a short one
    ("Kür" in "Kürdür"), all but the last of one of four to six ("Zala" in "Zalától"; two fewer
    would take "Turin" for "Turku"), three fewer of a longer one, where a vowel is dropped or
    changed before the ending ("Uhrovec" in "Uhrovci", "Тетерів" in "Тетереві")."""
    if letters <= MIN_STEM:
        return letters
    return letters - 1 if letters <= 6 else letters - 3


def _script(character: str) -> str:
    """The script a letter is written in, by its Unicode name ("LATIN", "ETHIOPIC", "MALAYALAM")."""
    return unicodedata.name(character, "").split(" ")[0]


def near_forms(answer: str, reference: str) -> list[str]:
    """Where the rule did not find the reference: the words of ``answer`` that may still be a
    form of it it does not know (a stem changed inside, a prefix it has no rule for): a run of
    at least ``NEAR_LETTERS`` letters, or half of a longer reference word, shared with one; or
    the whole answer, where none of its letters is in the reference's script (a name
    transliterated). Empty where the answer names something else: that answer is judged."""
    words = [letters(w) for w in answer.casefold().split()]
    reference_words = [letters(w) for w in reference.casefold().split()]
    scripts = {_script(c) for w in reference_words for c in w if c.isalpha()}
    if scripts and not any(_script(c) in scripts for w in words for c in w if c.isalpha()):
        return [answer.strip()]
    found = []
    for word in words:
        for truth in reference_words:
            need = max(NEAR_LETTERS, len(truth) // 2) if len(truth) >= NEAR_LETTERS else len(truth)
            run = difflib.SequenceMatcher(None, word, truth, autojunk=False)
            if need and run.find_longest_match(0, len(word), 0, len(truth)).size >= need:
                found.append(word)
                break
    return found


NEAR_PREFIX = 4  # first letters a word shares with a reference word, where the rule reads the language


def as_written(text: str) -> list[tuple[str, str, bool]]:
    """Each word of ``text`` (split at spaces and hyphens): as written, case-folded without
    marks or edge punctuation, and whether punctuation ends it (a comma parts it from the next)."""
    out = []
    for chunk in text.split():
        for part in chunk.split("-"):
            folded = letters(part.casefold())
            # a vowel sign ends a word in an abugida ("തകഴി"): only punctuation is cut
            core = folded.strip("".join({c for c in folded if not (c.isalnum() or _is_mark(c))}))
            if core:
                out.append((part.strip(), core, unicodedata.category(part.strip()[-1])[0] == "P"))
    return out


def _is_mark(character: str) -> bool:
    return unicodedata.category(character)[0] == "M"


def _names_another(written: str, core: str, known: set[str] | frozenset[str]) -> bool:
    """Whether a word beside a part of the reference makes it another name or value: a number,
    a capitalised word, or in a script without capitals any word, that the reference, the
    question and the stop list do not hold ("Nguyễn Trãi", "2744 Meter", "البحر الأحمر")."""
    if core in known:
        return False
    first = next((c for c in written if c.isalpha()), "")
    return core.isdigit() or first.isupper() or (bool(first) and first.lower() == first.upper())


def unfound_forms(answer: str, reference: str, ignore: frozenset[str]) -> list[str]:
    """Where a language the rule reads did not find the reference: the answer's words that may
    still name it in a way the rule does not know. A whole word of a longer reference with no
    other name or number beside it (a surname alone: "Moniuszko", not "Nguyễn Trãi"); a word
    whose first letters, at least ``NEAR_PREFIX`` and half the reference word's, are a reference
    word's ("Þingvöllum" for "Þingvellir"); or the whole answer, where none of its letters is in
    the reference's script. Numbers, short words and ``ignore`` (stop words, the question's
    words) are none of these; an answer that names something else is judged (empty)."""
    scripts = {_script(c) for c in reference if c.isalpha()}
    written = {_script(c) for c in answer if c.isalpha()}
    if scripts and written and not scripts & written:  # a name transliterated (numbers name nothing)
        return [answer.strip()]
    parts = {core for _, core, _ in as_written(reference)}
    names = {n for n in parts if len(n) >= 3 and not n.isdigit() and n not in ignore}
    words = as_written(answer)
    found = []
    for i, (_, core, ends) in enumerate(words):
        if core in ignore or core.isdigit() or len(core) < 3:
            continue
        if core in names:
            if len(parts) < 2:
                continue
            beside = [words[i - 1]] if i > 1 and not words[i - 1][2] else []
            beside += [words[i + 1]] if i + 1 < len(words) and not ends else []
            if not any(_names_another(w, c, parts | ignore) for w, c, _ in beside):
                found.append(core)
            continue
        if any(len(os.path.commonprefix([core, n])) >= max(NEAR_PREFIX, (len(n) + 1) // 2) for n in names):
            found.append(core)
    return found


@functools.cache
def inflection(code: str) -> Inflection:
    return Inflection(reading(code))
