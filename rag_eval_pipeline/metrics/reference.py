"""Reference metrics that need no LLM: answer metrics and retrieval metrics from gold labels.

In English, ``normalize_answer``, ``exact_match`` and ``f1`` reproduce HotpotQA's
``hotpot_evaluate_v1.py``; in Arabic, German, Spanish, Hindi, Vietnamese and Chinese they
reproduce the MLQA evaluation script's definition, extended the same way to the other languages
(``language/table.py``). Every function returns ``None`` (absent) rather than 0 when its input
does not allow a score; each docstring says when.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ParamSpec

from rag_eval_pipeline.language.analysis import Analyzer, analysis_of
from rag_eval_pipeline.language.lexicon import ENGLISH_ABSTENTION
from rag_eval_pipeline.language.table import ENGLISH
from rag_eval_pipeline.metrics.equivalence import Verdict, says_answer

_SPECIAL_ANSWERS = ("yes", "no", "noanswer")
# What counts as declining to answer in any language, matched at the start of the normalised
# answer (lower case, no punctuation, no articles): "I don't know.", "Unknown", "The passages do
# not say ..."; each language adds its own (``language/lexicons.toml``)
DEFAULT_ABSTENTION_PATTERNS = ENGLISH_ABSTENTION
# containment earns credit only from an answer at most this long: twice the ground truth's
# tokens plus a few, so pasting every passage (which contains the truth) earns nothing
CONTAINMENT_TOKEN_FACTOR = 2
CONTAINMENT_EXTRA_TOKENS = 4
P = ParamSpec("P")


def normalize_answer(text: str, language: str | Analyzer = ENGLISH) -> str:
    """The answer as exact match and F1 compare it. English: HotpotQA's normalisation (lower
    case, drop ASCII punctuation, drop articles, single spaces); other languages: MLQA's
    (Unicode punctuation, the language's articles, Chinese and the other unspaced scripts a
    token per character)."""
    return analysis_of(language).answer_normal(text)


def exact_match(prediction: str, ground_truth: str, language: str | Analyzer = ENGLISH) -> float:
    """1.0 when the normalised strings are equal, else 0.0 (an empty prediction scores 0.0)."""
    text = analysis_of(language)
    return float(text.answer_normal(prediction) == text.answer_normal(ground_truth))


def f1(prediction: str, ground_truth: str, language: str | Analyzer = ENGLISH) -> float:
    """Token-multiset F1 over the normalised answers. English is HotpotQA's (a yes/no/noanswer
    on either side that differs scores 0.0); other languages are MLQA's (no such rule).

    An empty prediction scores 0.0 (no token in common), as in both official scripts.
    """
    text = analysis_of(language)
    pred, gold = text.answer_normal(prediction), text.answer_normal(ground_truth)
    if text.language.is_english and (
        (pred in _SPECIAL_ANSWERS and pred != gold) or (gold in _SPECIAL_ANSWERS and pred != gold)
    ):
        return 0.0
    pred_tokens, gold_tokens = pred.split(), gold.split()
    num_same = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if num_same == 0:
        return 0.0
    precision = num_same / len(pred_tokens)
    recall = num_same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def _compiled(patterns: Sequence[str]) -> re.Pattern[str] | None:
    return re.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None


@dataclass(frozen=True)
class AbstentionPolicy:
    """Which answers decline to answer: ``patterns`` (the configuration's
    ``abstention_patterns``: regular expressions over the normalised answer, matched at its
    start, in every language) and each language's own (``by_language`` where the configuration
    sets them, else the language's defaults: "不知道", "わかりません", "no lo sé" ...)."""

    patterns: tuple[str, ...] = DEFAULT_ABSTENTION_PATTERNS
    by_language: Mapping[str, tuple[str, ...]] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_compiled", _compiled(self.patterns))
        object.__setattr__(self, "_per_language", {})

    def _own(self, language: str | Analyzer) -> re.Pattern[str] | None:
        """The language's own patterns, compiled once (English's are ``patterns``)."""
        kept: dict[str, re.Pattern[str] | None] = self._per_language  # type: ignore[attr-defined]
        text = analysis_of(language)
        if text.code not in kept:
            own = self.by_language.get(text.code)
            if own is None:
                own = () if text.language.is_english or text.lexicon is None else text.lexicon.abstention
            kept[text.code] = _compiled(own)
        return kept[text.code]

    def matches(self, answer: str, language: str | Analyzer = ENGLISH) -> bool:
        """True for an abstention, and for an empty answer (nothing was said)."""
        text = analysis_of(language)
        normalized = text.plain(answer)
        if not normalized:
            return True
        shared: re.Pattern[str] | None = self._compiled  # type: ignore[attr-defined]
        if shared is not None and shared.match(normalized):
            return True
        own = self._own(text)
        return own is not None and bool(own.match(normalized))


DEFAULT_ABSTENTION = AbstentionPolicy()


def contains_answer(prediction: str, ground_truth: str, language: str | Analyzer = ENGLISH) -> bool:
    """True when the normalised ground truth stands as a whole-token run inside a prediction of
    bounded length (at most twice the ground truth's tokens plus 4: an answer that pastes every
    passage contains the truth, and says nothing).

    Never true for yes/no/noanswer ground truths: a sentence that happens to hold "no" is not a "no".
    """
    text = analysis_of(language)
    pred, gold = text.answer_normal(prediction), text.answer_normal(ground_truth)
    if not gold or gold in _SPECIAL_ANSWERS or (text.lexicon and gold in text.lexicon.yes | text.lexicon.no):
        return False
    longest = CONTAINMENT_TOKEN_FACTOR * len(gold.split()) + CONTAINMENT_EXTRA_TOKENS
    return len(pred.split()) <= longest and f" {gold} " in f" {pred} "


def correctness_verdict(
    prediction: str,
    ground_truth: str,
    answerable: bool = True,
    abstention: AbstentionPolicy = DEFAULT_ABSTENTION,
    question: str = "",
    sources: Sequence[str] = (),
    language: str | Analyzer = ENGLISH,
    passages: Sequence[str] = (),
) -> tuple[float | None, Verdict | None]:
    """The Elastic LLM-as-a-judge article's 0 / 0.5 / 1 scale from reference labels, for answers
    as agents write them.

    Rule: 1.0 on exact match, or when the answer says the reference in a sentence
    (``equivalence.says_answer``: the reference stands in it unrejected, with nothing else
    claimed beyond the question's words, the ``sources``' titles and a few more; a yes/no
    reference by the answer's leading or final yes or no); 0.0 when the answer contradicts it
    (the other yes/no, "not X"); 0.5 when a short answer contains the reference with a few other
    words, or HotpotQA F1 >= 0.5 (a partly right answer); else 0.0. An abstention scores 0.0 on
    an answerable question and 1.0 on one the documents cannot answer (``answerable`` False),
    where any answer scores 0.0. An empty prediction is an abstention. Every step reads
    ``language``'s analysis: its abstentions, its answer normalisation, its words; the
    ``passages`` the answer had tell a longer name from a predicate in a script without capitals.
    None (absent, never 0) where the language's rule cannot judge the sentence: it holds words
    that may negate, hedge, list or contrast in a language with no lexicon for them.

    With the score, the sentence rule's verdict where it was asked (None where an abstention or
    exact match decided): the reason a case's correctness is absent.
    """
    text = analysis_of(language)  # resolved once, passed to every step
    abstained = abstention.matches(prediction, text)
    if not answerable:
        return (1.0 if abstained else 0.0), None
    if abstained:
        return 0.0, None
    if exact_match(prediction, ground_truth, text):
        return 1.0, None
    verdict = says_answer(prediction, ground_truth, question, sources, text, passages)
    if verdict.credited:
        return 1.0, verdict
    if not verdict.judged:
        return None, verdict
    if verdict.contradicts:
        return 0.0, verdict
    if contains_answer(prediction, ground_truth, text) or f1(prediction, ground_truth, text) >= 0.5:
        return 0.5, verdict
    return 0.0, verdict


def _score_only(rule: Callable[P, tuple[float | None, Verdict | None]]) -> Callable[P, float | None]:
    """``rule``'s score without its verdict, taking the rule's own parameters (declared once)."""

    @functools.wraps(rule, assigned=("__module__",))
    def score(*args: P.args, **kwargs: P.kwargs) -> float | None:
        return rule(*args, **kwargs)[0]

    return score


# the correctness score alone (``correctness_verdict`` says the rule), for callers that need no reason
correctness = _score_only(correctness_verdict)


def context_relevance(retrieved_titles: Sequence[str], gold_titles: Sequence[str]) -> float | None:
    """Gold supporting titles among the retrieved: all (both hops) 1.0, some 0.5, none 0.0.

    None when there are no gold titles (nothing to judge against). No retrieved passages scores 0.0.
    """
    gold = set(gold_titles)
    if not gold:
        return None
    found = len(gold & set(retrieved_titles))
    if found == len(gold):
        return 1.0
    return 0.5 if found else 0.0


def context_precision(retrieved_titles: Sequence[str], gold_titles: Sequence[str]) -> float | None:
    """RAGAS's rank-weighted context precision with relevance = gold supporting title.

    sum_k(precision@k * v_k) / (number of relevant items in the top K), v_k = 1 when rank k is
    relevant. 0.0 when nothing retrieved is relevant (RAGAS's epsilon denominator gives 0).
    None when nothing was retrieved or there are no gold titles.
    """
    gold = set(gold_titles)
    if not retrieved_titles or not gold:
        return None
    hits = 0
    weighted = 0.0
    for rank, title in enumerate(retrieved_titles, start=1):
        if title in gold:
            hits += 1
            weighted += hits / rank
    return weighted / hits if hits else 0.0


def context_recall(retrieved_titles: Sequence[str], gold_facts: Sequence[tuple[str, int]]) -> float | None:
    """Share of gold supporting sentences (title, sent_id) whose passage was retrieved.

    None when there are no gold facts. No retrieved passages scores 0.0.
    """
    facts = set(gold_facts)
    if not facts:
        return None
    retrieved = set(retrieved_titles)
    return sum(1 for title, _ in facts if title in retrieved) / len(facts)


def _cited(
    cited_titles: Sequence[str] | None, gold_titles: Sequence[str]
) -> tuple[set[str], int, set[str]] | None:
    gold = set(gold_titles)
    if not cited_titles or not gold:
        return None
    return {t for t in cited_titles if t}, sum(1 for t in cited_titles if not t), gold


def citation_precision(cited_titles: Sequence[str] | None, gold_titles: Sequence[str]) -> float | None:
    """Share of the distinct sources an answer cites that are gold supporting passages (ALCE's
    citation precision with HotpotQA's labels); a citation naming no known passage counts as a
    source that is not gold. None when the answer cites nothing or there are no gold titles."""
    cited = _cited(cited_titles, gold_titles)
    if cited is None:
        return None
    named, unknown, gold = cited
    return len(named & gold) / (len(named) + unknown)


def citation_recall(cited_titles: Sequence[str] | None, gold_titles: Sequence[str]) -> float | None:
    """Share of the gold supporting passages the answer cites. None when it cites nothing or
    there are no gold titles (an uncited answer is not measured, not 0)."""
    cited = _cited(cited_titles, gold_titles)
    if cited is None:
        return None
    named, _, gold = cited
    return len(named & gold) / len(gold)


def content_tokens(text: str, language: str | Analyzer = ENGLISH) -> list[str]:
    """Normalised tokens of ``text`` without stop words: the words that carry a claim (English:
    HotpotQA's normalised tokens; other languages: their analyzer's words)."""
    analysis = analysis_of(language)
    if analysis.language.is_english:
        return [t for t in analysis.answer_normal(text).split() if t not in analysis.stop_words]
    return analysis.content_words(text)


def is_abstention(
    answer: str, abstention: AbstentionPolicy = DEFAULT_ABSTENTION, language: str | Analyzer = ENGLISH
) -> bool:
    """True for "unknown", "I don't know ..." and the other abstentions, and an empty answer."""
    return abstention.matches(answer, language)


@functools.lru_cache(maxsize=16_384)
def passage_vocabulary(passage: str, language: str = ENGLISH) -> frozenset[str] | str:
    """The words of a passage (or, where words are not spaced, its text), once per passage:
    every model's answer to a question is checked against the same retrieved passages."""
    return analysis_of(language).vocabulary(passage)


def faithfulness_lexical(
    answer: str,
    passages: Sequence[str],
    abstention: AbstentionPolicy = DEFAULT_ABSTENTION,
    language: str | Analyzer = ENGLISH,
) -> float | None:
    """Lexical proxy for faithfulness: share of the answer's content tokens found in the passages.

    A proxy, not RAGAS faithfulness: it checks words, not claims. Words are split at every
    punctuation mark, ASCII or not, so "1909" is found in "1909–1994"; in a language whose words
    are not spaced, a word is found inside the passage's text. None for an abstention, an empty
    answer or an answer of stop words only (no claim to check). No passages scores 0.0.
    """
    text = analysis_of(language)
    if abstention.matches(answer, text):
        return None
    tokens = text.content_words(answer)
    if not tokens:
        return None
    vocabularies = [passage_vocabulary(passage, text.code) for passage in passages]
    return sum(1 for t in tokens if any(t in words for words in vocabularies)) / len(tokens)
