"""The STRICT judge of the Elastic LLM-as-a-judge article: correctness, faithfulness and context
relevance, each exactly 0, 0.5 or 1, the lower when in doubt, through a forced tool whose JSON
schema the API enforces. ``render_strict_prompt`` and ``parse_strict_verdict`` are the two pure
halves around one call."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from rag_eval_pipeline.judges.alignment import PromptVersion
from rag_eval_pipeline.judges.base import JudgeCase, JudgeOutcome, case_context
from rag_eval_pipeline.judges.engine import (
    JudgeCaller,
    JudgeEndpoint,
    LLMJudge,
    ThreePointScore,
    parse_tool_output,
    rubric_request,
    single_verdict,
)
from rag_eval_pipeline.llm.client import LLMRequest, LLMResponse, Tool
from rag_eval_pipeline.metrics.scales import THREE_POINT_VALUES

STRICT_PROMPT_VERSION = "strict-v1"
STRICT_METRICS = ("correctness", "faithfulness", "context_relevance")
# without a reference answer: the grounding call, which never sees one
GROUNDING_METRICS = ("faithfulness", "context_relevance")

# the axes' definitions, the same words in every rubric that scores them
CORRECTNESS_AXIS = """correctness - does the answer say the same as the ground truth?
  1.0 same meaning (wording may differ); 0.5 partly right, incomplete or over-specific;
  0.0 wrong, or "unknown" although a ground truth exists.
"""
GROUNDING_AXES = """faithfulness - is every claim of the answer supported by the passages?
  1.0 every claim is stated in the passages; 0.5 the main claim is supported but something
  else is not; 0.0 the main claim is not in the passages (even if it is true).
  "unknown" is faithful (1.0) when the passages do not contain the answer, else 0.5.
context_relevance - do the passages hold what is needed to answer the question?
  1.0 everything needed (every hop of a multi-hop question); 0.5 part of it; 0.0 nothing.
"""

STRICT_RUBRIC = f"""You are a STRICT evaluator of a retrieval-augmented question-answering system.
You receive a question, the ground-truth answer, the passages the system retrieved, and the
system's answer. Score three axes, each exactly 0.0, 0.5 or 1.0. When in doubt between two
scores, pick the lower one.

{CORRECTNESS_AXIS}{GROUNDING_AXES}
Give one sentence of rationale per axis, then report with the record_scores tool."""


def _score_property(axis: str) -> dict[str, Any]:
    return {"type": "number", "enum": list(THREE_POINT_VALUES), "description": f"{axis}: 0, 0.5 or 1"}


def _rubric_tool(name: str, axes: tuple[str, ...], description: str | None = None) -> Tool:
    """The forced tool of a rubric: each axis on the three-point scale and its rationale."""
    properties: dict[str, Any] = {}
    for axis in axes:
        properties[axis] = _score_property(axis)
        properties[f"{axis}_rationale"] = {"type": "string"}
    return Tool(
        name=name,
        description=description or f"Record {', '.join(axes)} and a one-sentence rationale for each.",
        input_schema={
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        },
    )


def _verdict_model(name: str, axes: tuple[str, ...]) -> type[BaseModel]:
    """A rubric's output, validated on our side as well as by the API's schema: each axis on
    the three-point scale with a rationale that says something."""
    fields: dict[str, Any] = {}
    for axis in axes:
        fields[axis] = (ThreePointScore, ...)
        fields[f"{axis}_rationale"] = (str, Field(min_length=1))
    return create_model(name, __config__=ConfigDict(extra="forbid"), **fields)


@dataclass(frozen=True)
class Rubric:
    """One judge call: its system text (a cached block), its tool and output model, the axes it
    scores, and whether the case's ground truth is shown to it."""

    system: str
    tool: Tool
    verdict: type[BaseModel]
    axes: tuple[str, ...]
    max_tokens: int
    shows_truth: bool = True

    def request(self, model: str, case: JudgeCase) -> LLMRequest:
        truth = case.ground_truth if self.shows_truth else None
        return rubric_request(
            model,
            self.system,
            case_context(case.question, truth, case.passages, case.answer, case.language),
            self.max_tokens,
            self.tool,
        )

    def parse(self, response: LLMResponse) -> BaseModel:
        return parse_tool_output(response, self.verdict)

    def scores(self, verdict: BaseModel) -> tuple[dict[str, float | None], dict[str, str]]:
        return (
            {axis: getattr(verdict, axis) for axis in self.axes},
            {axis: getattr(verdict, f"{axis}_rationale") for axis in self.axes},
        )

    async def judge(self, caller: JudgeCaller, case: JudgeCase) -> JudgeOutcome:
        return await single_verdict(caller, self.request(caller.model, case), self.parse, self.scores)


STRICT = Rubric(
    STRICT_RUBRIC,
    _rubric_tool(
        "record_scores", STRICT_METRICS, "Record the three scores and a one-sentence rationale for each."
    ),
    _verdict_model("StrictVerdict", STRICT_METRICS),
    STRICT_METRICS,
    max_tokens=600,
)
render_strict_prompt = STRICT.request
parse_strict_verdict = STRICT.parse


STRICT_BLIND_PROMPT_VERSION = "strict-blind-v1"

CORRECTNESS_RUBRIC = f"""You are a STRICT evaluator of a retrieval-augmented question-answering system.
You receive a question, the ground-truth answer, the passages the system retrieved, and the
system's answer. Score correctness exactly 0.0, 0.5 or 1.0; when in doubt, pick the lower one.

{CORRECTNESS_AXIS}
Give one sentence of rationale, then report with the record_correctness tool."""

GROUNDING_RUBRIC = f"""You are a STRICT evaluator of a retrieval-augmented question-answering system.
You receive a question, the passages the system retrieved, and the system's answer (you are not
told the right answer: judge only what the passages support). Score two axes, each exactly 0.0,
0.5 or 1.0. When in doubt between two scores, pick the lower one.

{GROUNDING_AXES}
Give one sentence of rationale per axis, then report with the record_grounding tool."""


CORRECTNESS = Rubric(
    CORRECTNESS_RUBRIC,
    _rubric_tool("record_correctness", ("correctness",)),
    _verdict_model("CorrectnessVerdict", ("correctness",)),
    ("correctness",),
    max_tokens=300,
)
# faithfulness and context relevance without the ground truth: a right answer cannot colour
# whether the passages support it
GROUNDING = Rubric(
    GROUNDING_RUBRIC,
    _rubric_tool("record_grounding", GROUNDING_METRICS),
    _verdict_model("GroundingVerdict", GROUNDING_METRICS),
    GROUNDING_METRICS,
    max_tokens=500,
    shows_truth=False,
)


class _RubricJudge(LLMJudge):
    """A judge of the STRICT rubric's three metrics, made of rubric calls."""

    metrics = STRICT_METRICS
    reference_free_metrics = GROUNDING_METRICS


class StrictLLMJudge(_RubricJudge):
    """The Elastic LLM-as-a-judge article's judge: correctness, faithfulness, context relevance on
    0 / 0.5 / 1, in one call (the blind grounding call alone where no truth is known)."""

    kind = "strict"
    prompt_version = STRICT_PROMPT_VERSION

    def __init__(self, judge_id: str, endpoint: JudgeEndpoint, prompt: PromptVersion | None = None) -> None:
        """``prompt``: an aligned version of the rubric (``judges.alignment``), else its own."""
        super().__init__(judge_id, endpoint)
        self._rubric = STRICT if prompt is None else replace(STRICT, system=STRICT.system + prompt.block())
        self.prompt_version = STRICT_PROMPT_VERSION if prompt is None else prompt.version

    def first_request(self, case: JudgeCase) -> LLMRequest:
        """The call made first for ``case`` (what a batch pre-fetches; re-asks go one by one)."""
        return (self._rubric if case.reference_known else GROUNDING).request(self.model, case)

    async def judge(self, case: JudgeCase) -> JudgeOutcome:
        return await (self._rubric if case.reference_known else GROUNDING).judge(self._caller(case), case)


class StrictBlindLLMJudge(_RubricJudge):
    """The STRICT rubric in two calls: correctness with the ground truth, faithfulness and
    context relevance in a call that never sees it (``strict-blind:<model>``)."""

    kind = "strict-blind"
    prompt_version = STRICT_BLIND_PROMPT_VERSION

    def first_request(self, case: JudgeCase) -> LLMRequest:
        return (CORRECTNESS if case.reference_known else GROUNDING).request(self.model, case)

    async def judge(self, case: JudgeCase) -> JudgeOutcome:
        caller = self._caller(case)
        if not case.reference_known:  # nothing to be correct against: the grounding call only
            return await GROUNDING.judge(caller, case)
        correct = await CORRECTNESS.judge(caller, case)
        if correct.error is not None:
            return correct
        grounded = await GROUNDING.judge(caller, case)
        if grounded.error is not None:
            return grounded  # its usage is the caller's: both calls counted
        return JudgeOutcome(
            {**correct.scores, **grounded.scores},
            {**correct.rationales, **grounded.rationales},
            caller.usage,
            caller.cost,
        )
