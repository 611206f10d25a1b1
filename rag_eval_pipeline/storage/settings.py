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
