"""The sufficient-context autorater (Joren et al., ICLR 2025): do the retrieved passages let a
careful reader answer the question? Shown the question and passages only (never the answer or
the reference), it says sufficient or not with a reason; knowledge-base health reads a "not
sufficient" as a knowledge gap where no reference answer says more. ``render_sufficiency_prompt``
and ``parse_sufficiency_verdict`` are the two pure halves around one call."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from rag_eval_pipeline.judges.base import JudgeCase, JudgeOutcome, case_context
from rag_eval_pipeline.judges.engine import LLMJudge, parse_tool_output, rubric_request, single_verdict
from rag_eval_pipeline.llm.client import LLMRequest, LLMResponse, Tool

SUFFICIENCY_PROMPT_VERSION = "sufficiency-v1"
SUFFICIENCY_METRICS = ("sufficiency",)

SUFFICIENCY_RUBRIC = """You judge whether retrieved passages are SUFFICIENT CONTEXT for a question.
You receive a question and the passages a system retrieved (not its answer). The context is
sufficient when a careful reader who knows nothing else could give a definite answer to the
question from these passages alone, every hop of a multi-hop question included. It is not
sufficient when a needed fact is missing, only hinted at, or the passages disagree on it.
Whether the passages are true does not matter: only whether they let the question be answered.
Give one sentence of reason naming what is there or what is missing, then report with the
record_sufficiency tool."""

SUFFICIENCY_TOOL = Tool(
    name="record_sufficiency",
    description="Record whether the passages are sufficient to answer the question, and why.",
    input_schema={
        "type": "object",
        "properties": {"sufficient": {"type": "boolean"}, "reason": {"type": "string"}},
        "required": ["sufficient", "reason"],
        "additionalProperties": False,
    },
)


class SufficiencyVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sufficient: bool
    reason: str = Field(min_length=1)


def render_sufficiency_prompt(model: str, case: JudgeCase) -> LLMRequest:
    """The call: the rubric as the cached system block, the question and passages (no answer,
    no reference: neither may colour whether the passages suffice)."""
    return rubric_request(
        model,
        SUFFICIENCY_RUBRIC,
        case_context(case.question, None, case.passages, None, case.language),
        300,
        SUFFICIENCY_TOOL,
    )


def parse_sufficiency_verdict(response: LLMResponse) -> SufficiencyVerdict:
    return parse_tool_output(response, SufficiencyVerdict)


def sufficiency_scores(verdict: SufficiencyVerdict) -> tuple[dict[str, float | None], dict[str, str]]:
    return {"sufficiency": 1.0 if verdict.sufficient else 0.0}, {"sufficiency": verdict.reason}


class SufficiencyLLMJudge(LLMJudge):
    """``sufficiency:<LLM>``: 1 when the passages suffice to answer, 0 when they do not; asked
    with or without a reference (it never reads one). No passages: 0 without a call."""

    kind = "sufficiency"
    metrics = SUFFICIENCY_METRICS
    reference_free_metrics = SUFFICIENCY_METRICS
    prompt_version = SUFFICIENCY_PROMPT_VERSION

    def first_request(self, case: JudgeCase) -> LLMRequest:
        return render_sufficiency_prompt(self.model, case)

    async def judge(self, case: JudgeCase) -> JudgeOutcome:
        if not case.passages:
            return JudgeOutcome({"sufficiency": 0.0}, {"sufficiency": "no passage was retrieved"})
        caller = self._caller(case)
        return await single_verdict(
            caller, render_sufficiency_prompt(self.model, case), parse_sufficiency_verdict, sufficiency_scores
        )
