"""The command line's logger: progress bars instead of Dagster's event lines (``--verbose``
brings Dagster's console logger back)."""

import logging
import sys

import dagster as dg

from rag_eval_pipeline.reporting.progress import ProgressHandler

PROGRESS_LOGGER = "progress"


@dg.logger(description="Progress bars per stage on a terminal, one line per stage otherwise.")
def progress_logger(init_context: dg.InitLoggerContext) -> logging.Logger:
    logger = logging.Logger("rag_eval.progress", level=logging.INFO)
    logger.addHandler(ProgressHandler(sys.stdout))
    return logger


LOGGERS = {**dg.default_loggers(), PROGRESS_LOGGER: progress_logger}
