"""What the configuration says about storage: the instance on SQLite or PostgreSQL, and the
folder of artifacts, indexes, the cache and the history."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import Field

from rag_eval_pipeline.common.settings import Strict


class StorageSettings(Strict):
    """Where the Dagster instance keeps runs, events, schedules and pools, and where every
    artifact, index, the LLM cache and the history live: a team's deployment puts the first in
    PostgreSQL and the second on storage every worker reaches."""

    instance: Literal["auto", "sqlite", "postgres"] = Field(
        default="auto",
        description="auto: PostgreSQL when the postgres_url_env variable is set, else SQLite inside "
        "DAGSTER_HOME; sqlite; postgres (the pip extra [postgres])",
    )
    postgres_url_env: str = Field(
        default="DAGSTER_PG_URL", description="the variable holding the PostgreSQL URL (never the file)"
    )
    folder: str | None = Field(
        default=None,
        description="artifacts, indexes, the LLM cache and the history; null: DAGSTER_HOME/storage",
    )

    def uses_postgres(self, environ: Mapping[str, str]) -> bool:
        """The one rule for which storage the instance has."""
        return self.instance == "postgres" or (
            self.instance == "auto" and bool(environ.get(self.postgres_url_env))
        )


class WorkerSettings(Strict):
    """Runs on Celery workers over Redis instead of the daemon's machine: the instance's run
    launcher queues each run to the broker, and every `rag-eval worker` (on any machine with the
    same configuration, the instance on PostgreSQL and ``storage.folder`` mounted) takes runs
    from its queue."""

    launcher: Literal["celery"] = "celery"
    broker_env: str = Field(
        default="RAG_EVAL_BROKER_URL",
        description="the variable holding the Redis URL, the broker and the result backend (never the file)",
    )
    queue: str = Field(
        default="rag_eval",
        pattern=r"^[A-Za-z0-9_.-]+$",
        description="the queue runs go to (a run tagged dagster-celery/queue goes to that one)",
    )
