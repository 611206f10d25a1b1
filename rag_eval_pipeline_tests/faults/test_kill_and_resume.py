"""Fault injection through the real `rag-eval` process: kill -9 while it answers, then while it
judges, then a clean re-run. Nothing returned to the client is paid for twice, every stored file
stays readable, and the killed runs do not stay STARTED."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from stand_ins.anthropic_api import FakeAnthropic

pytestmark = pytest.mark.slow  # killed processes, run twice

RAG_EVAL = str(Path(sys.executable).with_name("rag-eval"))
CASES = 16


def _wait_for(condition, timeout_s: float = 120.0) -> None:
    """Poll a condition of the server's state (the process is asynchronous to the test)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)  # polling the fake server's request log


def _is_judgement(request: dict) -> bool:
    return "tools" in request


def _cached(home: Path) -> int:
    return sum(1 for _ in (home / "storage" / "llm_cache").rglob("*.json"))


def _unfinished_runs(home: Path) -> list:
    with dg.DagsterInstance.from_config(str(home)) as instance:
        return instance.get_runs(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED]))


def test_kill_9_while_answering_and_judging_then_resume(tmp_path):
    home = tmp_path / "home"
    arguments = ["--dagster-home", str(home), "run", "--sample", str(CASES), "--models", "haiku"]
    arguments += ["--judges", "reference,sonnet", "--concurrency", "2"]
    with FakeAnthropic(latency_s=0.3) as server:
        env = {**os.environ, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}
        env.pop("DAGSTER_HOME", None)
        temp = tmp_path / "temp"  # the killed processes' temporary folder: nothing of ours stays in it
        temp.mkdir()
        env["TMPDIR"] = str(temp)

        def start() -> subprocess.Popen:
            return subprocess.Popen(
                [RAG_EVAL, *arguments], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )

        # 1. killed while answering
        process = start()
        _wait_for(lambda: sum(not _is_judgement(r) for r in server.requests) >= 6)
        process.send_signal(signal.SIGKILL)
        process.wait()
        answered_and_cached = _cached(home)
        assert 0 < answered_and_cached < CASES
        assert len(_unfinished_runs(home)) == 1  # the killed run, until the next command
        listed = subprocess.run([RAG_EVAL, "--dagster-home", str(home), "models", "list"], env=env)
        assert listed.returncode == 0 and _unfinished_runs(home) == []

        # 2. killed while judging: only the answers not cached are asked again
        server.reset_counts()
        process = start()
        _wait_for(lambda: sum(_is_judgement(r) for r in server.requests) >= 4)
        process.send_signal(signal.SIGKILL)
        process.wait()
        answers_asked = sum(not _is_judgement(r) for r in server.requests)
        assert answers_asked == CASES - answered_and_cached
        judged_and_cached = _cached(home) - CASES
        assert 0 < judged_and_cached < CASES

        # 3. a clean re-run finishes, asking only the judgements not cached
        server.reset_counts()
        finished = subprocess.run([RAG_EVAL, *arguments], env=env, capture_output=True, text=True)
        assert finished.returncode == 0, finished.stderr
        assert sum(not _is_judgement(r) for r in server.requests) == 0
        assert sum(_is_judgement(r) for r in server.requests) == CASES - judged_and_cached
    assert "| haiku | sonnet | 16 | 0 |" in finished.stdout
    with dg.DagsterInstance.from_config(str(home)) as instance:
        statuses = [run.status for run in instance.get_runs()]
        assert instance.run_monitoring_enabled  # the generated dagster.yaml turns it on
    assert dg.DagsterRunStatus.STARTED not in statuses
    assert statuses.count(dg.DagsterRunStatus.FAILURE) == 2  # the two killed evaluation runs
    for table in (home / "storage" / "artifacts").rglob("*.parquet"):
        pd.read_parquet(table)  # every stored file is whole
    for response in (home / "storage" / "llm_cache").rglob("*.json"):
        json.loads(response.read_text())
    # the run databases' template lives in the home, one per Dagster version, none half-built
    assert [p.name for p in temp.iterdir() if p.name.startswith("rag-eval")] == []
    assert [p.name for p in (home / "history" / "runs").glob(".run-database-template-*")] == [
        f".run-database-template-{dg.__version__}.db"
    ]
