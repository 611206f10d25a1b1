"""Progress of a long stage as log lines the CLI renders as bars and the UI shows as they come."""

from collections.abc import Callable

import dagster as dg


def progress_logger(
    context: dg.AssetExecutionContext, what: str, steps: int = 5
) -> Callable[[int, int], None]:
    """A callback that logs `what: done/total` about ``steps`` times over a long loop (each line
    is an event the instance stores: a few per stage, never one per case)."""

    def report(done: int, total: int) -> None:
        if done == total or done % max(1, total // steps) == 0:
            context.log.info(f"{what}: {done}/{total}")

    return report
