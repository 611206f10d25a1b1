"""Services a test starts: a free port for each, and a clean stop."""

import os
import signal
import socket
import subprocess


def free_port() -> int:
    """A port nothing listens on now, on 127.0.0.1 (each service of a test gets its own)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def stop_process_group(process, timeout_s: float = 90) -> None:
    """SIGTERM to a server started with start_new_session, SIGKILL if it lingers (after longer
    than `rag-eval ui` gives its own children, so that it never leaves them orphaned)."""
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
