"""Where the Dagster instance lives, its ``dagster.yaml`` (SQLite inside the home, or PostgreSQL
for a team's deployment), and opening it safely: created and migrated once, under a lock (a file
lock in the home; on PostgreSQL an advisory lock, which holds across machines), before anything
else opens it; runs of a killed ``rag-eval`` marked failed and their pool slots freed; a damaged
settings file said in one line."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import socket
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from rag_eval_pipeline.common.files import locked
from rag_eval_pipeline.common.processes import process_alive
from rag_eval_pipeline.defs.names import ANSWER_MODEL_PARTITIONS, CLI_HOST_TAG, CLI_PID_TAG, PARTITION_TAG
from rag_eval_pipeline.instance.daemon_pace import BACKFILL_INTERVAL_S, DEQUEUE_INTERVAL_S
from rag_eval_pipeline.instance.location import (
    BACKUP_SUFFIX,
    HISTORY_FILES,
    INSTANCE_FILE,
    INSTANCE_HEADER,
    dagster_home_path,
    damaged_history,
    says_postgres,
)
from rag_eval_pipeline.storage.settings import StorageSettings, WorkerSettings

CREATION_LOCK = ".rag-eval-instance.lock"
RUN_MONITORING = (
    "# Run monitoring: the daemon (dagster dev, or a deployment's) fails runs whose worker died\n"
    "# instead of leaving them STARTED forever, and frees the pool slots (LLM calls in flight) of\n"
    "# finished runs. Runs of a killed `rag-eval` are marked failed by the next `rag-eval` command.\n"
    "run_monitoring:\n  enabled: true\n  start_timeout_seconds: 180\n  max_resume_run_attempts: 0\n"
    "  poll_interval_seconds: 30\n  free_slots_after_run_end_seconds: 60\n"
)
LOG_LEVEL = (
    "# Runs store INFO and above: progress, warnings, errors. Dagster's own DEBUG lines (a line per\n"
    "# file an IO manager reads or writes) were a third of a run's stored events, each a database\n"
    "# write; set DEBUG to see them.\n"
    "python_logs:\n  python_log_level: INFO\n"
)
RUN_COORDINATOR = (
    "# The daemon moves a backfill on every 5 s (Dagster's own interval is 30 s, paid at each\n"
    "# crossing from the knowledge base to the models to the comparison) and starts a queued\n"
    "# run within 1 s (Dagster's default: 5 s). Raise them for a busy shared database.\n"
    "run_coordinator:\n  module: rag_eval_pipeline.instance.daemon_pace\n  class: PacedRunCoordinator\n"
    f"  config:\n    backfill_interval_seconds: {BACKFILL_INTERVAL_S}\n"
    f"    dequeue_interval_seconds: {DEQUEUE_INTERVAL_S}\n"
)
POSTGRES_ADVISORY_KEY = 7_261_946_051  # the creation lock's id among a database's advisory locks
RUN_QUEUE = (
    "# One run at a time per answer model: a second evaluation of the same partition waits in the\n"
    "# queue instead of interleaving its writes (and its paid calls) with the first.\n"
    "concurrency:\n  runs:\n    tag_concurrency_limits:\n"
    f"      - key: {PARTITION_TAG}\n        value: {{applyLimitPerUniqueValue: true}}\n        limit: 1\n"
)


class InstanceSettingsError(ValueError):
    """The instance's ``dagster.yaml`` cannot be read, or is not what the configuration asks
    for: named, with what to do."""


@dataclass(frozen=True)
class InstanceStorage:
    """What the instance's storage is, resolved once from the ``storage`` settings: PostgreSQL
    through the variable ``postgres_url_env`` (its URL never written to a file), else SQLite in
    the home; ``required`` when the settings named one (auto accepts the home's own); ``folder``
    for artifacts, indexes, the cache and the history."""

    postgres_url_env: str | None = None
    folder: str | None = None
    required: bool = False
    broker_env: str | None = None  # runs go to Celery workers through this variable's broker
    queue: str = "rag_eval"

    @classmethod
    def of(
        cls,
        settings: StorageSettings,
        environ: Mapping[str, str] = os.environ,
        workers: WorkerSettings | None = None,
    ) -> InstanceStorage:
        postgres = settings.uses_postgres(environ)
        return cls(
            settings.postgres_url_env if postgres else None,
            settings.folder,
            settings.instance != "auto",
            workers.broker_env if workers is not None else None,
            workers.queue if workers is not None else "rag_eval",
        )

    @property
    def postgres(self) -> bool:
        return self.postgres_url_env is not None

    def url(self) -> str:
        url = os.environ.get(self.postgres_url_env or "")
        if not url:
            raise InstanceSettingsError(
                f"the instance's storage is PostgreSQL but {self.postgres_url_env} is not set: export it "
                "(postgresql://user:password@host:5432/database), or set storage.instance: sqlite"
            )
        return url


SQLITE = InstanceStorage()


def _storage_settings(storage: InstanceStorage) -> str:
    if not storage.postgres:
        return "# Defaults: SQLite run, event and schedule storage inside this folder.\n"
    return (
        "# Runs, events, schedules and pools in PostgreSQL: every machine of the deployment shares\n"
        "# them. The URL is read from the environment, never written here.\n"
        f"storage:\n  postgres:\n    postgres_url:\n      env: {storage.postgres_url_env}\n"
    )


def _artifact_settings(storage: InstanceStorage) -> str:
    if not storage.folder:
        return ""
    return (
        "# Artifacts, indexes, the LLM cache and the history: a folder every worker reaches.\n"
        "local_artifact_storage:\n  module: dagster.core.storage.root\n  class: LocalArtifactStorage\n"
        f"  config:\n    base_dir: {storage.folder}\n"
    )


def _launcher_settings(storage: InstanceStorage) -> str:
    """The run launcher: Celery workers over the broker the variable names, when configured."""
    if storage.broker_env is None:
        return ""
    return (
        "# Runs go to Celery workers (`rag-eval worker`) through the broker and result backend the\n"
        "# variable names; a worker that died is noticed by its health check (docs/deployment.md).\n"
        f"run_launcher:\n  module: rag_eval_pipeline.instance.workers\n  class: WorkerRunLauncher\n"
        f"  config:\n    broker:\n      env: {storage.broker_env}\n"
        f"    backend:\n      env: {storage.broker_env}\n"
        f"    default_queue: {storage.queue}\n"
    )


def default_instance_settings(storage: InstanceStorage = SQLITE) -> str:
    """The ``dagster.yaml`` rag-eval writes: SQLite storage in the folder or PostgreSQL from a
    variable, telemetry off, run monitoring on, one queued run per answer model at a time, the
    daemon paced for backfills."""
    return (
        INSTANCE_HEADER
        + _storage_settings(storage)
        + _artifact_settings(storage)
        + _launcher_settings(storage)
        + "# Telemetry is off because evaluations often run offline; set true to help Dagster.\n"
        + "telemetry:\n  enabled: false\n"
        + RUN_MONITORING
        + RUN_QUEUE
        + RUN_COORDINATOR
        + LOG_LEVEL
    )


def resolve_dagster_home(explicit: str | None = None, storage: InstanceStorage = SQLITE) -> Path:
    """DAGSTER_HOME from the argument, then the environment, then ./.dagster_home (created, with
    the instance settings above; a file written earlier by us gains what it lacks). A home whose
    storage is not the one the settings require is refused: its runs would be elsewhere."""
    home = dagster_home_path(explicit)
    home.mkdir(parents=True, exist_ok=True)
    config = home / INSTANCE_FILE
    if not config.exists():
        config.write_text(default_instance_settings(storage))
        return home
    text = config.read_text(errors="replace")
    if storage.required and storage.postgres != says_postgres(text):
        has, wants = ("PostgreSQL", "SQLite") if says_postgres(text) else ("SQLite", "PostgreSQL")
        raise InstanceSettingsError(
            f"{config} keeps this instance in {has}, and the configuration asks for {wants} "
            "(storage.instance): use another --dagster-home for it, or set storage.instance to match"
        )
    if text.startswith(INSTANCE_HEADER):
        additions = [
            part
            for key, part in (
                ("run_monitoring", RUN_MONITORING),
                ("concurrency:", RUN_QUEUE),
                ("run_coordinator", RUN_COORDINATOR),
                ("python_logs", LOG_LEVEL),
                ("run_launcher", _launcher_settings(storage)),
            )
            if part and key not in text  # (no launcher without workers: nothing to add)
        ]
        if additions:
            config.write_text(text + "".join(additions))
    return home


@contextlib.contextmanager
def _home_lock(home: Path) -> Iterator[None]:
    """Every process on this machine that opens the home, one at a time (a process that
    waits says so on stderr, with who holds the home)."""
    with locked(
        home / CREATION_LOCK, "opening the instance", waiting=lambda said: print(said, file=sys.stderr)
    ):
        yield


@contextlib.contextmanager
def _database_lock(url: str) -> Iterator[None]:
    """Every process of the deployment, on any machine, one at a time: an advisory lock of the
    database itself (released by the server if the process dies)."""
    import psycopg2  # dagster-postgres brings it

    connection = psycopg2.connect(url)
    try:
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", (POSTGRES_ADVISORY_KEY,))
        yield
    finally:
        connection.close()  # ends the session, and with it the lock


def _instance_of(home: Path) -> dg.DagsterInstance:
    """The instance its dagster.yaml describes; on the home's own SQLite, with connections kept
    for this process (instance.sqlite_storage: the same files, a quarter of a run's time)."""
    from dagster._core.instance.ref import InstanceRef

    from rag_eval_pipeline.instance.sqlite_storage import kept_connection_storage

    ref = InstanceRef.from_dir(str(home))
    return dg.DagsterInstance.from_ref(ref._replace(storage_data=kept_connection_storage(ref.storage_data)))


def _locked_open(home: Path, storage: InstanceStorage) -> dg.DagsterInstance:
    """The instance, created and migrated while holding the creation lock: two processes
    creating the same new instance at once (the CLI and `dagster dev`) could otherwise leave
    SQLite's schedule storage with two alembic heads, or race PostgreSQL's schema creation."""
    with _home_lock(home), _database_lock(storage.url()) if storage.postgres else contextlib.nullcontext():
        # checked under the lock: a history another process is creating right now is briefly
        # empty, which is not damage
        damaged = [] if storage.postgres else damaged_history(home)
        if damaged:
            raise InstanceSettingsError("; ".join(damaged))
        instance = _instance_of(home)
        # touch every storage, so each is created and migrated now, under the lock
        instance.get_runs(limit=1)
        instance.get_dynamic_partitions(ANSWER_MODEL_PARTITIONS)
        instance.all_instigator_state()
        return instance


def prepare_instance(dagster_home: str | None = None, storage: InstanceStorage = SQLITE) -> Path:
    """Creates the instance (folder, settings, every storage) before anything else opens it:
    what to call before starting `dagster dev` on a new home."""
    home = resolve_dagster_home(dagster_home, storage)
    open_instance(str(home), storage).dispose()
    return home


def relax_sqlite_sync() -> None:
    """SQLite databases this process opens commit without waiting for the disk each time
    (``synchronous=NORMAL``; Dagster's run and event storage is in WAL mode already): a crash of
    the machine, not of the process, may lose the last events, never corrupt the database. A run
    writes hundreds of events, each a commit: about a quarter of an offline run's time. Local
    instances only: PostgreSQL is untouched. Registered once per process."""
    import sqlalchemy

    if getattr(relax_sqlite_sync, "done", False):
        return

    @sqlalchemy.event.listens_for(sqlalchemy.engine.Engine, "connect")
    def _relaxed(connection, record) -> None:  # noqa: ANN001 (SQLAlchemy's own hook signature)
        if type(connection).__module__.startswith("sqlite3"):
            cursor = connection.cursor()
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

    relax_sqlite_sync.done = True  # type: ignore[attr-defined]


def _last_write_ns(path: Path) -> int:
    """When the database last changed: its file or its write-ahead log (WAL mode)."""
    wal = path.with_name(path.name + "-wal")
    return max(path.stat().st_mtime_ns, wal.stat().st_mtime_ns if wal.is_file() else 0)


def back_up_history(home: Path) -> None:
    """A consistent copy of each healthy history file beside it (SQLite's backup, not a file
    copy): what a damaged one is restored from."""
    import sqlite3

    for name in HISTORY_FILES:
        path = home / name
        if not path.is_file() or path.stat().st_size == 0:
            continue
        backup = path.with_name(path.name + BACKUP_SUFFIX)
        if backup.is_file() and backup.stat().st_mtime_ns >= _last_write_ns(path):
            continue  # nothing written since the copy: a large history is not copied per command
        try:
            with (
                contextlib.closing(sqlite3.connect(str(path), timeout=1)) as source,
                contextlib.closing(sqlite3.connect(str(backup.with_name(backup.name + ".tmp")))) as target,
            ):
                source.backup(target)
            backup.with_name(backup.name + ".tmp").replace(backup)
        except sqlite3.Error:
            continue  # busy or locked: the previous copy stays


def open_instance(dagster_home: str | None = None, storage: InstanceStorage = SQLITE) -> dg.DagsterInstance:
    home = resolve_dagster_home(dagster_home, storage)
    os.environ["DAGSTER_HOME"] = str(home)  # so runs launched from here and the UI share it
    # the home's own file decides from here on (a mismatch with what was required was refused)
    storage = _home_storage((home / INSTANCE_FILE).read_text(errors="replace"))
    if storage.postgres and importlib.util.find_spec("dagster_postgres") is None:
        raise InstanceSettingsError(
            "the instance's storage is PostgreSQL: pip install 'rag-eval-pipeline[postgres]'"
        )
    if not storage.postgres:
        relax_sqlite_sync()
    try:
        instance = _locked_open(home, storage)
    except InstanceSettingsError:
        raise
    except Exception as err:  # a damaged dagster.yaml: yaml, schema or storage configuration
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        if not storage.postgres and _is_database_error(err):  # the history's tables, not the file
            copies = ", ".join(name + BACKUP_SUFFIX for name in HISTORY_FILES)
            raise InstanceSettingsError(
                f"the run history of {home} cannot be read ({first}): restore its files from the "
                f"copies taken as commands opened it ({copies}), or move history/ aside and evaluate again"
            ) from err
        raise InstanceSettingsError(
            f"{home / INSTANCE_FILE} is unreadable ({type(err).__name__}: {first}): fix it, or delete "
            "it and rag-eval writes a default one (runs and stored results stay)"
        ) from err
    if not storage.postgres:
        back_up_history(home)
    fail_runs_of_dead_cli_processes(instance)
    return instance


def _is_database_error(err: BaseException) -> bool:
    """Whether opening failed in the database itself (SQLAlchemy's or sqlite3's errors)."""
    import sqlite3

    import sqlalchemy.exc

    return isinstance(err, (sqlalchemy.exc.DatabaseError, sqlite3.Error))


def _home_storage(text: str) -> InstanceStorage:
    """What a home's own dagster.yaml keeps its instance in (written by us, or the team's): for
    PostgreSQL from a variable, that variable, for the creation lock."""
    import yaml

    if not says_postgres(text):
        return SQLITE
    with contextlib.suppress(yaml.YAMLError, AttributeError, TypeError):
        url = (yaml.safe_load(text) or {}).get("storage", {}).get("postgres", {}).get("postgres_url")
        if isinstance(url, dict) and url.get("env"):
            return InstanceStorage(url["env"])
    return SQLITE  # a literal URL or separate fields: the home lock alone (one machine) guards it


UNFINISHED = [dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED]


def _free_slots(instance: dg.DagsterInstance, run_id: str) -> None:
    """The pool slots a run that will not finish held (its calls in flight, its partition)."""
    if instance.event_log_storage.supports_global_concurrency_limits:
        instance.event_log_storage.free_concurrency_slots_for_run(run_id)


def fail_own_unfinished_runs(reason: str) -> list[str]:
    """Runs this process left unfinished (it was interrupted): marked failed now, with why."""
    if "DAGSTER_HOME" not in os.environ:
        return []
    with dg.DagsterInstance.get() as instance:
        runs = instance.get_runs(
            dg.RunsFilter(
                statuses=UNFINISHED, tags={CLI_HOST_TAG: socket.gethostname(), CLI_PID_TAG: str(os.getpid())}
            )
        )
        for run in runs:
            instance.report_run_failed(run, reason)
            _free_slots(instance, run.run_id)
        return [run.run_id for run in runs]


def fail_runs_of_dead_cli_processes(instance: dg.DagsterInstance) -> list[str]:
    """Runs this machine's `rag-eval` created in-process and left unfinished because its process
    died (kill -9, a closed terminal), before or after they started: marked failed, so the UI
    and `gate` stop treating them as running. Returns their run ids."""
    host = socket.gethostname()
    unfinished = instance.get_runs(dg.RunsFilter(statuses=UNFINISHED, tags={CLI_HOST_TAG: host}))
    failed = []
    for run in unfinished:
        pid = int(run.tags.get(CLI_PID_TAG, "0") or 0)
        if pid and pid != os.getpid() and not process_alive(pid):
            instance.report_run_failed(run, f"the rag-eval process {pid} that ran it is gone (killed)")
            _free_slots(instance, run.run_id)
            failed.append(run.run_id)
    return failed
