"""The call/re-ask engine every LLM judge uses: one call, the output validated against a pydantic
model, one re-ask with the validation error when it is invalid, then a counted judge error.
Usage and dollars of every call (re-asks included) are added up per case."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ValidationError

from rag_eval_pipeline.judges.base import JudgeCase, JudgeOutcome
from rag_eval_pipeline.llm.client import (
    FatalLLMError,
    LLMCallError,
    LLMClient,
    LLMRequest,
    LLMResponse,
    Tool,
    Usage,
)
from rag_eval_pipeline.llm.pricing import ModelPrice, cost_usd
from rag_eval_pipeline.metrics.scales import THREE_POINT_VALUES


class InvalidJudgeOutput(ValueError):
    """The judge's output did not match the schema (no tool call, missing key, bad value)."""


M = TypeVar("M", bound=BaseModel)


def on_scale(value: float, allowed: Sequence[float] = THREE_POINT_VALUES) -> float:
    """A verdict's score if it is one of the rubric's ``allowed`` scores, else the validation
    error a re-ask quotes (every LLM judge's scores are held to their scale on our side too)."""
    if float(value) not in allowed:
        raise ValueError(f"{value} is not one of {', '.join(f'{a:g}' for a in allowed)}")
    return float(value)


def score_among(allowed: Sequence[float]) -> object:
    """The type of a verdict's score field held to ``allowed`` (a rubric's own scores)."""
    return Annotated[float, AfterValidator(functools.partial(on_scale, allowed=tuple(allowed)))]


# a verdict's score on the judges' three-point scale (0, 0.5 or 1)
ThreePointScore = Annotated[float, AfterValidator(on_scale)]


def rubric_request(
    model: str, system: str, user: str | list[dict[str, Any]], max_tokens: int, tool: Tool
) -> LLMRequest:
    """A call answered through a forced tool: its rubric as the cached system block, the case
    in the user turn (text, or content blocks such as images): every judge's, the generator's."""
    return LLMRequest(
        model=model,
        cached_system=system,
        messages=({"role": "user", "content": user},),
        max_tokens=max_tokens,
        tool=tool,
    )


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
        sample=request.sample,
    )


def _parses(parse: Callable[[LLMResponse], object], response: LLMResponse) -> bool:
    try:
        parse(response)
    except InvalidJudgeOutput:
        return False
    return True


class JudgeCaller:
    """Makes a judge's calls for one case, re-asking once on invalid output, and adds up usage."""

    def __init__(
        self, client: LLMClient, model: str, prices: Mapping[str, ModelPrice], sample: int = 0
    ) -> None:
        self._client = client
        self.model = model
        self._prices = prices
        self.sample = sample  # which re-score of the case: every call of it is asked anew
        self.usage = Usage()
        self.cost: float | None = 0.0

    async def _complete(self, request: LLMRequest, parse: Callable[[LLMResponse], M]) -> LLMResponse:
        """One call (as this re-score's sample); a cache keeps the response only if ``parse``
        accepts it."""
        sampled = request if request.sample == self.sample else replace(request, sample=self.sample)
        return await self._client.complete(sampled, accept=lambda r: _parses(parse, r))

    def _account(self, response: LLMResponse) -> None:
        self.usage = self.usage + response.usage
        call_cost = cost_usd(self.model, response.usage, self._prices, response.batch)
        self.cost = None if call_cost is None or self.cost is None else self.cost + call_cost

    async def ask(self, request: LLMRequest, parse: Callable[[LLMResponse], M]) -> M:
        response = await self._complete(request, parse)
        self._account(response)
        try:
            return parse(response)
        except InvalidJudgeOutput as first:
            retry = await self._complete(reask_request(request, response, str(first)), parse)
            self._account(retry)
            try:
                return parse(retry)
            except InvalidJudgeOutput as second:
                raise InvalidJudgeOutput(f"invalid twice: {first}; then: {second}") from second


async def single_verdict(
    caller: JudgeCaller,
    request: LLMRequest,
    parse: Callable[[LLMResponse], M],
    to_scores: Callable[[M], tuple[dict[str, float | None], dict[str, str]]],
) -> JudgeOutcome:
    """A judgement made of one call (re-asked once if invalid): scores and rationales, or a
    recorded judge error, with the calls' usage and cost either way."""
    try:
        verdict = await caller.ask(request, parse)
    except FatalLLMError:
        raise
    except (InvalidJudgeOutput, LLMCallError) as err:
        return JudgeOutcome(
            {}, usage=caller.usage, cost_usd=caller.cost, error=f"{type(err).__name__}: {err}"
        )
    scores, rationales = to_scores(verdict)
    return JudgeOutcome(scores, rationales, caller.usage, caller.cost)


@dataclass(frozen=True)
class JudgeEndpoint:
    """Where an LLM judge asks, resolved once from its spec: the model, the client of its
    endpoint (at the judge's temperature, if it has one) and that endpoint's prices."""

    model: str
    client: LLMClient
    prices: Mapping[str, ModelPrice]

    def caller(self, case: JudgeCase) -> JudgeCaller:
        """The caller of one case's calls, as the re-score of it that ``case`` says."""
        return JudgeCaller(self.client, self.model, self.prices, case.judge_repeat)


class LLMJudge:
    """What every judge that calls an LLM is built from: its id and its endpoint."""

    def __init__(self, judge_id: str, endpoint: JudgeEndpoint) -> None:
        self.judge_id = judge_id
        self.model = endpoint.model
        self._endpoint = endpoint

    def _caller(self, case: JudgeCase) -> JudgeCaller:
        return self._endpoint.caller(case)
