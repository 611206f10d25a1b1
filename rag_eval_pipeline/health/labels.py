"""One gap label per case, never conflated, each with its evidence:

- ``knowledge_gap``: no passage of the knowledge base holds or supports the answer (with a
  reference: the reference's terms in no passage about the question, read by the case's language
  analysis over the whole knowledge base; without one: the agent declined and its retrieval was
  empty or weak, or a ``sufficiency`` judge said the passages do not let a careful reader answer);
- ``outdated``: the answer rests on a superseded or expired document (the only passages holding
  the reference are, or the agent's answer is taken from a retrieved one that is);
- ``conflict``: two current documents disagree on what the question asks;
- ``retrieval_miss``: a current passage holds the answer, the retriever did not return it;
- ``covered``: none of these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from rag_eval_pipeline.health.conflicts import Conflict
from rag_eval_pipeline.health.knowledge import NUMBER_MARK, KnowledgeView, terms_of
from rag_eval_pipeline.language.analysis import analyzer

KNOWLEDGE_GAP, RETRIEVAL_MISS, OUTDATED, CONFLICT, COVERED = (
    "knowledge_gap",
    "retrieval_miss",
    "outdated",
    "conflict",
    "covered",
)
LABELS = (KNOWLEDGE_GAP, RETRIEVAL_MISS, OUTDATED, CONFLICT, COVERED)
CASE_TABLE_COLUMNS = [
    "qid",
    "question",
    "language",
    "label",
    "reason",
    "evidence_passage",
    "evidence_title",
    "evidence_text",
    "score",
    "stale_documents",
    "correct",
]
YES_NO = frozenset({"yes", "no", "noanswer"})
# an answer adding this many words but its numbers to the question ("press and hold both side
# buttons for 5 seconds") may say one of them in other words than its passage: one may be missing
SAID_OTHERWISE_FROM = 5


@dataclass(frozen=True)
class Thresholds:
    """How much of the question a passage must be about to hold its answer, on the idf-weighted
    share of the question's terms it has (calibrated on the planted set, benchmarks/README.md)."""

    holds: float = 0.2  # a passage holding the reference's terms and this much of the question
    bridge: float = 0.4  # ... or named (its title) by a passage holding this much of it
    yes_no: float = 0.7  # a yes/no question: two passages together hold this much of it
    weak_retrieval: float = 0.3  # without a reference: the best retrieved passage holds less


@dataclass(frozen=True)
class CaseInput:
    """What labelling one case reads: its question and reference (None without one), the
    agent's answer and whether it declined, what it retrieved, and a sufficiency verdict where
    a ``sufficiency:<LLM>`` judge gave one (1 sufficient, 0 not, None not asked)."""

    qid: str
    question: str
    reference: str | None
    answer: str
    abstained: bool
    retrieved_ids: tuple[str, ...]
    retrieved_titles: tuple[str, ...] = ()
    language: str = "en"
    sufficiency: float | None = None
    sufficiency_reason: str = ""
    correct: float | None = None


@dataclass(frozen=True)
class CaseLabel:
    qid: str
    label: str
    reason: str
    evidence_passage: str | None = None
    evidence_title: str | None = None
    evidence_text: str | None = None
    score: float | None = None
    stale_documents: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class AnswerKey:
    """A reference as the knowledge base is searched for it: its numbers (each one term however
    written, ``knowledge.number_term``), its other terms (stems), those the question does not
    already say (what the answer adds), and all of them in order."""

    numbers: frozenset[str]
    words: frozenset[str]
    new_words: frozenset[str]
    phrase: tuple[str, ...]
    adds: bool  # the answer says something the question does not (else: an option it names)

    @classmethod
    def of(cls, reference: str, language: str, question: set[str]) -> AnswerKey:
        phrase = tuple(terms_of(reference, language))
        numbers = frozenset(t for t in phrase if t.startswith(NUMBER_MARK))
        words = frozenset(phrase) - numbers
        return cls(numbers, words, words - question, phrase, not set(phrase) <= question)

    @property
    def as_phrase(self) -> bool:
        """A few words without numbers: said where they stand in order ("New York City" is not
        "New York Mets ... city"), however the passage's sentences are cut ("Rear Adm. J.")."""
        return not self.numbers and len(self.required) < SAID_OTHERWISE_FROM

    @property
    def near_question(self) -> bool:
        """A number with at most one word ("8", "12 seconds", "2.4 GHz"): small numbers stand in
        many passages by chance, so the question's words must stand beside it."""
        return bool(self.numbers) and len(self.numbers | self.words) <= 2

    @property
    def required(self) -> frozenset[str]:
        """The words a passage must say with the numbers: beside a number, every word (its unit:
        "three centuries" is not "three-part"); without one, what the answer adds."""
        return self.words if self.numbers else self.new_words

    def said_in(self, window: frozenset[str]) -> bool:
        """Whether a window of sentences says the answer: every number of it and its required
        words, in any order; all but one of five words or more, one of which may be said in
        other words ("press and hold both side buttons" where the passage says "hold")."""
        if not self.numbers <= window:
            return False
        missing = len(self.required - window)
        return missing == 0 or (missing == 1 and len(self.required) >= SAID_OTHERWISE_FROM)


def _is_yes_no(reference: str, language: str) -> bool:
    text = analyzer(language)
    normal = text.answer_normal(reference)
    lexicon = text.rule_lexicon
    return normal in YES_NO or bool(lexicon and normal in (lexicon.yes | lexicon.no))


def _candidates(view: KnowledgeView, key: AnswerKey) -> set[int]:
    """Passages that may say the answer: its numbers and required words as ``said_in`` asks (a
    few words without numbers: as a phrase, "New York City" is not "New York Mets ... city")."""
    required = set(key.required)
    share = (len(required) - 1) / len(required) if len(required) >= SAID_OTHERWISE_FROM else 1.0
    if key.numbers:
        found = view.holding(set(key.numbers))
        return found & view.holding(required, share) if required else found
    if key.as_phrase:
        return view.holding_phrase(list(key.phrase))
    return view.holding(required, share)


def _supports(
    view: KnowledgeView, question: set[str], key: AnswerKey, th: Thresholds
) -> list[tuple[int, float]]:
    """Passages saying the answer within two sentences, each with how strongly it is about the
    question: a number with at most one word, the share of the question held by those sentences
    and the title (the question's words beside the answer's); else the passage's own share; or
    (a bridge) the share of a passage naming it by its title, or named by it."""
    found = _candidates(view, key)
    if not found:
        return []
    about = dict(view.best_covering(question, limit=50))
    strong = [(r, s) for r, s in about.items() if s >= th.bridge]
    supported = []
    for i in found:
        said = [view.terms[i]] if key.as_phrase else [w for w in view.windows(i) if key.said_in(w)]
        if not said:
            continue
        if key.near_question:
            own = max(view.share(w | view.title_terms[i], question) for w in said)
        else:
            own = view.coverage(i, question)
        bridged = max(
            (s for r, s in strong if r != i and (view.names(r, i) or view.names(i, r))),
            default=0.0,
        )
        strength = max(own, bridged * 0.9)
        if strength >= th.holds:
            supported.append((i, strength))
    return sorted(supported, key=lambda x: (-x[1], x[0]))


def _yes_no_support(view: KnowledgeView, question: set[str]) -> tuple[list[int], float]:
    """The two passages covering most of a yes/no question together, and that coverage."""
    best = view.best_covering(question, limit=10)
    if not best:
        return [], 0.0
    first = best[0][0]
    rest = question - view.terms[first]
    second = max(best[1:], key=lambda x: view.coverage(x[0], rest), default=None)
    chosen = [first] + ([second[0]] if second else [])
    union = set().union(*(view.terms[i] for i in chosen))
    total = sum(view.weight(t) for t in question)
    return chosen, (sum(view.weight(t) for t in question if t in union) / total if total else 0.0)


@dataclass
class Supports:
    """What the knowledge base says about a question and its reference, whichever model answered
    it: the passages holding the answer, the two covering a yes/no question, the closest one.
    Asked once per distinct question of one reading (``view``) and ``th``, so a second model, or
    a question repeated under other ids, reads the memo; keyed by the terms in their iteration
    order, so each sum is taken in the very order it was the first time."""

    view: KnowledgeView
    th: Thresholds = Thresholds()
    _found: dict[tuple, object] = field(default_factory=dict, repr=False)
    _by_id: dict[str, list[int]] | None = field(default=None, repr=False)
    _by_title: dict[str, list[int]] | None = field(default=None, repr=False)

    def supports(self, question: set[str], answer: AnswerKey) -> list[tuple[int, float]]:
        key = ("supports", tuple(question), answer)
        if key not in self._found:
            self._found[key] = _supports(self.view, question, answer, self.th)
        return self._found[key]  # type: ignore[return-value]

    def yes_no(self, question: set[str]) -> tuple[list[int], float]:
        key = ("yes_no", tuple(question))
        if key not in self._found:
            self._found[key] = _yes_no_support(self.view, question)
        return self._found[key]  # type: ignore[return-value]

    def nearest(self, question: set[str]) -> list[tuple[int, float]]:
        key = ("nearest", tuple(question))
        if key not in self._found:
            self._found[key] = self.view.best_covering(question, limit=1)
        return self._found[key]  # type: ignore[return-value]

    def retrieved(self, case: CaseInput) -> set[int]:
        """The passages a case retrieved, by id or title (an index of each, built once)."""
        if self._by_id is None or self._by_title is None:
            self._by_id, self._by_title = {}, {}
            for i, (pid, title) in enumerate(zip(self.view.passage_ids, self.view.titles)):
                self._by_id.setdefault(pid, []).append(i)
                self._by_title.setdefault(title, []).append(i)
        found = {i for pid in set(case.retrieved_ids) for i in self._by_id.get(pid, ())}
        return found | {i for title in set(case.retrieved_titles) for i in self._by_title.get(title, ())}


@dataclass(frozen=True)
class _Reading:
    """One case as labelling reads it: its question's terms, the passages it retrieved, the
    documents not current among them, and its reference (None when absent or blank)."""

    case: CaseInput
    view: KnowledgeView
    question: set[str]
    retrieved: set[int]
    stale: tuple[str, ...]
    reference: str | None
    th: Thresholds
    known: Supports  # what the knowledge base says about each question, asked once

    def label(
        self,
        label: str,
        reason: str,
        score: float | None = None,
        at: int | None = None,
        terms: set[str] | None = None,
    ) -> CaseLabel:
        """The case's label with its evidence: passage ``at`` and its sentence holding most of
        ``terms`` (no sentence without them), the score and the reason."""
        view = self.view
        return CaseLabel(
            self.case.qid,
            label,
            reason,
            view.passage_ids[at] if at is not None else None,
            view.titles[at] if at is not None else None,
            view.sentence_with(at, terms) if at is not None and terms is not None else None,
            score,
            self.stale,
        )


@dataclass(frozen=True)
class _Holders:
    """The passages holding a case's answer (with how strongly each is about the question) and
    the terms that say it."""

    passages: list[tuple[int, float]]
    answer_terms: set[str]


def _with_reference(r: _Reading) -> CaseLabel | _Holders:
    """A gap where no passage of the knowledge base says the reference about the question;
    otherwise the passages that do."""
    assert r.reference is not None
    language = r.case.language
    key = AnswerKey.of(r.reference, language, r.question)
    if _is_yes_no(r.reference, language) or not key.adds:
        # yes/no, or one of the options the question names: the passages must hold the question
        chosen, covered = r.known.yes_no(r.question)
        if covered < r.th.yes_no or not chosen:
            return r.label(
                KNOWLEDGE_GAP,
                f"a yes/no or choice question: no two passages hold more than {covered:.2f} of its terms",
                round(covered, 3),
            )
        return _Holders([(i, covered) for i in chosen], r.question)
    # about the question: by the words of it the answer does not repeat ("products" in
    # "what sort of products?" says nothing of which passage is about it)
    holders = r.known.supports(r.question - key.words - key.numbers, key)
    if holders:
        return _Holders(holders, set(key.numbers | key.words))
    near = r.known.nearest(r.question)
    return r.label(
        KNOWLEDGE_GAP,
        "no passage of the knowledge base says the reference answer beside the question's words"
        + (f" (the closest passage holds {near[0][1]:.2f} of the question)" if near else ""),
        round(near[0][1], 3) if near else 0.0,
        near[0][0] if near else None,
    )


def _without_reference(r: _Reading) -> CaseLabel | None:
    """A gap where the sufficiency judge said the passages do not answer, or the agent declined
    and its retrieval was weak."""
    case = r.case
    if case.sufficiency is not None and case.sufficiency < 0.5:
        return r.label(
            KNOWLEDGE_GAP,
            f"the sufficiency judge: {case.sufficiency_reason or 'the passages do not answer it'}",
            case.sufficiency,
        )
    best = max((r.view.coverage(i, r.question) for i in r.retrieved), default=0.0)
    if case.abstained and best < r.th.weak_retrieval:
        what = (
            "nothing retrieved" if not r.retrieved else f"the best retrieved passage holds {best:.2f} of it"
        )
        return r.label(
            KNOWLEDGE_GAP, f"no reference; the agent declined and retrieval was weak ({what})", round(best, 3)
        )
    return None


def _outdated(r: _Reading, holders: _Holders) -> CaseLabel | None:
    """The agent's answer taken from a retrieved document not current, or only such documents
    hold the reference."""
    view = r.view
    said = set() if r.case.abstained else set(terms_of(r.case.answer, r.case.language))
    answered = said - r.question or said  # a choice the question names: the choice itself
    for i in sorted(r.retrieved):
        if not view.is_current(i) and answered and answered <= view.terms[i]:
            reason = f"the answer is taken from {view.documents[i]}, which is {view.statuses[i]}"
            return r.label(OUTDATED, reason, 1.0, i, answered)
    if holders.passages and not any(view.is_current(i) for i, _ in holders.passages):
        i, strength = holders.passages[0]
        reason = f"only {view.statuses[i]} documents hold the answer ({view.documents[i]})"
        return r.label(OUTDATED, reason, round(strength, 3), i, holders.answer_terms)
    return None


def _conflict(r: _Reading, holders: _Holders, conflicts: Sequence[Conflict]) -> CaseLabel | None:
    """A current document the case reads disagreeing with another on what it asks."""
    view = r.view
    said = set() if r.case.abstained else set(terms_of(r.case.answer, r.case.language))
    asked = r.question | holders.answer_terms | (said - r.question or said)
    read = {view.documents[i] for i, _ in holders.passages} | {view.documents[i] for i in r.retrieved}
    for conflict in conflicts:
        if {conflict.first, conflict.second} & read and conflict.terms & asked:
            return CaseLabel(
                r.case.qid,
                CONFLICT,
                f"{conflict.first} says “{conflict.first_sentence}”; {conflict.second} says "
                f"“{conflict.second_sentence}”",
                conflict.first,
                None,
                conflict.first_sentence,
                round(conflict.similarity, 3),
                r.stale,
            )
    return None


def _where_held(r: _Reading, holders: _Holders) -> CaseLabel:
    """A miss where the current passages holding the answer were not retrieved, else covered;
    without a reference, a miss where the agent declined and a passage not retrieved is about
    the question."""
    view = r.view
    current = [(i, s) for i, s in holders.passages if view.is_current(i)]
    if current:
        held = next(((i, s) for i, s in current if i in r.retrieved), None)
        if held is None:
            i, strength = current[0]
            reason = f"{view.passage_ids[i]} holds the answer; it was not retrieved"
            return r.label(RETRIEVAL_MISS, reason, round(strength, 3), i, holders.answer_terms)
        i, strength = held
        reason = "a retrieved current passage holds the answer"
        return r.label(COVERED, reason, round(strength, 3), i, holders.answer_terms)
    if r.reference is None and r.case.abstained:
        best = max(
            ((i, view.coverage(i, r.question)) for i in range(len(view)) if i not in r.retrieved),
            key=lambda x: x[1],
            default=None,
        )
        if best is not None and best[1] >= 2 * r.th.weak_retrieval:
            i, strength = best
            reason = f"no reference; {view.passage_ids[i]} is about the question and was not retrieved"
            return r.label(RETRIEVAL_MISS, reason, round(strength, 3), i, r.question)
    return r.label(COVERED, "no gap found" if r.reference is None else "covered")


def label_case(
    case: CaseInput,
    view: KnowledgeView,
    conflicts: Sequence[Conflict] = (),
    th: Thresholds = Thresholds(),
    retrieved: set[int] | None = None,
    supports: Supports | None = None,
) -> CaseLabel:
    """The case's label and its evidence (see the module's docstring for the order they are
    tried in: a gap first, since no document at all, current or not, answers it); ``supports``:
    the memo of what the knowledge base says about each question (``view`` and ``th`` its own)."""
    known = supports if supports is not None else Supports(view, th)
    retrieved = known.retrieved(case) if retrieved is None else retrieved
    reference = case.reference if case.reference and case.reference.strip() else None
    r = _Reading(
        case,
        view,
        set(terms_of(case.question, case.language)),
        retrieved,
        tuple(sorted({view.documents[i] for i in retrieved if not view.is_current(i)})),
        reference,
        th,
        known,
    )
    if reference is not None:
        found = _with_reference(r)
        if isinstance(found, CaseLabel):
            return found
        holders = found
    else:
        gap = _without_reference(r)
        if gap is not None:
            return gap
        holders = _Holders([], set())
    return _outdated(r, holders) or _conflict(r, holders, conflicts) or _where_held(r, holders)


def case_table(
    cases: Sequence[CaseInput],
    view: KnowledgeView,
    conflicts: Sequence[Conflict] = (),
    th: Thresholds = Thresholds(),
    supports: Supports | None = None,
) -> pd.DataFrame:
    """Every case's label with its evidence (``CASE_TABLE_COLUMNS``); ``supports``: a memo kept
    across the calls over one reading (each question's support looked up once), else one for
    this table."""
    if supports is None or supports.view is not view or supports.th != th:
        supports = Supports(view, th)
    rows = []
    for case in cases:
        found = label_case(case, view, conflicts, th, supports=supports)
        rows.append(
            {
                "qid": case.qid,
                "question": case.question,
                "language": case.language,
                "label": found.label,
                "reason": found.reason,
                "evidence_passage": found.evidence_passage,
                "evidence_title": found.evidence_title,
                "evidence_text": found.evidence_text,
                "score": found.score,
                "stale_documents": list(found.stale_documents),
                "correct": case.correct,
            }
        )
    return pd.DataFrame(rows, columns=CASE_TABLE_COLUMNS)


def label_rates(cases: pd.DataFrame) -> dict[str, float | None]:
    """The share of cases of each label, and the stale-retrieval rate (cases whose contexts
    include a document not current); None for no cases (absent, not 0)."""
    n = len(cases)
    rates: dict[str, float | None] = {
        f"{label}_rate": (float((cases["label"] == label).mean()) if n else None) for label in LABELS
    }
    rates["stale_retrieval_rate"] = float(cases["stale_documents"].map(len).gt(0).mean()) if n else None
    return rates
