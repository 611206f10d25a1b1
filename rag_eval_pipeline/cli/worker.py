"""`rag-eval worker --name NAME`: a Celery worker in the foreground, taking runs from the
broker's queue and executing them against the shared instance (PostgreSQL) and storage folder;
refused in one line, before it starts, where it could not work."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rag_eval_pipeline.cli.context import instance_of, settings_of
from rag_eval_pipeline.cli.errors import CommandError
from rag_eval_pipeline.instance.location import dagster_home_path


def handle(args: argparse.Namespace) -> int:
    from rag_eval_pipeline.instance.workers import run_worker, worker_name, worker_problems

    settings = settings_of(args)
    problems = worker_problems(settings)
    if problems:
        raise CommandError(problems[0])
    assert settings.workers is not None
    instance_of(args).dispose()  # this machine's home, made: the same database, folder and launcher
    # the run's code location on this worker reads the same configuration and instance
    os.environ["DAGSTER_HOME"] = str(dagster_home_path(args.dagster_home).resolve())
    if args.config:
        os.environ["RAG_EVAL_CONFIG"] = str(Path(args.config).resolve())
    queue = args.queue or settings.workers.queue
    print(f"worker {worker_name(args.name)}: taking runs from queue {queue} (Ctrl-C stops it)", flush=True)
    run_worker(os.environ[settings.workers.broker_env], queue, args.name)
    return 0
