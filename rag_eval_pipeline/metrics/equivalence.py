"""Whether an answer says the reference answer, the way agents answer: in a sentence that may
restate the question and name its sources. Exact match and F1 stay HotpotQA's own
(``reference.py``); this is the rule behind the offline ``correctness``, measured against a
labelled set of answers in many forms (``benchmarks/answer_equivalence.py``; figures in
docs/judges-and-statistics.md).

An answer is credited when the reference stands in it as a whole run of words that nothing
rejects, and the rest carries no other claim: every content word outside the reference is the
question's, a source's title, a word that frames an answer ("according to the passages"), or
one of at most ``NOVEL_WORDS`` others, none of them joined to the reference (a longer name, "X
and Y"). It is refused when the mention is negated ("not X", "rather than X", "X is wrong"),
offered as one option ("X or Y"), contrasted ("X, but Y"), hedged beyond the question ("it could
be"), or buried in a long text (pasted passages). A yes/no reference is matched by the answer's
leading (else final) yes or no."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_ARTICLES = _words("a an the")
_APOSTROPHES = "'\u2019\u2018\u02bc`"
_CITATION = re.compile(r"\[\s*\d+(?:\s*[,;-]\s*\d+)*\s*\]|\(\s*\d{1,2}\s*\)")
YES_NO = ("yes", "no")
NOVEL_WORDS = 3  # content words the rest of a credited answer may add that nothing explains
PREFIX = 5  # a word is the question's when it shares this many first letters with one of its words
# words that frame an answer or say where it comes from
FRAME_WORDS = _words(
    """answer answers answered according passage passages context contexts document documents
    source sources based stated states state says say said mention mentioned mentions given
    provided text article articles wikipedia information shown shows indicates indicated indicate
    per cited cite cites citing see reference references correct final question therefore thus
    hence also named called known listed found described describes retrieved page pages evidence
    supporting support supports believe think"""
)
HEDGES = _words(
    """maybe perhaps possibly possible probably might could may unsure unclear uncertain guess
    likely unlikely unsure whether"""
)
ALTERNATIVES = _words("or either")  # a hedge even where the question offers the choice
CONTRASTS = _words("but however although though whereas yet")
NEGATORS = _words("not no never nor neither isnt wasnt arent werent doesnt didnt cannot")
REJECTING_PHRASES = (("rather", "than"), ("instead", "of"), ("other", "than"), ("unlike",), ("except",))
WRONG_WORDS = _words("wrong incorrect false mistaken inaccurate")
# a small English stop list for the lexical proxies: words that carry no claim
STOP_WORDS = _words(
    """a an the and or but if of at by for with about against between into through during before
    after above below to from up down in out on off over under again further then once here there
    when where why how all any both each few more most other some such no nor not only own same so
    than too very can will just should now is are was were be been being have has had having do
    does did doing i me my we our you your he him his she her it its they them their what which who
    whom this that these those am as until while s t"""
)
JOINERS = _words("and &")


_PIECES = re.compile(r"[^\W_]+|[\W_]+")  # a run of letters and digits, or of anything else
_APOSTROPHE_RUN = re.compile(f"[{_APOSTROPHES}]")


def _tokens(text: str) -> tuple[list[str], list[bool]]:
    """Lower-case words, with for each whether punctuation follows it: apostrophes are dropped
    (as HotpotQA's normalisation drops ASCII punctuation), every other punctuation mark or
    symbol, ASCII or not (dashes, curly quotes, underscores), splits words; no articles."""
    text = _APOSTROPHE_RUN.sub("", unicodedata.normalize("NFKC", text).lower())
    words: list[str] = []
    breaks: list[bool] = []
    for piece in _PIECES.findall(text):
        if piece[0].isalnum():
            if piece not in _ARTICLES:
                words.append(piece)
                breaks.append(False)
        elif breaks and not piece.isspace():
            breaks[-1] = True
    return words, breaks


_WORD = re.compile(r"[^\W_]+")


def lexical_tokens(text: str) -> list[str]:
    """Lower-case words split at every punctuation mark, ASCII or not, apostrophes dropped, no
    articles: "1909–1994" is two words here, where the official normalisation keeps it one."""
    text = _APOSTROPHE_RUN.sub("", unicodedata.normalize("NFKC", text).lower())
    return [word for word in _WORD.findall(text) if word not in _ARTICLES]


@functools.lru_cache(maxsize=16_384)
def passage_vocabulary(passage: str) -> frozenset[str]:
    """The words of a passage, once per passage: every model's answer to a question is checked
    against the same retrieved passages."""
    return frozenset(lexical_tokens(passage))


@dataclass(frozen=True)
class Verdict:
    """How an answer stands to the reference: ``credited`` (it says it), or why not;
    ``contradicts`` when it says the opposite (the other yes/no, a rejected mention)."""

    credited: bool
    reason: str
    contradicts: bool = False


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


def _rejected(tokens: Sequence[str], start: int, width: int) -> bool:
    """A mention that the answer negates: "not X", "rather than X", "X is wrong", "X is not"."""
    before = list(tokens[max(0, start - 3) : start])
    if any(t in NEGATORS for t in before):
        return True
    if any(tuple(before[-len(p) :]) == p for p in REJECTING_PHRASES):
        return True
    after = list(tokens[start + width : start + width + 3])
    if any(t in WRONG_WORDS for t in after):
        return True
    return len(after) >= 2 and after[0] in {"is", "was", "are", "were"} and after[1] in NEGATORS


def _offered(tokens: Sequence[str], start: int, width: int) -> bool:
    """A mention offered as one option: "X or Y", "either X", "Y or X"."""
    window = [*tokens[max(0, start - 3) : start], *tokens[start + width : start + width + 3]]
    return any(t in ALTERNATIVES for t in window)


def _from(word: str, vocabulary: set[str]) -> bool:
    return word in vocabulary or (
        len(word) >= PREFIX and any(len(v) >= PREFIX and v[:PREFIX] == word[:PREFIX] for v in vocabulary)
    )


def _polarity(tokens: Sequence[str]) -> str | None:
    """The yes or no an answer leads with ("Yes, ...", "The answer is no"), else ends with ("...,
    so yes"); a "no" inside a sentence ("There is no doubt") is neither."""
    for lead in ([], ["answer"], ["answer", "is"]):
        if tokens[: len(lead)] == lead and len(tokens) > len(lead) and tokens[len(lead)] in YES_NO:
            return tokens[len(lead)]
    return tokens[-1] if tokens and tokens[-1] in YES_NO else None


def _joined(words: Sequence[str], breaks: Sequence[bool], start: int, width: int, named, listed) -> bool:
    """Whether the mention runs on into another name with no punctuation between ("Chicago
    Bulls" for "Chicago": a word ``named`` allows), or is listed with another through "and" ("X
    and Y": any word ``listed`` allows)."""
    for step, edge in ((-1, start - 1), (1, start + width)):
        position, through = edge, False
        while 0 <= position < len(words) and not breaks[min(position, position - step)]:
            if words[position] in JOINERS and not through:
                position, through = position + step, True
                continue
            if (listed if through else named)(words[position]):
                return True
            break
    return False


def says_answer(
    prediction: str, ground_truth: str, question: str = "", sources: Sequence[str] = ()
) -> Verdict:
    """Whether ``prediction`` says ``ground_truth`` (see the module's rule). ``question`` and
    the ``sources`` (titles of the contexts the answer had) are words it may repeat."""
    truth, truth_breaks = _tokens(ground_truth)
    asked = lexical_tokens(question)
    words, breaks = _tokens(_CITATION.sub(" ", prediction))
    if len(asked) >= 3:
        words, breaks = _without(words, breaks, asked)
    titles = [lexical_tokens(s) for s in sources]
    if not truth or not words:
        return Verdict(False, "empty")
    if " ".join(truth) in YES_NO:
        polarity = _polarity(words)
        if polarity is None:
            return Verdict(False, "no yes or no")
        right = polarity == truth[0]
        return Verdict(right, "yes/no" if right else "the other yes/no", contradicts=not right)
    starts = _runs(words, truth)
    if not starts:
        return Verdict(False, "not mentioned")
    kept = [s for s in starts if not _rejected(words, s, len(truth))]
    if not kept:
        return Verdict(False, "mentioned only to reject it", contradicts=True)
    asserted = [s for s in kept if not _offered(words, s, len(truth))]
    if not asserted:
        return Verdict(False, "offered as one option")
    inside = {i for s in starts for i in range(s, s + len(truth))}
    rest = [t for i, t in enumerate(words) if i not in inside]
    cited = rest
    for title in titles:  # a cited title's words are not markers ("Dead but Rising")
        if title and not set(title) & set(truth):
            cited = _without(cited, [False] * len(cited), title)[0]
    if any(t in CONTRASTS for t in cited):
        return Verdict(False, "contrasted with another answer")
    hedged = sum(t in HEDGES for t in cited) > sum(t in HEDGES for t in asked)
    if hedged or any(cited[i : i + 2] == ["not", "sure"] for i in range(len(cited))):
        return Verdict(False, "hedged")
    explained = set(asked) | set(truth) | {t for title in titles for t in title}

    def novel(word: str) -> bool:
        return word not in STOP_WORDS and word not in FRAME_WORDS and not _from(word, explained)

    def named(word: str) -> bool:  # the question's own words may run on ("Terry Richardson was older")
        return word not in STOP_WORDS and word not in FRAME_WORDS and not _from(word, set(asked))

    def content(word: str) -> bool:
        return word not in STOP_WORDS

    if truth_breaks and truth_breaks[-1]:  # the reference's own last mark ("Inc.") is no boundary
        breaks = [b and not any(i == s + len(truth) - 1 for s in starts) for i, b in enumerate(breaks)]
    if all(_joined(words, breaks, s, len(truth), named, content) for s in asserted):
        return Verdict(False, "part of a longer name or a list")
    unexplained = [t for t in rest if novel(t)]
    if len(unexplained) > NOVEL_WORDS:
        return Verdict(False, f"{len(unexplained)} more words than an answer needs")
    return Verdict(True, "said")
