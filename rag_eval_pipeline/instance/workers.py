"""Runs on Celery workers over Redis: dagster-celery's run launcher with a health check that asks
the worker itself, and the worker `rag-eval worker` starts. The launcher queues a run to the
broker; a worker (any machine with the configuration, the instance on PostgreSQL and the shared
storage folder) takes it, tags it with its name and host, and executes it. A worker whose process
or machine died leaves its task STARTED in the result backend for ever (dagster-celery's own
check then says RUNNING); here the worker that took it is pinged, and a worker that does not
answer fails the run through Dagster's run monitoring, which frees its pool slots."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from typing import Any

import dagster as dg
from dagster._core.launcher import CheckRunHealthResult, WorkerStatus
from dagster._serdes import unpack_value
from dagster_celery.launcher import CeleryRunLauncher
from dagster_celery.make_app import make_app
from dagster_celery.tags import DAGSTER_CELERY_TASK_ID_TAG
from dagster_celery.tasks import create_execute_job_task, create_resume_job_task

from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.defs.names import WORKER_TAG

PING_TIMEOUT_S = 5.0
PINGS = 2  # a worker is dead when it answers none of these (a busy one answers: its parent does)
# one run at a time per worker, taken only when it can start: a busy worker holds no second run
# that an idle one could take (the message is acknowledged when the run ends)
WORKER_CONFIG = {
    "worker_prefetch_multiplier": 1,
    "task_acks_late": True,
    "task_track_started": True,
    "broker_connection_retry_on_startup": True,
}


class WorkerRunLauncher(CeleryRunLauncher):
    """dagster-celery's launcher, and a health check that pings the worker running the task."""

    def __init__(self, default_queue: str, broker: str | None = None, backend: str | None = None, **kwargs):
        config = {**WORKER_CONFIG, **(kwargs.pop("config_source", None) or {})}
        super().__init__(default_queue, broker, backend, config_source=config, **kwargs)

    def check_run_worker_health(self, run: dg.DagsterRun) -> CheckRunHealthResult:
        task_id = run.tags.get(DAGSTER_CELERY_TASK_ID_TAG)
        if task_id is None:
            return CheckRunHealthResult(WorkerStatus.UNKNOWN, "the run has no Celery task yet")
        result = self.celery.AsyncResult(task_id)
        if result.state != "STARTED":
            return super().check_run_worker_health(run)
        worker = (result.info or {}).get("hostname") if isinstance(result.info, Mapping) else None
        if worker is None:
            return CheckRunHealthResult(WorkerStatus.RUNNING)
        for _ in range(PINGS):
            if self.celery.control.ping(destination=[worker], timeout=PING_TIMEOUT_S):
                return CheckRunHealthResult(WorkerStatus.RUNNING)
        return CheckRunHealthResult(
            WorkerStatus.FAILED,
            f"worker {worker} does not answer: its process or machine died while running this run",
        )


def worker_name(name: str) -> str:
    """The worker's Celery node name: its name and the host it runs on."""
    return f"{name}@{socket.gethostname()}"


def worker_app(broker: str, queue: str, name: str):
    """The Celery app of one worker: dagster-celery's run tasks, and each run tagged with the
    worker that took it before it starts (the UI's run page, `rag-eval models`)."""
    from celery.signals import task_prerun

    app = make_app(
        app_args={
            "broker": broker,
            "backend": broker,
            "include": [],
            "config_source": WORKER_CONFIG,
            "task_default_queue": queue,
        }
    )
    create_execute_job_task(app)
    create_resume_job_task(app)
    node = worker_name(name)

    @task_prerun.connect(weak=False)
    def _tag_the_run(sender: Any = None, kwargs: Mapping[str, Any] | None = None, **_: Any) -> None:
        packed = (kwargs or {}).get("execute_job_args_packed")
        if packed is None:
            return
        run_id = unpack_value(packed).run_id
        with dg.DagsterInstance.get() as instance:
            instance.add_run_tags(run_id, {WORKER_TAG: node})

    return app


def broker_problem(url: str, timeout_s: float = 3.0) -> str | None:
    """Why the broker cannot be used (None: it answers)."""
    from kombu import Connection

    try:
        with Connection(url, connect_timeout=timeout_s) as connection:
            connection.ensure_connection(max_retries=1, timeout=timeout_s)
    except Exception as err:  # kombu raises the transport's own errors
        return f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}".strip()
    return None


def worker_problems(settings: Settings, environ: Mapping[str, str] = os.environ) -> list[str]:
    """What keeps runs from going to workers, each with its remedy: checked by `rag-eval worker`
    before it starts and by a backfill before any run is queued."""
    workers, storage = settings.workers, settings.storage
    if workers is None:
        return [
            "no workers section in the configuration file: add workers: {launcher: celery} "
            "(docs/deployment.md)"
        ]
    problems = []
    if not storage.uses_postgres(environ):
        problems.append(
            "workers need the instance on PostgreSQL (SQLite lives on one machine, and workers starting "
            "together race on its migrations): set storage.instance: postgres and export "
            f"{storage.postgres_url_env}"
        )
    if not storage.folder:
        problems.append(
            "workers need storage.folder: the artifacts, indexes and cache every worker and the daemon "
            "read, on a filesystem they all mount"
        )
    elif not os.path.isdir(storage.folder):
        problems.append(
            f"storage.folder {storage.folder} does not exist on this machine: mount the shared folder "
            "there (every worker reads and writes the same artifacts)"
        )
    url = environ.get(workers.broker_env)
    if not url:
        problems.append(f"{workers.broker_env} is not set: export the broker's URL (redis://host:6379/0)")
    else:
        problem = broker_problem(url)
        if problem is not None:
            problems.append(
                f"the broker in {workers.broker_env} does not answer ({problem}): start Redis there, "
                f"or fix {workers.broker_env}"
            )
    return problems


def run_worker(broker: str, queue: str, name: str) -> None:
    """A worker in the foreground until stopped: one run at a time, taken from ``queue``."""
    app = worker_app(broker, queue, name)
    os.environ.setdefault("FORKED_BY_MULTIPROCESSING", "1")
    app.worker_main(
        [
            "worker",
            "--hostname",
            worker_name(name),
            "--queues",
            queue,
            "--concurrency",
            "1",
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
        ]
    )
