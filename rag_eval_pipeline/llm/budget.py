"""A dollar budget the calls of one stage may not exceed: each real call first reserves what it
could cost at most (its prompt, and every output token it may write), and the reservation is
replaced by what it did cost when it returns. A call whose reservation does not fit waits for
the calls in flight to settle, and is never made once what was spent leaves no room for it, so
the budget holds with calls in flight; cache hits cost nothing and pass."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping

from rag_eval_pipeline.llm.client import LLMRequest, LLMResponse
from rag_eval_pipeline.llm.pricing import ModelPrice, cost_usd, price_for

CHARS_PER_TOKEN_AT_LEAST = 3  # a generous bound on input tokens (English runs about 4 a token)


class BudgetExhaustedError(RuntimeError):
    """The budget does not allow this call: the case is left unscored (absent), never 0."""


class SpendingLimit:
    """At most ``limit_usd`` over every call made through it (thread- and task-safe)."""

    def __init__(self, limit_usd: float, prices: Mapping[str, ModelPrice]) -> None:
        self.limit_usd = limit_usd
        self._prices = prices
        self._settled: dict[asyncio.AbstractEventLoop, asyncio.Condition] = {}
        self.spent_usd = 0.0
        self._reserved = 0.0
        self.refused = 0

    def _condition(self) -> asyncio.Condition:
        """One condition per event loop (each stage runs its own), signalled as calls settle."""
        loop = asyncio.get_running_loop()
        if loop not in self._settled:
            self._settled = {loop: asyncio.Condition()}
        return self._settled[loop]

    def most_it_costs(self, request: LLMRequest) -> float:
        """The call's cost if its prompt were all input tokens at the generous bound and it wrote
        every token ``max_tokens`` allows; raises when the model has no price (no bound)."""
        price = price_for(request.model, self._prices)
        if price is None:
            raise BudgetExhaustedError(
                f"no price for {request.model}: a budget cannot bound its calls (add it to prices:)"
            )
        prompt = json.dumps(request.api_kwargs(), ensure_ascii=False, default=str)
        input_tokens = len(prompt) / CHARS_PER_TOKEN_AT_LEAST
        return (input_tokens * max(price.input, price.cache_write) + request.max_tokens * price.output) / 1e6

    async def reserve(self, request: LLMRequest) -> float:
        """Holds the call's most cost, waiting while calls in flight may still leave room;
        BudgetExhaustedError once what was spent leaves none."""
        most = self.most_it_costs(request)
        condition = self._condition()
        async with condition:
            while self.spent_usd + self._reserved + most > self.limit_usd:
                if self.spent_usd + most > self.limit_usd or not self._reserved:
                    self.refused += 1
                    raise BudgetExhaustedError(
                        f"the budget of ${self.limit_usd:g} is spent (${self.spent_usd:.4f} spent, "
                        f"this call could cost ${most:.4f}): not called"
                    )
                await condition.wait()  # a call in flight settles, for less than it reserved
            self._reserved += most
        return most

    async def settle(self, reserved: float, request: LLMRequest, response: LLMResponse | None) -> None:
        """Replaces a reservation by what the call cost (nothing, if it failed before an answer)."""
        cost = 0.0
        if response is not None:
            cost = cost_usd(request.model, response.usage, self._prices, response.batch) or 0.0
        condition = self._condition()
        async with condition:
            self._reserved -= reserved
            self.spent_usd += cost
            condition.notify_all()
