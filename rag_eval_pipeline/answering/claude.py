"""Claude answer models through the Anthropic Messages API."""

from __future__ import annotations

from collections.abc import Mapping

from rag_eval_pipeline.answering.base import AnswerModel
from rag_eval_pipeline.answering.chat import ChatAnswerer, answer_prompt_version
from rag_eval_pipeline.answering.spec import AnswerSpec, CalibrationRole
from rag_eval_pipeline.llm.client import LLMClient
from rag_eval_pipeline.llm.pricing import ModelPrice
from rag_eval_pipeline.llm.services import LLMServices
from rag_eval_pipeline.llm.targets import (
    ANTHROPIC_ENDPOINT,
    LLMEndpoint,
    anthropic_model_id,
    is_anthropic_model,
)


class ClaudeAnswerer(ChatAnswerer):
    """A chat answerer whose model id is the Claude name's (``haiku`` -> ``claude-haiku-4-5``)."""

    def __init__(
        self,
        name: str,
        client: LLMClient,
        prices: Mapping[str, ModelPrice],
        system_prompt: str | None = None,
    ) -> None:
        super().__init__(name, anthropic_model_id(name), client, prices, system_prompt)


class AnthropicProvider:
    """Claude through the Messages API: ``claude-*`` and ``anthropic:<model id>``."""

    name = "anthropic"

    def claims(self, model: str) -> bool:
        return is_anthropic_model(model)

    def model_id(self, model: str) -> str:
        return anthropic_model_id(model)

    def prompt_version(self, model: str, system_prompt: str | None) -> str:
        return answer_prompt_version(system_prompt)

    def calibration(self, model: str) -> CalibrationRole:
        return CalibrationRole.MEASURED

    def generative(self, model: str) -> bool:
        return True

    def endpoint(self, model: str, base_url: str | None, api_key_env: str | None) -> LLMEndpoint:
        return ANTHROPIC_ENDPOINT

    def build(self, spec: AnswerSpec, services: LLMServices) -> AnswerModel:
        return ClaudeAnswerer(
            spec.model, services.client(ANTHROPIC_ENDPOINT), services.prices, spec.system_prompt
        )
