"""A dollar budget calls may not exceed: each real call first reserves what it could cost at most
(its prompt, and every output token it may write), and the reservation is replaced by what it
did cost when it returns. A call whose reservation does not fit waits for the calls in flight to
settle, and is never made once what was spent leaves no room for it, so the budget holds with
calls in flight; cache hits cost nothing and pass. With a ledger (a day's production budget) the
spend is written down as each call returns, so it holds across runs and crashes."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from pathlib import Path

from rag_eval_pipeline.llm.client import LLMRequest, LLMResponse
from rag_eval_pipeline.llm.images import keyed_images, request_image_tokens
from rag_eval_pipeline.llm.pricing import ModelPrice, cost_usd, price_for

CHARS_PER_TOKEN_AT_LEAST = 3  # a generous bound on input tokens (English runs about 4 a token)


class SpendLedger:
    """What a budget's calls spent, one line per paid call appended as it returns
    (``<folder>/<name>.jsonl``): a run killed half-way has its spend counted by the next one, so
    a daily budget holds across crashes. Appends are single writes of a line (atomic for every
    writer of the file); a torn last line is skipped."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def spent(self) -> float:
        if not self.path.is_file():
            return 0.0
        total = 0.0
        for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                total += float(json.loads(line)["cost_usd"])
            except (ValueError, KeyError, TypeError):
                continue  # a line torn by a kill
        return total

    def record(self, model: str, cost: float) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"model": model, "cost_usd": cost}) + "\n"
        descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(descriptor, line.encode())
        finally:
            os.close(descriptor)


class BudgetExhaustedError(RuntimeError):
    """The budget does not allow this call: the case is left unscored (absent), never 0."""


class SpendingLimit:
    """At most ``limit_usd`` over every call made through it (thread- and task-safe)."""

    def __init__(
        self, limit_usd: float, prices: Mapping[str, ModelPrice], ledger: SpendLedger | None = None
    ) -> None:
        self.limit_usd = limit_usd
        self._prices = prices
        self._ledger = ledger
        self._settled: dict[asyncio.AbstractEventLoop, asyncio.Condition] = {}
        # what earlier runs under the same ledger spent, crashed ones included
        self.spent_before_usd = ledger.spent() if ledger is not None else 0.0
        self.spent_usd = 0.0  # by this limit's own calls
        self._reserved = 0.0
        self.refused = 0

    @property
    def spent_in_all_usd(self) -> float:
        return self.spent_before_usd + self.spent_usd

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
        body = request.api_kwargs()
        # an image costs what its pixels cost (llm/images.py), not its base64 length
        prompt = json.dumps(keyed_images(body), ensure_ascii=False, default=str)
        input_tokens = len(prompt) / CHARS_PER_TOKEN_AT_LEAST + request_image_tokens(body)
        return (input_tokens * max(price.input, price.cache_write) + request.max_tokens * price.output) / 1e6

    async def reserve(self, request: LLMRequest) -> float:
        """Holds the call's most cost, waiting while calls in flight may still leave room;
        BudgetExhaustedError once what was spent leaves none."""
        most = self.most_it_costs(request)
        condition = self._condition()
        async with condition:
            while self.spent_in_all_usd + self._reserved + most > self.limit_usd:
                if self.spent_in_all_usd + most > self.limit_usd or not self._reserved:
                    self.refused += 1
                    raise BudgetExhaustedError(
                        f"the budget of ${self.limit_usd:g} is spent (${self.spent_in_all_usd:.4f} "
                        f"spent, this call could cost ${most:.4f}): not called"
                    )
                await condition.wait()  # a call in flight settles, for less than it reserved
            self._reserved += most
        return most

    async def settle(self, reserved: float, request: LLMRequest, response: LLMResponse | None) -> None:
        """Replaces a reservation by what the call cost (nothing, if it failed before an answer)."""
        cost = 0.0
        if response is not None:
            cost = cost_usd(request.model, response.usage, self._prices, response.batch) or 0.0
            if self._ledger is not None and cost:
                self._ledger.record(request.model, cost)  # counted now, not when the run ends
        condition = self._condition()
        async with condition:
            self._reserved -= reserved
            self.spent_usd += cost
            condition.notify_all()
