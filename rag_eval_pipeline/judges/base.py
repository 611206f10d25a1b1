"""What a judge is: one case in, scored metrics out. Every judge (reference, STRICT, RAGAS-style,
rubric, Python callable) implements ``Judge`` and declares its metrics once; summaries,
validation and comparison ask the registry for them instead of switching on a judge's kind."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from rag_eval_pipeline.answering.chat import format_passages
from rag_eval_pipeline.language.prompts import judge_clause
from rag_eval_pipeline.llm.client import LLMRequest, Usage
from rag_eval_pipeline.metrics.grounding import VisualAnswer, VisualLabels
from rag_eval_pipeline.retrieval.base import SearchHit


@dataclass(frozen=True)
class JudgeCase:
    """What a judge sees of one case: the question, ground truth, answer and retrieved passages,
    and the labels reference metrics need (gold titles and supporting facts). A case without a
    reference answer (``ground_truth`` None: production traffic, a promoted case still to be
    labelled) is judged on what needs none; every other metric is absent, never 0."""

    question: str
    ground_truth: str | None
    answer: str
    passages: tuple[SearchHit, ...]
    qid: str = ""
    gold_titles: tuple[str, ...] = ()
    gold_facts: tuple[tuple[str, int], ...] = ()
    tags: tuple[str, ...] = ()
    answerable: bool = True  # False: the documents hold no answer, abstaining is right
    contexts_known: bool = True  # False: an agent that returns no contexts (nothing to judge them on)
    cited_titles: tuple[str, ...] | None = None  # the passages the answer cites (None: it cites none)
    judge_repeat: int = 0  # which of a judge's K independent scorings of this case (0: the first)
    language: str = "en"  # the case's language (ISO 639-1): what its text is analysed and judged in
    gold_visual: VisualLabels = VisualLabels()  # gold images and boxes (none: image metrics absent)
    visual: VisualAnswer | None = None  # the images, boxes and heat maps the answer says it used

    @property
    def reference_known(self) -> bool:
        return self.ground_truth is not None

    @property
    def retrieved_titles(self) -> list[str]:
        return [h.title for h in self.passages]

    @property
    def retrieved_passages(self) -> list[str]:
        return [h.passage for h in self.passages]


@dataclass
class JudgeOutcome:
    """A judge's scores for one case, with rationales, tokens and cost of the calls it made."""

    scores: dict[str, float | None]
    rationales: dict[str, str] = field(default_factory=dict)
    usage: Usage = Usage()
    cost_usd: float | None = 0.0
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    # a metric that aggregates verdicts (per image): each item's verdict, kept apart from the mean
    item_verdicts: dict[str, dict[str, float]] = field(default_factory=dict)


@runtime_checkable
class Judge(Protocol):
    """Scores one case. ``metrics`` is every metric it may produce (a metric it could not
    compute on a case is None, never 0); ``reference_free_metrics`` those it measures on a case
    without a reference answer; an error becomes the case's ``judge_error``."""

    judge_id: str
    kind: str
    metrics: tuple[str, ...]
    reference_free_metrics: tuple[str, ...]
    prompt_version: str | None

    async def judge(self, case: JudgeCase) -> JudgeOutcome: ...


@runtime_checkable
class BatchableJudge(Judge, Protocol):
    """A judge that can say its first call in advance (what a Message Batch pre-fetches)."""

    def first_request(self, case: JudgeCase) -> LLMRequest: ...


def case_context(
    question: str,
    ground_truth: str | None,
    passages: Sequence[SearchHit],
    answer: str | None = None,
    language: str = "en",
) -> str:
    """How every judge prompt shows a case: tagged question, ground truth (left out of a blind
    judgement), numbered passages and, when judged, the answer, each as written; a case not in
    English says its language (``language/prompts.py``)."""
    truth = "" if ground_truth is None else f"<ground_truth>{ground_truth}</ground_truth>\n"
    text = f"<question>{question}</question>\n{truth}<passages>\n{format_passages(passages)}\n</passages>"
    text = text if answer is None else f"{text}\n<answer>{answer}</answer>"
    return text + judge_clause(language)
