"""Dollar cost of token usage from a price table (USD per million tokens)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rag_eval_pipeline.llm.client import Usage


@dataclass(frozen=True)
class ModelPrice:
    input: float
    output: float
    cache_write: float  # 5-minute cache writes
    cache_read: float


# Anthropic's list prices (USD / MTok) for the default answer and judge models; override in config.
DEFAULT_PRICES: dict[str, ModelPrice] = {
    "claude-haiku-4-5": ModelPrice(input=1.00, output=5.00, cache_write=1.25, cache_read=0.10),
    "claude-sonnet-4-6": ModelPrice(input=3.00, output=15.00, cache_write=3.75, cache_read=0.30),
}


def price_for(model: str, prices: Mapping[str, ModelPrice]) -> ModelPrice | None:
    """Exact id, else the longest priced id the model id starts with (dated snapshots)."""
    if model in prices:
        return prices[model]
    matches = [name for name in prices if model.startswith(name)]
    return prices[max(matches, key=len)] if matches else None


BATCH_DISCOUNT = 0.5  # the Message Batches API bills half of the standard prices


def cost_usd(model: str, usage: Usage, prices: Mapping[str, ModelPrice], batch: bool = False) -> float | None:
    """The call's cost; None (unknown, not free) for a model missing from the table."""
    price = price_for(model, prices)
    if price is None:
        return None
    return (
        (BATCH_DISCOUNT if batch else 1.0)
        * (
            usage.input_tokens * price.input
            + usage.output_tokens * price.output
            + usage.cache_write_tokens * price.cache_write
            + usage.cache_read_tokens * price.cache_read
        )
        / 1_000_000
    )
