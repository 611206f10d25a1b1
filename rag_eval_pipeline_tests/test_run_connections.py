"""A run's events go over one kept connection per database (Dagster's SQLite storage opens one per
statement, about three per stored event), and the home is left as Dagster's own classes read it:
what `dagster dev` opens. Counted, not timed."""

import sqlite3
from contextlib import closing

import dagster as dg
import sqlalchemy

from rag_eval_pipeline import cli

MODELS = ("extractive-baseline", "oracle", "null")


def _stored_events(history) -> int:
    total = 0
    for shard in (history / "runs").glob("*.db"):
        if shard.stem != "index":
            with closing(sqlite3.connect(shard)) as db:
                total += db.execute("SELECT COUNT(*) FROM event_logs").fetchone()[0]
    return total


def test_a_run_connects_once_per_database_and_dagster_reads_what_it_wrote(tmp_path, shared_hotpotqa):
    home = tmp_path / "home"
    connects = []

    def _count(dbapi_connection, record) -> None:  # noqa: ANN001 (SQLAlchemy's hook)
        connects.append(1)

    sqlalchemy.event.listen(sqlalchemy.engine.Engine, "connect", _count)
    try:
        arguments = ["--dagster-home", str(home), "run", "--dataset", str(shared_hotpotqa)]
        code = cli.main([*arguments, "--sample", "8"])
    finally:
        sqlalchemy.event.remove(sqlalchemy.engine.Engine, "connect", _count)
    assert code == 0

    events = _stored_events(home / "history")
    assert events > 300  # five runs: the knowledge base, three models, the comparison (with the review)
    assert len(connects) < events / 3, f"{len(connects)} SQLite connections for {events} stored events"

    # Dagster's own storage classes (what `dagster dev` opens) read every run, event and partition
    with dg.DagsterInstance.from_config(str(home)) as instance:
        runs = instance.get_runs()
        assert len(runs) == 5 and {run.status for run in runs} == {dg.DagsterRunStatus.SUCCESS}
        # the run databases' template beside them is no run to Dagster (its globs skip dotfiles)
        assert (home / "history" / "runs" / f".run-database-template-{dg.__version__}.db").is_file()
        assert set(instance.event_log_storage.get_all_run_ids()) == {run.run_id for run in runs}
        for run in runs:
            logs = instance.all_logs(run.run_id)
            assert logs[-1].dagster_event.event_type == dg.DagsterEventType.RUN_SUCCESS
        for model in MODELS:
            scores = instance.fetch_materializations(
                dg.AssetRecordsFilter(dg.AssetKey("judge_scores"), asset_partitions=[model]), limit=1
            )
            assert scores.records, model
        # each run's database carries the schema revision Dagster's own init stamps on the index
        with closing(sqlite3.connect(home / "history" / "runs" / "index.db")) as db:
            (head,) = db.execute("SELECT version_num FROM alembic_version").fetchone()
        for run in runs:
            with closing(sqlite3.connect(home / "history" / "runs" / f"{run.run_id}.db")) as db:
                assert db.execute("SELECT version_num FROM alembic_version").fetchone() == (head,)
                assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    # the connections were closed when each run ended: no journal left beside the history
    assert not list((home / "history").rglob("*.db-wal"))

    # a damaged template (overwritten) is made again, and the next run's database is whole
    template = home / "history" / "runs" / f".run-database-template-{dg.__version__}.db"
    template.write_bytes(b"not a database")
    assert cli.main([*arguments, "--sample", "8", "--models", "oracle"]) == 0
    with closing(sqlite3.connect(template)) as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchone() == (head,)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert {run.status for run in instance.get_runs()} == {dg.DagsterRunStatus.SUCCESS}


def test_a_template_another_process_is_building_is_left_alone_with_its_journal(tmp_path):
    """Two commands starting their first runs on a new home at once: the second, finding no
    template yet, clears what dead processes left, and must not take the first's rollback
    journal from under Dagster's table creation (its run failed with 'disk I/O error')."""
    import subprocess
    import sys

    from rag_eval_pipeline.instance.sqlite_storage import TEMPLATE_PREFIX, _remove_abandoned

    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead = int(ended.stdout)
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        building = [f"{TEMPLATE_PREFIX}{dg.__version__}.{alive.pid}.building{s}" for s in ("", "-journal")]
        left = [f"{TEMPLATE_PREFIX}{dg.__version__}.{dead}.building{s}" for s in ("", "-journal", "-wal")]
        kept = [f"{TEMPLATE_PREFIX}{dg.__version__}.db", f"{TEMPLATE_PREFIX}{dg.__version__}.db-wal"]
        old = [f"{TEMPLATE_PREFIX}0.0.1.db", f"{TEMPLATE_PREFIX}0.0.1.db-shm"]
        for name in (*building, *left, *kept, *old):
            (tmp_path / name).write_bytes(b"")
        _remove_abandoned(tmp_path)
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*building, *kept])
    finally:
        alive.kill()
        alive.wait()
