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
from rag_eval_pipeline.health.knowledge import KnowledgeView, terms_of
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
# a reference of this many terms or more ("tap the version number seven times under Settings >
# About") may be said in another order: a passage holding this share of its terms holds it
LONG_ANSWER, LONG_ANSWER_SHARE = 5, 0.8


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


def _is_yes_no(reference: str, language: str) -> bool:
    text = analyzer(language)
    normal = text.answer_normal(reference)
    lexicon = text.rule_lexicon
    return normal in YES_NO or bool(lexicon and normal in (lexicon.yes | lexicon.no))


def _supports(
    view: KnowledgeView, question: set[str], answer: list[str], th: Thresholds
) -> list[tuple[int, float]]:
    """Passages holding the answer (its terms as a phrase), each with how strongly it is about
    the question: its own share of the question, or (a bridge) the share of a passage naming it
    by its title, or named by it."""
    found = view.holding_phrase(answer)
    if not found and len(set(answer)) >= LONG_ANSWER:  # a procedure said in another order
        found = view.holding(set(answer), LONG_ANSWER_SHARE)
    if not found:
        return []
    about = dict(view.best_covering(question, limit=50))
    strong = [(r, s) for r, s in about.items() if s >= th.bridge]
    supported = []
    for i in found:
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

    def supports(self, question: set[str], answer: list[str]) -> list[tuple[int, float]]:
        key = ("supports", tuple(question), tuple(answer))
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


def _retrieved_indices(view: KnowledgeView, case: CaseInput) -> set[int]:
    ids = set(case.retrieved_ids)
    titles = set(case.retrieved_titles)
    return {
        i
        for i, (pid, title) in enumerate(zip(view.passage_ids, view.titles))
        if pid in ids or title in titles
    }


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
    language = case.language
    question = set(terms_of(case.question, language))
    known = supports if supports is not None else Supports(view, th)
    if retrieved is None:
        retrieved = known.retrieved(case) if supports is not None else _retrieved_indices(view, case)
    stale = tuple(sorted({view.documents[i] for i in retrieved if not view.is_current(i)}))
    reference = case.reference if case.reference and case.reference.strip() else None

    def evidence(i: int, label: str, reason: str, score: float | None, terms: set[str]) -> CaseLabel:
        return CaseLabel(
            case.qid,
            label,
            reason,
            view.passage_ids[i],
            view.titles[i],
            view.sentence_with(i, terms),
            score,
            stale,
        )

    reference_terms = set(terms_of(reference, language)) if reference is not None else set()
    if reference is not None and (_is_yes_no(reference, language) or reference_terms <= question):
        # yes/no, or one of the options the question names: the passages must hold the question
        chosen, covered = known.yes_no(question)
        if covered < th.yes_no or not chosen:
            return CaseLabel(
                case.qid,
                KNOWLEDGE_GAP,
                f"a yes/no or choice question: no two passages hold more than {covered:.2f} of its terms",
                score=round(covered, 3),
                stale_documents=stale,
            )
        holders = [(i, covered) for i in chosen]
        answer_terms = question
    elif reference is not None:
        phrase = terms_of(reference, language)
        answer_terms = set(phrase)
        holders = known.supports(question - answer_terms, phrase) if phrase else []
        if not holders:
            near = known.nearest(question)
            return CaseLabel(
                case.qid,
                KNOWLEDGE_GAP,
                "no passage of the knowledge base holds the reference answer in a passage about the question"
                + (f" (the closest passage holds {near[0][1]:.2f} of the question)" if near else ""),
                view.passage_ids[near[0][0]] if near else None,
                view.titles[near[0][0]] if near else None,
                None,
                round(near[0][1], 3) if near else 0.0,
                stale,
            )
    else:
        holders, answer_terms = [], set()
        best = max((view.coverage(i, question) for i in retrieved), default=0.0)
        if case.sufficiency is not None and case.sufficiency < 0.5:
            return CaseLabel(
                case.qid,
                KNOWLEDGE_GAP,
                f"the sufficiency judge: {case.sufficiency_reason or 'the passages do not answer it'}",
                score=case.sufficiency,
                stale_documents=stale,
            )
        if case.abstained and best < th.weak_retrieval:
            what = (
                "nothing retrieved" if not retrieved else f"the best retrieved passage holds {best:.2f} of it"
            )
            return CaseLabel(
                case.qid,
                KNOWLEDGE_GAP,
                f"no reference; the agent declined and retrieval was weak ({what})",
                score=round(best, 3),
                stale_documents=stale,
            )

    # outdated: the answer rests on a document that is not current
    said = set() if case.abstained else set(terms_of(case.answer, language))
    answered = said - question or said  # a choice the question names: the choice itself
    for i in sorted(retrieved):
        if not view.is_current(i) and answered and answered <= view.terms[i]:
            return evidence(
                i,
                OUTDATED,
                f"the answer is taken from {view.documents[i]}, which is {view.statuses[i]}",
                1.0,
                answered,
            )
    if holders and not any(view.is_current(i) for i, _ in holders):
        i, strength = holders[0]
        return evidence(
            i,
            OUTDATED,
            f"only {view.statuses[i]} documents hold the answer ({view.documents[i]})",
            round(strength, 3),
            answer_terms,
        )
    # conflict: a current document the case reads disagrees with another on what it asks
    read = {view.documents[i] for i, _ in holders} | {view.documents[i] for i in retrieved}
    for conflict in conflicts:
        if {conflict.first, conflict.second} & read and conflict.terms & (question | answer_terms | answered):
            return CaseLabel(
                case.qid,
                CONFLICT,
                f"{conflict.first} says “{conflict.first_sentence}”; {conflict.second} says "
                f"“{conflict.second_sentence}”",
                conflict.first,
                None,
                conflict.first_sentence,
                round(conflict.similarity, 3),
                stale,
            )
    if holders:
        current = [(i, s) for i, s in holders if view.is_current(i)]
        if not any(i in retrieved for i, _ in current):
            i, strength = current[0]
            return evidence(
                i,
                RETRIEVAL_MISS,
                f"{view.passage_ids[i]} holds the answer; it was not retrieved",
                round(strength, 3),
                answer_terms,
            )
        i, strength = next((i, s) for i, s in current if i in retrieved)
        return evidence(
            i, COVERED, "a retrieved current passage holds the answer", round(strength, 3), answer_terms
        )
    if reference is None:
        best = max(
            ((i, view.coverage(i, question)) for i in range(len(view)) if i not in retrieved),
            key=lambda x: x[1],
            default=None,
        )
        if case.abstained and best is not None and best[1] >= 2 * th.weak_retrieval:
            i, strength = best
            return evidence(
                i,
                RETRIEVAL_MISS,
                f"no reference; {view.passage_ids[i]} is about the question and was not retrieved",
                round(strength, 3),
                question,
            )
    return CaseLabel(
        case.qid, COVERED, "no gap found" if reference is None else "covered", stale_documents=stale
    )


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

