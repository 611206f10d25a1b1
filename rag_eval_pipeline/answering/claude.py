"""Claude answer models by name (the provider itself is ``ChatProvider("anthropic")``)."""

from __future__ import annotations

from collections.abc import Mapping

from rag_eval_pipeline.answering.chat import ChatAnswerer
from rag_eval_pipeline.llm.client import LLMClient
from rag_eval_pipeline.llm.pricing import ModelPrice
from rag_eval_pipeline.llm.targets import (
    anthropic_model_id,
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
