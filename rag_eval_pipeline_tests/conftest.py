"""Shared fixtures: the shared HotpotQA sample, an evaluated Dagster instance, the services."""

import json
import os
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import hypothesis
import pytest

from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline_tests.support import EVALUATED_SAMPLE, SHARED_HOTPOTQA
from rag_eval_pipeline_tests.support.processes import free_port, stop_process_group

# Tests never reach a model hub: the embedding model is loaded from the installed package's folder.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"

# Property tests check what holds, never how long an example takes: on a machine busy with the
# rest of the suite one example took 379 ms against Hypothesis's default deadline of 200 ms.
hypothesis.settings.register_profile("suite", deadline=None)
hypothesis.settings.load_profile("suite")


@pytest.fixture(scope="session", autouse=True)
def fresh_cache_dir(tmp_path_factory):
    """Derived files (the int8-compute ONNX model) go to a folder of this session, not the
    user's cache: every run of the suite prepares them as a fresh install would."""
    os.environ["RAG_EVAL_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="session")
def shared_hotpotqa() -> Path:
    """The 500-question sample; missing is a failure, not a skip (CI lays shared/ beside the repo)."""
    assert SHARED_HOTPOTQA.is_file(), f"shared HotpotQA sample missing at {SHARED_HOTPOTQA}"
    return SHARED_HOTPOTQA


@pytest.fixture(scope="session")
def hub_rows(shared_hotpotqa: Path) -> list[dict]:
    """The first 12 questions in the hub's row format."""
    with shared_hotpotqa.open() as handle:
        return [json.loads(next(handle)) for _ in range(12)]


@pytest.fixture(scope="session")
def minilm():
    """all-MiniLM-L6-v2 as the packaged int8 ONNX model (no PyTorch: CI does not install it)."""
    from rag_eval_pipeline.retrieval.embedder import MINILM, make_embedder, resolve_embedding_model

    return make_embedder(resolve_embedding_model(MINILM))


ES_URL_VARIABLE = "RAG_EVAL_TEST_ES_URL"
DEFAULT_TEST_ES_URL = "http://127.0.0.1:9250"  # what .ci/elasticsearch.sh starts


@pytest.fixture(scope="session")
def es_url() -> str:
    """A real Elasticsearch node. Missing is a failure, not a skip: `bash .ci/run` starts one,
    or `bash .ci/elasticsearch.sh start` for a local run."""
    from elasticsearch import Elasticsearch

    url = os.environ.get(ES_URL_VARIABLE, DEFAULT_TEST_ES_URL)
    try:
        Elasticsearch(url, request_timeout=5).cluster.health()
    except Exception as err:
        pytest.fail(
            f"no Elasticsearch at {url} ({type(err).__name__}); start one with "
            f"`bash .ci/elasticsearch.sh start` and export {ES_URL_VARIABLE}"
        )
    return url


@pytest.fixture
def es_prefix(es_url):
    """Unique index names for one test; its indices are deleted afterwards."""
    import uuid

    from elasticsearch import Elasticsearch

    prefix = f"test-{uuid.uuid4().hex[:8]}"
    yield prefix
    es = Elasticsearch(es_url)
    names = list(es.indices.get(index=f"{prefix}-*", allow_no_indices=True))
    if names:  # wildcard deletes are refused by default: delete by name
        es.indices.delete(index=",".join(names), ignore_unavailable=True)


@dataclass(frozen=True)
class Evaluated:
    """A Dagster instance evaluated through the CLI, as a user's would be."""

    home: Path
    instance: dg.DagsterInstance
    defs: dg.Definitions


@pytest.fixture(scope="session")
def evaluated(shared_hotpotqa, tmp_path_factory, worker_id) -> Evaluated:
    """One evaluated instance for every integration test that only reads it: `rag-eval run` on
    the first 40 shared questions with the three offline models, twice (the history and the
    report's trend need two materializations). Under xdist the workers share it: the first to
    come builds it (the others wait on a lock), since it is only ever read."""
    from filelock import FileLock

    from rag_eval_pipeline import cli
    from rag_eval_pipeline.definitions import build_definitions

    if worker_id == "master":  # one process: a folder of this session's own
        root = tmp_path_factory.mktemp("evaluated-session")
    else:  # the session's folder, shared by its workers (each has its own below it)
        root = tmp_path_factory.getbasetemp().parent
    home, done = root / "evaluated", root / "evaluated.done"
    with FileLock(str(root / "evaluated.lock")):
        if not done.exists():
            for _ in range(2):
                arguments = ["--dagster-home", str(home), "run", "--dataset", str(shared_hotpotqa)]
                assert cli.main([*arguments, "--sample", str(EVALUATED_SAMPLE)]) == 0
            done.touch()
    return Evaluated(home, open_instance(str(home)), build_definitions())


@pytest.fixture
def evaluated_copy(evaluated, tmp_path) -> Iterator[Evaluated]:
    """The session's evaluated instance copied for one test that writes to it (runs, partitions):
    the shared one stays as its readers expect it, whichever worker reads it meanwhile (a run in
    flight there sends a reading command to Dagster, a partition added changes the model list)."""
    import sqlite3

    home = tmp_path / "evaluated"
    # the databases through SQLite's backup: another worker's reader may checkpoint the
    # write-ahead log (and delete it) while a plain copy runs
    shutil.copytree(evaluated.home, home, ignore=shutil.ignore_patterns("*.lock", "*.tmp", "*.db", "*.db-*"))
    for database in evaluated.home.rglob("*.db"):
        target = home / database.relative_to(evaluated.home)
        with closing(sqlite3.connect(database)) as source, closing(sqlite3.connect(target)) as copy:
            source.backup(copy)
    instance = open_instance(str(home))
    yield Evaluated(home, instance, evaluated.defs)
    instance.dispose()


@pytest.fixture(scope="module")
def monkeypatch_module():
    """Environment changes that last as long as a module's shared fixture (a stand-in's key)."""
    with pytest.MonkeyPatch.context() as patch:
        yield patch


PHOENIX_VARIABLE = "RAG_EVAL_TEST_PHOENIX"  # the `phoenix` executable (.ci/run installs one)


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    """A real Phoenix (arize-phoenix, SQLite) on a free port in a fresh folder. Missing is a
    failure, not a skip: .ci/run installs it and exports RAG_EVAL_TEST_PHOENIX."""
    executable = os.environ.get(PHOENIX_VARIABLE) or shutil.which("phoenix")
    if not executable:
        pytest.fail(f"no Phoenix: install arize-phoenix (bash .ci/phoenix.sh) and export {PHOENIX_VARIABLE}")
    folder = tmp_path_factory.mktemp("phoenix")
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(folder),
        "PHOENIX_PORT": str(port),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = open(folder / "phoenix.log", "w")  # noqa: SIM115 (open for the server's lifetime)
    process = subprocess.Popen(
        [executable, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/healthz", timeout=2)
            break
        except OSError:
            assert process.poll() is None, (folder / "phoenix.log").read_text()[-2000:]
            time.sleep(0.5)  # still starting
    else:
        pytest.fail(f"Phoenix did not start: {(folder / 'phoenix.log').read_text()[-2000:]}")
    yield url
    stop_process_group(process)
    log.close()


PG_URL_VARIABLE = "RAG_EVAL_TEST_PG_URL"  # what .ci/postgres.sh start prints (.ci/run exports it)


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """A real PostgreSQL server. Missing is a failure, not a skip: `bash .ci/run` starts one,
    or `bash .ci/postgres.sh start` for a local run."""
    import psycopg2

    url = os.environ.get(PG_URL_VARIABLE)
    if not url:
        pytest.fail(f"no PostgreSQL: `bash .ci/postgres.sh start` and export {PG_URL_VARIABLE}")
    try:
        psycopg2.connect(url, connect_timeout=10).close()
    except psycopg2.Error as err:
        pytest.fail(f"no PostgreSQL at {url} ({type(err).__name__}: {err})")
    return url


def fresh_database(server_url: str) -> str:
    """A database of its own on the server (each instance starts empty), its URL."""
    import uuid

    import psycopg2

    name = f"rag_eval_{uuid.uuid4().hex[:12]}"
    connection = psycopg2.connect(server_url)
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')
    connection.close()
    return server_url.rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture
def postgres_url(postgres_server) -> str:
    """A fresh database for one test's instance."""
    return fresh_database(postgres_server)


REDIS_URL_VARIABLE = "RAG_EVAL_TEST_REDIS_URL"  # what .ci/redis.sh start prints (.ci/run exports it)


@pytest.fixture(scope="session")
def redis_server() -> str:
    """A real Redis 7 (Debian's redis-server). Missing is a failure, not a skip: `bash .ci/run`
    starts one, or `bash .ci/redis.sh start` for a local run."""
    import redis

    url = os.environ.get(REDIS_URL_VARIABLE)
    if not url:
        pytest.fail(f"no Redis: `bash .ci/redis.sh start` and export {REDIS_URL_VARIABLE}")
    try:
        redis.Redis.from_url(url, socket_connect_timeout=5).ping()
    except redis.RedisError as err:
        pytest.fail(f"no Redis at {url} ({type(err).__name__}: {err})")
    return url


def fresh_redis(server_url: str) -> str:
    """A database of its own on the server (its queues and results start empty), its URL."""
    import redis

    base = server_url.rsplit("/", 1)[0]
    client = redis.Redis.from_url(f"{base}/0")
    number = int(client.incr("rag_eval_tests:databases")) % 63 + 1  # 0 keeps the counter
    client.close()
    url = f"{base}/{number}"
    redis.Redis.from_url(url).flushdb()
    return url
