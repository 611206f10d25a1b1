"""RAGAS-style metrics with an LLM: statement-level faithfulness, context precision from
per-passage verdicts, context recall from attributed ground-truth statements, answer relevancy
from generated questions. Prompts are pure ``render_*`` functions; outputs go through the same
engine as the STRICT judge (forced tool, validation, one re-ask)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from rag_eval_pipeline.answering.chat import format_passages
from rag_eval_pipeline.judges.base import JudgeCase, JudgeOutcome, case_context
from rag_eval_pipeline.judges.engine import InvalidJudgeOutput, LLMJudge, parse_tool_output, rubric_request
from rag_eval_pipeline.language.prompts import judge_clause
from rag_eval_pipeline.llm.client import FatalLLMError, LLMCallError, LLMClient, LLMRequest, Tool
from rag_eval_pipeline.llm.pricing import ModelPrice
from rag_eval_pipeline.metrics.reference import is_abstention
from rag_eval_pipeline.retrieval.base import SearchHit

RAGAS_PROMPT_VERSION = "ragas-v1"
RAGAS_METRICS = ("faithfulness", "context_precision", "context_recall", "answer_relevancy")
# without a reference answer, as RAGAS's LLMContextPrecisionWithoutReference: a passage is useful
# when it supports the answer given; context recall needs the truth's statements and is absent
RAGAS_REFERENCE_FREE_METRICS = ("faithfulness", "context_precision", "answer_relevancy")


class Statements(BaseModel):
    statements: list[str]


class StatementVerdict(BaseModel):
    statement: str
    verdict: Literal[0, 1]
    reason: str


class StatementVerdicts(BaseModel):
    verdicts: list[StatementVerdict]


class PassageVerdict(BaseModel):
    passage: int = Field(ge=1)
    useful: Literal[0, 1]
    reason: str


class PassageVerdicts(BaseModel):
    verdicts: list[PassageVerdict]


class GeneratedQuestions(BaseModel):
    questions: list[str] = Field(min_length=1)
    noncommittal: Literal[0, 1]


def _tool(name: str, description: str, model: type[BaseModel]) -> Tool:
    return Tool(name=name, description=description, input_schema=model.model_json_schema())


STATEMENTS_TOOL = _tool("record_statements", "Record the atomic statements.", Statements)
VERDICTS_TOOL = _tool("record_verdicts", "Record a verdict per statement.", StatementVerdicts)
PASSAGES_TOOL = _tool("record_passage_verdicts", "Record a verdict per passage.", PassageVerdicts)
QUESTIONS_TOOL = _tool("record_questions", "Record the generated questions.", GeneratedQuestions)

RAGAS_SYSTEM = (
    "You are a careful evaluator of a retrieval-augmented question-answering system. Follow the "
    "instructions exactly and report only through the tool you are given."
)


def _request(model: str, instruction: str, body: str, tool: Tool, language: str = "en") -> LLMRequest:
    return rubric_request(model, RAGAS_SYSTEM, f"{instruction}\n\n{body}{judge_clause(language)}", 1000, tool)


def render_statement_extraction(model: str, question: str, answer: str, language: str = "en") -> LLMRequest:
    return _request(
        model,
        "Break the answer into atomic, self-contained statements (no pronouns). An answer that "
        "makes no claim yields no statements.",
        f"<question>{question}</question>\n<answer>{answer}</answer>",
        STATEMENTS_TOOL,
        language,
    )


def render_statement_verdicts(
    model: str, statements: Sequence[str], passages: Sequence[SearchHit], language: str = "en"
) -> LLMRequest:
    listed = "\n".join(f"- {s}" for s in statements)
    return _request(
        model,
        "For each statement, give verdict 1 if it can be directly inferred from the passages, "
        "else 0, with a one-sentence reason.",
        f"<passages>\n{format_passages(passages)}\n</passages>\n<statements>\n{listed}\n</statements>",
        VERDICTS_TOOL,
        language,
    )


# what the judge is asked of the case's passages (the case's question, reference or answer and
# passages follow each)
USEFUL_FOR_GROUND_TRUTH = (
    "For each numbered passage, give useful 1 if it was useful in arriving at the ground-truth "
    "answer to the question, else 0, with a one-sentence reason."
)
USEFUL_FOR_ANSWER = (
    "For each numbered passage, give useful 1 if it was useful in arriving at the given answer "
    "to the question, else 0, with a one-sentence reason."
)
GROUND_TRUTH_ATTRIBUTION = (
    "Break the ground-truth answer (read together with the question) into statements. For each "
    "statement give verdict 1 if it can be attributed to the passages, else 0, with a reason."
)


def render_passage_usefulness(
    model: str, question: str, ground_truth: str, passages: Sequence[SearchHit], language: str = "en"
) -> LLMRequest:
    context = case_context(question, ground_truth, passages)
    return _request(model, USEFUL_FOR_GROUND_TRUTH, context, PASSAGES_TOOL, language)


def render_passage_usefulness_for_answer(
    model: str, question: str, answer: str, passages: Sequence[SearchHit], language: str = "en"
) -> LLMRequest:
    """Context precision without a reference: each passage judged against the answer given."""
    context = case_context(question, None, passages, answer)
    return _request(model, USEFUL_FOR_ANSWER, context, PASSAGES_TOOL, language)


def render_ground_truth_attribution(
    model: str, question: str, ground_truth: str, passages: Sequence[SearchHit], language: str = "en"
) -> LLMRequest:
    context = case_context(question, ground_truth, passages)
    return _request(model, GROUND_TRUTH_ATTRIBUTION, context, VERDICTS_TOOL, language)


def render_question_generation(model: str, answer: str, count: int = 3, language: str = "en") -> LLMRequest:
    return _request(
        model,
        f"Write {count} different questions that this answer answers. Set noncommittal to 1 if "
        "the answer is evasive or vague (e.g. 'I don't know', 'unknown'), else 0.",
        f"<answer>{answer}</answer>",
        QUESTIONS_TOOL,
        language,
    )


def rank_weighted_precision(useful: Sequence[bool]) -> float | None:
    """RAGAS context precision from per-rank verdicts; None when there are no passages."""
    if not useful:
        return None
    hits = 0
    weighted = 0.0
    for rank, is_useful in enumerate(useful, start=1):
        if is_useful:
            hits += 1
            weighted += hits / rank
    return weighted / hits if hits else 0.0


def share_supported(verdicts: Sequence[int]) -> float | None:
    """Supported / total; None when there is nothing to check."""
    return sum(verdicts) / len(verdicts) if verdicts else None


def answer_relevancy(question_vector: np.ndarray, generated_vectors: np.ndarray, noncommittal: bool) -> float:
    """RAGAS: mean cosine similarity of generated questions to the question, 0 if noncommittal."""
    if noncommittal or len(generated_vectors) == 0:
        return 0.0
    q = question_vector / (np.linalg.norm(question_vector) or 1.0)
    g = generated_vectors / np.maximum(np.linalg.norm(generated_vectors, axis=1, keepdims=True), 1e-12)
    return float(np.mean(g @ q))


class RagasLLMJudge(LLMJudge):
    """RAGAS-style metrics with an LLM: statement-level faithfulness, context precision from
    per-passage verdicts, context recall from attributed ground-truth statements, and answer
    relevancy from generated questions (needs an embedder; absent with a note otherwise)."""

    kind = "ragas"
    metrics = RAGAS_METRICS
    reference_free_metrics = RAGAS_REFERENCE_FREE_METRICS
    prompt_version = RAGAS_PROMPT_VERSION

    def __init__(
        self,
        judge_id: str,
        model: str,
        client: LLMClient,
        prices: Mapping[str, ModelPrice],
        embed: Callable[[list[str]], np.ndarray] | None = None,
        embeds_language: Callable[[str], bool] = lambda code: code == "en",
    ) -> None:
        super().__init__(judge_id, model, client, prices)
        self._embed = embed
        self._embeds_language = embeds_language

    async def judge(self, case: JudgeCase) -> JudgeOutcome:
        caller = self._caller(case)
        scores: dict[str, float | None] = {}
        rationales: dict[str, str] = {}
        notes: list[str] = []
        try:
            if is_abstention(case.answer, language=case.language):
                scores["faithfulness"] = None
                notes.append("faithfulness: the answer abstains, no statement to check")
            else:
                statements = await caller.ask(
                    render_statement_extraction(self.model, case.question, case.answer, case.language),
                    lambda r: parse_tool_output(r, Statements),
                )
                if statements.statements:
                    verdicts = await caller.ask(
                        render_statement_verdicts(
                            self.model, statements.statements, case.passages, case.language
                        ),
                        lambda r: parse_tool_output(r, StatementVerdicts),
                    )
                    scores["faithfulness"] = share_supported([v.verdict for v in verdicts.verdicts])
                    rationales["faithfulness"] = json.dumps([v.model_dump() for v in verdicts.verdicts])
                else:
                    scores["faithfulness"] = None
            if case.passages:
                usefulness = await caller.ask(
                    render_passage_usefulness(
                        self.model, case.question, case.ground_truth, case.passages, case.language
                    )
                    if case.ground_truth is not None
                    else render_passage_usefulness_for_answer(
                        self.model, case.question, case.answer, case.passages, case.language
                    ),
                    lambda r: parse_tool_output(r, PassageVerdicts),
                )
                by_rank = {v.passage: bool(v.useful) for v in usefulness.verdicts}
                scores["context_precision"] = rank_weighted_precision(
                    [by_rank.get(rank, False) for rank in range(1, len(case.passages) + 1)]
                )
            else:
                scores["context_precision"] = None
            if case.ground_truth is None:
                scores["context_recall"] = None  # the truth's statements are what it attributes
            else:
                attribution = await caller.ask(
                    render_ground_truth_attribution(
                        self.model, case.question, case.ground_truth, case.passages, case.language
                    ),
                    lambda r: parse_tool_output(r, StatementVerdicts),
                )
                scores["context_recall"] = share_supported([v.verdict for v in attribution.verdicts])
            if self._embed is None:
                scores["answer_relevancy"] = None
                notes.append("answer_relevancy: no embedder configured")
            elif not self._embeds_language(case.language):
                scores["answer_relevancy"] = None
                notes.append(
                    f"answer_relevancy: the embedding model reads English only; a case in "
                    f"'{case.language}' is not measured (a multilingual model would)"
                )
            else:
                generated = await caller.ask(
                    render_question_generation(self.model, case.answer, language=case.language),
                    lambda r: parse_tool_output(r, GeneratedQuestions),
                )
                vectors = self._embed([case.question, *generated.questions])
                scores["answer_relevancy"] = answer_relevancy(
                    vectors[0], vectors[1:], bool(generated.noncommittal)
                )
        except FatalLLMError:
            raise
        except (InvalidJudgeOutput, LLMCallError) as err:
            return JudgeOutcome(
                {}, usage=caller.usage, cost_usd=caller.cost, error=f"{type(err).__name__}: {err}"
            )
        return JudgeOutcome(scores, rationales, caller.usage, caller.cost, notes=notes)
