"""Answer models behind any OpenAI-compatible API (``openai:<model>``, or a named entry with its
own ``base_url``), and local GGUF models served by a llama.cpp server the run starts itself
(``local:<name>``)."""

from __future__ import annotations

from rag_eval_pipeline.answering.base import AnswerModel
from rag_eval_pipeline.answering.chat import ChatAnswerer, answer_prompt_version
from rag_eval_pipeline.answering.spec import AnswerSpec, CalibrationRole
from rag_eval_pipeline.llm.services import LLMServices
from rag_eval_pipeline.llm.targets import LOCAL, OPENAI, LLMEndpoint, parse_llm_name


class _ChatProvider:
    """What the OpenAI-compatible and the local provider share: ``<provider>:<model>`` names,
    the chat prompt, measured models."""

    name: str

    def claims(self, model: str) -> bool:
        target = parse_llm_name(model)
        return target is not None and target.provider == self.name

    def model_id(self, model: str) -> str:
        return model.partition(":")[2]

    def prompt_version(self, model: str, system_prompt: str | None) -> str:
        return answer_prompt_version(system_prompt)

    def calibration(self, model: str) -> CalibrationRole:
        return CalibrationRole.MEASURED

    def generative(self, model: str) -> bool:
        return True

    def endpoint(self, model: str, base_url: str | None, api_key_env: str | None) -> LLMEndpoint:
        target = parse_llm_name(model, base_url, api_key_env)
        assert target is not None and target.provider == self.name, model
        return target.endpoint

    def build(self, spec: AnswerSpec, services: LLMServices) -> AnswerModel:
        assert spec.endpoint is not None, spec
        return ChatAnswerer(
            spec.model,
            spec.model_id,
            services.client(spec.endpoint),
            services.prices_for(spec.endpoint),
            spec.system_prompt,
            record_served_model=spec.endpoint.provider != LOCAL,
        )


class OpenAICompatibleProvider(_ChatProvider):
    """``openai:<model>``: OpenAI, vLLM, Ollama, llama.cpp, a LiteLLM proxy."""

    name = OPENAI


class LocalProvider(_ChatProvider):
    """``local:<name>``: a GGUF model served in-process by llama.cpp (``local:smollm2``)."""

    name = LOCAL
