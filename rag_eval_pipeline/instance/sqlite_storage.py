"""The home's SQLite history, its connections kept while this process executes a run.

Dagster's SQLite storages create an engine and open a connection for every read and every write
(SQLAlchemy's ``NullPool``), and check the index's tables with one more on each dynamic-partition
lookup: an offline run of 500 questions x 3 models made 1,735 connections for its 555 events,
about a third of its time. While a run executes in this process (``connections_kept``), each
database keeps one engine and its connection, and all are closed when the run ends, so between
runs the files are as Dagster leaves them (no connection left open on a home that `dagster dev`,
another command or a test shares). A new run's database is copied from one made once per process
by Dagster's own init instead of creating and stamping its schema anew. Same files, same schema,
same WAL journal, same lock around the event log's connections.

Only the instance a ``rag-eval`` command opens on a home's SQLite uses these classes (see
``instance.home``); a team's own storage in ``dagster.yaml`` is left as it is.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tempfile
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
from dagster._core.storage.event_log.sqlite.sqlite_event_log import (
    INDEX_SHARD_NAME,
    SQLITE_BUSY_TIMEOUT_SECONDS,
    SqliteEventLogStorage,
)
from dagster._core.storage.runs.sqlite.sqlite_run_storage import SqliteRunStorage
from dagster._core.storage.schedules.sqlite.sqlite_schedule_storage import SqliteScheduleStorage
from dagster._core.storage.sqlite_storage import (
    DagsterSqliteStorage,
    _event_logs_directory,
    _runs_directory,
    _schedule_directory,
)
from dagster._serdes import ConfigurableClassData
from sqlalchemy import create_engine
from sqlalchemy.engine import Connection, Engine

STOCK_MODULE, STOCK_CLASS = "dagster._core.storage.sqlite_storage", "DagsterSqliteStorage"


class KeptEngines:
    """Engines by database, kept only while a run executes here (``open``/``close`` nest; a run
    touches its own database and the index), all closed when the outermost ``close`` comes."""

    def __init__(self) -> None:
        self._engines: dict[str, Engine] = {}
        self._lock = threading.Lock()
        self._depth = 0

    def open(self) -> None:
        with self._lock:
            self._depth += 1

    def close(self) -> None:
        with self._lock:
            self._depth = max(0, self._depth - 1)
            if self._depth == 0:
                self._dispose()

    def engine(self, url: str, **connect_args) -> Engine | None:
        """The database's kept engine, or None when no run is executing (connect as Dagster does)."""
        with self._lock:
            if self._depth == 0:
                return None
            engine = self._engines.get(url)
            if engine is None:
                # one connection at a time (the event log's lock, or the pool's checkout), any thread
                arguments = {"check_same_thread": False, **connect_args}
                engine = create_engine(url, pool_size=1, connect_args=arguments)
                self._engines[url] = engine
            return engine

    def release(self) -> None:
        with self._lock:
            self._depth = 0
            self._dispose()

    def _dispose(self) -> None:
        for engine in self._engines.values():
            engine.dispose()
        self._engines.clear()


class KeptConnectionEventLogStorage(SqliteEventLogStorage):
    """Dagster's sharded SQLite event log (a database per run, an index database of asset
    events): while a run executes, each database's engine kept instead of made per statement."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None):
        self.kept = KeptEngines()
        self._tables: set[str] = set()
        self._templates: list[Path] = []  # at most one: made on the first new run
        self._template_lock = threading.Lock()
        super().__init__(base_dir, inst_data)
        # connections closed and the template removed when the instance is disposed or collected,
        # or the process exits without disposing it
        self._release = weakref.finalize(self, _release, self.kept, self._templates)

    @contextlib.contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        engine = self.kept.engine(self.conn_string_for_shard(shard), timeout=SQLITE_BUSY_TIMEOUT_SECONDS)
        if engine is None:
            with super()._connect(shard) as connection:
                yield connection
            return
        with self._db_lock:
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as connection, connection.begin():
                yield connection

    def has_table(self, table_name: str) -> bool:
        engine = self.kept.engine(self.conn_string_for_shard(INDEX_SHARD_NAME))
        if engine is None:
            return super().has_table(table_name)
        if table_name in self._tables:  # a table, once there, stays (Dagster never drops one)
            return True
        # a connection of its own, outside the storage's lock: asked while another is open
        with engine.connect() as connection:
            present = bool(connection.dialect.has_table(connection, table_name))
        if present:
            self._tables.add(table_name)
        return present

    def _initdb(self, engine: Engine, for_index_shard: bool = False) -> None:
        """A new run's database copied from this process's template (Dagster's schema, created
        and stamped once); an existing one, the index, or a failed copy: Dagster's own init."""
        path = Path(engine.url.database or "")
        if for_index_shard or path.stem == INDEX_SHARD_NAME or path.exists() or not self._copy_template(path):
            super()._initdb(engine, for_index_shard)

    def _copy_template(self, path: Path) -> bool:
        with self._template_lock:
            if not self._templates or not self._templates[0].is_file():
                self._templates[:] = [self._make_template()]
        staged = path.with_name(f".{path.name}.{os.getpid()}.new")
        try:
            shutil.copyfile(self._templates[0], staged)  # checkpointed and closed: the file is the database
            os.link(staged, path)  # never over a database another process created meanwhile
            return True
        except OSError:
            return False
        finally:
            staged.unlink(missing_ok=True)

    def _make_template(self) -> Path:
        """An empty run database made by Dagster's own init, in WAL mode, outside the history."""
        template = Path(tempfile.mkdtemp(prefix="rag-eval-run-db-")) / "template.db"
        engine = create_engine(f"sqlite:///{template}")
        try:
            super()._initdb(engine)
        finally:
            engine.dispose()
        with contextlib.closing(sqlite3.connect(template)) as connection:
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return template

    def dispose(self) -> None:
        super().dispose()
        self._release()


def _release(kept: KeptEngines, templates: list[Path]) -> None:
    kept.release()
    for template in templates:
        template.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            template.parent.rmdir()
    templates.clear()


class KeptConnectionRunStorage(SqliteRunStorage):
    """Dagster's SQLite run storage: while a run executes, its engine kept."""

    def __init__(self, conn_string: str, inst_data: ConfigurableClassData | None = None):
        super().__init__(conn_string, inst_data)
        self.kept = KeptEngines()
        self._release = weakref.finalize(self, self.kept.release)

    @contextlib.contextmanager
    def connect(self) -> Iterator[Connection]:
        engine = self.kept.engine(self._conn_string)
        if engine is None:
            with super().connect() as connection:
                yield connection
            return
        with engine.connect() as connection, connection.begin():
            yield connection

    def dispose(self) -> None:
        super().dispose()
        self._release()


class KeptConnectionSqliteStorage(DagsterSqliteStorage):
    """The home's SQLite storage (runs, events, schedules in the same folders as Dagster's
    default) with the run and event storages above."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None):
        self.base_dir = base_dir
        self._run_storage = KeptConnectionRunStorage.from_local(_runs_directory(base_dir))
        self._event_log_storage = KeptConnectionEventLogStorage(_event_logs_directory(base_dir))
        self._schedule_storage = SqliteScheduleStorage.from_local(_schedule_directory(base_dir))
        self._inst_data = inst_data
        super(DagsterSqliteStorage, self).__init__()

    @classmethod
    def from_config_value(cls, inst_data, config_value):  # noqa: ANN001 (Dagster's signature)
        return cls.from_local(inst_data=inst_data, **config_value)


def kept_connection_storage(storage_data: ConfigurableClassData | None) -> ConfigurableClassData | None:
    """The storage a command opens: the home's stock SQLite storage as the class above (same
    folders, same settings); any other storage (PostgreSQL, a team's own) as it is."""
    stock = storage_data is not None and (storage_data.module_name, storage_data.class_name) == (
        STOCK_MODULE,
        STOCK_CLASS,
    )
    if storage_data is None or not stock:
        return storage_data
    return ConfigurableClassData(__name__, KeptConnectionSqliteStorage.__name__, storage_data.config_yaml)


@contextlib.contextmanager
def connections_kept(instance: dg.DagsterInstance) -> Iterator[None]:
    """While a run executes in this process: its databases' connections kept, closed after."""
    kept = [
        storage.kept
        for storage in (instance.event_log_storage, instance.run_storage)
        if isinstance(storage, KeptConnectionEventLogStorage | KeptConnectionRunStorage)
    ]
    for engines in kept:
        engines.open()
    try:
        yield
    finally:
        for engines in kept:
            engines.close()
