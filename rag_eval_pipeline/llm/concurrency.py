"""Run many async calls with at most N in flight, reporting progress as they finish."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


async def map_bounded(
    items: Sequence[T],
    work: Callable[[T], Awaitable[R]],
    concurrency: int,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[R]:
    """``work`` over ``items`` with at most ``concurrency`` running; results keep item order."""
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    semaphore = asyncio.Semaphore(concurrency)
    done = 0

    async def run(item: T) -> R:
        nonlocal done
        async with semaphore:
            result = await work(item)
        done += 1
        if on_progress is not None:
            on_progress(done, len(items))
        return result

    return list(await asyncio.gather(*(run(item) for item in items)))
