"""`rag-eval`: a thin command line over the Dagster definitions and the persistent instance. The
parser (``parser.py``) imports nothing heavy; each command's module is imported when it runs."""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence

from rag_eval_pipeline.cli.errors import CommandError, error
from rag_eval_pipeline.cli.parser import build_parser
from rag_eval_pipeline.common.heap import keep_large_blocks_apart

__all__ = ["build_parser", "entry", "main"]


class Terminated(KeyboardInterrupt):
    """SIGTERM, as an interrupt: the same clean stop as Ctrl-C."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated()


def _interrupted_by_dagster(err: BaseException) -> bool:
    """Dagster's own interrupt (a signal during a step), without importing Dagster to ask: an
    error of it can only exist once something imported it."""
    dagster = sys.modules.get("dagster")
    return dagster is not None and isinstance(err, dagster.DagsterExecutionInterruptedError)


def _stopped(err: BaseException) -> int:
    """The one line of a stopped command, with the runs of this process marked failed."""
    what = (
        "terminated"
        if isinstance(err, Terminated) or not isinstance(err, KeyboardInterrupt)
        else "interrupted"
    )
    failed: list[str] = []
    if "dagster" in sys.modules:  # no instance was opened before Dagster was imported
        from rag_eval_pipeline.instance.home import fail_own_unfinished_runs

        failed = fail_own_unfinished_runs(f"rag-eval was {what}")
    runs = f" (run {', '.join(r[:8] for r in failed)} marked failed)" if failed else ""
    error(f"{what}{runs}: run the command again to resume; paid calls that returned are in the cache")
    return 143 if what == "terminated" else 130


READER_GONE = 141  # as a shell reports a process that SIGPIPE ended (128 + 13)


def _reader_gone() -> int:
    """The reader of standard output went away (`rag-eval diff A B | head`): what is left to
    print goes nowhere, and no traceback follows at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return READER_GONE


def main(argv: Sequence[str] | None = None, loaded: Callable[[], None] = lambda: None) -> int:
    """Parse, import the command's module, call ``loaded``, run the command."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)  # before any import: a stop while starting is said too
    try:
        args = build_parser().parse_args(argv)
        handle = args.handler.load()
        loaded()
        return handle(args)
    except CommandError as err:
        error(str(err))
        return 2
    except BrokenPipeError:
        return _reader_gone()
    except KeyboardInterrupt as err:
        return _stopped(err)
    except BaseException as err:  # Dagster's interrupt is a BaseException, as KeyboardInterrupt is
        if _interrupted_by_dagster(err):
            return _stopped(err)
        raise


def entry() -> int:
    """The `rag-eval` process: ``main``, with the cyclic garbage collector told that what the
    command imported lives as long as the process (``gc.freeze``), so its passes scan only the
    command's own objects, and again at the end, so the exit does not scan the whole heap. In
    the 500 x 3 offline run the collector's passes took about 2 s and the exit 0.8 s; with the
    two freezes the run went from 7.6 s to 6.4 s (benchmarks/README.md). Only the process's
    entry point freezes: a caller of ``main`` keeps its collector as it was; and only it fixes
    how the C library keeps large blocks (``common/heap.py``)."""
    keep_large_blocks_apart()
    code = main(loaded=gc.freeze)
    gc.freeze()
    try:
        sys.stdout.flush()  # what is still buffered, while a closed pipe can be said quietly
    except BrokenPipeError:
        return _reader_gone()
    return code


if __name__ == "__main__":
    sys.exit(entry())
