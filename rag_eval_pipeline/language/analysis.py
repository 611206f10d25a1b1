"""How text of one language is analysed, in one place: the words a sentence rule and lexical
faithfulness read, the terms the BM25 index holds, the tokens exact match and F1 compare, the
plain form abstentions are matched on, and the pieces a long document is chunked at. The index,
the reference metrics, faithfulness, abstention and chunking all ask an ``Analyzer``; nothing
else splits user text.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import string
import sys
import unicodedata
from typing import Any

from rag_eval_pipeline.language.inflection import SentenceReading, reading
from rag_eval_pipeline.language.lexicon import LEXICONS, Lexicon, words
from rag_eval_pipeline.language.morphology import ascii_digits, fold_arabic, fold_hindi, korean_content
from rag_eval_pipeline.language.segmenters import (
    icu_words,
    jieba_search_words,
    jieba_words,
    sudachi_words,
)
from rag_eval_pipeline.language.table import ENGLISH, Language, Segmentation, language

# English, exactly as before this module: HotpotQA's answer normalisation, bm25s's tokenizer and
# the lexical proxies' word split
_ENGLISH_INDEX_WORD = re.compile(r"(?u)\b\w\w+\b")
_ENGLISH_WORD = re.compile(r"[^\W_]+")
_ENGLISH_PIECES = re.compile(r"[^\W_]+|[\W_]+")
_APOSTROPHES = "'\u2019\u2018\u02bc`"
_APOSTROPHE_RUN = re.compile(f"[{_APOSTROPHES}]")
_TURKISH_SUFFIX = re.compile(f"[{_APOSTROPHES}]\\w+")
_HOTPOT_ARTICLES = re.compile(r"\b(a|an|the)\b")
_DROP_ASCII_PUNCTUATION = str.maketrans("", "", string.punctuation)
# where success markers are looked for (after NFKC: full-width marks are ASCII's): a sentence ends
# at . ! ? and a new line or the marks of scripts that have their own; a clause at a sentence's
# end, at , ; : a dash or a bracket, or the clause marks of scripts that have their own; a mark
# between two digits ("12.5", "1,000", "10:30") ends nothing
_SENTENCE_MARK = re.compile(r"[.!?\n\u3002\u061f\u0964]")
_CLAUSE_MARK = re.compile(r"[,;:()\[\]\u2013\u2014\u3001\u060c\u061b]")
_DIGIT_SEPARATOR = re.compile(r"(?<=\d)[.,:](?=\d)")
# a sentence ends at . ! ? followed by a space, or at the full-width marks of CJK text
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])(?=\S)")


@functools.cache
def _unicode_classes() -> tuple[Any, Any, Any, Any]:
    """Every other language's word classes, compiled when one is first analysed (English never
    needs them): a word is a run of letters, marks and digits (a Devanagari vowel sign or an
    Arabic vowel mark is part of its word, where Python's \w would split there)."""
    import regex

    return (
        regex.compile(r"[\p{L}\p{M}\p{N}]+"),
        regex.compile(r"[\p{L}\p{M}\p{N}]+|[^\p{L}\p{M}\p{N}]+"),
        regex.compile(r"\p{Han}"),
        regex.compile(r"\p{Hangul}"),
    )


# a small English stop list for the lexical proxies: words that carry no claim
ENGLISH_STOP_WORDS = words(
    """a an the and or but if of at by for with about against between into through during before
    after above below to from up down in out on off over under again further then once here there
    when where why how all any both each few more most other some such no nor not only own same so
    than too very can will just should now is are was were be been being have has had having do
    does did doing i me my we our you your he him his she her it its they them their what which who
    whom this that these those am as until while s t"""
)


def _word() -> Any:
    return _unicode_classes()[0]


def _pieces() -> Any:
    return _unicode_classes()[1]


def _han() -> Any:
    return _unicode_classes()[2]


def _hangul() -> Any:
    return _unicode_classes()[3]


@functools.cache
def _unicode_punctuation() -> dict[int, None]:
    """MLQA's punctuation: every character of a Unicode P* category, and ASCII's punctuation
    (which includes symbols such as $ and +), as a deletion table. Built once, when a language
    other than English first needs it."""
    marks = {c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)).startswith("P")}
    marks |= {ord(c) for c in string.punctuation}
    return dict.fromkeys(marks)


@functools.cache
def _stop_list(source: str | None) -> frozenset[str]:
    if not source:
        return frozenset()
    kind, name = source.split(":", 1)
    if kind == "bm25s":
        from bm25s.tokenization import _infer_stopwords

        return frozenset(_infer_stopwords(name))
    import stopwordsiso

    return frozenset(stopwordsiso.stopwords(name)) if stopwordsiso.has_lang(name) else frozenset()


class Analyzer:
    """The analysis of one language (see the module's docstring). Built once per language per
    process by ``analyzer(code)``; stems are kept per word."""

    def __init__(self, row: Language) -> None:
        self.language = row
        self.code = row.code
        self.lexicon: Lexicon | None = row.lexicon
        self.index_stop_words = _stop_list(row.stop_words)
        self._articles = frozenset(row.articles)
        self._stems: dict[str, str | None] = {}  # word -> its stem; None: a stop word
        self._compared: dict[str, str] = {}  # word -> its form in the sentence rule
        self._stemmer = None
        if row.stemmer:
            import Stemmer

            self._stemmer = Stemmer.Stemmer(row.stemmer)
        article_regex = row.article_pattern or (
            r"\b(" + "|".join(row.articles) + r")\b" if row.articles else None
        )
        self._answer_articles = re.compile(article_regex) if article_regex and not row.is_english else None
        self._answer_characters = re.compile(f"[{row.answer_characters}]") if row.answer_characters else None

    def __repr__(self) -> str:
        return f"Analyzer({self.code})"

    @functools.cached_property
    def reading(self) -> SentenceReading:
        """What the sentence rule reads in this language: its lemmas, stemmer and lexicon."""
        return reading(self.code)

    @functools.cached_property
    def stop_words(self) -> frozenset[str]:
        """The words that carry no claim, in the forms ``words`` gives: English's lexical
        proxies keep their own short list; every other language its stop list."""
        if self.language.is_english:
            return ENGLISH_STOP_WORDS
        return frozenset(self._entry(entry) for entry in self.index_stop_words)

    def _entry(self, entry: str) -> str:
        """A word of a list (a lexicon's, a stop list's) in the form ``words`` gives it; one
        that the analysis would cut in pieces stays as written (又は is not 又 and は)."""
        found = self.words(entry)
        return found[0] if len(found) == 1 else self._prepared(entry)

    @property
    def inside_words(self) -> bool:
        return self.language.inside_words

    # -- words: what the sentence rule and the lexical proxies read -------------------------------

    def _prepared(self, text: str) -> str:
        """NFKC and case folding (German "Meißen" is "meissen"), and the language's own folding
        (Arabic's vowel marks, tatweel and letter variants; Turkish's dotted capital I)."""
        text = unicodedata.normalize("NFKC", text).casefold()
        if self.language.is_english:
            return _APOSTROPHE_RUN.sub("", text)  # "don't" -> "dont", as HotpotQA's normalisation
        text = ascii_digits(text)
        if self.code == "ar":
            text = fold_arabic(text)
        elif self.code == "hi":
            text = fold_hindi(text)
        elif self.code == "th":
            text = text.replace("\u0e4d\u0e32", "\u0e33")  # NFKC splits SARA AM; Thai writes it whole
        elif self.code == "tr":
            text = text.replace("i\u0307", "i")  # "İstanbul" folds to i + a combining dot
            # a name's case and copula suffixes follow an apostrophe ("Ankara'dır", "1923'te")
            text = _TURKISH_SUFFIX.sub(",", text)  # and end it: "İstanbul'un Fatih" is two names
        return _APOSTROPHE_RUN.sub(" ", text)  # "l'homme" -> "l homme"; "Ankara'dır" -> "ankara dır"

    def _segment_run(self, run: str, morphemes: bool = True) -> list[str]:
        """The words of one run of letters, marks and digits: where the language has a
        morphology (Korean), its content morphemes unless ``morphemes`` is False (the index's
        plain runs); a lexicon's word that the dictionary cuts in pieces (または, น่าจะ) kept whole."""
        if morphemes and self.language.morphology == "kiwi":
            return [word for word, _ in korean_content(run)]
        found = self._dictionary_words(run)
        compounds = self._compounds if morphemes else frozenset()
        if not compounds or len(found) < 2:
            return found
        merged: list[str] = []
        i = 0
        while i < len(found):
            for width in (3, 2):
                whole = "".join(found[i : i + width])
                if i + width <= len(found) and whole in compounds:
                    merged.append(whole)
                    i += width
                    break
            else:
                merged.append(found[i])
                i += 1
        return merged

    @functools.cached_property
    def _compounds(self) -> frozenset[str]:
        """The lexicon's words, where a dictionary may cut one in pieces (ไม่ใช่ is ไม่ ใช่ in
        some sentences)."""
        if not self.inside_words or self.lexicon is None:
            return frozenset()
        return frozenset(self._prepared(entry) for entry in self._lexicon_entries())

    def _lexicon_entries(self) -> set[str]:
        listed: set[str] = set()
        assert self.lexicon is not None
        for item in dataclasses.fields(self.lexicon):
            value = getattr(self.lexicon, item.name)
            if isinstance(value, frozenset):
                listed |= value
            elif item.name in ("rejecting_phrases", "unsure"):
                listed |= {entry for phrase in value for entry in phrase}
        return listed

    def _dictionary_words(self, run: str) -> list[str]:
        segmentation = self.language.segmentation
        if segmentation is Segmentation.JIEBA:
            return jieba_words()(run) if _han().search(run) else [run]
        if segmentation is Segmentation.SUDACHI:
            return [w for w in sudachi_words(run) if w.strip()]
        if segmentation is Segmentation.ICU:
            return [w for w in icu_words(run, self.language.icu_locale or self.code) if _word().match(w)]
        return [run]

    def words(self, text: str) -> list[str]:
        """Case-folded words split at every punctuation mark, ASCII or not, without articles;
        languages without spaces segmented by their dictionary ("1909–1994" is two words here,
        where HotpotQA's normalisation keeps it one); outside English, each in the form the
        sentence rule compares (``compared``: Snowball's stem, Korean's content morphemes)."""
        text = self._prepared(text)
        if self.language.is_english:
            return [w for w in _ENGLISH_WORD.findall(text) if w not in self._articles]
        if self.language.morphology == "kiwi":
            return [word for word, _ in korean_content(text)]
        compared = self.compared
        return [
            compared(w)
            for run in _word().findall(text)
            for w in self._segment_run(run)
            if w not in self._articles
        ]

    def _index_words(self, text: str) -> list[str]:
        """``words`` as the index takes them: unstemmed (the index stems them itself), Korean
        as its spaced runs (the index cuts them into syllable pairs)."""
        text = self._prepared(text)
        return [
            w
            for run in _word().findall(text)
            for w in self._segment_run(run, morphemes=False)
            if w not in self._articles
        ]

    def compared(self, word: str) -> str:
        """The form a word is compared in by the sentence rule and the lexical proxies: its
        Snowball stem where Snowball has the language ("Moskau" and "Moskaus", "Москва" and
        "Москве" meet), else the word; English words as they are."""
        if self._stemmer is None or self.language.is_english:
            return word
        stem = self._compared.get(word)
        if stem is None:
            # a function word stays as written: Hindi's ने (by) is not the negation न
            stem = word if word in self._function_words else self._stemmer.stemWord(word)
            self._compared[word] = stem
        return stem

    @functools.cached_property
    def _function_words(self) -> frozenset[str]:
        """The stop list's and the lexicon's words as ``_prepared`` gives them, unstemmed."""
        listed = set(self.index_stop_words)
        if self.lexicon is not None:
            listed |= self._lexicon_entries()
        return frozenset(w for entry in listed for w in self._prepared(entry).split())

    @functools.cached_property
    def rule_lexicon(self) -> Lexicon | None:
        """The lexicon in the forms ``words`` gives (stemmed, Korean morphemes, Arabic folded),
        so that the rule finds its negations and hedges in any inflection; English's as written.
        Every language's framing words include English's: an agent's template ("Sources:",
        "Answer:") frames an answer in any language."""
        lexicon = self.lexicon
        if lexicon is None or self.language.is_english:
            return lexicon
        changes: dict[str, object] = {}
        if not self.language.morphology:  # Korean's lexicon is written in Kiwi's forms
            for item in dataclasses.fields(lexicon):
                value = getattr(lexicon, item.name)
                if isinstance(value, frozenset):
                    changes[item.name] = frozenset(self._entry(entry) for entry in value)
                elif item.name in ("rejecting_phrases", "unsure"):
                    changes[item.name] = tuple(
                        tuple(self._entry(entry) for entry in phrase) for phrase in value
                    )
        frame = changes.get("frame", lexicon.frame)
        changes["frame"] = frame | {self._entry(entry) for entry in LEXICONS[ENGLISH].frame}
        return dataclasses.replace(lexicon, **changes)  # type: ignore[arg-type]

    def capitalised(self, text: str) -> frozenset[str]:
        """The words of ``text`` written with a capital, as ``words`` gives them: what marks a
        name in a script with capitals ("Carl Gotthard Langhans erbaut"); empty in one without."""
        if not self.language.cased:
            return frozenset()
        found: set[str] = set()
        pattern = _ENGLISH_WORD if self.language.is_english else _word()
        for sentence in split_sentences(unicodedata.normalize("NFKC", text).replace("\n", ". ")):
            # a sentence's first word has its capital from its place, not from a name
            found |= {
                w for word in pattern.findall(sentence)[1:] if word[0].isupper() for w in self.words(word)
            }
        return frozenset(found)

    def after_articles(self, text: str) -> frozenset[str]:
        """The words that follow an article in ``text`` (as ``words`` gives them): a noun an
        article leads ("des Architekten Carl Gotthard Langhans") is a role before a name, not
        part of it."""
        if not self._articles:
            return frozenset()
        found = (_ENGLISH_WORD if self.language.is_english else _word()).findall(self._prepared(text))
        return frozenset(
            w for before, word in zip(found, found[1:]) if before in self._articles for w in self.words(word)
        )

    def pieces(self, text: str, keep: str = "", written: bool = False) -> tuple[list[str], list[bool]]:
        """``words`` with, for each, whether punctuation follows it. A language whose words stand
        inside longer runs keeps every copy of ``keep`` (a reference answer) whole, so that it
        is found as its own words wherever the text holds it, whatever the dictionary makes of
        the run around it. ``written``: each word as written (case-folded), not as compared,
        for the inflection of a spaced language (``language/inflection.py``)."""
        text = self._prepared(text)
        if self.language.morphology == "kiwi":
            analysed = korean_content(text)
            return [word for word, _ in analysed], [mark for _, mark in analysed]
        if keep and self.inside_words:
            kept = " ".join(self.words(keep))
            parts = self._kept_apart(text, "".join(self.words(keep)), kept)
        else:
            parts = [(text, False)]
        found: list[str] = []
        breaks: list[bool] = []
        english = self.language.is_english
        pieces = _ENGLISH_PIECES if english else _pieces()
        articles = self._articles
        for part, is_kept in parts:
            if is_kept:
                found += part.split()
                breaks += [False] * len(part.split())
                continue
            for piece in pieces.findall(part):
                if piece[0].isalnum() or _word().match(piece):
                    if english:
                        if piece not in articles:
                            found.append(piece)
                            breaks.append(False)
                        continue
                    for word in self._segment_run(piece):
                        if word not in articles:
                            found.append(word if written else self.compared(word))
                            breaks.append(False)
                elif breaks and (not piece.isspace() or "\n" in piece):  # a mark or a new line
                    breaks[-1] = True
        return found, breaks

    @staticmethod
    def _kept_apart(text: str, surface: str, kept: str) -> list[tuple[str, bool]]:
        if not surface or surface not in text:
            return [(text, False)]
        parts: list[tuple[str, bool]] = []
        for number, part in enumerate(text.split(surface)):
            if number:
                parts.append((kept, True))
            if part:
                parts.append((part, False))
        return parts

    def content_words(self, text: str) -> list[str]:
        """The words that carry a claim: ``words`` without stop words."""
        return [w for w in self.words(text) if w not in self.stop_words]

    def vocabulary(self, passage: str) -> frozenset[str] | str:
        """What a word is looked up in: a passage's words, or (where words stand inside longer
        runs) its plain text, searched for the word inside it."""
        if self.inside_words:
            return "".join(self.words(passage))
        return frozenset(self.words(passage))

    # -- clauses: what success markers are matched in ------------------------------------------------

    def sentences(self, text: str) -> list[list[list[str]]]:
        """``text`` as sentences, each as its clauses, each as its words as written: NFKC, case-
        and width-folded, unstemmed, articles kept; a language without spaces segmented by its
        dictionary, Korean as its content morphemes (a particle is not part of its word). What
        success markers are matched in."""
        text = _DIGIT_SEPARATOR.sub(" ", self._prepared(text))
        sentences: list[list[list[str]]] = [[[]]]

        def cut(piece: str) -> None:
            if _SENTENCE_MARK.search(piece):
                sentences.append([[]])
            elif _CLAUSE_MARK.search(piece):
                sentences[-1].append([])

        if self.language.morphology == "kiwi":
            for word, mark in korean_content(text):
                sentences[-1][-1].append(word)
                if mark:  # Kiwi says a mark follows, not which: each ends a sentence
                    sentences.append([[]])
        else:
            english = self.language.is_english
            for piece in (_ENGLISH_PIECES if english else _pieces()).findall(text):
                if piece[0].isalnum() or _word().match(piece):
                    sentences[-1][-1] += [piece] if english else self._segment_run(piece, morphemes=False)
                else:
                    cut(piece)
        return [[c for c in s if c] for s in sentences if any(s)]

    def forms(self, found: list[str]) -> list[str]:
        """Each word's Snowball stem where Snowball has the language (English's too), stop words
        kept: where a scenario asks for a marker in any of its word forms."""
        return list(self._stemmer.stemWords(found)) if self._stemmer is not None else list(found)

    # -- index terms ------------------------------------------------------------------------------

    def _stem_all(self, found: list[str], stop: frozenset[str] = frozenset()) -> list[str]:
        """The stems of ``found`` without its ``stop`` words: each distinct word looked up once a
        process (a stop word kept as None), the new ones stemmed in one call to Snowball."""
        stems = self._stems
        new = [word for word in set(found) if word not in stems]
        if new:
            kept = [word for word in new if word not in stop]
            stems.update(dict.fromkeys(new))  # stop words stay None
            if self._stemmer is not None:
                stems.update(zip(kept, self._stemmer.stemWords(kept)))
            else:
                stems.update(zip(kept, kept))
        return [stem for word in found if (stem := stems[word]) is not None]

    def terms(self, text: str) -> list[str]:
        """The BM25 terms of ``text``: English as bm25s's tokenizer makes them (two characters or
        more, its stop words, Snowball's English stems); every other language its words (jieba's
        search mode for Chinese, Sudachi's short normalised units for Japanese, syllable bigrams
        for Korean) without its stop words, Snowball-stemmed where Snowball has the language."""
        stop = self.index_stop_words
        if self.language.is_english:
            return self._stem_all(_ENGLISH_INDEX_WORD.findall(text.lower()), stop)
        segmentation = self.language.segmentation
        prepared = self._prepared(text)
        if segmentation is Segmentation.JIEBA:
            search = jieba_search_words()
            found = [
                w
                for run in _word().findall(prepared)
                for w in (search(run) if _han().search(run) else [run])
                if _word().match(w)
            ]
        elif segmentation is Segmentation.SUDACHI:
            found = [
                w.lower()
                for run in _word().findall(prepared)
                for w in sudachi_words(run, short=True, normalized=True)
                if _word().match(w)
            ]
        else:
            found = self._index_words(text)
        if self.language.index_bigrams:
            found = [b for w in found if w not in stop for b in _bigrams(w)]
        return self._stem_all(found, stop)

    # -- answers: exact match, F1, abstention ------------------------------------------------------

    def answer_normal(self, text: str) -> str:
        """The answer as exact match and F1 compare it: HotpotQA's normalisation for English;
        otherwise MLQA's (lower case, Unicode punctuation removed, the language's articles
        removed, single spaces), with each character of ``answer_characters`` a token of its own."""
        if self.language.is_english:
            text = text.lower().translate(_DROP_ASCII_PUNCTUATION)
            return " ".join(_HOTPOT_ARTICLES.sub(" ", text).split())
        text = text.lower().translate(_unicode_punctuation())
        if self._answer_articles is not None:
            text = self._answer_articles.sub(" ", text)
        if self._answer_characters is None:
            return " ".join(text.split())
        return " ".join(t for t in _mixed_segmentation(text, self._answer_characters) if t.strip())

    def answer_tokens(self, text: str) -> list[str]:
        return self.answer_normal(text).split()

    def plain(self, text: str) -> str:
        """What abstention patterns are matched on: English's answer normalisation; otherwise
        lower case without punctuation, single spaces (articles and characters as written)."""
        if self.language.is_english:
            return self.answer_normal(text)
        return " ".join(text.lower().translate(_unicode_punctuation()).split())

    # -- documents ----------------------------------------------------------------------------------

    def segments(self, text: str) -> list[str]:
        """``text`` cut into pieces that join back into it, each a word or what stands between
        words: where a long document is chunked. Spaced languages are cut at spaces."""
        segmentation = self.language.segmentation
        if segmentation is Segmentation.JIEBA:
            return list(jieba_words()(text))
        if segmentation is Segmentation.SUDACHI:
            return sudachi_words(text)
        if segmentation is Segmentation.ICU:
            return icu_words(text, self.language.icu_locale or self.code)
        return re.findall(r"\S+|\s+", text)

    @staticmethod
    def is_word(segment: str) -> bool:
        return bool(_word().search(segment))


def _mixed_segmentation(text: str, characters: re.Pattern[str]) -> list[str]:
    """MLQA's mixed segmentation: each character of the class is a token; the text between them
    is split at whitespace."""
    tokens: list[str] = []
    pending = ""
    for char in text:
        if characters.match(char):
            tokens += pending.split()
            pending = ""
            tokens.append(char)
        else:
            pending += char
    return tokens + pending.split()


def _bigrams(word: str) -> list[str]:
    """A Hangul word as its syllable pairs (서울은 -> 서울 울은), as Lucene's CJK bigram filter
    indexes Korean; other words and single syllables as they are."""
    if len(word) < 2 or not _hangul().search(word):
        return [word]
    return [word[i : i + 2] for i in range(len(word) - 1)]


def split_sentences(text: str) -> list[str]:
    """Sentences of a passage in any language: after . ! ? and a space, or after 。！？."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


@functools.cache
def analyzer(code: str = ENGLISH) -> Analyzer:
    """The analyzer of a language code (an ``UnknownLanguageError`` for an unknown code)."""
    return Analyzer(language(code))


def analysis_of(language: str | Analyzer) -> Analyzer:
    """A case's language resolved once into its analysis (with its ``reading``), which the
    metrics receive and pass down; a code (a caller that has only the string) is looked up."""
    return language if isinstance(language, Analyzer) else analyzer(language)
