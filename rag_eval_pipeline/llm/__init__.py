"""LLM calls as plain data (requests that hash into cache keys, responses with usage), the
response cache, prices, and the adapters that talk to provider SDKs (``anthropic_client``)."""

from rag_eval_pipeline.llm.client import LLMCallError, LLMClient, LLMRequest, LLMResponse, Tool, Usage
from rag_eval_pipeline.llm.services import LLMServices

__all__ = ["LLMCallError", "LLMClient", "LLMRequest", "LLMResponse", "LLMServices", "Tool", "Usage"]
