"""The knowledge base as the language analysis reads it: each passage's index terms, an inverted
index over them and their inverse document frequencies, so "which passage holds this answer"
is asked of the whole knowledge base, not only of what a retriever returned."""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field

import pandas as pd

from rag_eval_pipeline.health.documents import CURRENT, document_id
from rag_eval_pipeline.language.analysis import analyzer, split_sentences
from rag_eval_pipeline.language.table import ENGLISH, Segmentation

# a number as written: digits with "." or "," between groups ("2.4", "2,4", "1,000", "02:00" is two)
_NUMBER = re.compile(r"(?<!\w)\d+(?:[.,]\d+)*")
_LETTERS = re.compile(r"[^\W\d_]+")
NUMBER_MARK = "#"  # a number's term: "#2.4", never a word of any language's analysis
# a capital letter standing alone ("Room B", "Plan C"): a name's letter, which the analysis drops
# as too short, read as a term of its own; not a unit after a number ("2 °C", "5 V"). In a
# question or a reference, not one before a point either (an initial, "J. Smith", which a passage
# may write "J.Smith" or not at all); in a passage, a point after it may end its sentence ("in
# Room B."), so it is read there too: a passage holds a few more terms, never fewer.
_LETTER = re.compile(r"(?<![\w.'’°-])(?<!\d )[^\W\d_](?![\w'’-])")
LETTER_MARK = "@"  # a lone letter's term: "@b"


def number_term(written: str) -> str:
    """A number's one term, however it is written: the decimal mark a point ("2,4" and "2.4"),
    groups of three after a separator read as thousands ("1,000" and "1.000" are "#1000"),
    leading zeros dropped ("02" is "#2")."""
    groups = re.split(r"[.,]", written)
    if len(groups) > 1 and all(len(g) == 3 for g in groups[1:]):
        whole, fraction = "".join(groups), ""
    else:
        whole, fraction = (
            "".join(groups[:-1]) if len(groups) > 1 else groups[0],
            groups[-1] if len(groups) > 1 else "",
        )
    whole = whole.lstrip("0") or "0"
    return f"{NUMBER_MARK}{whole}.{fraction}" if fraction else f"{NUMBER_MARK}{whole}"


SPELLED_UP_TO = 100  # numbers written in words are small; larger ones are written in digits


@functools.cache
def _spelled_numbers(language: str) -> dict[str, str]:
    """The language's number words, as ICU's spell-out rules write 0 to ``SPELLED_UP_TO`` in
    one word ("twelve", "zwölf", "einundzwanzig", "douze"), to their digits; none that is a stop
    word of the language (French "un" is more often "a"), and none where words are not written
    between spaces (a Korean syllable, a Chinese character is a number inside many words), where
    PyICU is not installed or where ICU has no rules: numbers are then read in digits only."""
    text_analyzer = analyzer(language)
    if text_analyzer.language.segmentation not in (Segmentation.ENGLISH, Segmentation.SPACED):
        return {}
    if text_analyzer.language.index_bigrams:
        return {}
    try:
        import icu
    except ImportError:
        return {}
    try:
        rules = icu.RuleBasedNumberFormat(icu.URBNFRuleSetTag.SPELLOUT, icu.Locale(language))
    except Exception:  # noqa: BLE001 - a locale ICU lacks
        return {}
    words = {}
    for number in range(SPELLED_UP_TO + 1):
        word = rules.format(number).replace("\u00ad", "").casefold()  # German's soft hyphens
        if _LETTERS.fullmatch(word) and word not in text_analyzer.index_stop_words:
            words.setdefault(word, str(number))
    return words


def _with_digits(text: str, language: str) -> str:
    """``text`` with its spelled-out numbers written in digits."""
    words = _spelled_numbers(language)
    if not words:
        return text
    return _LETTERS.sub(lambda m: words.get(m.group().casefold(), m.group()), text)


def terms_of(text: str, language: str, passage: bool = False) -> list[str]:
    """The index terms of ``text`` in its language (stems without stop words), the one place
    health reads words, with each number one term however it is written (digits, a decimal
    comma or point, a number word ICU spells out in the language); an unknown code reads as
    English rather than not at all; ``passage``: a lone letter before a point is read (``_LETTER``)."""
    code = language or ENGLISH
    try:
        text_analyzer = analyzer(code)
    except Exception:  # noqa: BLE001 - a code the table lacks: English analysis, said by the loader
        code, text_analyzer = ENGLISH, analyzer(ENGLISH)
    text = _with_digits(text, code)
    found: list[str] = []
    at = 0
    for number in _NUMBER.finditer(text):  # numbers never pass the analysis: "5" is an answer
        found += _with_letters(text, at, number.start(), text_analyzer, passage)
        found.append(number_term(number.group()))
        at = number.end()
    found += _with_letters(text, at, len(text), text_analyzer, passage)
    return found


def _with_letters(text: str, start: int, end: int, text_analyzer, passage: bool) -> list[str]:
    """The analysis's terms of ``text[start:end]`` with each capital letter standing alone
    (``_LETTER``) a term of its own, unless it is a word of the language ("A", "I", Spanish
    "Y"); read in the whole text, so a unit after a number ("5 V") is seen as one."""
    found: list[str] = []
    at = start
    for letter in _LETTER.finditer(text, start, end):
        written = letter.group()
        small = written.casefold()
        before_point = text[letter.end() : letter.end() + 1] == "."
        if (
            not written.isupper()
            or (before_point and not passage)
            or small in text_analyzer.stop_words
            or small in text_analyzer.index_stop_words
        ):
            continue
        found += text_analyzer.terms(text[at : letter.start()])
        found.append(f"{LETTER_MARK}{small}")
        at = letter.end()
    found += text_analyzer.terms(text[at:end])
    return found


@functools.cache
def _interrogative_terms(language: str) -> frozenset[str]:
    """The terms of the language's interrogatives (its lexicon's, none where it has no lexicon)."""
    try:
        lexicon = analyzer(language).lexicon
    except Exception:  # noqa: BLE001 - a code the table lacks reads as English in terms_of
        lexicon = analyzer(ENGLISH).lexicon
    if lexicon is None:
        return frozenset()
    return frozenset(t for word in lexicon.interrogatives for t in terms_of(word, language))


def question_terms(text: str, language: str) -> list[str]:
    """A question's terms as its content: ``terms_of`` without the words that make it a question
    ("how", "many", "often", "can"), which stand in few passages, so would weigh most in an
    idf-weighted share while saying nothing of what the question is about."""
    scaffolding = _interrogative_terms(language or ENGLISH)
    return [t for t in terms_of(text, language) if t not in scaffolding]


@dataclass
class KnowledgeView:
    """Passages with their terms, documents, titles and statuses; ``postings`` maps a term to
    the passages holding it."""

    passage_ids: list[str]
    documents: list[str]
    titles: list[str]
    texts: list[str]
    languages: list[str]
    statuses: list[str]
    terms: list[frozenset[str]]
    title_terms: list[frozenset[str]]
    # each passage's terms in order but lone letters, space-joined: where a phrase is looked for
    sequences: list[str]
    sentence_terms: list[tuple[frozenset[str], ...]]  # each passage's sentences' terms, in order
    postings: dict[str, set[int]] = field(default_factory=dict)
    idf: dict[str, float] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.passage_ids)

    def weight(self, term: str) -> float:
        """A term's inverse document frequency (a term no passage has: the highest)."""
        known = self.idf.get(term)
        return known if known is not None else math.log(1 + len(self.passage_ids) / 0.5)

    def holding_phrase(self, phrase: list[str]) -> set[int]:
        """The passages holding ``phrase`` (terms in order, nothing between them but stop words
        and punctuation): "New York City" is not "New York Mets ... city". A lone letter need only
        stand in the passage: a passage reads one before a point that the phrase may not ("Philip
        K. Dick"), so the order is of the words alone."""
        found = self.holding(set(phrase))
        words = [t for t in phrase if not t.startswith(LETTER_MARK)]
        if not words:
            return found
        joined = f" {' '.join(words)} "
        return {i for i in found if joined in self.sequences[i]}

    def holding(self, terms: set[str], share: float = 1.0) -> set[int]:
        """The passages holding at least ``share`` of ``terms``."""
        if not terms:
            return set()
        if share >= 1.0:
            found: set[int] | None = None
            for term in terms:
                found = (
                    set(self.postings.get(term, set()))
                    if found is None
                    else found & self.postings.get(term, set())
                )
                if not found:
                    return set()
            return found or set()
        counts: dict[int, int] = {}
        for term in terms:
            for i in self.postings.get(term, ()):
                counts[i] = counts.get(i, 0) + 1
        need = math.ceil(share * len(terms))
        return {i for i, n in counts.items() if n >= need}

    def coverage(self, i: int, terms: set[str]) -> float:
        """The idf-weighted share of ``terms`` passage ``i`` holds (0 for no terms)."""
        return self.share(self.terms[i], terms)

    def share(self, held: frozenset[str], terms: set[str]) -> float:
        """The idf-weighted share of ``terms`` that ``held`` has (0 for no terms)."""
        total = sum(self.weight(t) for t in terms)
        return sum(self.weight(t) for t in terms if t in held) / total if total else 0.0

    def best_covering(self, terms: set[str], limit: int = 5) -> list[tuple[int, float]]:
        """The passages covering most of ``terms`` (idf-weighted), best first."""
        # each term's weight once, added to the passages of its postings (in the order of
        # ``terms``, so each share is the very sum ``coverage`` takes): a walk of the postings,
        # not of every candidate's terms
        weights = [(t, self.weight(t)) for t in terms]
        total = sum(w for _, w in weights)
        held: dict[int, float] = {}
        for term, w in weights:
            for i in self.postings.get(term, ()):
                held[i] = held.get(i, 0.0) + w
        scored = sorted(((i, s / total) for i, s in held.items()), key=lambda x: (-x[1], x[0]))
        return scored[:limit]

    def sentence_with(self, i: int, terms: set[str]) -> str:
        """The sentence of passage ``i`` holding most of ``terms``: the evidence a reader checks
        (each sentence's terms as the view read them)."""
        sentences = split_sentences(self.texts[i]) or [self.texts[i]]
        held = self.sentence_terms[i]
        return sentences[max(range(len(sentences)), key=lambda j: len(terms & held[j]))]

    def names(self, r: int, i: int) -> bool:
        """Passage ``r`` names passage ``i``: holds most (idf-weighted) of ``i``'s title."""
        title = self.title_terms[i]
        if not title:
            return False
        total = sum(self.weight(t) for t in title)
        return sum(self.weight(t) for t in title if t in self.terms[r]) / total >= 0.5

    def windows(self, i: int) -> list[frozenset[str]]:
        """Passage ``i``'s terms two sentences at a time (each sentence with the next, or its one
        sentence): where an answer's words must stand together to be said, not scattered."""
        sentences = self.sentence_terms[i]
        if len(sentences) < 2:
            return list(sentences) or [self.terms[i]]
        return [a | b for a, b in zip(sentences, sentences[1:])]

    def window_texts(self, i: int) -> list[str]:
        """Passage ``i``'s windows (``windows``) as written, each after the passage's title: what
        a model reads to judge whether they answer a question."""
        sentences = split_sentences(self.texts[i]) or [self.texts[i]]
        joined = [" ".join(pair) for pair in zip(sentences, sentences[1:])] or sentences
        return [f"{self.titles[i]}: {text}" for text in joined]

    def is_current(self, i: int) -> bool:
        return self.statuses[i] == CURRENT


def knowledge_view(passages: pd.DataFrame, statuses: dict[str, str] | None = None) -> KnowledgeView:
    """The view of a ``kb_passages`` table; a document's status from ``statuses`` (current
    when unsaid)."""
    statuses = statuses or {}
    ids = [str(p) for p in passages["passage_id"]]
    languages = [str(x) for x in passages["language"]] if "language" in passages else [ENGLISH] * len(ids)
    titles = [str(t) for t in passages["title"]]
    texts = [str(t) for t in passages["passage"]]
    title_lists = [terms_of(t, code, passage=True) for t, code in zip(titles, languages)]
    sentence_lists = [
        [terms_of(sentence, code, passage=True) for sentence in split_sentences(p) or [p]]
        for p, code in zip(texts, languages)
    ]
    ordered = [
        title + [t for sentence in found for t in sentence]
        for title, found in zip(title_lists, sentence_lists)
    ]
    terms = [frozenset(found) for found in ordered]
    title_terms = [frozenset(found) for found in title_lists]
    postings: dict[str, set[int]] = {}
    for i, found in enumerate(terms):
        for term in found:
            postings.setdefault(term, set()).add(i)
    n = len(ids)
    idf = {term: math.log(1 + (n - len(held) + 0.5) / (len(held) + 0.5)) for term, held in postings.items()}
    documents = [document_id(p) for p in ids]
    return KnowledgeView(
        ids,
        documents,
        titles,
        texts,
        languages,
        [statuses.get(d, CURRENT) for d in documents],
        terms,
        title_terms,
        [f" {' '.join(t for t in found if not t.startswith(LETTER_MARK))} " for found in ordered],
        [tuple(frozenset(sentence) for sentence in found) for found in sentence_lists],
        postings,
        idf,
    )
