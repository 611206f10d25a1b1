"""Whether an answer says the reference answer, the way agents answer: in a sentence that may
restate the question and name its sources. Exact match and F1 stay HotpotQA's own
(``reference.py``); this is the rule behind the offline ``correctness``, measured against a
labelled set of answers in many forms (``benchmarks/answer_equivalence.py``; figures in
docs/judges-and-statistics.md).

An answer is credited when the reference stands in it as a whole run of words that nothing
rejects, and the rest carries no other claim: every content word outside the reference is the
question's, a source's title, a word that frames an answer ("according to the passages"), or
one of at most ``NOVEL_WORDS`` others, none of them joined to the reference (a longer name, "X
and Y"). A word beside the reference makes a longer name only on evidence: a capital, or, in a
script without capitals, the passages holding the two as one phrase. It is refused when the
mention is negated ("not X", "rather than X", "X is wrong"), offered as one option ("X or Y"),
contrasted ("X, but Y"), hedged beyond the question ("it could be"), or buried in a long text
(pasted passages). A yes/no reference is matched by the answer's leading (else final) yes or no.

Every language with a lexicon (``language/lexicons.toml``) is read the same way, through its
analyzer: its words in the forms it compares (case-folded, Snowball-stemmed, Arabic folded,
Korean's content morphemes; a dictionary's segmentation where words are not spaced), its
negations (after the mention where the language puts them: Japanese "X ではない"), hedges,
options and framing words. Every spaced language but English finds the reference through its
inflection too (``language/inflection.py``: "Львом Толстым" for "Лев Толстой", "w Krakowie" for
"Kraków"), and a title before it ("Emperor", "सम्राट", "Dr.") names it, not a longer name. A
language without a lexicon is read the same way with its negations, hedges, options and
contrasts unread: a sentence that holds a word beyond the question's, the reference's and the
passages' (a word of the stop list only where the passages hold it beside the reference) may
carry them, and is not judged (absent, never 0; ``Verdict.judged``); so is one where the
reference is not found but a word may be a form of it the rule does not know. Where lemmas or
stems cover such a language and a stop list holds its closed classes, its content words are
read as in any language and a credited case says which checks were not made."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, fields

from rag_eval_pipeline.language.analysis import ENGLISH_STOP_WORDS, Analyzer, analysis_of, analyzer
from rag_eval_pipeline.language.inflection import (
    Inflection,
    as_written,
    inflection,
    letters,
    near_forms,
    unfound_forms,
)
from rag_eval_pipeline.language.lexicon import LEXICONS, TITLES, Lexicon
from rag_eval_pipeline.language.table import ENGLISH

_CITATION = re.compile(r"\[\s*\d+(?:\s*[,;-]\s*\d+)*\s*\]|\(\s*\d{1,2}\s*\)")
NOVEL_WORDS = 3  # content words the rest of a credited answer may add that nothing explains
MORE_WORDS = "more words than an answer needs"  # the reason beyond NOVEL_WORDS
HELD_WORDS = 4  # content words of the passages a credited answer may add besides (a detail restated)
NEGATION_TAIL = 6  # where negation follows, the words after a mention that may negate it
LISTED_AFTER = 2  # words of no claim (a preposition, an article) between "and" and what it lists
MIN_NAME = 3  # letters of the name a reference without its article must keep ("Yr Wyddfa": "wyddfa")
PREFIX = 5  # a word is the question's when it shares this many first letters with one of its words
STOP_WORDS = ENGLISH_STOP_WORDS  # English's short list of words that carry no claim


def lexical_tokens(text: str, language: str | Analyzer = "en") -> list[str]:
    """Lower-case words split at every punctuation mark, ASCII or not, apostrophes dropped, no
    articles: "1909–1994" is two words here, where the official normalisation keeps it one."""
    return analysis_of(language).words(text)


@dataclass(frozen=True)
class Verdict:
    """How an answer stands to the reference: ``credited`` (it says it), or why not;
    ``contradicts`` when it says the opposite (the other yes/no, a rejected mention); not
    ``judged`` when the answer holds words the language's rule cannot read (the reason says
    which checks were not made): its correctness is absent, never 0; credited with ``unread``
    where a lemmatizer or stemmer read it but no lexicon its negations and hedges."""

    credited: bool
    reason: str
    contradicts: bool = False
    judged: bool = True
    unread: str = ""  # the checks not made where it was credited ("negation ... not read in Malayalam")


def _runs(tokens: Sequence[str], run: Sequence[str]) -> list[int]:
    width = len(run)
    return [i for i in range(len(tokens) - width + 1) if list(tokens[i : i + width]) == list(run)]


def _without(words: list[str], breaks: list[bool], run: Sequence[str]) -> tuple[list[str], list[bool]]:
    """The words without every copy of ``run`` (a copy of the question, a cited title): its
    words are not claims, and a break stands where it was."""
    width = len(run)
    starts = set(_runs(words, run)) if width else set()
    kept_words, kept_breaks, i = [], [], 0
    while i < len(words):
        if i in starts:
            if kept_breaks:
                kept_breaks[-1] = True
            i += width
            continue
        kept_words.append(words[i])
        kept_breaks.append(breaks[i])
        i += 1
    return kept_words, kept_breaks


def _rejected(
    tokens: Sequence[str], start: int, width: int, lexicon: Lexicon, breaks: Sequence[bool] = ()
) -> bool:
    """A mention that the answer negates: "not X", "rather than X", "X is wrong", "X is not";
    where negation follows (Japanese, Korean), a negator just after it; where a language says
    so, a negator just after the mention with no mark between ("Segre no passa")."""
    before = list(tokens[max(0, start - lexicon.negation_reach) : start])
    end = start + width
    if (
        lexicon.negation_after_mention
        and end < len(tokens)
        and not (end - 1 < len(breaks) and breaks[end - 1])
        and lexicon.negates(tokens[end])
    ):
        return True
    after = list(tokens[start + width : start + width + 3])
    # the predicate's tail: "1958年ではありません" is で は あり ませ ん
    tail = tokens[start + width : start + width + NEGATION_TAIL]
    if (lexicon.negation_follows or lexicon.negation_either_side) and any(lexicon.negates(t) for t in tail):
        return True
    if not lexicon.negation_follows and any(lexicon.negates(t) for t in before):
        return True
    if any(tuple(before[-len(p) :]) == p for p in lexicon.rejecting_phrases):
        return True
    if any(t in lexicon.wrong for t in after):
        return True
    return len(after) >= 2 and after[0] in lexicon.copulas and lexicon.negates(after[1])


def _offered(tokens: Sequence[str], start: int, width: int, lexicon: Lexicon) -> bool:
    """A mention offered as one option, or listed through a joined "and": "X or Y", "either
    X", "Y or X"; the word beside it with "or" or "and" joined (Hebrew "X ובלבוב", Tamil
    "X-இலோ Y-இலோ")."""
    window = [*tokens[max(0, start - 3) : start], *tokens[start + width : start + width + 3]]
    if any(t in lexicon.alternatives for t in window):
        return True
    beside = [tokens[i] for i in (start - 1, start + width) if 0 <= i < len(tokens)]
    return any(
        len(t) > len(a) + 2 and (t.startswith(a) if a in lexicon.option_prefixes else t.endswith(a))
        for t in beside
        for a in (*lexicon.option_prefixes, *lexicon.option_suffixes)
    )


def _from(word: str, vocabulary: set[str], inside: str = "") -> bool:
    """A word the question (or the reference, a title) explains: one of its words, a word with
    its first ``PREFIX`` letters, or, where words are not spaced, a word made of its characters."""
    if word in vocabulary:
        return True
    if inside:
        return all(character in inside for character in word)
    return len(word) >= PREFIX and any(len(v) >= PREFIX and v[:PREFIX] == word[:PREFIX] for v in vocabulary)


def _polarity(tokens: Sequence[str], lexicon: Lexicon) -> str | None:
    """The yes or no an answer leads with ("Yes, ...", "The answer is no"), else ends with ("...,
    so yes"); a "no" inside a sentence ("There is no doubt") is neither."""
    answers = lexicon.yes | lexicon.no

    def side(word: str) -> str:
        return "yes" if word in lexicon.yes else "no"

    for lead in ([], ["answer"], ["answer", "is"]):
        if tokens[: len(lead)] == lead and len(tokens) > len(lead) and tokens[len(lead)] in answers:
            return side(tokens[len(lead)])
    return side(tokens[-1]) if tokens and tokens[-1] in answers else None


def _joined(
    words: Sequence[str], breaks: Sequence[bool], start: int, width: int, named, listed, joiners, skips=0
) -> bool:
    """Whether the mention runs on into another name with no punctuation between ("Chicago
    Bulls" for "Chicago": a word ``named`` allows, told the side it stands on: -1 before, 1
    after), or is listed with another through "and" ("X and Y", "X e a Y": any word ``listed``
    allows, within ``skips`` words of no claim after the "and": ``LISTED_AFTER`` where words are
    spaced; where they are not, a particle after "and" closes the phrase: 白鷺城とも)."""
    for step, edge in ((-1, start - 1), (1, start + width)):
        position, through, skipped = edge, False, 0
        while 0 <= position < len(words) and not breaks[min(position, position - step)]:
            if words[position] in joiners and not through:
                position, through = position + step, True
                continue
            if listed(words[position]) if through else named(words[position], step):
                return True
            if through and skipped < skips:  # "X e a Y", "X и в Y": the other's preposition
                position, skipped = position + step, skipped + 1
                continue
            break
    return False


def _aligned(text: Analyzer, prediction: str, truth: Sequence[str], explained: str = "") -> bool:
    """Where words are not spaced: whether the dictionary, left to itself, cuts the answer at
    both edges of some copy of the reference (紫禁城在|1420年|落成 does; 南京路 holds 南京 inside
    one word, a longer name), or holds it in a word whose other characters the question
    explains (杭州市 for 杭州, asked "哪座城市")."""
    words = text.words(prediction)
    joined = "".join(words)
    edges, position = [0], 0
    for word in words:
        position += len(word)
        edges.append(position)
    surface = "".join(truth)
    start = joined.find(surface)
    while start >= 0:
        end = start + len(surface)
        left = max(e for e in edges if e <= start)
        right = min(e for e in edges if e >= end)
        if all(c in explained for c in joined[left:start] + joined[end:right]):
            return True
        start = joined.find(surface, start + 1)
    return False


def says_answer(
    prediction: str,
    ground_truth: str,
    question: str = "",
    sources: Sequence[str] = (),
    language: str | Analyzer = "en",
    passages: Sequence[str] = (),
) -> Verdict:
    """Whether ``prediction`` says ``ground_truth`` (see the module's rule) in ``language``.
    ``question`` and the ``sources`` (titles of the contexts the answer had) are words it may
    repeat; the ``passages`` it had say which longer names exist (in a script without capitals,
    a word beside the reference makes a longer name only where the passages hold the two as one
    phrase). In a language without a lexicon, a sentence the rule would credit but that holds
    words it cannot read is not judged."""
    text = analysis_of(language)
    lexicon = text.rule_lexicon
    unread = lexicon is None
    if lexicon is None:
        lexicon = _unread_lexicon(text.code)
    truth, truth_breaks = text.pieces(ground_truth)
    asked = text.words(question)
    cleaned = _CITATION.sub(" ", prediction)
    words, breaks = text.pieces(cleaned, keep=ground_truth)
    forms = _inflects(text)
    truth_written: list[str] = []
    if forms is not None:  # inflected copies of the reference read as the reference
        truth_written = text.pieces(ground_truth, written=True)[0]
        written = text.pieces(cleaned, keep=ground_truth, written=True)[0]
        found = _inflected(words, written, truth, truth_written, forms)
        if not _runs(found, truth) and _leading_article(text, truth):
            # "O Miño" said "no Miño", "Yr Wyddfa" "yw'r Wyddfa": the name without its article
            truth, truth_breaks, truth_written = truth[1:], truth_breaks[1:], truth_written[1:]
            found = _inflected(words, written, truth, truth_written, forms)
        words = found
    if len(asked) >= 3:
        words, breaks = _without(words, breaks, asked)
    titles = [text.words(s) for s in sources]
    if not truth or not words:
        return Verdict(False, "empty")
    if len(truth) == 1 and truth[0] in lexicon.yes | lexicon.no:
        polarity = _polarity(words, lexicon)
        if polarity is None:
            return Verdict(False, "no yes or no")
        right = polarity == ("yes" if truth[0] in lexicon.yes else "no")
        return Verdict(right, "yes/no" if right else "the other yes/no", contradicts=not right)
    if text.inside_words and not _runs(words, truth):
        words, breaks = _regrouped(words, breaks, truth)
    explained = "".join(asked) + "".join(t for title in titles for t in title)
    aligned = _aligned(text, prediction, truth, explained) if text.inside_words else True
    names = None if text.inside_words else _Names(text, prediction, passages)
    held = frozenset(w for passage in passages for w in _passage_words(text.code, passage))
    claim = _Claim(words, breaks, truth, truth_breaks, asked, titles, held)
    verdict = _says_named(text, lexicon, claim, aligned, names)
    if not unread:
        if verdict.reason == "not mentioned" and forms is not None:
            return _unfound_form(prediction, ground_truth, question, text) or verdict
        if verdict.reason.endswith(MORE_WORDS) and not text.language.is_english:
            # the bound on words nothing explains was measured on English answers only
            weighed = f"which may carry another claim the rule cannot weigh in {text.language.name}"
            return Verdict(False, f"{verdict.reason}, {weighed}", judged=False)
        return verdict
    if verdict.reason == "not mentioned":
        near = near_forms(prediction, ground_truth)
        if near:  # a form of it the rule may not know: not read, never 0
            unknown = f"{', '.join(near)}: maybe a form of the reference the rule does not know"
            return Verdict(False, f"{text.reading.unread_phrase} ({unknown})", judged=False)
        return verdict
    if not verdict.credited:  # a longer name, a list or more words: what it says is not read here
        return Verdict(False, f"{text.reading.unread_phrase} ({verdict.reason})", judged=False)
    found = _unread_words(text, claim, truth_written, passages, forms)
    if found:
        return Verdict(False, f"{text.reading.unread_phrase} ({', '.join(found)})", judged=False)
    return Verdict(True, verdict.reason, unread=text.reading.unread_phrase)


@functools.cache
def _never_names(code: str) -> frozenset[str]:
    """A language's words that name no answer, as ``unfound_forms`` compares words: its stop
    words, articles and the closed word classes of its lexicon ("അല്ലേ", "isn't it")."""
    text = analyzer(code)
    lexicon = text.language.lexicon
    closed = [
        word
        for item in (fields(lexicon) if lexicon is not None else ())
        if isinstance(value := getattr(lexicon, item.name), frozenset)
        for word in value
    ]
    return frozenset(letters(w.casefold()) for w in (*text.stop_words, *text.language.articles, *closed))


def _unfound_form(prediction: str, ground_truth: str, question: str, text: Analyzer) -> Verdict | None:
    """In a language whose inflection the rule reads, an answer where the reference is not
    found but a word shares its stem or is a part of it ("Þingvöllum" for "Þingvellir",
    "Raiņa" for "Rainis", "Moniuszko" for "Stanisław Moniuszko"): the rule does not know that
    form, or whether the part names the same one. Not judged, never 0."""
    ignore = _never_names(text.language.code)
    asked = frozenset(core for _, core, _ in as_written(question))
    near = unfound_forms(prediction, ground_truth, ignore | asked)
    if not near:
        return None  # it names something else: judged
    return Verdict(
        False,
        f"{', '.join(near)}: maybe a form or a part of the reference the rule does not know in "
        f"{text.language.name}",
        judged=False,
    )


def _leading_article(text: Analyzer, truth: list[str]) -> bool:
    """Whether a reference of two or more words begins with an article, which a sentence may
    contract with a preposition or elide ("na Coruña", "yw'r Wyddfa"): one of the language's
    articles or stop words, or, where it has neither list, a word of one or two letters."""
    if len(truth) < 2 or not any(len(word) >= MIN_NAME for word in truth[1:]):
        return False
    first = truth[0]
    if text.language.articles or text.stop_words:
        return first in text.language.articles or first in text.stop_words
    return len(first) <= 2 and not first.isdigit()


@functools.cache
def _unread_lexicon(code: str) -> Lexicon:
    """A language without a lexicon: only English's framing words (an agent's template frames
    an answer in any language), and the titles before a name."""
    text = analyzer(code)
    return Lexicon(frame=frozenset(w for entry in LEXICONS[ENGLISH].frame for w in text.words(entry)))


def _inflects(text: Analyzer) -> Inflection | None:
    """The inflection a spaced language's reference is found through (English's words, Korean's
    morphemes and the unspaced scripts are read as they are)."""
    if text.language.is_english or text.inside_words or text.language.morphology:
        return None
    return inflection(text.code)


def _inflected(
    words: list[str], written: list[str], truth: list[str], truth_written: list[str], forms: Inflection
) -> list[str]:
    """The answer's words with each run of inflected forms of the reference written as the
    reference ("w Krakowie" reads "w kraków")."""
    width = len(truth)
    if not width or len(written) != len(words) or len(truth_written) != width:
        return words
    out = list(words)
    i = 0
    while i <= len(out) - width:
        if out[i : i + width] != truth and all(
            forms.same(written[i + k], truth_written[k]) for k in range(width)
        ):
            out[i : i + width] = truth
            i += width
        else:
            i += 1
    return out


@functools.cache
def _titles(code: str) -> frozenset[str]:
    text = analyzer(code)
    return frozenset(found[0] for title in TITLES if len(found := text.words(title)) == 1)


def _unread_words(
    text: Analyzer, claim: _Claim, truth_written: list[str], passages: Sequence[str], forms: Inflection | None
) -> list[str]:
    """The words of an answer a language without a lexicon cannot read: any may negate, hedge,
    list or contrast ("chyba", "nie", "albo"), unless the question, a source's title, a title
    before a name or an agent's framing word explains it, or the passages hold it: a content
    word anywhere in them, a word of the stop list only just before or after the reference
    (the "w" of "w Krakowie"; a "nie" elsewhere in a passage explains nothing) or beside the
    same neighbour as there, or copied with its neighbour from the question; where lemmas or
    stems know the language, a content word's other form explains it too."""
    words, breaks, truth, asked, titles = claim.words, claim.breaks, claim.truth, claim.asked, claim.titles
    width = len(truth)
    starts = _runs(words, truth)
    inside = {i for s in starts for i in range(s, s + width)}
    stop = text.stop_words
    # the question's words as they are (a prefix would take "doğulmayıb", not born, for the
    # question's "doğulub"), its function words only where the answer copies them with a
    # neighbour ("urodził się"); titles, a title before a name, an agent's framing words
    known = {w for w in asked if w not in stop} | {t for title in titles for t in title}
    known |= _titles(text.code) | _unread_lexicon(text.code).frame
    pairs = set(zip(asked, asked[1:]))
    copied = {j for i in range(len(words) - 1) if (words[i], words[i + 1]) in pairs for j in (i, i + 1)}
    held = frozenset(w for passage in passages for w in _passage_pieces(text.code, passage)[0])
    # a content word's other form (its lemma, its stem: "naskiĝis" for "naskiĝas") is explained too
    lemmas = forms if text.reading.covered else None
    # where lemmas or stems know the language and a stop list holds its closed classes (where
    # negation, options, hedges and contrasts are said), a content word apart from the reference
    # is read as in any language (counted by the rule); one joined to it may list ("X र Y")
    reads_content = lemmas is not None and bool(stop)
    content = (held | known) - stop
    held_forms = frozenset(f for w in content for f in lemmas.forms(w)) if lemmas else frozenset()
    pieces = [_passage_pieces(text.code, passage)[0] for passage in passages]
    bigrams = {pair for compared in pieces for pair in zip(compared, compared[1:])}
    found: list[str] = []
    for i, word in enumerate(words):
        if i in inside or i in copied or word in known:
            continue
        # the passages say it with the same other neighbour ("en 1859"), and no mark but a
        # comma's parts it from the reference: joined to the reference, it may list ("X र Y")
        joined = (i - 1 in inside and not breaks[i - 1]) or (i + 1 in inside and not breaks[i])
        if word in stop and not joined and any(
            (words[j], words[j + 1]) in bigrams
            for j in (i - 1, i)
            if 0 <= j < len(words) - 1 and not inside & {j, j + 1}
        ):
            continue
        sides = ((-1, i + 1, i - 1), (1, i - width, i + 1))  # (side, reference's start, far word)
        adjacent = [(step, far) for step, edge, far in sides if edge in starts]
        if not adjacent:
            other_form = lemmas is not None and bool(lemmas.forms(word) & held_forms)
            if word in stop or not (word in held or reads_content or other_form):
                found.append(word)
            continue
        # beside the reference: its own preposition or case word, with nothing of another claim
        # on its far side ("Unguja na Pemba", "Kür və Araz": that word joins another name)
        clean = [
            step
            for step, far in adjacent
            if far < 0 or far >= len(words) or far in copied or words[far] in known
        ]
        if clean and (
            (word in held and word not in stop)
            or any(
                _held_beside(text.code, passage, word, step, tuple(truth_written))
                for passage in passages
                for step in clean
            )
        ):
            continue
        found.append(word)
    return found


@functools.lru_cache(maxsize=4_096)
def _passage_pieces(language: str, passage: str) -> tuple[list[str], list[str]]:
    text = analyzer(language)
    return text.pieces(passage)[0], text.pieces(passage, written=True)[0]


def _held_beside(language: str, passage: str, word: str, step: int, truth_written: tuple[str, ...]) -> bool:
    """Whether ``passage`` holds ``word`` just before (``step`` -1) or after (1) a form of the
    reference: the preposition or particle the reference is said with ("w" of "w Krakowie")."""
    compared, written = _passage_pieces(language, passage)
    forms = inflection(language)
    width = len(truth_written)
    for i, found in enumerate(compared):
        if found != word:
            continue
        start = i + 1 if step < 0 else i - width
        if start >= 0 and start + width <= len(written) and all(
            forms.same(written[start + k], truth_written[k]) for k in range(width)
        ):
            return True
    return False


def _regrouped(words: list[str], breaks: list[bool], truth: list[str]) -> tuple[list[str], list[bool]]:
    """Where words are not spaced, the answer's words with each run that spells the reference
    cut as the reference is (세종대왕께서 gives 세종대왕, 세종대왕 alone 세종 대왕: one name cut two ways)."""
    surface = "".join(truth)
    out_words: list[str] = []
    out_breaks: list[bool] = []
    i = 0
    while i < len(words):
        joined, j = "", i
        while j < len(words) and len(joined) < len(surface):
            joined += words[j]
            j += 1
        if joined == surface and (j - i > 1 or len(truth) > 1) and not any(breaks[i : j - 1]):
            out_words += truth
            out_breaks += [False] * (len(truth) - 1) + [breaks[j - 1]]
            i = j
        else:
            out_words.append(words[i])
            out_breaks.append(breaks[i])
            i += 1
    return out_words, out_breaks


class _Names:
    """What marks a word beside the reference as part of a longer name, in a spaced language: a
    capital in a script that has them ("Chicago Bulls"), or, in one without, the passages holding
    the two words as one phrase; never a noun an article leads ("des Architekten Carl Gotthard
    Langhans": a role before a name), nor a predicate after it ("जयपुर प्रसिद्ध है")."""

    def __init__(self, text: Analyzer, prediction: str, passages: Sequence[str]) -> None:
        self._text = text
        self._prediction = prediction
        self._passages = passages

    @functools.cached_property
    def capitalised(self) -> frozenset[str]:  # read only when a word stands beside the reference
        return self._text.capitalised(self._prediction)

    @functools.cached_property
    def roles(self) -> frozenset[str]:
        return self._text.after_articles(self._prediction)

    def beside(self, phrase: list[str], word: str, before: bool, number: bool) -> bool:
        """Whether ``word``, just ``before`` (or after) the reference, runs on into a longer
        name (``phrase``: the two as the answer writes them). A month beside a year ("9. November
        1989") is a date, not a name."""
        if before and (word in self.roles or word in _titles(self._text.code)):
            return False
        if word in self.capitalised and not number:
            return True
        if self._text.language.cased:  # capitals said it: the passages are read where there are none
            return False
        return any(_runs(_passage_words(self._text.code, p), phrase) for p in self._passages)


@functools.lru_cache(maxsize=4_096)
def _passage_words(language: str, passage: str) -> list[str]:
    return analyzer(language).words(passage)


@dataclass(frozen=True)
class _Claim:
    """One answer as the rule for a named reference reads it: its ``words`` (the reference's
    inflected copies written as the reference) and ``breaks``, the reference ``truth``, the
    question's words (``asked``), the cited ``titles``, and what the passages the answer had
    hold (``held``: their words)."""

    words: list[str]
    breaks: list[bool]
    truth: list[str]
    truth_breaks: list[bool]
    asked: list[str]
    titles: list[list[str]]
    held: frozenset[str] = frozenset()


def _says_named(
    text: Analyzer, lexicon: Lexicon, claim: _Claim, aligned: bool = True, names: _Names | None = None
) -> Verdict:
    """The rule for a reference that is not a yes or no: the reference stands in the answer,
    unrejected, asserted, on its own, with few words beside it that nothing explains. Where
    words are not spaced, words side by side are no longer name: the dictionary's own cut
    (``aligned``) says whether the reference is a word of its own there."""
    words, truth = claim.words, claim.truth
    starts = _runs(words, truth)
    if not starts:
        return Verdict(False, "not mentioned")
    kept = [s for s in starts if not _rejected(words, s, len(truth), lexicon, claim.breaks)]
    if not kept:
        return Verdict(False, "mentioned only to reject it", contradicts=True)
    asserted = [s for s in kept if not _offered(words, s, len(truth), lexicon)]
    if not asserted:
        return Verdict(False, "offered as one option")
    inside = {i for s in starts for i in range(s, s + len(truth))}
    rest = [t for i, t in enumerate(words) if i not in inside]
    cited = rest
    for title in claim.titles:  # a cited title's words are not markers ("Dead but Rising")
        if title and not set(title) & set(truth):
            cited = _without(cited, [False] * len(cited), title)[0]
    # "X, but Y" contrasts; "X, and not Y" ("o ne", "a nie") rejects the other and asserts X
    if any(t in lexicon.contrasts and not lexicon.negates(nxt) for t, nxt in zip(cited, [*cited[1:], ""])):
        return Verdict(False, "contrasted with another answer")
    hedged = sum(t in lexicon.hedges for t in cited) > sum(t in lexicon.hedges for t in claim.asked)
    unsure = any(tuple(cited[i : i + len(u)]) == u for u in lexicon.unsure for i in range(len(cited)))
    if hedged or unsure:
        return Verdict(False, "hedged")
    if _longer(text, lexicon, claim, starts, asserted, aligned, names):
        return Verdict(False, "part of a longer name or a list")
    unexplained = _unexplained(text, lexicon, claim, rest, names)
    if len(unexplained) > NOVEL_WORDS:
        return Verdict(False, f"{len(unexplained)} {MORE_WORDS}")
    return Verdict(True, "said")


def _longer(
    text: Analyzer,
    lexicon: Lexicon,
    claim: _Claim,
    starts: list[int],
    asserted: list[int],
    aligned: bool,
    names: _Names | None,
) -> bool:
    """Whether every asserted mention runs on into a longer name or a list ("Chicago Bulls",
    "X and Y"); where words are not spaced, side by side is how words are written, and the
    dictionary's cut (``aligned``) says whether the reference is a word of its own."""
    words, breaks, truth, width = claim.words, claim.breaks, claim.truth, len(claim.truth)
    stop = text.stop_words
    if claim.truth_breaks and claim.truth_breaks[-1]:  # the reference's own last mark ("Inc.") is no boundary
        breaks = [b and not any(i == s + width - 1 for s in starts) for i, b in enumerate(breaks)]

    def content(word: str) -> bool:
        return word not in stop

    if text.inside_words:
        never_named = lambda word, step: False  # noqa: E731 - side by side is how these languages write
        return not aligned or all(
            _joined(words, breaks, s, width, never_named, content, lexicon.joiners) for s in asserted
        )
    assert names is not None  # every spaced language reads its names
    number = all(t.isdigit() for t in truth)
    asked = set(claim.asked)

    def named_beside(word: str, step: int) -> bool:  # the word just before (-1) or after (1)
        # the question's own words may run on ("Terry Richardson was older")
        named = (
            word not in stop
            and word not in lexicon.frame
            and word not in lexicon.copulas
            and not _from(word, asked)
        )
        phrase = [word, *truth] if step < 0 else [*truth, word]
        return named and names.beside(phrase, word, step < 0, number)

    joiners = lexicon.joiners
    return all(
        _joined(words, breaks, s, width, named_beside, content, joiners, LISTED_AFTER) for s in asserted
    )


def _unexplained(
    text: Analyzer, lexicon: Lexicon, claim: _Claim, rest: list[str], names: _Names | None
) -> list[str]:
    """The content words beside the reference that nothing explains: not the question's, the
    reference's or a title's (where words are not spaced, made of their characters), no
    framing word, no role an article leads ("des Architekten"); of the words the passages hold
    (a detail of the fact restated: "1875 m.", "village"), the first ``HELD_WORDS`` are
    explained, so pasted passages still say more than an answer needs."""
    explained = set(claim.asked) | set(claim.truth) | {t for title in claim.titles for t in title}
    # where words are not spaced, the characters of the question, reference and titles explain
    # a word the dictionary cut differently in the answer
    characters = "".join(explained) if text.inside_words else ""
    stop = text.stop_words
    found = [
        word
        for word in rest
        if word not in stop
        and word not in lexicon.frame
        and not _from(word, explained, characters)
        and (names is None or word not in names.roles)
    ]
    held = [word for word in found if _from(word, claim.held, "")]
    return [word for word in found if word not in held] + held[HELD_WORDS:]
