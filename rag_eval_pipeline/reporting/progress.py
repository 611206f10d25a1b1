"""Progress a person can read: the assets' ``what: done/total`` lines become one bar per stage
that updates in place on a terminal (count, rate, time left), or one plain line per stage when
the output is a file or a CI log. Warnings are shown; Dagster's own chatter is not."""

from __future__ import annotations

import logging
import re
from typing import IO, Any

from tqdm import tqdm

from rag_eval_pipeline.metrics.blind_retrieval import is_model_warning

PROGRESS = re.compile(r"^(?P<what>.+): (?P<done>\d+)/(?P<total>\d+)$")
MISSING_PARTITION = "Couldn't load partition"  # Dagster's note when a fan-in skips a failed model


class ProgressHandler(logging.Handler):
    """Renders the progress messages of a run to ``stream``; warnings as ``warning:`` lines."""

    def __init__(self, stream: IO[str], interactive: bool | None = None) -> None:
        super().__init__(level=logging.INFO)
        self._stream = stream
        self._interactive = stream.isatty() if interactive is None else interactive
        self._bars: dict[str, tqdm] = {}

    def emit(self, record: logging.LogRecord) -> None:
        message = _original_message(record)
        if record.levelno >= logging.ERROR:
            return  # the command line prints the one error line itself
        if record.levelno >= logging.WARNING:
            # a failed model, and a model's retrieval warnings, the command says once for all
            if not message.startswith(MISSING_PARTITION) and not is_model_warning(message):
                self._write(f"warning: {message}")
            return
        match = PROGRESS.match(message)
        if match:
            self._progress(match["what"], int(match["done"]), int(match["total"]))

    def _progress(self, what: str, done: int, total: int) -> None:
        if self._interactive:
            bar = self._bars.get(what)
            if bar is None:
                bar = self._bars[what] = tqdm(total=total, desc=f"  {what}", file=self._stream, leave=True)
            bar.update(done - bar.n)
            if done >= total:
                bar.close()
            return
        if done >= total:  # one line per stage; the stage's own line carries its time
            self._write(f"  {what}: {done}/{total}")

    def _write(self, line: str) -> None:
        if self._interactive:
            tqdm.write(line, file=self._stream)
        else:
            self._stream.write(line + "\n")
            self._stream.flush()

    def close(self) -> None:
        for bar in self._bars.values():
            bar.close()
        super().close()


def _original_message(record: logging.LogRecord) -> str:
    meta: Any = getattr(record, "dagster_meta", None)
    if isinstance(meta, dict) and meta.get("orig_message"):
        return str(meta["orig_message"])
    return record.getMessage()
