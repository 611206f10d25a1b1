"""Where the Dagster instance lives, and what a reading command can learn of a local one without
importing Dagster (1.5 s before anything else; 3 s with its storage): whether it exists, and
the answer models registered in it, read from the SQLite asset index Dagster keeps them in.
Standard library only."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_eval_pipeline.common.files import way_back
from rag_eval_pipeline.defs.names import ANSWER_MODEL_PARTITIONS, JUDGE_SCORES, PARTITION_TAG, WORKER_TAG
from rag_eval_pipeline.metrics.freshness import FinishedRun
from rag_eval_pipeline.storage.history import StoredMaterialization

DEFAULT_DAGSTER_HOME = ".dagster_home"
INSTANCE_FILE = "dagster.yaml"
INSTANCE_HEADER = "# Dagster instance settings (https://docs.dagster.io/deployment/oss/dagster-yaml).\n"
# where a local instance's SQLite event storage keeps its asset index (dynamic partitions too)
ASSET_INDEX = Path("history") / "runs" / "index.db"
# keys of a dagster.yaml that put runs or events somewhere else than the home's SQLite files
OTHER_STORAGE = ("storage:", "run_storage:", "event_log_storage:")


# the SQLite schema (alembic's revision, as Dagster writes it in each history file) the queries
# of LocalHistory were written for: Dagster 1.13's. A home at another revision (a newer Dagster
# migrated it, an older one made it) is read through the opened instance, never guessed at.
SCHEMA_REVISIONS = frozenset({"29b539ebc72a"})


class DamagedHistoryError(ValueError):
    """A history file of the home is not a whole database: named, with the way back."""


class HistoryUnreadableError(RuntimeError):
    """A query of the SQLite files failed (a damaged table, a locked file): the files cannot say,
    which is not "nothing stored"; the caller asks the opened instance instead."""


def dagster_home_path(explicit: str | None = None) -> Path:
    """Where the instance is (the argument, else DAGSTER_HOME, else ./.dagster_home), unchanged."""
    return Path(explicit or os.environ.get("DAGSTER_HOME") or DEFAULT_DAGSTER_HOME).resolve()


def instance_exists(explicit: str | None = None) -> bool:
    """Whether a command that only reads has anything to read: a folder `rag-eval` or `dagster
    dev` has used (its instance file, run history or stored assets)."""
    home = dagster_home_path(explicit)
    return any((home / name).exists() for name in (INSTANCE_FILE, "history", "storage"))


def says_postgres(text: str) -> bool:
    return "postgres_url" in text or "postgres_db" in text


def local_history(explicit: str | None = None) -> LocalHistory | None:
    """The history of a local instance rag-eval set up (its own dagster.yaml, SQLite in the home),
    read without Dagster; None where only Dagster can say (PostgreSQL, a team's own storage
    settings, an index not created yet) or where a run is unfinished (its process may be dead,
    and opening the instance marks it failed): the caller opens the instance then. A damaged
    history file is refused, as opening the instance would refuse it."""
    home = dagster_home_path(explicit)
    try:
        settings = (home / INSTANCE_FILE).read_text(errors="replace")
    except OSError:
        return None
    own = settings.startswith(INSTANCE_HEADER) and not says_postgres(settings)
    if not own or any(line.startswith(OTHER_STORAGE) for line in settings.splitlines()):
        return None
    if not (home / ASSET_INDEX).is_file():
        return None
    damaged = damaged_history(home)
    if damaged:
        raise DamagedHistoryError("; ".join(damaged))
    try:
        if not all(schema_revision(home / f) in SCHEMA_REVISIONS for f in (ASSET_INDEX, HISTORY_FILES[0])):
            return None
        if _has_unfinished_runs(home / HISTORY_FILES[0]):
            return None
    except sqlite3.Error:
        return None
    return LocalHistory(home)


def schema_revision(database: Path) -> str | None:
    """The alembic revision Dagster recorded in a history file (None: none recorded)."""
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5)) as db:
        row = db.execute("SELECT version_num FROM alembic_version").fetchone()
    return row[0] if row else None


@dataclass(frozen=True)
class LocalHistory:
    """What a reading command asks of a local home, from the SQLite files Dagster keeps it in:
    the registered answer models, the run behind each asset's latest materialization, the newest
    finished run of a partition. Every query is read-only; one that fails (a damaged or missing
    table, a locked file) raises ``HistoryUnreadableError``, so "cannot read" is never read as
    "nothing stored" (the caller then asks the opened instance, which says what is wrong)."""

    home: Path

    def storage_directory(self) -> str:
        return str(self.home / "storage")  # Dagster's local artifact storage of an own dagster.yaml

    def _query(self, database: Path, query: str, parameters: tuple) -> list[tuple]:
        try:
            with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5)) as db:
                return db.execute(query, parameters).fetchall()
        except sqlite3.Error as err:  # damaged, missing a table, or locked
            raise HistoryUnreadableError(f"{database}: {err}") from err

    def registered_models(self) -> list[str] | None:
        rows = self._query(
            self.home / ASSET_INDEX,
            "SELECT partition FROM dynamic_partitions WHERE partitions_def_name = ? ORDER BY id",
            (ANSWER_MODEL_PARTITIONS,),
        )
        return [row[0] for row in rows]

    def latest_run(self, asset: str, partition: str | None) -> str | None:
        """The run of the asset's (partition's) newest materialization, as Dagster's
        ``fetch_materializations(limit=1)`` finds it."""
        query = (
            "SELECT run_id FROM event_logs WHERE dagster_event_type = 'ASSET_MATERIALIZATION' "
            "AND asset_key = ? AND (? IS NULL OR partition = ?) ORDER BY id DESC LIMIT 1"
        )
        rows = self._query(self.home / ASSET_INDEX, query, (json.dumps([asset]), partition, partition))
        return rows[0][0] if rows else None

    def _materializations(self, asset: str, condition: str, parameters: tuple) -> list[StoredMaterialization]:
        """The asset's materializations in the asset index that meet ``condition`` (SQL with
        placeholders, then its order), read as Dagster's own records would give them."""
        query = (
            f"SELECT {_RECORD_COLUMNS} FROM event_logs WHERE dagster_event_type = 'ASSET_MATERIALIZATION' "  # noqa: S608
            f"AND asset_key = ? AND {condition}"
        )
        rows = self._query(self.home / ASSET_INDEX, query, (json.dumps(asset.split("/")), *parameters))
        return [_materialization(row) for row in rows]

    def score_records(self, model: str | None, limit: int) -> list[StoredMaterialization]:
        """The newest ``judge_scores`` materializations (of ``model``), newest first, as
        Dagster's ``fetch_materializations`` finds them in the same index."""
        condition = "(? IS NULL OR partition = ?) ORDER BY id DESC LIMIT ?"
        return self._materializations(JUDGE_SCORES, condition, (model, model, limit))

    def run_score_records(self, run_id: str) -> list[StoredMaterialization]:
        """The ``judge_scores`` materializations of one run, oldest first."""
        return self._materializations(JUDGE_SCORES, "run_id = ? ORDER BY id", (run_id,))

    def materialization(self, asset: str, storage_id: int) -> StoredMaterialization | None:
        found = self._materializations(asset, "id = ?", (storage_id,))
        return found[0] if found else None

    def newest_finished_run(self, partition: str) -> FinishedRun | None:
        """The newest finished run of any job that evaluated this partition, and whether it
        succeeded (Dagster lists runs newest first by their row id)."""
        marks = ", ".join("?" for _ in FINISHED_STATUSES)
        query = (
            "SELECT r.run_id, r.status, w.value FROM runs r JOIN run_tags t ON t.run_id = r.run_id "  # noqa: S608
            "LEFT JOIN run_tags w ON w.run_id = r.run_id AND w.key = ? "
            f"WHERE t.key = ? AND t.value = ? AND r.status IN ({marks}) ORDER BY r.id DESC LIMIT 1"
        )
        parameters = (WORKER_TAG, PARTITION_TAG, partition, *FINISHED_STATUSES)
        rows = self._query(self.home / HISTORY_FILES[0], query, parameters)
        return FinishedRun(rows[0][0], rows[0][1] == "SUCCESS", rows[0][2]) if rows else None


_RECORD_COLUMNS = "id, run_id, asset_key, partition, event"


def _materialization(row: tuple) -> StoredMaterialization:
    """A row of the asset index as the record Dagster's own would give: the tags are those of
    the materialization inside the stored event (Dagster's serialized ``EventLogEntry``)."""
    storage_id, run_id, asset_key, partition, event = row
    data = json.loads(event).get("dagster_event") or {}
    materialization = (data.get("event_specific_data") or {}).get("materialization") or {}
    tags = dict(materialization.get("tags") or {})
    return StoredMaterialization(storage_id, run_id, "/".join(json.loads(asset_key)), partition, tags)


# the statuses of a run not finished (Dagster's DagsterRunStatus values)
UNFINISHED_STATUSES = ("NOT_STARTED", "QUEUED", "STARTING", "STARTED", "CANCELING")
FINISHED_STATUSES = ("SUCCESS", "FAILURE", "CANCELED")


def _has_unfinished_runs(runs_db: Path) -> bool:
    if not runs_db.is_file():
        return False
    with contextlib.closing(sqlite3.connect(f"file:{runs_db}?mode=ro", uri=True, timeout=5)) as db:
        marks = ", ".join("?" for _ in UNFINISHED_STATUSES)
        query = f"SELECT 1 FROM runs WHERE status IN ({marks}) LIMIT 1"  # noqa: S608 (placeholders only)
        return db.execute(query, UNFINISHED_STATUSES).fetchone() is not None


# the home's SQLite files whose loss loses what the UI shows: the runs, and the asset index
HISTORY_FILES = ("history/runs.db", "history/runs/index.db", "schedules/schedules.db")
BACKUP_SUFFIX = ".backup"  # a copy of a healthy history file, taken as a command opens the home
SQLITE_HEADER = b"SQLite format 3\x00"


def damaged_history(home: Path) -> list[str]:
    """Each SQLite file of a local home that exists but is not a whole database (empty, cut, or
    overwritten), named with what is lost and the way back: Dagster would otherwise re-create an
    empty one silently (the run history gone), or fail in a way that blames dagster.yaml."""
    import sqlite3

    problems = []
    for name in HISTORY_FILES:
        path = home / name
        if not path.is_file():
            continue
        mend = way_back(
            path,
            BACKUP_SUFFIX,
            "restore the copy taken by the last command that opened it (cp {backup} {path}; runs since "
            "then are lost)",
            "move it aside to start a new history",
        )
        what = "the runs and their logs" if "runs" in name else "the schedules' and sensors' state"
        damage = None
        if path.stat().st_size == 0:
            damage = "is empty (0 bytes)"
        else:
            with path.open("rb") as handle:
                header = handle.read(len(SQLITE_HEADER))
            if header != SQLITE_HEADER:
                damage = "is not a SQLite database (overwritten?)"
            else:
                try:
                    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
                        verdict = db.execute("PRAGMA quick_check").fetchone()[0]
                except sqlite3.DatabaseError as err:
                    verdict = str(err)
                if verdict != "ok":
                    damage = f"is damaged ({verdict[:80]})"
        if damage:
            problems.append(
                f"{path} {damage}: it holds {what}, which the UI shows; {mend}. Stored results under "
                "storage/ stay either way"
            )
    return problems


class FallbackHistory:
    """A local home's SQLite files asked first (no Dagster import), the opened instance from the
    first question they cannot answer on (``HistoryUnreadableError``: a damaged table, a locked
    file); where the instance cannot read it either, ``unreadable`` makes the one line said."""

    def __init__(
        self,
        local: LocalHistory,
        open_instance: Callable[[], Any],
        unreadable: Callable[[str], Exception],
    ) -> None:
        self._local, self._open, self._unreadable = local, open_instance, unreadable
        self._instance: Any = None

    def _ask(self, question: str, *arguments: Any) -> Any:
        why = ""
        if self._instance is None:
            try:
                return getattr(self._local, question)(*arguments)
            except HistoryUnreadableError as err:
                why = str(err)
                self._instance = self._open()
        try:
            return getattr(self._instance, question)(*arguments)
        except Exception as err:  # Dagster's storage errors, whatever their class
            first = next((line for line in str(err).splitlines() if line.strip()), type(err).__name__)
            raise self._unreadable(f"{why}; the instance: {first}" if why else first) from err

    def storage_directory(self) -> str:
        return self._local.storage_directory()

    def registered_models(self) -> list[str] | None:
        return self._ask("registered_models")

    def latest_run(self, asset: str, partition: str | None) -> str | None:
        return self._ask("latest_run", asset, partition)

    def newest_finished_run(self, partition: str) -> FinishedRun | None:
        return self._ask("newest_finished_run", partition)

    def score_records(self, model: str | None, limit: int) -> list[StoredMaterialization]:
        return self._ask("score_records", model, limit)

    def run_score_records(self, run_id: str) -> list[StoredMaterialization]:
        return self._ask("run_score_records", run_id)

    def materialization(self, asset: str, storage_id: int) -> StoredMaterialization | None:
        return self._ask("materialization", asset, storage_id)
