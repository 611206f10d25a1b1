"""The reference judge: every reference metric from HotpotQA's labels, no LLM. The formulas
live in ``metrics/reference.py``; this is their judge."""

from __future__ import annotations

from rag_eval_pipeline.judges.base import JudgeCase, JudgeOutcome
from rag_eval_pipeline.language.analysis import analysis_of
from rag_eval_pipeline.language.inflection import absent_note
from rag_eval_pipeline.metrics import reference
from rag_eval_pipeline.metrics.schema import REFERENCE_JUDGE_ID

AGAINST_TRUTH_METRICS = ("exact_match", "f1", "correctness")
# what needs no reference answer: the retrieval and citation metrics read gold labels, lexical
# faithfulness the passages (each absent where what it reads is missing)
REFERENCE_FREE_METRICS = (
    "context_relevance",
    "context_precision",
    "context_recall",
    "faithfulness_lexical",
    "citation_precision",
    "citation_recall",
)
REFERENCE_METRICS = (*AGAINST_TRUTH_METRICS, *REFERENCE_FREE_METRICS)


class ReferenceJudge:
    """Exact match, F1 and correctness against the ground truth in the case's language
    (``language/``: HotpotQA's definition in English, MLQA's elsewhere; an abstention is right on a
    question the documents cannot answer); retrieval metrics against the gold supporting titles
    and facts; lexical faithfulness against the retrieved passages."""

    judge_id = REFERENCE_JUDGE_ID
    kind = "reference"
    metrics = REFERENCE_METRICS
    reference_free_metrics = REFERENCE_FREE_METRICS
    prompt_version = None

    def __init__(self, abstention: reference.AbstentionPolicy = reference.DEFAULT_ABSTENTION) -> None:
        self._abstention = abstention

    async def judge(self, case: JudgeCase) -> JudgeOutcome:
        notes: list[str] = []
        return JudgeOutcome(self.score(case, notes), notes=notes)

    def score(self, case: JudgeCase, notes: list[str] | None = None) -> dict[str, float | None]:
        """Every metric of the case; where correctness is absent (a sentence the language's rule
        cannot read), its reason and remedy are added to ``notes``, and where it was credited
        without a lexicon, the checks not made."""
        answer, truth, titles = case.answer, case.ground_truth, case.retrieved_titles
        language = analysis_of(case.language)  # resolved once: every metric below receives it
        against_truth: dict[str, float | None] = dict.fromkeys(AGAINST_TRUTH_METRICS)
        if truth is not None:
            correct, verdict = reference.correctness_verdict(
                answer,
                truth,
                case.answerable,
                self._abstention,
                case.question,
                titles,
                language,
                case.retrieved_passages,
            )
            if correct is None and verdict is not None and notes is not None:
                notes.append(absent_note(verdict.reason))
            elif correct == 1.0 and verdict is not None and verdict.unread and notes is not None:
                notes.append(f"correctness credited by lemmas or stems; {verdict.unread}")
            against_truth = {
                "exact_match": reference.exact_match(answer, truth, language),
                "f1": reference.f1(answer, truth, language),
                "correctness": correct,
            }
        return {
            **against_truth,
            "context_relevance": reference.context_relevance(titles, list(case.gold_titles)),
            "context_precision": reference.context_precision(titles, list(case.gold_titles)),
            "context_recall": reference.context_recall(titles, list(case.gold_facts)),
            "faithfulness_lexical": reference.faithfulness_lexical(
                answer, case.retrieved_passages, self._abstention, language
            ),
            "citation_precision": reference.citation_precision(case.cited_titles, list(case.gold_titles)),
            "citation_recall": reference.citation_recall(case.cited_titles, list(case.gold_titles)),
        }
