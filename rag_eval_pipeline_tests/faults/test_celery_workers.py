"""Runs on Celery workers over a real Redis, the instance on a real PostgreSQL: two workers
started in folders of their own (as two machines would be), a backfill of three stand-in Claude
models spread over both (each run tagged with the worker that ran it), the stand-in never seeing
more calls at once than the deployment's limit, and the comparison equal to the one this process
computes alone. Then one worker killed with SIGKILL mid-run: its run reads FAILURE (not STARTED)
within 120 s, and a second backfill completes every model without asking again for a stored
answer. Last, a new worker beside the survivor and one more model backfilled in two case shards:
each shard on a worker, every question asked once, and its summary the one a single run gives."""

import collections
import os
import signal
import subprocess
import time

import dagster as dg
import pytest
import yaml

from rag_eval_pipeline.instance.home import InstanceStorage, prepare_instance
from rag_eval_pipeline_tests.conftest import fresh_database, fresh_redis
from rag_eval_pipeline_tests.support.cli import RAG_EVAL
from rag_eval_pipeline_tests.support.processes import dagster_dev, stop_process_group, wait_until
from stand_ins.anthropic_api import FakeAnthropic

pytestmark = pytest.mark.slow  # PostgreSQL, Redis, dagster dev and two Celery workers

BUDGET = 2  # Anthropic calls in flight at most, for the whole deployment
SAMPLE = "8"
MODELS = ("haiku", "sonnet", "claude-opus-4-1")
LARGER = "14"  # the second and third backfills: new questions, so runs do paid work again
WORKER_TAG = "rag_eval/worker"
PARTITION = "dagster/partition"
KILLED_RUN_FAILS_WITHIN_S = 120
SHARDED = "claude-haiku-4-5@bm25-k3"  # a model of its own: its calls are new to the cache


def _worker(name: str, machine, env) -> subprocess.Popen:
    """`rag-eval worker` in a folder of its own, with a home of its own (another machine's)."""
    machine.mkdir(parents=True, exist_ok=True)
    log = (machine / "worker.log").open("w")
    return subprocess.Popen(
        [RAG_EVAL, "--dagster-home", str(machine / "home"), "worker", "--name", name],
        cwd=machine,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: the whole "machine" can be killed
    )


def _run(home, run_id: str) -> dg.DagsterRun:
    with dg.DagsterInstance.from_config(str(home)) as instance:
        return instance.get_run_by_id(run_id)


def _question(request: dict) -> str:
    """The question of an answer call (what a repeated call would ask again)."""
    content = request["messages"][0]["content"]
    text = content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)
    return text.rsplit("Question:", 1)[-1].strip()[:200]


def _comparison(output: str, models=MODELS) -> dict[str, dict[str, str]]:
    """The comparison a command printed: per model its figures, dollars aside (the stand-in's
    prompt cache makes a call's price depend on which call came first)."""
    table = output.split("\n| answer_model |", 1)[1].split("\n\n", 1)[0]
    lines = ("| answer_model |" + table).splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = [dict(zip(header, (c.strip() for c in line.strip("|").split("|")))) for line in lines[2:]]
    return {
        row["answer_model"]: {k: v for k, v in row.items() if "cost" not in k}
        for row in rows
        if row.get("answer_model") in models
    }


def _runs(home, statuses=None, partition=None) -> list[dg.DagsterRun]:
    tags = {"dagster/partition": partition} if partition else {}
    with dg.DagsterInstance.from_config(str(home)) as instance:
        return list(instance.get_runs(dg.RunsFilter(statuses=statuses, tags=tags)))


@pytest.fixture
def deployment(shared_hotpotqa, postgres_server, redis_server, tmp_path, monkeypatch):
    """A project on PostgreSQL and Redis with its shared folder, and its environment."""
    project, shared = tmp_path / "project", tmp_path / "shared"
    project.mkdir()
    shared.mkdir()
    config = project / "rag_eval.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "concurrency": BUDGET,
                "storage": {"instance": "postgres", "folder": str(shared)},
                "workers": {"launcher": "celery", "queue": "evaluations"},
            }
        )
    )
    url, broker = fresh_database(postgres_server), fresh_redis(redis_server)
    monkeypatch.setenv("DAGSTER_PG_URL", url)
    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "ELASTICSEARCH_URL")}
    env |= {"DAGSTER_PG_URL": url, "RAG_EVAL_BROKER_URL": broker, "RAG_EVAL_CONFIG": str(config)}
    home = tmp_path / "home"
    storage = InstanceStorage("DAGSTER_PG_URL", str(shared), True, "RAG_EVAL_BROKER_URL", "evaluations")
    monkeypatch.setenv("RAG_EVAL_BROKER_URL", broker)
    prepare_instance(str(home), storage)
    return project, home, env


def test_a_backfill_spreads_over_two_workers_and_a_dead_worker_fails_its_run_alone(
    deployment, shared_hotpotqa, tmp_path
):
    project, home, env = deployment
    with FakeAnthropic(latency_s=0.4) as claude:
        env = env | {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": claude.url}
        workers = {name: _worker(name, tmp_path / f"machine-{name}", env) for name in ("w1", "w2")}

        def backfill(sample: str, models=MODELS, *more: str) -> subprocess.Popen:
            arguments = ["backfill", "--dataset", str(shared_hotpotqa), "--sample", sample, *more]
            return subprocess.Popen(
                [RAG_EVAL, "--dagster-home", str(home), *arguments, "--models", ",".join(models)],
                cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip

        try:
            # both "machines" take runs before the first is queued (a worker starting late would
            # leave every run to the other)
            from celery import Celery

            with Celery(broker=env["RAG_EVAL_BROKER_URL"]) as app:
                wait_until(lambda: len(app.control.ping(timeout=2)) >= 2, 180, "both workers answering")
            with dagster_dev(home, project, env):
                out, err = backfill(SAMPLE).communicate(timeout=900)
                first_out = out
                first_peak = claude.max_in_flight
                first_calls = collections.Counter(r["model"] for r in claude.requests)
                for model in MODELS:
                    assert f"[backfill] {model}: SUCCESS" in out, (out[-3000:], err[-3000:])
                succeeded = _runs(home, [dg.DagsterRunStatus.SUCCESS])
                ran_on = {r.tags.get(WORKER_TAG, "").split("@")[0] for r in succeeded if PARTITION in r.tags}
                assert ran_on == {"w1", "w2"}, ran_on  # both workers took runs
                listed = subprocess.run(
                    [RAG_EVAL, "--dagster-home", str(home), "models", "list"],
                    cwd=project, env=env, capture_output=True, text=True,
                )  # fmt: skip
                assert listed.returncode == 0, listed.stderr
                where = dict(
                    line.split("\tlast run on worker ") for line in listed.stdout.splitlines() if "\t" in line
                )
                assert set(where) == set(MODELS) and {w.split("@")[0] for w in where.values()} == {"w1", "w2"}

                # w1's machine is lost mid-run: its run fails, the others' do not
                claude.reset_counts()
                claude.latency_s = 1.0
                second = backfill(LARGER)
                victim = wait_until(
                    lambda: next(
                        (r for r in _runs(home, [dg.DagsterRunStatus.STARTED])
                         if r.tags.get(WORKER_TAG, "").startswith("w1@")),
                        None,
                    ) if len(claude.requests) >= 2 else None,
                    300,
                    "a run started on w1",
                )  # fmt: skip
                os.killpg(workers["w1"].pid, signal.SIGKILL)
                killed_at = time.monotonic()
                failed = wait_until(
                    lambda: _run(home, victim.run_id).status == dg.DagsterRunStatus.FAILURE,
                    KILLED_RUN_FAILS_WITHIN_S,
                    "the dead worker's run read FAILURE",
                )
                assert failed and time.monotonic() - killed_at <= KILLED_RUN_FAILS_WITHIN_S
                out, err = second.communicate(timeout=900)
                assert second.returncode == 1 and f"{victim.tags[PARTITION]} failed" in err, err[-3000:]
                asked_before = [(r["model"], _question(r)) for r in claude.requests]
                # the same backfill again: w2 alone completes every model; stored answers are not asked again
                out, err = backfill(LARGER).communicate(timeout=900)
                for model in MODELS:
                    assert f"[backfill] {model}: SUCCESS" in out, (out[-3000:], err[-3000:])
                asked_after = [(r["model"], _question(r)) for r in claude.requests][len(asked_before) :]
                peak = claude.max_in_flight

                # a new machine beside the survivor; one more model, its cases in two shards
                workers["w3"] = _worker("w3", tmp_path / "machine-w3", env)
                with Celery(broker=env["RAG_EVAL_BROKER_URL"]) as app:
                    wait_until(lambda: len(app.control.ping(timeout=2)) >= 2, 180, "w2 and w3 answering")
                before_shards = len(claude.requests)
                sharded_out, err = backfill(SAMPLE, [SHARDED], "--shards", "2").communicate(timeout=900)
                assert f"[backfill] {SHARDED}: SUCCESS" in sharded_out, (sharded_out[-3000:], err[-3000:])
                shard_runs = {
                    key: _runs(home, [dg.DagsterRunStatus.SUCCESS], f"{SHARDED}|{key}")
                    for key in ("1of2", "2of2")
                }
                sharded_asks = collections.Counter(_question(r) for r in claude.requests[before_shards:])
        finally:
            for process in workers.values():
                stop_process_group(process)
        # the same evaluation in this machine's process, on an instance of its own
        alone = tmp_path / "alone"
        alone.mkdir()
        (alone / "rag_eval.yaml").write_text(yaml.safe_dump({"concurrency": BUDGET}))
        by_itself = subprocess.run(
            [RAG_EVAL, "--config", str(alone / "rag_eval.yaml"), "--dagster-home", str(alone / "home"), "run",
             "--dataset", str(shared_hotpotqa), "--sample", SAMPLE, "--models", ",".join((*MODELS, SHARDED))],
            cwd=alone, env={k: v for k, v in env.items() if k not in ("RAG_EVAL_CONFIG", "DAGSTER_PG_URL")},
            capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        assert by_itself.returncode == 0, by_itself.stderr[-3000:]
    assert _comparison(first_out) == _comparison(by_itself.stdout)  # the workers' equals this process's
    # two shard runs, each on a worker; each question asked once (the model's own run asked none)
    for key, runs in shard_runs.items():
        assert len(runs) == 1 and runs[0].tags.get(WORKER_TAG, "").split("@")[0] in {"w2", "w3"}, key
    assert len(sharded_asks) == int(SAMPLE) and set(sharded_asks.values()) == {1}, sharded_asks
    sharded = _comparison(sharded_out, (SHARDED,))
    assert sharded and sharded == _comparison(by_itself.stdout, (SHARDED,))
    assert first_peak <= BUDGET and peak <= BUDGET, (first_peak, peak)  # the deployment's limit held
    assert all(count == int(SAMPLE) for count in first_calls.values()), first_calls  # each once
    # every question of the larger sample asked once, but those the dead run had in flight
    repeated = collections.Counter(asked_before + asked_after) - collections.Counter(
        set(asked_before + asked_after)
    )
    assert sum(repeated.values()) <= BUDGET, repeated
    victim_run = _run(home, victim.run_id)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        reasons = [e.message for e in instance.all_logs(victim.run_id) if e.message]
        storage = instance.event_log_storage
        held = sum(storage.get_concurrency_info(k).active_slot_count for k in storage.get_concurrency_keys())
    assert victim_run.status == dg.DagsterRunStatus.FAILURE
    assert any("does not answer" in m for m in reasons), reasons[-5:]
    assert held == 0  # the dead run's LLM and partition slots were given back
