"""Where the Dagster instance lives, its ``dagster.yaml``, and opening it safely: created and
migrated once, under a lock, before anything else opens it; runs of a killed ``rag-eval`` marked
failed; a damaged settings file said in one line."""

from __future__ import annotations

import fcntl
import os
import socket
from pathlib import Path

import dagster as dg

from rag_eval_pipeline.defs.names import CLI_HOST_TAG, CLI_PID_TAG, PARTITION_TAG
from rag_eval_pipeline.defs.partitions import ANSWER_MODEL_PARTITIONS

DEFAULT_DAGSTER_HOME = ".dagster_home"
INSTANCE_FILE = "dagster.yaml"
CREATION_LOCK = ".rag-eval-instance.lock"

INSTANCE_HEADER = "# Dagster instance settings (https://docs.dagster.io/deployment/oss/dagster-yaml).\n"
RUN_MONITORING = (
    "# Run monitoring: the daemon (dagster dev, or a deployment's) fails runs whose worker died\n"
    "# instead of leaving them STARTED forever. Runs of a killed `rag-eval` are marked failed by\n"
    "# the next `rag-eval` command.\n"
    "run_monitoring:\n  enabled: true\n  start_timeout_seconds: 180\n  max_resume_run_attempts: 0\n"
    "  poll_interval_seconds: 30\n"
)
RUN_QUEUE = (
    "# One run at a time per answer model: a second evaluation of the same partition waits in the\n"
    "# queue instead of interleaving its writes (and its paid calls) with the first.\n"
    "concurrency:\n  runs:\n    tag_concurrency_limits:\n"
    f"      - key: {PARTITION_TAG}\n        value: {{applyLimitPerUniqueValue: true}}\n        limit: 1\n"
)


class InstanceSettingsError(ValueError):
    """The instance's ``dagster.yaml`` cannot be read: named, with what to do."""


def dagster_home_path(explicit: str | None = None) -> Path:
    """Where the instance is (the argument, else DAGSTER_HOME, else ./.dagster_home), unchanged."""
    return Path(explicit or os.environ.get("DAGSTER_HOME") or DEFAULT_DAGSTER_HOME).resolve()


def instance_exists(explicit: str | None = None) -> bool:
    """Whether a command that only reads has anything to read: a folder `rag-eval` or `dagster
    dev` has used (its instance file, run history or stored assets)."""
    home = dagster_home_path(explicit)
    return any((home / name).exists() for name in (INSTANCE_FILE, "history", "storage"))


def default_instance_settings() -> str:
    """The ``dagster.yaml`` rag-eval writes: SQLite storage in the folder, telemetry off, run
    monitoring on, one queued run per answer model at a time."""
    return (
        INSTANCE_HEADER
        + "# Defaults: SQLite run, event and schedule storage inside this folder.\n"
        + "# Telemetry is off because evaluations often run offline; set true to help Dagster.\n"
        + "telemetry:\n  enabled: false\n"
        + RUN_MONITORING
        + RUN_QUEUE
    )


def resolve_dagster_home(explicit: str | None = None) -> Path:
    """DAGSTER_HOME from the argument, then the environment, then ./.dagster_home (created, with
    the instance settings above; a file written earlier by us gains what it lacks)."""
    home = dagster_home_path(explicit)
    home.mkdir(parents=True, exist_ok=True)
    config = home / INSTANCE_FILE
    if not config.exists():
        config.write_text(default_instance_settings())
        return home
    text = config.read_text(errors="replace")
    if text.startswith(INSTANCE_HEADER):
        additions = [
            part
            for key, part in (("run_monitoring", RUN_MONITORING), ("concurrency:", RUN_QUEUE))
            if key not in text
        ]
        if additions:
            config.write_text(text + "".join(additions))
    return home


def _locked_open(home: Path) -> dg.DagsterInstance:
    """The instance, created and migrated while holding the home's creation lock: two processes
    creating the same new instance at once (the CLI and `dagster dev`) could otherwise leave
    SQLite's schedule storage with two alembic heads."""
    descriptor = os.open(home / CREATION_LOCK, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        instance = dg.DagsterInstance.from_config(str(home))
        # touch every storage, so each is created and migrated now, under the lock
        instance.get_runs(limit=1)
        instance.get_dynamic_partitions(ANSWER_MODEL_PARTITIONS)
        instance.all_instigator_state()
        return instance
    finally:
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        os.close(descriptor)


def prepare_instance(dagster_home: str | None = None) -> Path:
    """Creates the instance (folder, settings, every storage) before anything else opens it:
    what to call before starting `dagster dev` on a new home."""
    home = resolve_dagster_home(dagster_home)
    open_instance(str(home)).dispose()
    return home


def open_instance(dagster_home: str | None = None) -> dg.DagsterInstance:
    home = resolve_dagster_home(dagster_home)
    os.environ["DAGSTER_HOME"] = str(home)  # so runs launched from here and the UI share it
    try:
        instance = _locked_open(home)
    except Exception as err:  # a damaged dagster.yaml: yaml, schema or storage configuration
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise InstanceSettingsError(
            f"{home / INSTANCE_FILE} is unreadable ({type(err).__name__}: {first}): fix it, or delete "
            "it and rag-eval writes a default one (runs and stored results stay)"
        ) from err
    fail_runs_of_dead_cli_processes(instance)
    return instance


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    return True


UNFINISHED = [dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED]


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
        if pid and pid != os.getpid() and not _alive(pid):
            instance.report_run_failed(run, f"the rag-eval process {pid} that ran it is gone (killed)")
            failed.append(run.run_id)
    return failed
