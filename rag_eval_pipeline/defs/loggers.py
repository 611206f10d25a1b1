"""The run loggers: Dagster's console logger at INFO (its DEBUG lines, one per file loaded and
written, drown what a run says in the UI), and the command line's progress bars (``--verbose``
brings the console logger back at DEBUG)."""

import logging
import sys

import dagster as dg

from rag_eval_pipeline.reporting.progress import ProgressHandler

PROGRESS_LOGGER = "progress"
CONSOLE_LOGGER = "console"


@dg.logger(description="Progress bars per stage on a terminal, one line per stage otherwise.")
def progress_logger(init_context: dg.InitLoggerContext) -> logging.Logger:
    logger = logging.Logger("rag_eval.progress", level=logging.INFO)
    logger.addHandler(ProgressHandler(sys.stdout))
    return logger


_console = dg.default_loggers()[CONSOLE_LOGGER]
console_logger = dg.LoggerDefinition(
    _console.logger_fn,
    config_schema={
        "log_level": dg.Field(str, is_required=False, default_value="INFO"),
        "name": dg.Field(str, is_required=False, default_value="dagster"),
    },
    description="Dagster's colored console logger, at INFO unless a run asks for DEBUG.",
)

LOGGERS = {CONSOLE_LOGGER: console_logger, PROGRESS_LOGGER: progress_logger}
