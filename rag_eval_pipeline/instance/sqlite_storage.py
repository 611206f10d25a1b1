"""The home's SQLite history, its connections kept while this process executes a run.

Dagster's SQLite storages create an engine and open a connection for every read and every write
(SQLAlchemy's ``NullPool``), and check the index's tables with one more on each dynamic-partition
lookup: an offline run of 500 questions x 3 models made 1,735 connections for its 555 events,
about a third of its time. While a run executes in this process (``connections_kept``), each
database keeps one engine and its connection, and all are closed when the run ends, so between
runs the files are as Dagster leaves them (no connection left open on a home that `dagster dev`,
another command or a test shares). A new run's database is copied from a template made once per
home and Dagster version by Dagster's own init (a dotfile beside the run databases, which Dagster's
``*.db`` globs never see) instead of creating and stamping its schema anew: nothing of it lives
outside the home, so a process killed with -9 leaves nothing behind. Same files, same schema, same
WAL journal, same lock around the event log's connections.

Only the instance a ``rag-eval`` command opens on a home's SQLite uses these classes (see
``instance.home``); a team's own storage in ``dagster.yaml`` is left as it is.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
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
from sqlalchemy.exc import SQLAlchemyError

from rag_eval_pipeline.common.processes import process_alive

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
        self._template_lock = threading.Lock()
        super().__init__(base_dir, inst_data)
        # connections closed when the instance is disposed or collected, or the process exits
        # without disposing it
        self._release = weakref.finalize(self, self.kept.release)

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
        staged = path.with_name(f".{path.name}.{os.getpid()}.new")
        try:
            with self._template_lock:
                template = self._template()
            shutil.copyfile(template, staged)  # checkpointed and closed: the file is the database
            os.link(staged, path)  # never over a database another process created meanwhile
            return True
        except (OSError, sqlite3.Error, SQLAlchemyError):  # the run's database by Dagster's own init
            return False
        finally:
            staged.unlink(missing_ok=True)

    def _template(self) -> Path:
        """This home's empty run database for this Dagster version, made by Dagster's own init
        the first time a run needs it (by whichever process comes first: it is linked into place
        whole, never over another's) and stamped with the schema revision every copy carries."""
        folder = Path(self._base_dir)
        template = folder / f"{TEMPLATE_PREFIX}{dg.__version__}.db"
        if template.is_file() and _stamped(template):
            return template
        template.unlink(missing_ok=True)  # damaged (cut, overwritten): made again below
        building = folder / f"{TEMPLATE_PREFIX}{dg.__version__}.{os.getpid()}{BUILDING_SUFFIX}"
        _remove_abandoned(folder)
        try:
            engine = create_engine(f"sqlite:///{building}")
            try:
                super()._initdb(engine)
            finally:
                engine.dispose()
            with contextlib.closing(sqlite3.connect(building)) as connection:
                connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            with contextlib.suppress(FileExistsError):  # another process's, equal: kept
                os.link(building, template)
        finally:
            for leftover in (building, *(building.with_name(building.name + s) for s in SIDECARS)):
                leftover.unlink(missing_ok=True)
        return template

    def dispose(self) -> None:
        super().dispose()
        self._release()


def _stamped(database: Path) -> bool:
    """Whether a database opens and carries Dagster's schema revision (a template's last step)."""
    try:
        # not read-only: a read-only reader of a WAL database leaves its -wal and -shm behind
        with contextlib.closing(sqlite3.connect(database)) as connection:
            return connection.execute("SELECT version_num FROM alembic_version").fetchone() is not None
    except sqlite3.Error:
        return False


TEMPLATE_PREFIX = ".run-database-template-"  # a dotfile: Dagster's globs of *.db never list it
BUILDING_SUFFIX = ".building"


SIDECARS = ("-wal", "-shm", "-journal")  # the files SQLite keeps beside a database


def _database_of(name: str) -> str:
    """The database a file belongs to: itself, or the one whose journal, WAL or shared memory
    it is (a template being built has a rollback journal while Dagster creates its tables)."""
    return next((name.removesuffix(s) for s in SIDECARS if name.endswith(s)), name)


def _remove_abandoned(folder: Path) -> None:
    """Templates of another Dagster version, and half-built ones of processes that died (kill -9
    while Dagster's init ran): a home keeps one template, never leftovers."""
    for path in folder.glob(f"{TEMPLATE_PREFIX}*"):
        name = _database_of(path.name)
        if BUILDING_SUFFIX in name:
            pid = name.removesuffix(BUILDING_SUFFIX).rsplit(".", 1)[-1]
            if pid.isdigit() and (int(pid) == os.getpid() or process_alive(int(pid))):
                continue
        elif name == f"{TEMPLATE_PREFIX}{dg.__version__}.db":
            continue
        path.unlink(missing_ok=True)


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
