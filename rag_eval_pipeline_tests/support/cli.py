"""The `rag-eval` entry point as the tests run it: the installed script in a fresh process, or
the same function in this one."""

import os
import subprocess
import sys
from pathlib import Path

from rag_eval_pipeline import cli

RAG_EVAL = str(Path(sys.executable).with_name("rag-eval"))


def rag_eval(
    *args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 600
) -> subprocess.CompletedProcess:
    """The installed console script, in a fresh process, as a user's shell runs it."""
    environment = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "RAG_EVAL_CONFIG")}
    environment.update(env or {})
    return subprocess.run(
        [RAG_EVAL, *args], capture_output=True, text=True, cwd=cwd, env=environment, timeout=timeout
    )


def in_process(capsys, *args: str) -> tuple[int, str, str]:
    """The same entry point's function in this process (no interpreter start-up per call)."""
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err
