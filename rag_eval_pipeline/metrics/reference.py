"""Reference metrics that need no LLM: HotpotQA's answer metrics and retrieval metrics from gold labels.

``normalize_answer``, ``exact_match`` and ``f1`` reproduce HotpotQA's ``hotpot_evaluate_v1.py``.
Every function returns ``None`` (absent) rather than 0 when its input does not allow a score;
each docstring says when.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rag_eval_pipeline.metrics.equivalence import STOP_WORDS, lexical_tokens, passage_vocabulary, says_answer

REFERENCE_JUDGE_ID = "reference"  # the judge id under which these metrics are recorded
_PUNCTUATION = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_SPECIAL_ANSWERS = ("yes", "no", "noanswer")
# What counts as declining to answer, matched at the start of the normalised answer (lower case,
# no punctuation, no articles): "I don't know.", "Unknown", "The passages do not say ..."
DEFAULT_ABSTENTION_PATTERNS = (
    r"unknown$",
    r"i (dont|do not|cannot|cant) (know|say|tell|answer|find|determine)\b",
    r"(im|i am) not (sure|able)\b",
    r"not enough information\b",
    r"(there is )?(no|insufficient) (information|answer|context)\b",
    r"noanswer$",
    r"(it|this|question) cannot be (answered|determined)\b",
    r"(passages|context|documents|sources) (do|does) not (say|contain|mention|provide|state)\b",
)
# containment earns credit only from an answer at most this long: twice the ground truth's
# tokens plus a few, so pasting every passage (which contains the truth) earns nothing
CONTAINMENT_TOKEN_FACTOR = 2
CONTAINMENT_EXTRA_TOKENS = 4


_DROP_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """HotpotQA's normalisation: lower case, drop punctuation, drop articles, single spaces."""
    text = text.lower()
    text = text.translate(_DROP_PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, ground_truth: str) -> float:
    """1.0 when the normalised strings are equal, else 0.0 (an empty prediction scores 0.0)."""
    return float(normalize_answer(prediction) == normalize_answer(ground_truth))


def f1(prediction: str, ground_truth: str) -> float:
    """HotpotQA's token-multiset F1; a yes/no/noanswer on either side that differs scores 0.0.

    An empty prediction scores 0.0 (no token in common), as in the official script.
    """
    pred, gold = normalize_answer(prediction), normalize_answer(ground_truth)
    if pred in _SPECIAL_ANSWERS and pred != gold:
        return 0.0
    if gold in _SPECIAL_ANSWERS and pred != gold:
        return 0.0
    pred_tokens, gold_tokens = pred.split(), gold.split()
    num_same = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if num_same == 0:
        return 0.0
    precision = num_same / len(pred_tokens)
    recall = num_same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


@dataclass(frozen=True)
class AbstentionPolicy:
    """Which answers decline to answer: the patterns (regular expressions over the normalised
    answer, matched at its start) of the configuration's ``abstention_patterns``."""

    patterns: tuple[str, ...] = DEFAULT_ABSTENTION_PATTERNS

    def __post_init__(self) -> None:
        object.__setattr__(self, "_compiled", re.compile("|".join(f"(?:{p})" for p in self.patterns)))

    def matches(self, answer: str) -> bool:
        """True for an abstention, and for an empty answer (nothing was said)."""
        normalized = normalize_answer(answer)
        return not normalized or bool(self._compiled.match(normalized))  # type: ignore[attr-defined]


DEFAULT_ABSTENTION = AbstentionPolicy()


def contains_answer(prediction: str, ground_truth: str) -> bool:
    """True when the normalised ground truth stands as a whole-token run inside a prediction of
    bounded length (at most twice the ground truth's tokens plus 4: an answer that pastes every
    passage contains the truth, and says nothing).

    Never true for yes/no/noanswer ground truths: a sentence that happens to hold "no" is not a "no".
    """
    pred, gold = normalize_answer(prediction), normalize_answer(ground_truth)
    if not gold or gold in _SPECIAL_ANSWERS:
        return False
    longest = CONTAINMENT_TOKEN_FACTOR * len(gold.split()) + CONTAINMENT_EXTRA_TOKENS
    return len(pred.split()) <= longest and f" {gold} " in f" {pred} "


def correctness(
    prediction: str,
    ground_truth: str,
    answerable: bool = True,
    abstention: AbstentionPolicy = DEFAULT_ABSTENTION,
    question: str = "",
    sources: Sequence[str] = (),
) -> float:
    """The Elastic LLM-as-a-judge article's 0 / 0.5 / 1 scale from reference labels, for answers
    as agents write them.

    Rule: 1.0 on exact match, or when the answer says the reference in a sentence
    (``equivalence.says_answer``: the reference stands in it unrejected, with nothing else
    claimed beyond the question's words, the ``sources``' titles and a few more; a yes/no
    reference by the answer's leading or final yes or no); 0.0 when the answer contradicts it
    (the other yes/no, "not X"); 0.5 when a short answer contains the reference with a few other
    words, or HotpotQA F1 >= 0.5 (a partly right answer); else 0.0. An abstention scores 0.0 on
    an answerable question and 1.0 on one the documents cannot answer (``answerable`` False),
    where any answer scores 0.0. An empty prediction is an abstention.
    """
    abstained = abstention.matches(prediction)
    if not answerable:
        return 1.0 if abstained else 0.0
    if abstained:
        return 0.0
    if exact_match(prediction, ground_truth):
        return 1.0
    verdict = says_answer(prediction, ground_truth, question, sources)
    if verdict.credited:
        return 1.0
    if verdict.contradicts:
        return 0.0
    if contains_answer(prediction, ground_truth) or f1(prediction, ground_truth) >= 0.5:
        return 0.5
    return 0.0


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


def content_tokens(text: str) -> list[str]:
    """Normalised tokens of ``text`` without stop words: the words that carry a claim."""
    return [t for t in normalize_answer(text).split() if t not in STOP_WORDS]


def is_abstention(answer: str, abstention: AbstentionPolicy = DEFAULT_ABSTENTION) -> bool:
    """True for "unknown", "I don't know ..." and the other abstentions, and an empty answer."""
    return abstention.matches(answer)


def faithfulness_lexical(
    answer: str, passages: Sequence[str], abstention: AbstentionPolicy = DEFAULT_ABSTENTION
) -> float | None:
    """Lexical proxy for faithfulness: share of the answer's content tokens found in the passages.

    A proxy, not RAGAS faithfulness: it checks words, not claims. Words are split at every
    punctuation mark, ASCII or not, so "1909" is found in "1909–1994". None for an abstention, an
    empty answer or an answer of stop words only (no claim to check). No passages scores 0.0.
    """
    if abstention.matches(answer):
        return None
    tokens = [t for t in lexical_tokens(answer) if t not in STOP_WORDS]
    if not tokens:
        return None
    vocabularies = [passage_vocabulary(passage) for passage in passages]
    return sum(1 for t in tokens if any(t in words for words in vocabularies)) / len(tokens)
