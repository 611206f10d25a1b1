"""How many threads a local llama.cpp server gets when the configuration names none."""

import time

import pytest

from rag_eval_pipeline.llm.llamacpp_server import LocalServerSettings, _server_threads, busy_cores, free_cores
from rag_eval_pipeline_tests.support.processes import spinning


@pytest.mark.parametrize(
    ("usable", "busy", "threads"),
    [
        (2, 0.1, 2),  # a quiet machine: every core
        (2, 1.2, 1),  # beside a CI worker or a second job: the free core
        (2, 5.0, 1),  # never fewer than one
        (8, 2.6, 5),  # three of eight busy
        (4, 0.0, 4),
    ],
)
def test_a_server_given_no_threads_takes_the_free_cores(usable, busy, threads):
    assert free_cores(usable, busy) == threads


def test_another_process_spinning_counts_as_a_busy_core():
    """What the server's default reads: a core another process keeps busy right now (whatever
    else the machine runs, the spinner alone keeps most of a core busy)."""
    with spinning(1):
        time.sleep(0.3)  # the interpreter started
        busy = busy_cores(0.5)
    assert busy >= 0.7


def test_threads_set_in_the_configuration_win():
    assert _server_threads(LocalServerSettings(threads=3)) == 3
    assert 1 <= _server_threads(LocalServerSettings()) <= len(__import__("os").sched_getaffinity(0))
