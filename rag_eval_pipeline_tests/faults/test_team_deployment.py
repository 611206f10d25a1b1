"""A team's deployment on the parts that run here: one instance whose storage is PostgreSQL, its
daemon (`dagster dev`), two people's `rag-eval run` and a daemon-launched backfill at once against
the tests' Messages-API server. No result lost or mixed, the server never sees more calls at once
than the configured budget (the instance's pool, held by every run), and a partition launched
twice is evaluated once at a time, the second answering from the cache the first filled. Then
two processes creating the same new instance at once, and a kill -9 on PostgreSQL."""

import os
import signal
import subprocess
import sys

import dagster as dg
import pytest
import yaml

from rag_eval_pipeline.instance.home import InstanceStorage, prepare_instance
from rag_eval_pipeline_tests.conftest import fresh_database
from rag_eval_pipeline_tests.support.cli import RAG_EVAL
from rag_eval_pipeline_tests.support.processes import dagster_dev, free_port, wait_until
from stand_ins.anthropic_api import FakeAnthropic

pytestmark = pytest.mark.slow  # PostgreSQL, dagster dev and its daemon, several processes

BUDGET = 3  # Anthropic calls in flight at most, for the whole deployment
SAMPLE = "12"


def _start(home, project, env, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [RAG_EVAL, "--dagster-home", str(home), *args],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _own_rows(output: str) -> dict[str, str]:
    """The models of the comparison a command printed of its own runs, with their case counts."""
    table = output.split("\n\n| answer_model |", 1)[1].split("\n\n", 1)[0]
    rows = [line.split(" | ") for line in table.splitlines()[2:] if line.startswith("| ")]
    return {row[0].removeprefix("| "): row[2] for row in rows}


def _evaluation_window(instance, run_id: str) -> tuple[float, float]:
    """When a run's evaluation steps started and ended."""
    stats = [
        s
        for s in instance.get_run_step_stats(run_id)
        if s.step_key in ("candidate_answers", "metric_summary")
    ]
    return min(s.start_time for s in stats), max(s.end_time for s in stats)


def test_two_people_and_a_backfill_share_one_postgres_instance(
    shared_hotpotqa, postgres_server, tmp_path, monkeypatch
):
    project = tmp_path / "project"
    project.mkdir()
    (project / "rag_eval.yaml").write_text(
        yaml.safe_dump({"concurrency": BUDGET, "storage": {"instance": "postgres"}})
    )
    url = fresh_database(postgres_server)
    monkeypatch.setenv("DAGSTER_PG_URL", url)
    home = tmp_path / "home"
    prepare_instance(str(home), InstanceStorage("DAGSTER_PG_URL", required=True))
    with FakeAnthropic(latency_s=0.3) as claude:
        env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "ELASTICSEARCH_URL")}
        env |= {
            "ANTHROPIC_API_KEY": "test-key",
            "ANTHROPIC_BASE_URL": claude.url,
            "DAGSTER_PG_URL": url,
            "RAG_EVAL_CONFIG": str(project / "rag_eval.yaml"),
        }
        with dagster_dev(home, project, env):
            dataset = ["--dataset", str(shared_hotpotqa), "--sample", SAMPLE]
            first = _start(home, project, env, "run", *dataset, "--models", "haiku,oracle")
            second = _start(home, project, env, "run", *dataset, "--models", "haiku,null")
            third = _start(home, project, env, "backfill", *dataset, "--models", "sonnet")
            outputs = [p.communicate(timeout=900) for p in (first, second, third)]
        peak = claude.max_in_flight
        asked = [r["model"] for r in claude.requests]

    for process, (_, err) in zip((first, second, third), outputs):
        assert process.returncode == 0, err[-3000:]
    (first_out, _), (second_out, _), (backfill_out, _) = outputs
    # each person's own models on their own questions, nothing of the other's mixed in
    assert _own_rows(first_out) == {"haiku": SAMPLE, "oracle": SAMPLE}
    assert _own_rows(second_out) == {"haiku": SAMPLE, "null": SAMPLE}
    assert (
        "[backfill] sonnet: SUCCESS" in backfill_out
        and f"| sonnet | reference | {SAMPLE} | 0 |" in backfill_out
    )
    # the deployment-wide budget held across three processes and the daemon's run
    assert peak <= BUDGET, peak
    # haiku was launched twice: its questions were paid for once, sonnet's once
    assert asked.count("claude-haiku-4-5") == int(SAMPLE) and asked.count("claude-sonnet-4-6") == int(SAMPLE)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        haiku = instance.get_runs(
            dg.RunsFilter(tags={"dagster/partition": "haiku"}, statuses=[dg.DagsterRunStatus.SUCCESS])
        )
        assert len(haiku) == 2
        windows = sorted(_evaluation_window(instance, r.run_id) for r in haiku)
        assert windows[0][1] <= windows[1][0], windows  # once at a time: the second waited for the first
        calls = [
            instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=dg.AssetKey("candidate_answers"), asset_partitions=["haiku"]),
                limit=2,
            ).records
        ][0]
        hits = sorted(int(r.asset_materialization.metadata["cache_hits"].value) for r in calls)
        assert hits == [0, int(SAMPLE)]  # the second answered from the cache the first filled
        limit = calls[0].asset_materialization.metadata["llm_limit"].value
        assert limit == f"instance pool rag_eval_llm_anthropic ({BUDGET}, every run of the deployment)"
        # every slot of the pools was given back
        storage = instance.event_log_storage
        assert all(
            storage.get_concurrency_info(k).active_slot_count == 0 for k in storage.get_concurrency_keys()
        )


def test_two_processes_creating_one_new_postgres_instance_at_once(postgres_server, tmp_path):
    """The CLI and `dagster dev` starting on a new home at the same moment: created and migrated
    once, under the database's advisory lock; both then read one consistent instance."""
    url = fresh_database(postgres_server)
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"} | {"DAGSTER_PG_URL": url}
    homes = [tmp_path / "a", tmp_path / "b"]  # two machines: two homes, one database
    script = (
        "import sys; from rag_eval_pipeline.instance.home import InstanceStorage, open_instance; "
        "i = open_instance(sys.argv[1], InstanceStorage('DAGSTER_PG_URL', required=True)); "
        "print(len(i.get_runs()))"
    )
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(h)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for h in homes * 2
    ]
    results = [p.communicate(timeout=300) for p in processes]
    assert [p.returncode for p in processes] == [0] * 4, [err[-2000:] for _, err in results]
    assert {out.strip() for out, _ in results} == {"0"}
    import psycopg2

    with psycopg2.connect(url) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM alembic_version")
        assert cursor.fetchone()[0] == 1  # one head: no second migration raced the first


def test_a_killed_run_on_postgres_is_marked_failed_by_the_next_command(
    shared_hotpotqa, postgres_server, tmp_path, monkeypatch
):
    url = fresh_database(postgres_server)
    home = tmp_path / "home"
    with FakeAnthropic(latency_s=0.5) as claude:
        env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
        env |= {"DAGSTER_PG_URL": url, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": claude.url}
        arguments = ["run", "--dataset", str(shared_hotpotqa), "--sample", "16", "--models", "haiku"]
        process = _start(home, tmp_path, env, *arguments, "--concurrency", "2")
        wait_until(lambda: len(claude.requests) >= 3, 300, "the run's first calls")
        os.kill(process.pid, signal.SIGKILL)
        process.communicate()

        def runs(statuses):
            with dg.DagsterInstance.from_config(str(home)) as instance:
                return instance.get_runs(dg.RunsFilter(statuses=statuses))

        monkeypatch.setenv("DAGSTER_PG_URL", url)  # what this process reads the instance with
        assert len(runs([dg.DagsterRunStatus.STARTED])) == 1  # left running by the killed process
        with dg.DagsterInstance.from_config(str(home)) as instance:
            storage = instance.event_log_storage
            held = sum(
                storage.get_concurrency_info(k).active_slot_count for k in storage.get_concurrency_keys()
            )
        assert held >= 1  # its calls in flight, and its partition, still hold their slots
        listed = subprocess.run(
            [RAG_EVAL, "--dagster-home", str(home), "models", "list"], env=env, capture_output=True, text=True
        )
        assert listed.returncode == 0, listed.stderr
        assert runs([dg.DagsterRunStatus.STARTED]) == []
        assert len(runs([dg.DagsterRunStatus.FAILURE])) == 1
        with dg.DagsterInstance.from_config(str(home)) as instance:
            storage = instance.event_log_storage
            # the killed process's slots are given back: the next run is not blocked by them
            assert all(
                storage.get_concurrency_info(k).active_slot_count == 0 for k in storage.get_concurrency_keys()
            )
        resumed = subprocess.run(
            [RAG_EVAL, "--dagster-home", str(home), *arguments], env=env, capture_output=True, text=True
        )
        assert resumed.returncode == 0, resumed.stderr[-2000:]
        assert "| haiku | reference | 16 | 0 |" in resumed.stdout


def test_rag_eval_ui_serves_a_postgres_instance(
    shared_hotpotqa, postgres_server, tmp_path, monkeypatch, capsys
):
    """`rag-eval ui` on a home whose storage is PostgreSQL: the UI lists the runs the CLI made."""
    import contextlib

    from rag_eval_pipeline_tests.support.cli import in_process
    from rag_eval_pipeline_tests.support.ui import graphql, serve_ui

    monkeypatch.setenv("DAGSTER_PG_URL", fresh_database(postgres_server))
    config = tmp_path / "rag_eval.yaml"
    reports_port = free_port()
    config.write_text(yaml.safe_dump({"ui": {"reports_port": reports_port}}))
    home = tmp_path / "home"
    code, _, err = in_process(
        capsys,
        "--dagster-home",
        str(home),
        "--config",
        str(config),
        "run",
        "--dataset",
        str(shared_hotpotqa),
        "--sample",
        "5",
        "--models",
        "oracle",
    )
    assert code == 0, err
    with dg.DagsterInstance.from_config(str(home)) as instance:
        made = {r.run_id for r in instance.get_runs()}
    with contextlib.ExitStack() as stack:
        ui = serve_ui(stack, tmp_path, config, reports_port)
        shown = graphql(ui.url, "{ runsOrError { ... on Runs { results { runId } } } }")
    # the knowledge base, oracle, the cross-model run (agreement, comparison, report)
    assert {r["runId"] for r in shown["runsOrError"]["results"]} == made and len(made) == 3
