"""Instances of either storage for the tests that run on both: Dagster's test instance on
SQLite, or rag-eval's own on a fresh PostgreSQL database (as `rag-eval` writes and opens it)."""

import contextlib
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from rag_eval_pipeline.instance.home import InstanceStorage, open_instance

PG_VARIABLE = "DAGSTER_PG_URL"


def storage_params() -> list:
    """SQLite on the fast path; PostgreSQL (a service) in the slow set."""
    return ["sqlite", pytest.param("postgres", marks=pytest.mark.slow)]


@contextlib.contextmanager
def instance_on(
    storage: str, folder: Path, request: pytest.FixtureRequest, monkeypatch
) -> Iterator[dg.DagsterInstance]:
    folder.mkdir(parents=True, exist_ok=True)
    if storage == "sqlite":
        with dg.instance_for_test(temp_dir=str(folder)) as instance:
            yield instance
        return
    from rag_eval_pipeline_tests.conftest import fresh_database

    monkeypatch.setenv(PG_VARIABLE, fresh_database(request.getfixturevalue("postgres_server")))
    instance = open_instance(str(folder), InstanceStorage(PG_VARIABLE, required=True))
    try:
        yield instance
    finally:
        instance.dispose()
