"""The `rag-eval` entry point as the tests run it: the installed script in a fresh process, or
the same function in this one."""

import os
import subprocess
import sys
import threading
from pathlib import Path

from rag_eval_pipeline import cli

RAG_EVAL = str(Path(sys.executable).with_name("rag-eval"))


def _environment(env: dict | None) -> dict:
    environment = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "RAG_EVAL_CONFIG")}
    return {**environment, **(env or {})}


def rag_eval(
    *args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 600
) -> subprocess.CompletedProcess:
    """The installed console script, in a fresh process, as a user's shell runs it."""
    return subprocess.run(
        [RAG_EVAL, *args], capture_output=True, text=True, cwd=cwd, env=_environment(env), timeout=timeout
    )


def rag_eval_measured(*args: str, cwd: Path, timeout: float = 900) -> tuple[int, str, float]:
    """The console script as ``rag_eval`` runs it, with its exit code, output (stdout and stderr)
    and peak resident memory in GB: the kernel's own count for that process (``os.wait4``)."""
    log = cwd / f"rag-eval-{os.getpid()}.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [RAG_EVAL, *args], stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=_environment(None)
        )
        watchdog = threading.Timer(timeout, process.kill)
        watchdog.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            watchdog.cancel()
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, log.read_text(), usage.ru_maxrss * 1024 / 1e9  # (Linux: in KiB)


def in_process(capsys, *args: str) -> tuple[int, str, str]:
    """The same entry point's function in this process (no interpreter start-up per call)."""
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err
