"""`rag-eval`: a thin command line over the Dagster definitions and the persistent instance. The
parser (``parser.py``) imports nothing heavy; each command's module is imported when it runs."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Sequence

from rag_eval_pipeline.cli.errors import CommandError, error
from rag_eval_pipeline.cli.parser import build_parser

__all__ = ["build_parser", "main"]


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


def main(argv: Sequence[str] | None = None) -> int:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)  # before any import: a stop while starting is said too
    try:
        args = build_parser().parse_args(argv)
        return args.handler.load()(args)
    except CommandError as err:
        error(str(err))
        return 2
    except KeyboardInterrupt as err:
        return _stopped(err)
    except BaseException as err:  # Dagster's interrupt is a BaseException, as KeyboardInterrupt is
        if _interrupted_by_dagster(err):
            return _stopped(err)
        raise


if __name__ == "__main__":
    sys.exit(main())
