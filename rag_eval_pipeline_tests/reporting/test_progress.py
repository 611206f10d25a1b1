"""The progress a person reads: one line per stage in a log, a live bar on a terminal."""

import io
import logging

from rag_eval_pipeline.reporting.progress import ProgressHandler


def _records(*messages, level=logging.INFO):
    return [logging.LogRecord("dagster", level, "", 0, message, None, None) for message in messages]


def test_a_log_gets_one_line_per_stage_and_the_warnings():
    stream = io.StringIO()
    handler = ProgressHandler(stream, interactive=False)
    for record in _records(
        "answered (oracle@bm25-k4): 10/35", "answered (oracle@bm25-k4): 35/35", "judged: 35/35"
    ):
        handler.emit(record)
    for record in _records(
        "skipped: huge.txt", "Couldn't load partition x and skipped it", level=logging.WARNING
    ):
        handler.emit(record)
    handler.emit(_records("step failed with a stack trace", level=logging.ERROR)[0])
    assert stream.getvalue().splitlines() == [
        "  answered (oracle@bm25-k4): 35/35",
        "  judged: 35/35",
        "warning: skipped: huge.txt",
    ]


def test_a_terminal_gets_a_bar_that_updates_in_place():
    stream = io.StringIO()
    handler = ProgressHandler(stream, interactive=True)
    for record in _records("judged: 5/20", "judged: 20/20"):
        handler.emit(record)
    handler.close()
    output = stream.getvalue()
    assert "\r" in output and "judged" in output and "20/20" in output and "it/s" in output
