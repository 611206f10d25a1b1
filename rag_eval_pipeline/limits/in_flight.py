"""Run many async calls with at most N in flight, reporting progress as they finish."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


async def map_bounded(
    items: Sequence[T],
    work: Callable[[T], Awaitable[R]],
    concurrency: int,
    on_progress: Callable[[int, int], None] | None = None,
    close: Callable[[], Awaitable[None]] | None = None,
) -> list[R]:
    """``work`` over ``items`` with at most ``concurrency`` running; results keep item order.

    ``work`` records its own per-item failures; an exception it raises is fatal for all items
    (a bad key, an unknown model): nothing further starts, so at most the calls already in
    flight are spent on it. ``close`` is awaited on the same loop when all are done (a client
    whose connections the calls shared)."""
    try:
        return await _map_bounded(items, work, concurrency, on_progress)
    finally:
        if close is not None:
            await close()


async def _map_bounded(
    items: Sequence[T],
    work: Callable[[T], Awaitable[R]],
    concurrency: int,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[R]:
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    semaphore = asyncio.Semaphore(concurrency)
    failed = asyncio.Event()
    done = 0

    async def run(item: T) -> R:
        nonlocal done
        async with semaphore:
            if failed.is_set():
                raise _NotStarted
            try:
                result = await work(item)
            except BaseException:
                failed.set()
                raise
        done += 1
        if on_progress is not None:
            on_progress(done, len(items))
        return result

    return list(await asyncio.gather(*(run(item) for item in items)))


class LoopSemaphore:
    """At most ``limit`` calls at once among those of one event loop: an asyncio semaphore
    belongs to one loop and each stage runs its own, so the loop that asks gets a fresh one."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._held: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}

    def here(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if loop not in self._held:
            self._held = {loop: asyncio.Semaphore(self._limit)}
        return self._held[loop]


class _NotStarted(Exception):
    """An item skipped because an earlier one failed fatally (never the error gather reports)."""


def run_bounded(
    items: Sequence[T],
    work: Callable[[T], Awaitable[R]],
    concurrency: int,
    on_progress: Callable[[int, int], None] | None = None,
    close: Callable[[], Awaitable[None]] | None = None,
) -> list[R]:
    """``map_bounded`` from synchronous code, on an event loop of its own.

    Where the caller's thread already runs a loop (a Jupyter notebook, Playwright's sync API),
    ``asyncio.run`` refuses to start; the calls then run on a fresh loop in a worker thread and
    this waits for them, so a stage behaves the same wherever it is called from. An interrupt
    while waiting (a notebook's stop button) cancels the calls there, as ``asyncio.run`` does
    here: nothing further is paid for."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(map_bounded(items, work, concurrency, on_progress, close))
    started = concurrent.futures.Future()  # the worker's loop and task, to cancel from here

    async def in_worker() -> list[R]:
        started.set_result((asyncio.get_running_loop(), asyncio.current_task()))
        return await map_bounded(items, work, concurrency, on_progress, close)

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="llm-calls")
    done = pool.submit(asyncio.run, in_worker())
    try:
        return done.result()
    except BaseException:
        if not done.done():
            with contextlib.suppress(concurrent.futures.TimeoutError, RuntimeError):  # it just ended
                loop, task = started.result(timeout=10)
                loop.call_soon_threadsafe(task.cancel)
        raise
    finally:
        pool.shutdown(wait=True)
