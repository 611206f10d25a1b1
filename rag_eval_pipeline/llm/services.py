"""What answer models and judges need from LLM providers, handed over as one value: a client per
endpoint (made on first use, so offline runs never need a key) and the prices."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from rag_eval_pipeline.llm.budget import SpendingLimit
from rag_eval_pipeline.llm.cache import CachedClient
from rag_eval_pipeline.llm.pricing import ModelPrice
from rag_eval_pipeline.llm.providers import llm_provider
from rag_eval_pipeline.llm.targets import LLMEndpoint

FREE = ModelPrice(0.0, 0.0, 0.0, 0.0)


class FreeOfCharge(Mapping[str, ModelPrice]):
    """The price table of models that run here: every model costs 0 (tokens are still counted)."""

    def __getitem__(self, model: str) -> ModelPrice:
        return FREE

    def __contains__(self, model: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


@dataclass
class CallCount:
    """Real calls and cache hits of one caller that is not an LLM client (a team's agent)."""

    calls: int = 0
    cache_hits: int = 0


class LLMServices:
    """Clients by endpoint, made on first use by ``make_client``, and the prices; counts the real
    calls and cache hits of every client it made, and of every agent asked, for the assets'
    metadata. ``cache_root`` and ``refresh`` are the response cache's, for callers that keep
    their own (an agent's responses)."""

    def __init__(
        self,
        make_client: Callable[[LLMEndpoint], CachedClient],
        prices: Mapping[str, ModelPrice],
        concurrency: int = 8,
        cache_root: Path | None = None,
        refresh: bool = False,
        budget: SpendingLimit | None = None,
    ) -> None:
        self._make_client = make_client
        self._clients: dict[LLMEndpoint, CachedClient] = {}
        self._counts: dict[str, CallCount] = {}
        self.prices = prices
        self.concurrency = concurrency
        self.cache_root = cache_root
        self.refresh = refresh
        self.budget = budget  # what the step's paid calls may spend together, if limited

    def without_response_cache(self) -> LLMServices:
        """The same clients and prices, with no cache of agents' responses: a security probe asks
        an agent the evaluation's questions, and its answers under attack must neither come from
        nor go into that cache."""
        services = LLMServices(self._make_client, self.prices, self.concurrency, None, False, self.budget)
        services._clients, services._counts = self._clients, self._counts
        return services

    def counter(self, caller: str) -> CallCount:
        return self._counts.setdefault(caller, CallCount())

    def client(self, endpoint: LLMEndpoint) -> CachedClient:
        if endpoint not in self._clients:
            self._clients[endpoint] = self._make_client(endpoint)
        return self._clients[endpoint]

    def prices_for(self, endpoint: LLMEndpoint) -> Mapping[str, ModelPrice]:
        """Models that run here cost nothing; every other provider's models cost what the table
        says (a model missing from it: unknown, not free)."""
        return FreeOfCharge() if llm_provider(endpoint).free else self.prices

    @property
    def shared_limits(self) -> str:
        """Where the limits the step's LLM calls shared with other runs were held."""
        limits = sorted({c.limit_where for c in self._clients.values() if c.limit_where})
        return "; ".join(limits) or "none (no shared LLM provider called)"

    @property
    def api_calls(self) -> int:
        return sum(c.api_calls for c in self._clients.values()) + sum(c.calls for c in self._counts.values())

    @property
    def cache_hits(self) -> int:
        return sum(c.cache_hits for c in self._clients.values()) + sum(
            c.cache_hits for c in self._counts.values()
        )
