"""Judge names -> judges: ``reference``, ``<claude model>`` or ``strict:<model>`` (the STRICT
rubric), ``ragas:<model>`` (RAGAS-style metrics)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from rag_eval_pipeline.answering.claude import anthropic_model_id, is_anthropic_model
from rag_eval_pipeline.judges.llm import RagasLLMJudge, StrictLLMJudge
from rag_eval_pipeline.judges.score_cases import REFERENCE_JUDGE_ID, ReferenceJudge
from rag_eval_pipeline.llm.client import LLMClient
from rag_eval_pipeline.llm.pricing import ModelPrice

DEFAULT_LLM_JUDGE = "claude-sonnet-4-6"


class UnknownJudgeError(ValueError):
    pass


def needs_llm(name: str) -> bool:
    return name != REFERENCE_JUDGE_ID


def parse_judge_name(name: str) -> tuple[str, str | None]:
    """(kind, model id): ('reference', None), ('strict', 'claude-sonnet-4-6'), ('ragas', ...)."""
    if name == REFERENCE_JUDGE_ID:
        return "reference", None
    kind, sep, model = name.partition(":")
    if sep and kind in ("strict", "ragas") and model:
        return kind, anthropic_model_id(model)
    if is_anthropic_model(name):
        return "strict", anthropic_model_id(name)
    raise UnknownJudgeError(
        f"unknown judge '{name}': use reference, a Claude model (claude-sonnet-4-6, "
        "anthropic:<id>) for the STRICT rubric, or ragas:<model> for RAGAS-style metrics"
    )


def build_judge(
    name: str,
    client: LLMClient | None,
    prices: Mapping[str, ModelPrice],
    embed: Callable[[list[str]], np.ndarray] | None = None,
):
    kind, model = parse_judge_name(name)
    if kind == "reference":
        return ReferenceJudge()
    assert client is not None and model is not None
    if kind == "strict":
        return StrictLLMJudge(name, model, client, prices)
    return RagasLLMJudge(name, model, client, prices, embed)


def build_custom_judges(metrics, client: LLMClient | None, prices: Mapping[str, ModelPrice]) -> list:
    """Judges for the configuration file's custom metrics (Python callables and LLM rubrics)."""
    from rag_eval_pipeline.config import PythonMetricSettings
    from rag_eval_pipeline.judges.custom import PythonMetricJudge, RubricMetricJudge, load_callable

    judges: list = []
    for metric in metrics:
        if isinstance(metric, PythonMetricSettings):
            judges.append(PythonMetricJudge(metric.name, load_callable(metric.callable)))
        else:
            assert client is not None, "an LLM rubric metric needs the Anthropic client"
            judges.append(
                RubricMetricJudge(
                    metric.name,
                    metric.instructions,
                    metric.allowed_scores,
                    anthropic_model_id(metric.model),
                    client,
                    prices,
                )
            )
    return judges
