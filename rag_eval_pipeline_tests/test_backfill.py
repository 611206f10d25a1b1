"""A model comparison as one Dagster backfill: `rag-eval backfill` against `dagster dev`
(webserver and daemon) started here, two Claude partitions against the tests' Messages-API
server, an offline one and the team's agent over HTTP. Without a daemon the same command says so
and evaluates in its own process; both paths print the same comparison."""

import json
import os
import re
import subprocess
import sys
import urllib.request

import dagster as dg
import pytest
import yaml

from rag_eval_pipeline.instance.home import SQLITE, InstanceStorage, prepare_instance
from rag_eval_pipeline_tests.conftest import fresh_database
from rag_eval_pipeline_tests.support import STORAGES
from rag_eval_pipeline_tests.support.agent import HTTP_BODY, HTTP_RESPONSE, agent_service
from rag_eval_pipeline_tests.support.processes import dagster_dev, free_port
from stand_ins.anthropic_api import FakeAnthropic

pytestmark = pytest.mark.slow  # dagster dev and its daemon

MODELS = "haiku,haiku@bm25-k2,oracle,bot"
LIMIT = 2  # Anthropic calls in flight at most, for every run of the instance together


def _rag_eval(home, project, env, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rag_eval_pipeline.cli", "--dagster-home", str(home), *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def _tables(output: str) -> str:
    """The comparison and paired tables: what both paths must agree on."""
    return "\n".join(line for line in output.splitlines() if line.startswith("|"))


@pytest.mark.parametrize("storage", STORAGES)
def test_backfill_runs_partitions_in_parallel_within_one_provider_limit(
    storage, shared_hotpotqa, tmp_path, request, monkeypatch
):
    """On SQLite, and on an instance whose storage is PostgreSQL (where the provider's limit is
    the instance's pool, held by every run of the deployment)."""
    project = tmp_path / "project"
    project.mkdir()
    arguments = ["--dataset", str(shared_hotpotqa), "--sample", "20", "--models", MODELS]
    with FakeAnthropic(latency_s=0.4) as claude, agent_service() as agent:
        bot = {
            "name": "bot",
            "provider": "http",
            "url": agent.url,
            "body": HTTP_BODY,
            "response": HTTP_RESPONSE,
        }
        settings = {"concurrency": LIMIT, "answer_models": [{**bot, "version": "v1"}]}
        (project / "rag_eval.yaml").write_text(yaml.safe_dump(settings))
        env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "ELASTICSEARCH_URL")}
        env.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=claude.url)
        env["RAG_EVAL_CONFIG"] = str(project / "rag_eval.yaml")
        storage_env = {}
        if storage == "postgres":  # each home a database of its own
            server = request.getfixturevalue("postgres_server")
            storage_env = {"DAGSTER_PG_URL": fresh_database(server)}
            env["DAGSTER_PG_URL"] = fresh_database(server)

        alone = _rag_eval(tmp_path / "alone", project, env, "backfill", *arguments)
        assert alone.returncode == 0, alone.stderr[-3000:]
        assert "no Dagster daemon is running for this instance" in alone.stdout
        claude.reset_counts()

        home = tmp_path / "home"
        env.update(storage_env)
        for key, value in storage_env.items():
            monkeypatch.setenv(key, value)
        # the instance's folder and settings, as rag-eval writes them
        prepare_instance(
            str(home), InstanceStorage("DAGSTER_PG_URL", required=True) if storage_env else SQLITE
        )
        port = free_port()
        with dagster_dev(home, project, env, port):
            daemon = _rag_eval(home, project, env, "backfill", *arguments)
            assert daemon.returncode == 0, (
                daemon.stderr[-3000:] + (home / "dagster-dev.log").read_text()[-3000:]
            )
            backfill_id = re.search(r"\[backfill (\w+)\] 4 partitions submitted", daemon.stdout)[1]
            query = (
                f'{{ partitionBackfillOrError(backfillId: "{backfill_id}") '
                "{ ... on PartitionBackfill { id status numPartitions } } }"
            )
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/graphql",
                data=json.dumps({"query": query}).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=30) as response:
                shown = json.loads(response.read())["data"]["partitionBackfillOrError"]
        calls_through_the_daemon = len(claude.requests)

    # the UI's backfill view has it, with every partition
    assert shown == {"id": backfill_id, "status": "COMPLETED_SUCCESS", "numPartitions": 4}
    with dg.DagsterInstance.from_config(str(home)) as instance:
        records = instance.get_run_records(filters=dg.RunsFilter(tags={"dagster/backfill": backfill_id}))
    runs = {r.dagster_run.tags["dagster/partition"]: (r.start_time, r.end_time) for r in records}
    assert set(runs) == {"haiku", "haiku@bm25-k2", "oracle", "bot"}  # one run per partition
    assert all(r.dagster_run.status == dg.DagsterRunStatus.SUCCESS for r in records)
    claude_runs = [runs["haiku"], runs["haiku@bm25-k2"]]
    assert max(start for start, _ in claude_runs) < min(end for _, end in claude_runs)  # side by side
    # two Claude partitions at once, and still at most LIMIT calls in flight between them
    assert calls_through_the_daemon == 40 and claude.max_in_flight <= LIMIT
    for partition in runs:
        assert f"[backfill] {partition}: SUCCESS" in daemon.stdout
    assert (
        _tables(daemon.stdout) == _tables(alone.stdout) and "| oracle | reference | 20 | 0 |" in daemon.stdout
    )
    assert "| bot | reference | 20 | 0 |" in daemon.stdout  # the team's agent, judged beside the models
    if storage == "postgres":
        assert "postgres_url" in (home / "dagster.yaml").read_text()
        with dg.DagsterInstance.from_config(str(home)) as instance:
            record = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=dg.AssetKey("candidate_answers"), asset_partitions=["haiku"]),
                limit=1,
            ).records[0]
            limit = record.asset_materialization.metadata["llm_limit"].value
        assert limit == f"instance pool rag_eval_llm_anthropic ({LIMIT}, every run of the deployment)"
