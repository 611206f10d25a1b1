"""The `rag-eval` entry point as the tests run it: the installed script in a fresh process, or
the same function in this one."""

import os
import subprocess
import sys
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


# runs a command and writes its peak resident memory (KiB) to a file: a small process of its
# own, since a child's count starts from the process that spawned it (Linux keeps the spawner's
# high-water mark across exec, and a test worker's may be over a gigabyte)
_MEASURE = (
    "import pathlib, resource, subprocess, sys; code = subprocess.call(sys.argv[2:]); "
    "pathlib.Path(sys.argv[1]).write_text(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); "
    "sys.exit(code)"
)


def rag_eval_measured(*args: str, cwd: Path, timeout: float = 900) -> tuple[int, str, float]:
    """The console script as ``rag_eval`` runs it, with its exit code, output (stdout and stderr)
    and peak resident memory in GB, as the kernel counts it for that process alone."""
    log, peak = cwd / f"rag-eval-{os.getpid()}.log", cwd / f"rag-eval-{os.getpid()}.peak"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-c", _MEASURE, str(peak), RAG_EVAL, *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=_environment(None),
            start_new_session=True,
        )
        try:
            code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            raise
    return code, log.read_text(), int(peak.read_text()) * 1024 / 1e9  # (Linux: in KiB)


def in_process(capsys, *args: str) -> tuple[int, str, str]:
    """The same entry point's function in this process (no interpreter start-up per call)."""
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err
