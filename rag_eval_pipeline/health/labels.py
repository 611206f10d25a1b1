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

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from rag_eval_pipeline.health.conflicts import Conflict
from rag_eval_pipeline.health.knowledge import NUMBER_MARK, KnowledgeView, question_terms, terms_of
from rag_eval_pipeline.health.paraphrase import MAX_PAIRS_A_CASE, ParaphraseReader
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
    "confidence",
    "stale_documents",
    "correct",
]
YES_NO = frozenset({"yes", "no", "noanswer"})
# an answer adding this many words but its numbers to the question ("press and hold both side
# buttons for 5 seconds") may say one of them in other words than its passage: one may be missing
SAID_OTHERWISE_FROM = 5
YES_NO_READ = "a yes/no question in other words: the cross-encoder"
# How far a gap said by the words alone can be trusted: "unsure" where the words cannot tell,
# because a yes/no or choice question's passages share some of its words but need not say its
# answer, or because a passage says the answer beside some but too few of the question's words
# (it may say the rest in other words), and no model reads the case's language to tell; else
# "sure" (no passage says the answer beside any word of the question, or a model read those that
# do and found none answering). Other labels have none.
SURE, UNSURE = "sure", "unsure"


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
    confidence: str | None = None  # a gap's: SURE or UNSURE


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


@dataclass(frozen=True)
class _Asked:
    """The question as a passage is read against it: its content terms, its text (for a model
    reading it beside a passage) and the model, where one reads the case's language."""

    terms: set[str]
    text: str = ""
    paraphrase: ParaphraseReader | None = None


def _supports(
    view: KnowledgeView, asked: _Asked, key: AnswerKey, th: Thresholds
) -> tuple[list[tuple[int, float]], dict[int, float], float | None]:
    """Passages saying the answer within two sentences, each with how strongly it is about the
    question: a number with at most one word, the share of the question held by those sentences
    and the title (the question's words beside the answer's); else the passage's own share; or
    (a bridge) the share of a passage naming it by its title, or named by it; or, where none is
    and a paraphrase reader reads the language, those whose sentences saying the answer it
    scores as answering the question (the second part: each such passage's score; the third,
    where passages say the answer beside too few of the question's words and no reader read them:
    the most of the question such sentences hold, else None)."""
    question = asked.terms
    found = _candidates(view, key)
    if not found:
        return [], {}, None
    about = dict(view.best_covering(question, limit=50))
    strong = [(r, s) for r, s in about.items() if s >= th.bridge]
    supported = []
    unsure: list[tuple[float, int, int]] = []  # (share, passage, window): said, too few question words
    for i in found:
        windows = view.windows(i)
        at = [j for j, w in enumerate(windows) if key.as_phrase or key.said_in(w)]
        said = [view.terms[i]] if key.as_phrase else [windows[j] for j in at]
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
        else:
            unsure += [(view.share(windows[j] | view.title_terms[i], question), i, j) for j in at]
    if supported or not unsure or asked.paraphrase is None:
        unread = max((s for s, _, _ in unsure), default=None) if not supported else None
        return sorted(supported, key=lambda x: (-x[1], x[0])), {}, unread
    return (*_read_as_paraphrase(view, asked, sorted(unsure, key=lambda x: (-x[0], x[1], x[2]))), None)


def _read_as_paraphrase(
    view: KnowledgeView, asked: _Asked, unsure: list[tuple[float, int, int]]
) -> tuple[list[tuple[int, float]], dict[int, float]]:
    """The passages whose windows saying the answer the paraphrase reader scores as answering the
    question (the first ``MAX_PAIRS_A_CASE`` windows, sharing most of the question first), each
    with its share of the question and its best score."""
    reader = asked.paraphrase
    assert reader is not None
    chosen = unsure[:MAX_PAIRS_A_CASE]
    scores = reader.score([(asked.text, view.window_texts(i)[j]) for _, i, j in chosen])
    best: dict[int, float] = {}
    for (_, i, _), score in zip(chosen, scores):
        best[i] = max(score, best.get(i, score))
    held = {i: score for i, score in best.items() if score >= reader.threshold}
    shares = {i: view.share(view.terms[i] | view.title_terms[i], asked.terms) for i in held}
    return sorted(shares.items(), key=lambda x: (-held[x[0]], x[0])), held


def _yes_no_read(view: KnowledgeView, asked: _Asked) -> dict[int, float]:
    """A yes/no or choice question in other words than its passages: the windows of the
    passages covering most of it (the first ``MAX_PAIRS_A_CASE``, sharing most of the question
    first) that the paraphrase reader scores as answering it, each passage with its best score.
    Nothing need stand in them but what the question asks about: "yes" is seldom written."""
    reader = asked.paraphrase
    assert reader is not None
    near = [i for i, _ in view.best_covering(asked.terms, limit=MAX_PAIRS_A_CASE)]
    shares = [
        (view.share(w | view.title_terms[i], asked.terms), i, j)
        for i in near
        for j, w in enumerate(view.windows(i))
    ]
    windows = sorted(shares, key=lambda x: (-x[0], x[1], x[2]))[:MAX_PAIRS_A_CASE]
    if not windows:
        return {}
    scores = reader.score([(asked.text, view.window_texts(i)[j]) for _, i, j in windows])
    best: dict[int, float] = {}
    for (_, i, _), score in zip(windows, scores):
        best[i] = max(score, best.get(i, score))
    held = {i: score for i, score in best.items() if score >= reader.threshold}
    return dict(sorted(held.items(), key=lambda x: (-x[1], x[0])))


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

    def supports(
        self, asked: _Asked, answer: AnswerKey
    ) -> tuple[list[tuple[int, float]], dict[int, float], float | None]:
        """``_supports``, asked once per question (and its text and reader, where one reads it)."""
        reader = asked.paraphrase
        read_by = (asked.text, reader.name, reader.threshold) if reader is not None else None
        key = ("supports", tuple(asked.terms), answer, read_by)
        if key not in self._found:
            self._found[key] = _supports(self.view, asked, answer, self.th)
        return self._found[key]  # type: ignore[return-value]

    def yes_no(self, question: set[str]) -> tuple[list[int], float]:
        key = ("yes_no", tuple(question))
        if key not in self._found:
            self._found[key] = _yes_no_support(self.view, question)
        return self._found[key]  # type: ignore[return-value]

    def yes_no_read(self, asked: _Asked) -> dict[int, float]:
        """``_yes_no_read``, asked once per question, its text and reader."""
        reader = asked.paraphrase
        assert reader is not None
        key = ("yes_no_read", tuple(asked.terms), asked.text, reader.name, reader.threshold)
        if key not in self._found:
            self._found[key] = _yes_no_read(self.view, asked)
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
    paraphrase: ParaphraseReader | None = None

    @functools.cached_property
    def said(self) -> frozenset[str]:
        """The answer's terms (none where the agent declined), read once for every check."""
        if self.case.abstained:
            return frozenset()
        return frozenset(terms_of(self.case.answer, self.case.language))

    def label(
        self,
        label: str,
        reason: str,
        score: float | None = None,
        at: int | None = None,
        terms: set[str] | None = None,
        confidence: str | None = None,
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
            confidence,
        )


@dataclass(frozen=True)
class _Holders:
    """The passages holding a case's answer (with how strongly each is about the question) and
    the terms that say it."""

    passages: list[tuple[int, float]]
    answer_terms: set[str]
    paraphrased: dict[int, str] = field(default_factory=dict)  # a passage held in other words: how

    def said(self, i: int, reason: str) -> str:
        """``reason``, with how passage ``i`` was read where it says the question in other words."""
        how = self.paraphrased.get(i)
        return f"{reason} ({how})" if how else reason


def _with_reference(r: _Reading) -> CaseLabel | _Holders:
    """A gap where no passage of the knowledge base says the reference about the question;
    otherwise the passages that do."""
    assert r.reference is not None
    language = r.case.language
    key = AnswerKey.of(r.reference, language, r.question)
    yes_no = _is_yes_no(r.reference, language)
    if yes_no or not key.adds:
        # yes/no, or one of the options the question names: the passages must hold the question
        chosen, covered = r.known.yes_no(r.question)
        if covered >= r.th.yes_no and chosen:
            return _Holders([(i, covered) for i in chosen], r.question)
        reader = r.paraphrase if r.paraphrase is not None and r.paraphrase.reads(language) else None
        # a yes/no question (not a choice between options the question names: a passage on
        # either option is about it, whichever answers) in a language the reader reads
        asked_yes_no = _Asked(r.question, r.case.question, reader)
        read = r.known.yes_no_read(asked_yes_no) if reader is not None and yes_no else {}
        if read:
            notes = {i: f"{YES_NO_READ} {reader.name} scores it {score:.1f}" for i, score in read.items()}
            return _Holders([(i, covered) for i in read], r.question, notes)
        if reader is not None and yes_no:
            how, confidence = f" and the cross-encoder {reader.name} finds none answering it", SURE
        elif covered > 0:  # passages share some of its words: they may answer it in others
            how, confidence = " (unsure: its passages need not say its answer, no model read them)", UNSURE
        else:
            how, confidence = "", SURE
        return r.label(
            KNOWLEDGE_GAP,
            f"a yes/no or choice question: no two passages hold more than {covered:.2f} of its terms{how}",
            round(covered, 3),
            confidence=confidence,
        )
    # about the question: by the words of it the answer does not repeat ("products" in
    # "what sort of products?" says nothing of which passage is about it)
    reader = r.paraphrase if r.paraphrase is not None and r.paraphrase.reads(language) else None
    asked = _Asked(r.question - key.words - key.numbers, r.case.question, reader)
    holders, read, unread = r.known.supports(asked, key)
    unsure = unread is not None and unread > 0  # the answer beside some of the question's words
    if holders:
        notes = {
            i: f"the question in other words: the cross-encoder {reader.name} scores it {score:.1f}"
            for i, score in read.items()
            if reader is not None
        }
        return _Holders(holders, set(key.numbers | key.words), notes)
    near = r.known.nearest(r.question)
    return r.label(
        KNOWLEDGE_GAP,
        "no passage of the knowledge base says the reference answer beside the question's words"
        + (f" (the closest passage holds {near[0][1]:.2f} of the question)" if near else "")
        + (" (unsure: a passage says it beside too few of them, no model read it)" if unsure else ""),
        round(near[0][1], 3) if near else 0.0,
        near[0][0] if near else None,
        confidence=UNSURE if unsure else SURE,
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
            confidence=SURE,
        )
    best = max((r.view.coverage(i, r.question) for i in r.retrieved), default=0.0)
    if case.abstained and best < r.th.weak_retrieval:
        what = (
            "nothing retrieved" if not r.retrieved else f"the best retrieved passage holds {best:.2f} of it"
        )
        return r.label(
            KNOWLEDGE_GAP,
            f"no reference; the agent declined and retrieval was weak ({what})",
            round(best, 3),
            confidence=SURE,
        )
    return None


def _outdated(r: _Reading, holders: _Holders) -> CaseLabel | None:
    """The agent's answer taken from a retrieved document not current, or only such documents
    hold the reference."""
    view = r.view
    said = r.said
    answered = said - r.question or said  # a choice the question names: the choice itself
    for i in sorted(r.retrieved):
        if not view.is_current(i) and answered and answered <= view.terms[i]:
            reason = f"the answer is taken from {view.documents[i]}, which is {view.statuses[i]}"
            return r.label(OUTDATED, reason, 1.0, i, answered)
    if holders.passages and not any(view.is_current(i) for i, _ in holders.passages):
        i, strength = holders.passages[0]
        reason = holders.said(i, f"only {view.statuses[i]} documents hold the answer ({view.documents[i]})")
        return r.label(OUTDATED, reason, round(strength, 3), i, holders.answer_terms)
    return None


def _conflict(r: _Reading, holders: _Holders, conflicts: Sequence[Conflict]) -> CaseLabel | None:
    """A current document the case reads disagreeing with another on what it asks."""
    view = r.view
    said = r.said
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
            reason = holders.said(i, f"{view.passage_ids[i]} holds the answer; it was not retrieved")
            return r.label(RETRIEVAL_MISS, reason, round(strength, 3), i, holders.answer_terms)
        i, strength = held
        reason = holders.said(i, "a retrieved current passage holds the answer")
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
    paraphrase: ParaphraseReader | None = None,
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
        set(question_terms(case.question, case.language)),
        retrieved,
        tuple(sorted({view.documents[i] for i in retrieved if not view.is_current(i)})),
        reference,
        th,
        known,
        paraphrase,
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
    paraphrase: ParaphraseReader | None = None,
) -> pd.DataFrame:
    """Every case's label with its evidence (``CASE_TABLE_COLUMNS``); ``supports``: a memo kept
    across the calls over one reading (each question's support looked up once), else one for
    this table; with ``paraphrase``, a passage saying the reference in sentences the reader
    scores as answering the question holds it although it shares few of the question's words
    (in the languages the reader reads)."""
    if supports is None or supports.view is not view or supports.th != th:
        supports = Supports(view, th)
    rows = []
    for case in cases:
        found = label_case(case, view, conflicts, th, supports=supports, paraphrase=paraphrase)
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
                "confidence": found.confidence,
                "stale_documents": list(found.stale_documents),
                "correct": case.correct,
            }
        )
    return pd.DataFrame(rows, columns=CASE_TABLE_COLUMNS)


def label_rates(cases: pd.DataFrame) -> dict[str, float | None]:
    """The share of cases of each label, the stale-retrieval rate (cases whose contexts include a
    document not current) and the share of cases that are gaps said unsure; None for no cases
    (absent, not 0)."""
    n = len(cases)
    rates: dict[str, float | None] = {
        f"{label}_rate": (float((cases["label"] == label).mean()) if n else None) for label in LABELS
    }
    rates["stale_retrieval_rate"] = float(cases["stale_documents"].map(len).gt(0).mean()) if n else None
    # the gaps the words alone could not tell (``UNSURE``): part of knowledge_gap_rate, said apart
    unsure = None
    if n and "confidence" in cases:
        unsure = float(((cases["label"] == KNOWLEDGE_GAP) & (cases["confidence"] == UNSURE)).mean())
    rates["knowledge_gap_unsure_rate"] = unsure
    return rates
