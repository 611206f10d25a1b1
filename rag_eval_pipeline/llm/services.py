"""What answer models and judges need from LLM providers, handed over as one value: a client per
provider (made on first use, so offline runs never need a key) and the price table."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rag_eval_pipeline.llm.cache import CachedClient
from rag_eval_pipeline.llm.pricing import ModelPrice


class LLMServices:
    """Clients by provider name and the prices; counts the real calls and cache hits of every
    client it made, for the assets' metadata."""

    def __init__(
        self,
        factories: Mapping[str, Callable[[], CachedClient]],
        prices: Mapping[str, ModelPrice],
        concurrency: int = 8,
    ) -> None:
        self._factories = dict(factories)
        self._clients: dict[str, CachedClient] = {}
        self.prices = prices
        self.concurrency = concurrency

    def client(self, provider: str) -> CachedClient:
        if provider not in self._clients:
            if provider not in self._factories:
                raise ValueError(f"no client configured for provider '{provider}'")
            self._clients[provider] = self._factories[provider]()
        return self._clients[provider]

    @property
    def api_calls(self) -> int:
        return sum(c.api_calls for c in self._clients.values())

    @property
    def cache_hits(self) -> int:
        return sum(c.cache_hits for c in self._clients.values())
