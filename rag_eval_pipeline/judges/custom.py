"""Custom metrics: a pure Python callable named by import path, or an LLM rubric declared in the
configuration file and scored with the built-in judge's machinery (forced tool, validation,
one re-ask, cache, cost)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field, create_model

from rag_eval_pipeline.judges.base import JudgeCase, JudgeOutcome, case_context
from rag_eval_pipeline.judges.engine import (
    JudgeEndpoint,
    parse_tool_output,
    rubric_request,
    score_among,
    single_verdict,
)
from rag_eval_pipeline.llm.client import LLMRequest, Tool

CUSTOM_PROMPT_VERSION = "custom-rubric-v1"


def load_callable(path: str) -> Callable[[Mapping[str, Any]], float | None]:
    """``package.module:function`` -> the function; a clear error when it cannot be imported."""
    module_name, sep, attribute = path.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"custom metric callable '{path}': expected 'module:function'")
    try:
        function = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as err:
        raise ValueError(f"custom metric callable '{path}' cannot be loaded: {err}") from err
    if not callable(function):
        raise ValueError(f"custom metric '{path}' is not callable")
    return function


class PythonMetricJudge:
    """Scores each case with ``function(case)``; the case holds qid, question, answer,
    ground_truth (None when the case has no reference answer), retrieved_titles,
    retrieved_passages and tags. None means absent, never 0."""

    kind = "python"
    prompt_version = None

    def __init__(
        self,
        name: str,
        function: Callable[[Mapping[str, Any]], float | None],
        reference_free: bool = False,
    ) -> None:
        self.judge_id = name
        self.metrics = (name,)
        self.reference_free_metrics = (name,) if reference_free else ()
        self._function = function

    async def judge(self, case: JudgeCase) -> JudgeOutcome:
        if not case.reference_known and not self.reference_free_metrics:
            return JudgeOutcome({self.judge_id: None}, notes=[f"{self.judge_id}: needs a reference answer"])
        view = {
            "qid": case.qid,
            "question": case.question,
            "answer": case.answer,
            "ground_truth": case.ground_truth,
            "retrieved_titles": case.retrieved_titles,
            "retrieved_passages": case.retrieved_passages,
            "tags": list(case.tags),
        }
        value = self._function(view)
        if value is not None and not 0.0 <= float(value) <= 1.0:
            raise ValueError(f"custom metric {self.judge_id} returned {value}, outside [0, 1]")
        return JudgeOutcome({self.judge_id: None if value is None else float(value)})


def rubric_verdict_model(allowed: Sequence[float]) -> type[BaseModel]:
    score = score_among(tuple(float(a) for a in allowed))
    return create_model("RubricVerdict", score=(score, ...), rationale=(str, Field(min_length=1)))


def render_rubric_prompt(
    model: str, name: str, instructions: str, allowed: Sequence[float], case: JudgeCase
) -> LLMRequest:
    rubric = (
        f"You score the metric '{name}' of a retrieval-augmented question-answering system.\n"
        f"{instructions}\nAllowed scores: {', '.join(f'{a:g}' for a in allowed)}. When in doubt, "
        "pick the lower score. Report the score and a one-sentence rationale with the tool."
    )
    user = case_context(case.question, case.ground_truth, case.passages, case.answer, case.language)
    tool = Tool(
        name="record_score",
        description=f"Record the {name} score and its rationale.",
        input_schema={
            "type": "object",
            "properties": {
                "score": {"type": "number", "enum": [float(a) for a in allowed]},
                "rationale": {"type": "string"},
            },
            "required": ["score", "rationale"],
            "additionalProperties": False,
        },
    )
    return rubric_request(model, rubric, user, 300, tool)


class RubricMetricJudge:
    """An LLM rubric from the configuration file, scored like the STRICT judge."""

    kind = "rubric"
    prompt_version = CUSTOM_PROMPT_VERSION

    def __init__(
        self,
        name: str,
        instructions: str,
        allowed: Sequence[float],
        endpoint: JudgeEndpoint,
        reference_free: bool = False,
    ) -> None:
        if any(not 0.0 <= a <= 1.0 for a in allowed):
            raise ValueError(f"custom metric {name}: allowed scores must lie in [0, 1]")
        self.judge_id = name
        self.metrics = (name,)
        self.reference_free_metrics = (name,) if reference_free else ()
        self._instructions = instructions
        self._allowed = list(allowed)
        self._endpoint = endpoint
        self._verdict = rubric_verdict_model(allowed)

    def first_request(self, case: JudgeCase) -> LLMRequest:
        model = self._endpoint.model
        return render_rubric_prompt(model, self.judge_id, self._instructions, self._allowed, case)

    async def judge(self, case: JudgeCase) -> JudgeOutcome:
        if not case.reference_known and not self.reference_free_metrics:
            return JudgeOutcome({self.judge_id: None}, notes=[f"{self.judge_id}: needs a reference answer"])
        return await single_verdict(
            self._endpoint.caller(case),
            self.first_request(case),
            lambda response: parse_tool_output(response, self._verdict),
            lambda verdict: ({self.judge_id: verdict.score}, {self.judge_id: verdict.rationale}),
        )
