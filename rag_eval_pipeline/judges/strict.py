"""The STRICT judge of the Elastic LLM-as-a-judge article: correctness, faithfulness and context
relevance, each exactly 0, 0.5 or 1, the lower when in doubt, through a forced tool whose JSON
schema the API enforces. ``render_strict_prompt`` and ``parse_strict_verdict`` are the two pure
halves around one call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rag_eval_pipeline.judges.base import JudgeCase, JudgeOutcome, case_context
from rag_eval_pipeline.judges.engine import JudgeCaller, parse_tool_output, single_verdict
from rag_eval_pipeline.llm.client import LLMClient, LLMRequest, LLMResponse, Tool
from rag_eval_pipeline.llm.pricing import ModelPrice

STRICT_PROMPT_VERSION = "strict-v1"
THREE_POINT = (0.0, 0.5, 1.0)
STRICT_METRICS = ("correctness", "faithfulness", "context_relevance")
# without a reference answer: the grounding call, which never sees one
GROUNDING_METRICS = ("faithfulness", "context_relevance")

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


def three_point(value: float) -> float:
    """A score on the rubric's scale, or the validation error a re-ask quotes."""
    if value not in THREE_POINT:
        raise ValueError(f"{value} is not one of 0, 0.5, 1")
    return float(value)


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
        return three_point(value)


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


def parse_strict_verdict(response: LLMResponse) -> StrictVerdict:
    return parse_tool_output(response, StrictVerdict)


class StrictLLMJudge:
    """The Elastic LLM-as-a-judge article's judge: correctness, faithfulness, context relevance on
    0 / 0.5 / 1."""

    kind = "strict"
    metrics = STRICT_METRICS
    reference_free_metrics = GROUNDING_METRICS
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
        if not case.reference_known:
            return render_grounding_prompt(self.model, case)
        return render_strict_prompt(self.model, case)

    async def judge(self, case: JudgeCase) -> JudgeOutcome:
        if not case.reference_known:  # no truth to show: the blind grounding rubric alone
            return await grounding_verdict(JudgeCaller(self._client, self.model, self._prices), case)
        return await single_verdict(
            JudgeCaller(self._client, self.model, self._prices),
            self.first_request(case),
            parse_strict_verdict,
            lambda verdict: (
                {axis: getattr(verdict, axis) for axis in self.metrics},
                {axis: getattr(verdict, f"{axis}_rationale") for axis in self.metrics},
            ),
        )


STRICT_BLIND_PROMPT_VERSION = "strict-blind-v1"

CORRECTNESS_RUBRIC = """You are a STRICT evaluator of a retrieval-augmented question-answering system.
You receive a question, the ground-truth answer, the passages the system retrieved, and the
system's answer. Score correctness exactly 0.0, 0.5 or 1.0; when in doubt, pick the lower one.

correctness - does the answer say the same as the ground truth?
  1.0 same meaning (wording may differ); 0.5 partly right, incomplete or over-specific;
  0.0 wrong, or "unknown" although a ground truth exists.

Give one sentence of rationale, then report with the record_correctness tool."""

GROUNDING_RUBRIC = """You are a STRICT evaluator of a retrieval-augmented question-answering system.
You receive a question, the passages the system retrieved, and the system's answer (you are not
told the right answer: judge only what the passages support). Score two axes, each exactly 0.0,
0.5 or 1.0. When in doubt between two scores, pick the lower one.

faithfulness - is every claim of the answer supported by the passages?
  1.0 every claim is stated in the passages; 0.5 the main claim is supported but something
  else is not; 0.0 the main claim is not in the passages (even if it is true).
  "unknown" is faithful (1.0) when the passages do not contain the answer, else 0.5.
context_relevance - do the passages hold what is needed to answer the question?
  1.0 everything needed (every hop of a multi-hop question); 0.5 part of it; 0.0 nothing.

Give one sentence of rationale per axis, then report with the record_grounding tool."""


def _rubric_tool(name: str, axes: tuple[str, ...]) -> Tool:
    properties: dict[str, Any] = {}
    for axis in axes:
        properties[axis] = _score_property(axis)
        properties[f"{axis}_rationale"] = {"type": "string"}
    return Tool(
        name=name,
        description=f"Record {', '.join(axes)} and a one-sentence rationale for each.",
        input_schema={
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        },
    )


CORRECTNESS_TOOL = _rubric_tool("record_correctness", ("correctness",))
GROUNDING_TOOL = _rubric_tool("record_grounding", ("faithfulness", "context_relevance"))


class CorrectnessVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    correctness: float
    correctness_rationale: str = Field(min_length=1)

    @field_validator("correctness")
    @classmethod
    def _three_point(cls, value: float) -> float:
        return three_point(value)


class GroundingVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    faithfulness: float
    faithfulness_rationale: str = Field(min_length=1)
    context_relevance: float
    context_relevance_rationale: str = Field(min_length=1)

    @field_validator("faithfulness", "context_relevance")
    @classmethod
    def _three_point(cls, value: float) -> float:
        return three_point(value)


def render_correctness_prompt(model: str, case: JudgeCase) -> LLMRequest:
    user = case_context(case.question, case.ground_truth, case.passages, case.answer)
    return LLMRequest(
        model=model,
        cached_system=CORRECTNESS_RUBRIC,
        messages=({"role": "user", "content": user},),
        max_tokens=300,
        tool=CORRECTNESS_TOOL,
    )


def render_grounding_prompt(model: str, case: JudgeCase) -> LLMRequest:
    """Faithfulness and context relevance without the ground truth: a right answer cannot
    colour whether the passages support it."""
    user = case_context(case.question, None, case.passages, case.answer)
    return LLMRequest(
        model=model,
        cached_system=GROUNDING_RUBRIC,
        messages=({"role": "user", "content": user},),
        max_tokens=500,
        tool=GROUNDING_TOOL,
    )


async def grounding_verdict(caller: JudgeCaller, case: JudgeCase) -> JudgeOutcome:
    """Faithfulness and context relevance from the grounding rubric, which never sees a truth."""
    return await single_verdict(
        caller,
        render_grounding_prompt(caller.model, case),
        lambda r: parse_tool_output(r, GroundingVerdict),
        lambda v: (
            {"faithfulness": v.faithfulness, "context_relevance": v.context_relevance},
            {
                "faithfulness": v.faithfulness_rationale,
                "context_relevance": v.context_relevance_rationale,
            },
        ),
    )


class StrictBlindLLMJudge:
    """The STRICT rubric in two calls: correctness with the ground truth, faithfulness and
    context relevance in a call that never sees it (``strict-blind:<model>``)."""

    kind = "strict-blind"
    metrics = STRICT_METRICS
    reference_free_metrics = GROUNDING_METRICS
    prompt_version = STRICT_BLIND_PROMPT_VERSION

    def __init__(
        self, judge_id: str, model: str, client: LLMClient, prices: Mapping[str, ModelPrice]
    ) -> None:
        self.judge_id = judge_id
        self.model = model
        self._client = client
        self._prices = prices

    def first_request(self, case: JudgeCase) -> LLMRequest:
        if not case.reference_known:
            return render_grounding_prompt(self.model, case)
        return render_correctness_prompt(self.model, case)

    async def judge(self, case: JudgeCase) -> JudgeOutcome:
        caller = JudgeCaller(self._client, self.model, self._prices)
        if not case.reference_known:  # nothing to be correct against: the grounding call only
            return await grounding_verdict(caller, case)
        correct = await single_verdict(
            caller,
            self.first_request(case),
            lambda r: parse_tool_output(r, CorrectnessVerdict),
            lambda v: ({"correctness": v.correctness}, {"correctness": v.correctness_rationale}),
        )
        if correct.error is not None:
            return correct
        grounded = await grounding_verdict(caller, case)
        if grounded.error is not None:
            return grounded  # its usage is the caller's: both calls counted
        return JudgeOutcome(
            {**correct.scores, **grounded.scores},
            {**correct.rationales, **grounded.rationales},
            caller.usage,
            caller.cost,
        )
