"""LLM judges: the article's STRICT rubric, and RAGAS-style statement-level metrics.

Each judgement is ``render_*`` (pure: case -> LLMRequest with a forced tool whose schema the API
enforces), one client call, and ``parse_*`` (pure: tool input -> validated pydantic model). An
invalid output is re-asked once with the validation error; a second invalid output is a judge
error, counted and shown, never a score of 0.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rag_eval_pipeline.answering.claude import format_passages
from rag_eval_pipeline.llm.client import LLMCallError, LLMClient, LLMRequest, LLMResponse, Tool, Usage
from rag_eval_pipeline.llm.pricing import ModelPrice, cost_usd
from rag_eval_pipeline.metrics.reference import is_abstention
from rag_eval_pipeline.retrieval.base import SearchHit

STRICT_PROMPT_VERSION = "strict-v1"
RAGAS_PROMPT_VERSION = "ragas-v1"
THREE_POINT = (0.0, 0.5, 1.0)

STRICT_RUBRIC = """You are a STRICT evaluator of a retrieval-augmented question-answering system.
You receive a question, the ground-truth answer, the passages the system retrieved, and the
system's answer. Score three axes, each exactly 0.0, 0.5 or 1.0. When in doubt between two
scores, pick the lower one.

correctness - does the answer say the same as the ground truth?
  1.0 same meaning (wording may differ); 0.5 partly right, incomplete or over-specific;
  0.0 wrong, or "unknown" although a ground truth exists.
faithfulness - is every claim of the answer supported by the passages?
  1.0 every claim is stated in the passages; 0.5 the main claim is supported but something
  else is not; 0.0 the main claim is not in the passages (even if it is true).
  "unknown" is faithful (1.0) when the passages do not contain the answer, else 0.5.
context_relevance - do the passages hold what is needed to answer the question?
  1.0 everything needed (every hop of a multi-hop question); 0.5 part of it; 0.0 nothing.

Give one sentence of rationale per axis, then report with the record_scores tool."""


def _score_property(axis: str) -> dict[str, Any]:
    return {"type": "number", "enum": list(THREE_POINT), "description": f"{axis}: 0, 0.5 or 1"}


STRICT_TOOL = Tool(
    name="record_scores",
    description="Record the three scores and a one-sentence rationale for each.",
    input_schema={
        "type": "object",
        "properties": {
            "correctness": _score_property("correctness"),
            "correctness_rationale": {"type": "string"},
            "faithfulness": _score_property("faithfulness"),
            "faithfulness_rationale": {"type": "string"},
            "context_relevance": _score_property("context_relevance"),
            "context_relevance_rationale": {"type": "string"},
        },
        "required": [
            "correctness",
            "correctness_rationale",
            "faithfulness",
            "faithfulness_rationale",
            "context_relevance",
            "context_relevance_rationale",
        ],
        "additionalProperties": False,
    },
)


class StrictVerdict(BaseModel):
    """The STRICT rubric's output, validated on our side as well as by the API's schema."""

    model_config = ConfigDict(extra="forbid")

    correctness: float
    correctness_rationale: str = Field(min_length=1)
    faithfulness: float
    faithfulness_rationale: str = Field(min_length=1)
    context_relevance: float
    context_relevance_rationale: str = Field(min_length=1)

    @field_validator("correctness", "faithfulness", "context_relevance")
    @classmethod
    def _three_point(cls, value: float) -> float:
        if value not in THREE_POINT:
            raise ValueError(f"{value} is not one of 0, 0.5, 1")
        return float(value)


@dataclass(frozen=True)
class JudgeCase:
    """What a judge sees of one case."""

    question: str
    ground_truth: str
    answer: str
    passages: tuple[SearchHit, ...]


def case_context(
    question: str, ground_truth: str, passages: Sequence[SearchHit], answer: str | None = None
) -> str:
    """How every judge prompt shows a case: tagged question, ground truth, numbered passages and,
    when judged, the answer."""
    text = (
        f"<question>{question}</question>\n<ground_truth>{ground_truth}</ground_truth>\n"
        f"<passages>\n{format_passages(passages)}\n</passages>"
    )
    return text if answer is None else f"{text}\n<answer>{answer}</answer>"


def render_strict_prompt(model: str, case: JudgeCase) -> LLMRequest:
    """The rubric is a static, cached system block; the case goes in the user turn."""
    user = case_context(case.question, case.ground_truth, case.passages, case.answer)
    return LLMRequest(
        model=model,
        cached_system=STRICT_RUBRIC,
        messages=({"role": "user", "content": user},),
        max_tokens=600,
        tool=STRICT_TOOL,
    )


class InvalidJudgeOutput(ValueError):
    """The judge's output did not match the schema (no tool call, missing key, bad value)."""


M = TypeVar("M", bound=BaseModel)


def parse_tool_output(response: LLMResponse, model: type[M]) -> M:
    if response.tool_input is None:
        raise InvalidJudgeOutput("no tool call in the response")
    try:
        return model.model_validate(response.tool_input)
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'output'}: {e['msg']}" for e in err.errors()
        )
        raise InvalidJudgeOutput(problems) from err


def parse_strict_verdict(response: LLMResponse) -> StrictVerdict:
    return parse_tool_output(response, StrictVerdict)


def reask_request(request: LLMRequest, response: LLMResponse, problem: str) -> LLMRequest:
    """The same conversation plus the invalid output and what was wrong with it."""
    tool_use = next((b for b in response.raw_content if b.get("type") == "tool_use"), None)
    instruction = (
        f"That output was invalid: {problem}. Call {request.tool.name if request.tool else 'the tool'} "
        "again with every required field, each score exactly 0, 0.5 or 1."
    )
    if tool_use is not None:
        follow_up = {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": tool_use["id"],
                    "is_error": True,
                    "content": instruction,
                }
            ],
        }
    else:
        follow_up = {"role": "user", "content": instruction}
    assistant = {"role": "assistant", "content": response.raw_content or response.text or "(empty)"}
    return LLMRequest(
        model=request.model,
        messages=(*request.messages, assistant, follow_up),
        system=request.system,
        cached_system=request.cached_system,
        max_tokens=request.max_tokens,
        temperature=request.temperature,
        tool=request.tool,
    )


@dataclass
class JudgeOutcome:
    """A judge's scores for one case, with rationales, tokens and cost of the calls it made."""

    scores: dict[str, float | None]
    rationales: dict[str, str] = field(default_factory=dict)
    usage: Usage = Usage()
    cost_usd: float | None = 0.0
    error: str | None = None
    notes: list[str] = field(default_factory=list)


class _Caller:
    """Makes a judge's calls for one case, re-asking once on invalid output, and adds up usage."""

    def __init__(self, client: LLMClient, model: str, prices: Mapping[str, ModelPrice]) -> None:
        self._client = client
        self._model = model
        self._prices = prices
        self.usage = Usage()
        self.cost: float | None = 0.0

    def _account(self, response: LLMResponse) -> None:
        self.usage = self.usage + response.usage
        call_cost = cost_usd(self._model, response.usage, self._prices, response.batch)
        self.cost = None if call_cost is None or self.cost is None else self.cost + call_cost

    async def ask(self, request: LLMRequest, parse: Callable[[LLMResponse], M]) -> M:
        response = await self._client.complete(request)
        self._account(response)
        try:
            return parse(response)
        except InvalidJudgeOutput as first:
            retry = await self._client.complete(reask_request(request, response, str(first)))
            self._account(retry)
            try:
                return parse(retry)
            except InvalidJudgeOutput as second:
                raise InvalidJudgeOutput(f"invalid twice: {first}; then: {second}") from second


async def single_verdict(
    caller: _Caller,
    request: LLMRequest,
    parse: Callable[[LLMResponse], M],
    to_scores: Callable[[M], tuple[dict[str, float | None], dict[str, str]]],
) -> JudgeOutcome:
    """A judgement made of one call (re-asked once if invalid): scores and rationales, or a
    recorded judge error, with the calls' usage and cost either way."""
    try:
        verdict = await caller.ask(request, parse)
    except (InvalidJudgeOutput, LLMCallError) as err:
        return JudgeOutcome(
            {}, usage=caller.usage, cost_usd=caller.cost, error=f"{type(err).__name__}: {err}"
        )
    scores, rationales = to_scores(verdict)
    return JudgeOutcome(scores, rationales, caller.usage, caller.cost)


class StrictLLMJudge:
    """The article's judge: correctness, faithfulness, context relevance on 0 / 0.5 / 1."""

    kind = "strict"
    metrics = ("correctness", "faithfulness", "context_relevance")
    prompt_version = STRICT_PROMPT_VERSION

    def __init__(
        self, judge_id: str, model: str, client: LLMClient, prices: Mapping[str, ModelPrice]
    ) -> None:
        self.judge_id = judge_id
        self.model = model
        self._client = client
        self._prices = prices

    def first_request(self, case: JudgeCase) -> LLMRequest:
        """The call made first for ``case`` (what a batch pre-fetches; re-asks go one by one)."""
        return render_strict_prompt(self.model, case)

    async def judge(self, case: JudgeCase) -> JudgeOutcome:
        return await single_verdict(
            _Caller(self._client, self.model, self._prices),
            self.first_request(case),
            parse_strict_verdict,
            lambda verdict: (
                {axis: getattr(verdict, axis) for axis in self.metrics},
                {axis: getattr(verdict, f"{axis}_rationale") for axis in self.metrics},
            ),
        )


# --- RAGAS-style metrics ------------------------------------------------------------------------


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


def _request(model: str, instruction: str, body: str, tool: Tool) -> LLMRequest:
    return LLMRequest(
        model=model,
        cached_system=RAGAS_SYSTEM,
        messages=({"role": "user", "content": f"{instruction}\n\n{body}"},),
        max_tokens=1000,
        tool=tool,
    )


def render_statement_extraction(model: str, question: str, answer: str) -> LLMRequest:
    return _request(
        model,
        "Break the answer into atomic, self-contained statements (no pronouns). An answer that "
        "makes no claim yields no statements.",
        f"<question>{question}</question>\n<answer>{answer}</answer>",
        STATEMENTS_TOOL,
    )


def render_statement_verdicts(
    model: str, statements: Sequence[str], passages: Sequence[SearchHit]
) -> LLMRequest:
    listed = "\n".join(f"- {s}" for s in statements)
    return _request(
        model,
        "For each statement, give verdict 1 if it can be directly inferred from the passages, "
        "else 0, with a one-sentence reason.",
        f"<passages>\n{format_passages(passages)}\n</passages>\n<statements>\n{listed}\n</statements>",
        VERDICTS_TOOL,
    )


def render_passage_usefulness(
    model: str, question: str, ground_truth: str, passages: Sequence[SearchHit]
) -> LLMRequest:
    return _request(
        model,
        "For each numbered passage, give useful 1 if it was useful in arriving at the ground-truth "
        "answer to the question, else 0, with a one-sentence reason.",
        case_context(question, ground_truth, passages),
        PASSAGES_TOOL,
    )


def render_ground_truth_attribution(
    model: str, question: str, ground_truth: str, passages: Sequence[SearchHit]
) -> LLMRequest:
    return _request(
        model,
        "Break the ground-truth answer (read together with the question) into statements. For each "
        "statement give verdict 1 if it can be attributed to the passages, else 0, with a reason.",
        case_context(question, ground_truth, passages),
        VERDICTS_TOOL,
    )


def render_question_generation(model: str, answer: str, count: int = 3) -> LLMRequest:
    return _request(
        model,
        f"Write {count} different questions that this answer answers. Set noncommittal to 1 if "
        "the answer is evasive or vague (e.g. 'I don't know', 'unknown'), else 0.",
        f"<answer>{answer}</answer>",
        QUESTIONS_TOOL,
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


class RagasLLMJudge:
    """RAGAS-style metrics with an LLM: statement-level faithfulness, context precision from
    per-passage verdicts, context recall from attributed ground-truth statements, and answer
    relevancy from generated questions (needs an embedder; absent with a note otherwise)."""

    kind = "ragas"
    metrics = ("faithfulness", "context_precision", "context_recall", "answer_relevancy")
    prompt_version = RAGAS_PROMPT_VERSION

    def __init__(
        self,
        judge_id: str,
        model: str,
        client: LLMClient,
        prices: Mapping[str, ModelPrice],
        embed: Callable[[list[str]], np.ndarray] | None = None,
    ) -> None:
        self.judge_id = judge_id
        self.model = model
        self._client = client
        self._prices = prices
        self._embed = embed

    async def judge(self, case: JudgeCase) -> JudgeOutcome:
        caller = _Caller(self._client, self.model, self._prices)
        scores: dict[str, float | None] = {}
        rationales: dict[str, str] = {}
        notes: list[str] = []
        try:
            if is_abstention(case.answer):
                scores["faithfulness"] = None
                notes.append("faithfulness: the answer abstains, no statement to check")
            else:
                statements = await caller.ask(
                    render_statement_extraction(self.model, case.question, case.answer),
                    lambda r: parse_tool_output(r, Statements),
                )
                if statements.statements:
                    verdicts = await caller.ask(
                        render_statement_verdicts(self.model, statements.statements, case.passages),
                        lambda r: parse_tool_output(r, StatementVerdicts),
                    )
                    scores["faithfulness"] = share_supported([v.verdict for v in verdicts.verdicts])
                    rationales["faithfulness"] = json.dumps([v.model_dump() for v in verdicts.verdicts])
                else:
                    scores["faithfulness"] = None
            if case.passages:
                usefulness = await caller.ask(
                    render_passage_usefulness(self.model, case.question, case.ground_truth, case.passages),
                    lambda r: parse_tool_output(r, PassageVerdicts),
                )
                by_rank = {v.passage: bool(v.useful) for v in usefulness.verdicts}
                scores["context_precision"] = rank_weighted_precision(
                    [by_rank.get(rank, False) for rank in range(1, len(case.passages) + 1)]
                )
            else:
                scores["context_precision"] = None
            attribution = await caller.ask(
                render_ground_truth_attribution(self.model, case.question, case.ground_truth, case.passages),
                lambda r: parse_tool_output(r, StatementVerdicts),
            )
            scores["context_recall"] = share_supported([v.verdict for v in attribution.verdicts])
            if self._embed is None:
                scores["answer_relevancy"] = None
                notes.append("answer_relevancy: no embedder configured")
            else:
                generated = await caller.ask(
                    render_question_generation(self.model, case.answer),
                    lambda r: parse_tool_output(r, GeneratedQuestions),
                )
                vectors = self._embed([case.question, *generated.questions])
                scores["answer_relevancy"] = answer_relevancy(
                    vectors[0], vectors[1:], bool(generated.noncommittal)
                )
        except (InvalidJudgeOutput, LLMCallError) as err:
            return JudgeOutcome(
                {}, usage=caller.usage, cost_usd=caller.cost, error=f"{type(err).__name__}: {err}"
            )
        return JudgeOutcome(scores, rationales, caller.usage, caller.cost, notes=notes)
