"""The project's own state that is not Dagster's, written by several runs at once (a team's
deployment: workers sharing one storage folder): the LLM response cache and the metric history.
Four processes write the same keys and their own at once; nothing is lost, nothing torn."""

import json
import multiprocessing
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from rag_eval_pipeline.defs.resources.history import HistoryResource
from rag_eval_pipeline.llm.cache import ResponseCache
from rag_eval_pipeline.llm.client import LLMRequest, LLMResponse, Usage
from rag_eval_pipeline.reporting.monitoring import HISTORY_COLUMNS

WRITERS = 4
KEYS = 60


def _request(n: int) -> LLMRequest:
    return LLMRequest(model="claude-haiku-4-5", messages=({"role": "user", "content": f"question {n}"},))


def _write(worker: int, folder: str, start) -> None:
    """One run's writes: cache entries of shared and own keys, and history rows of its summary."""
    start.wait()  # every writer begins at the same moment
    cache = ResponseCache(Path(folder) / "llm_cache")
    for n in range(KEYS):
        for key in (_request(n).cache_key(), _request(1000 * (worker + 1) + n).cache_key()):
            cache.put(key, LLMResponse(f"answer {n} by {worker}", None, Usage(1, 2), "claude-haiku-4-5"))
    history = HistoryResource(path=str(Path(folder) / "history" / "metric_history.parquet"))
    history.setup_for_execution(dg.build_init_resource_context())
    for summary in range(10):
        rows = pd.DataFrame(
            [
                {
                    "materialized_at": pd.Timestamp.now(tz="UTC"),
                    "answer_model": f"model-{worker}",
                    "judge_id": "reference",
                    "metric": "correctness",
                    "mean": 0.5,
                    "ci_low": 0.1,
                    "ci_high": 0.9,
                    "n": 10,
                    "kb_version": "v",
                    "cost_usd": 0.0,
                    "summary_run_id": f"run-{worker}-{summary}",
                }
            ],
            columns=HISTORY_COLUMNS,
        )
        history.record(rows)


@pytest.mark.slow  # four processes of their own
def test_cache_and_history_under_four_writers_at_once(tmp_path):
    context = multiprocessing.get_context("spawn")  # separate processes, as separate runs are
    start = context.Event()
    workers = [context.Process(target=_write, args=(w, str(tmp_path), start)) for w in range(WRITERS)]
    for worker in workers:
        worker.start()
    start.set()
    for worker in workers:
        worker.join(timeout=300)
    assert [w.exitcode for w in workers] == [0] * WRITERS

    cache = ResponseCache(tmp_path / "llm_cache")
    files = list((tmp_path / "llm_cache").rglob("*.json"))
    assert len(files) == KEYS * (1 + WRITERS)  # the shared keys once, each writer's own
    for path in files:
        json.loads(path.read_text())  # every entry whole: written aside, then renamed
    shared = cache.get(_request(7).cache_key())
    assert shared is not None and shared.text.startswith("answer 7 by ")  # one writer's, whole
    assert not list((tmp_path / "llm_cache").rglob(".*"))  # no temporary file left behind
    history = pd.read_parquet(tmp_path / "history" / "metric_history.parquet")
    assert len(history) == WRITERS * 10 and history["summary_run_id"].is_unique  # no row lost


def _adopt(worker: int, folder: str, start) -> None:
    from rag_eval_pipeline.judges.alignment import Example, PromptStore, PromptVersion

    start.wait()
    store = PromptStore(Path(folder))
    for n in range(15):
        example = Example(f"q{worker}-{n}", "truth", "answer", "correctness", 1.0)
        store.adopt(PromptVersion("claude", f"v{worker}-{n}", (example,), {"kappa": 0.5}))


@pytest.mark.slow  # four processes of their own
def test_judge_prompts_adopted_by_four_processes_at_once_are_all_kept(tmp_path):
    """Adopting reads, changes and writes one file: under its lock, four processes adopting at
    once keep every version (without it, a read between another's read and write loses one)."""
    from rag_eval_pipeline.judges.alignment import PromptStore

    context = multiprocessing.get_context("spawn")
    start = context.Barrier(WRITERS)
    workers = [context.Process(target=_adopt, args=(w, str(tmp_path), start)) for w in range(WRITERS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    versions = {v.version for v in PromptStore(tmp_path).versions("claude")}
    assert versions == {f"v{w}-{n}" for w in range(WRITERS) for n in range(15)}
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_lock_held_too_long_names_its_holder_and_a_failed_write_leaves_nothing(tmp_path):
    """A wait that does not end says who holds the lock (process, machine, what for) instead of
    hanging; a write that fails midway leaves neither a half file nor a temporary one."""
    import os
    import threading

    from rag_eval_pipeline.common.files import LockTimeoutError, exclusive, write_atomically

    target = tmp_path / "baselines.json"
    held, release, said = threading.Event(), threading.Event(), []

    def holder():
        with exclusive(target, "changing the baselines"):
            held.set()
            release.wait(60)

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(60)
    try:
        with pytest.raises(LockTimeoutError) as refused, exclusive(target, "a second writer", timeout_s=0.2):
            pass
    finally:
        release.set()
        thread.join()
    assert f"pid {os.getpid()}" in str(refused.value) and "(changing the baselines)" in str(refused.value)
    with exclusive(target, "after the holder ended", timeout_s=5):  # released: taken at once
        said.append("taken")
    assert said == ["taken"]

    target.write_text("the live file")

    def half(tmp: Path) -> None:
        tmp.write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomically(target, half)
    assert target.read_text() == "the live file"
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("baselines.json.lock")) == [
        "baselines.json"
    ]
