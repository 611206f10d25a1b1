"""Services a test starts: a free port for each, and a clean stop."""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg

DAEMON_START_S = 180


def free_port() -> int:
    """A port nothing listens on now, on 127.0.0.1 (each service of a test gets its own)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def spinning(cores: int) -> Iterator[None]:
    """Other work on a busy machine: ``cores`` processes that each keep a core busy until the
    block ends."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(cores)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def stop_process_group(process, timeout_s: float = 90) -> None:
    """SIGTERM to a server started with start_new_session, SIGKILL if it lingers (after longer
    than `rag-eval ui` gives its own children, so that it never leaves them orphaned)."""
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)


@contextlib.contextmanager
def dagster_dev(home: Path, project: Path, env: dict, port: int | None = None) -> Iterator[subprocess.Popen]:
    """`dagster dev` (webserver and daemon) on the code location, for ``home``, until the block
    ends; its log in ``home/dagster-dev.log``; yields once the daemon processes backfills."""
    from rag_eval_pipeline.instance import backfill

    with (home / "dagster-dev.log").open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "dagster", "dev", "-m", "rag_eval_pipeline.definitions"]
            + ["-h", "127.0.0.1", "-p", str(port or free_port())],
            cwd=project,
            env={**env, "DAGSTER_HOME": str(home)},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + DAEMON_START_S
            while True:
                assert process.poll() is None, (home / "dagster-dev.log").read_text()[-3000:]
                with dg.DagsterInstance.from_config(str(home)) as instance:
                    if backfill.daemon_running(instance):  # what the CLI checks before submitting
                        break
                assert time.monotonic() < deadline, "the Dagster daemon did not start"
                time.sleep(1.0)  # the daemon is still starting
            yield process
        finally:
            stop_process_group(process)


def wait_until(condition, timeout_s: float, what: str):
    """``condition()``'s first truthy value, asked every second; an assertion naming ``what`` when
    ``timeout_s`` passes without one (a daemon, a worker or a server works on its own schedule)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(1)  # the other process is still working
    raise AssertionError(f"{what}: not within {timeout_s} s")
