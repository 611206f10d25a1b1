"""Every LLM provider behind one resource, built from the provider table (``llm/providers.py``):
clients per endpoint with the response cache, the bound on calls in flight shared by every run
of the instance, the overall deadline of a call, the prices and the batch prefetcher."""

import os
from pathlib import Path
from typing import TYPE_CHECKING

import dagster as dg
from pydantic import Field, PrivateAttr

from rag_eval_pipeline.defs.resources.settings import SettingsResource, storage_folder
from rag_eval_pipeline.limits.pools import InstancePool, instance_holds_pools
from rag_eval_pipeline.limits.slot_files import SharedLimit, SharedSlots
from rag_eval_pipeline.llm.budget import SpendingLimit, SpendLedger
from rag_eval_pipeline.llm.cache import CachedClient, ResponseCache
from rag_eval_pipeline.llm.llamacpp_server import LocalServers
from rag_eval_pipeline.llm.pricing import DEFAULT_PRICES, ModelPrice
from rag_eval_pipeline.llm.providers import ANTHROPIC_KEY_ENV, LLMEnvironment, llm_provider
from rag_eval_pipeline.llm.services import LLMServices
from rag_eval_pipeline.llm.targets import LLMEndpoint

if TYPE_CHECKING:  # the batches adapter imports the SDK: only when a stage batches
    from rag_eval_pipeline.llm.batches import BatchPrefetcher

LLM_CACHE_FOLDER = "llm_cache"
SPEND_FOLDER = "spend"  # what each named budget's calls spent, call by call (a day's production)
LLM_SLOTS_FOLDER = "llm_slots"
LLM_POOL_PREFIX = "rag_eval_llm_"  # the instance's pool of a provider: rag_eval_llm_anthropic


class LLMResource(dg.ConfigurableResource):
    """Answer models and judges of every LLM provider: Claude, any OpenAI-compatible server and
    local GGUF models (a llama.cpp server started at first use and stopped when the run ends).

    Keys are bound with ``dg.EnvVar`` (``ANTHROPIC_API_KEY``, and the variable of
    ``openai.api_key_env``); a named answer model with its own ``api_key_env`` reads that
    variable when its client is made. Every response is cached on disk by content under
    ``<DAGSTER_HOME>/storage/llm_cache``: a re-run with unchanged inputs makes no call."""

    settings: SettingsResource
    anthropic_api_key: str | None = Field(default=None, description="Anthropic API key (use EnvVar)")
    openai_api_key: str | None = Field(default=None, description="the default OpenAI key (use EnvVar)")

    _cache_root: Path | None = PrivateAttr(default=None)
    _slots_root: Path | None = PrivateAttr(default=None)
    _spend_root: Path | None = PrivateAttr(default=None)
    _pools: dg.DagsterInstance | None = PrivateAttr(default=None)  # the instance, where it holds pools
    _run_id: str = PrivateAttr(default="")
    _servers: LocalServers = PrivateAttr(default_factory=LocalServers)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        cache = self.settings.settings.cache
        storage = storage_folder(context)
        if cache.enabled:
            self._cache_root = Path(cache.folder) if cache.folder else storage / LLM_CACHE_FOLDER
        self._slots_root = storage / LLM_SLOTS_FOLDER
        self._spend_root = storage / SPEND_FOLDER
        if context.instance is not None and context.dagster_run is not None:
            self._run_id = context.dagster_run.run_id
            self._pools = context.instance if instance_holds_pools(context.instance) else None

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        self._servers.stop_all()  # a local model's server lives as long as the run

    def _bound(self, field: str) -> str | None:
        try:
            return getattr(self, field)
        except Exception:  # an EnvVar whose variable is unset
            return None

    def secret(self, variable: str) -> str | None:
        """A key: the bound EnvVar of the two default variables, else the environment."""
        if variable == ANTHROPIC_KEY_ENV:
            return self._bound("anthropic_api_key") or os.environ.get(variable)
        if variable == self.settings.settings.openai.api_key_env:
            return self._bound("openai_api_key") or os.environ.get(variable)
        return os.environ.get(variable)

    def environment(self) -> LLMEnvironment:
        return LLMEnvironment(self.settings.settings.llm(), self.secret, self._servers)

    def missing(self, endpoint: LLMEndpoint) -> str | None:
        """What the endpoint lacks before a run can call it (a key, llama.cpp, a model file),
        with its remedy; None if nothing."""
        return llm_provider(endpoint).missing(endpoint, self.environment())

    def sees_images(self, endpoint: LLMEndpoint) -> bool:
        """Whether the endpoint's model is shown images (a local one: with its mmproj file)."""
        return llm_provider(endpoint).sees_images(endpoint, self.settings.settings.llm())

    def price_table(self) -> dict[str, ModelPrice]:
        table = dict(DEFAULT_PRICES)
        for model, (input_, output, write, read) in self.settings.settings.prices.items():
            table[model] = ModelPrice(input_, output, write, read)
        return table

    def services(self, budget_usd: float | None = None, budget_name: str | None = None) -> LLMServices:
        """The clients of one step (made on first use: offline runs need no key) and prices;
        with ``budget_usd``, every paid call of the step together stays within it, and with a
        ``budget_name`` (a production day) within it together with every earlier step that spent
        under that name, crashed ones included (a ledger in the storage folder)."""
        settings = self.settings.settings
        prices = self.price_table()
        ledger = (
            SpendLedger(self._spend_root / f"{budget_name}.jsonl")
            if budget_name is not None and self._spend_root is not None
            else None
        )
        budget = SpendingLimit(budget_usd, prices, ledger) if budget_usd is not None else None
        return LLMServices(
            lambda endpoint: self.client(endpoint, budget),
            prices,
            settings.concurrency,
            self._cache_root,
            settings.cache.refresh,
            budget,
        )

    def client(self, endpoint: LLMEndpoint, budget: SpendingLimit | None = None) -> CachedClient:
        """A fresh client for one stage's calls: the provider's SDK client behind the cache, the
        bound on calls in flight (``concurrency``, shared with every run of the instance on this
        machine where the provider is a shared service; no more than a local server's slots),
        the call's overall deadline and the stage's budget (for a provider whose calls cost
        money)."""
        provider, env = llm_provider(endpoint), self.environment()
        settings = env.settings
        at_once = provider.calls_at_once(settings)
        return CachedClient(
            provider.client(endpoint, env),
            ResponseCache(self._cache_root) if self._cache_root is not None else None,
            refresh=settings.cache.refresh,
            max_in_flight=min(settings.concurrency, at_once) if at_once else settings.concurrency,
            shared=self._shared_limit(provider.shared_limit(endpoint, env), settings.concurrency),
            deadline_s=provider.section(settings).call_deadline(),
            budget=None if provider.free else budget,
        )

    def _shared_limit(self, name: str | None, limit: int) -> SharedLimit | None:
        """The limit every run calling this provider shares: the instance's pool where it holds
        pools (deployment-wide), else slot files (this machine); None for a provider each run
        serves itself (a local model)."""
        if name is None:
            return None
        if self._pools is not None:
            return InstancePool(self._pools, f"{LLM_POOL_PREFIX}{name}", limit, self._run_id, "llm call")
        return SharedSlots(self._slots_root / name, limit) if self._slots_root is not None else None

    def batches(self, endpoints: list[LLMEndpoint]) -> "BatchPrefetcher | None":
        """A prefetcher that sends a stage's calls as one batch, when every endpoint of the stage
        is one provider that batches and whose settings ask for it (else None)."""
        if not endpoints or len({e.provider for e in endpoints}) > 1 or self._cache_root is None:
            return None
        cache = ResponseCache(self._cache_root)
        return llm_provider(endpoints[0]).batches(self.environment(), cache, self._cache_root / "batches")
