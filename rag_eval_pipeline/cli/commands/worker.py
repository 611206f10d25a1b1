"""`worker`: a Celery worker of this configuration."""

from __future__ import annotations

from rag_eval_pipeline.cli.commands import Commands, Handler


def register(commands: Commands) -> None:
    worker = commands.add_parser(
        "worker",
        help="a Celery worker: takes runs from the broker and executes them (workers: in the file)",
        description="""Starts a Celery worker in the foreground on this configuration: the instance on
        PostgreSQL, storage.folder mounted, the broker in workers.broker_env. It takes one run at a time from
        its queue and tags it rag_eval/worker with its name and host.""",
    )
    worker.add_argument("--name", required=True, help="this worker's name (its runs are tagged with it)")
    worker.add_argument("--queue", help="the queue to take runs from (default: workers.queue)")
    worker.set_defaults(handler=Handler("worker"))
