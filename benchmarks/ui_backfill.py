"""Benchmark: the UI's whole-lineage backfill on a fresh instance, through `rag-eval ui` (its
`dagster.yaml`, then `dagster dev`'s webserver and daemon): "Materialize all" with every
partition, launched through GraphQL as the UI launches it, over three offline models and 20
questions, optionally with a fourth model whose Python agent cannot be imported.

Prints, from the launch: when each run was created by the backfill daemon, launched by the run
queue, started (its process up) and ended, when the last model's summary and the
comparison were stored, the backfill's status, and what the comparison holds. With --baseline
PATH (a checkout of an earlier commit, its package imported through PYTHONPATH), the same
backfill of that code on its own fresh instance, in the same call.

    PYTHONPATH=. .venv/bin/python benchmarks/ui_backfill.py [--broken] [--baseline /tmp/base]
"""

import argparse
import datetime
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dagster as dg
from dagster._core.events import DagsterEventType

from benchmarks.ui_launched_runs import free_port, graphql, wait_for_daemon, wait_for_webserver

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO.parent / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"
MODELS = ["extractive-baseline", "oracle", "null"]
BROKEN = "raise RuntimeError('the vector store is not configured')\n"


def _instance(home: Path) -> dg.DagsterInstance:
    return dg.DagsterInstance.from_config(str(home))


def _wait(condition, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.5)  # the daemon works on its own clock
    raise TimeoutError(what)


def measure(package_root: Path, broken: bool, label: str) -> None:
    root = Path(tempfile.mkdtemp(prefix="ui-backfill-"))
    (root / "broken_agent.py").write_text(BROKEN)
    models = [*MODELS, *(["broken"] if broken else [])]
    lines = [f"dataset: {{source: '{DATASET}', sample_size: 20}}", "answer_models:"]
    lines += [f"  - {{name: {m!r}, provider: offline, model: {m!r}}}" for m in MODELS]
    if broken:
        lines.append("  - {name: broken, provider: python, target: 'broken_agent:answer'}")
    lines.append(f"ui: {{reports_port: {free_port()}}}")
    (root / "rag_eval.yaml").write_text("\n".join(lines) + "\n")
    home = root / "home"
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "RAG_EVAL_CONFIG")},
        "PYTHONPATH": os.pathsep.join([str(package_root), str(root)]),
    }
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    config = str(root / "rag_eval.yaml")
    server = subprocess.Popen(
        [sys.executable, "-m", "rag_eval_pipeline.cli", "--config", config, "--dagster-home", str(home)]
        + ["ui", "--port", str(port)],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for_webserver(url)
        wait_for_daemon(home)
        _wait(
            lambda: set(models) <= set(_instance(home).get_dynamic_partitions("answer_model")),
            120,
            "the configured models registered",
        )
        keys = [{"path": key.path} for key in _all_assets(url)]
        launched_at = time.time()
        answer = graphql(
            url,
            """mutation($params: LaunchBackfillParams!) { launchPartitionBackfill(backfillParams: $params) {
                 __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message } } }""",
            {"params": {"allPartitions": True, "assetSelection": keys}},
        )["launchPartitionBackfill"]
        assert answer["__typename"] == "LaunchBackfillSuccess", answer
        backfill_id = answer["backfillId"]

        def ended():
            with _instance(home) as instance:
                found = instance.get_backfill(backfill_id)
                return found if found.status.value != "REQUESTED" else None

        status = _wait(ended, 900, "the backfill's end").status.value

        def compared():
            with _instance(home) as instance:
                summaries = [
                    instance.fetch_materializations(
                        dg.AssetRecordsFilter(dg.AssetKey("metric_summary"), asset_partitions=[m]), limit=1
                    ).records
                    for m in MODELS
                ]
                if not all(summaries):
                    return None
                last = max(r[0].timestamp for r in summaries)
                comparison = instance.fetch_materializations(dg.AssetKey("model_comparison"), limit=1).records
                return (last, comparison[0]) if comparison and comparison[0].timestamp > last else None

        last_summary, comparison = _wait(compared, 300, "the comparison after the last summary")
        with _instance(home) as instance:
            runs = sorted(instance.get_runs(), key=lambda r: instance.get_run_stats(r.run_id).start_time or 0)
            print(f"\n{label}{' (with a broken fourth model)' if broken else ''}: backfill {status}")
            print("  run      partition            status   created launched  started    ended (s, launch=0)")
            for run in runs:
                times = [t - launched_at for t in _run_times(instance, run.run_id)]
                what = run.tags.get("dagster/partition") or run.job_name
                row = " ".join(f"{t:8.1f}" for t in times)
                print(f"  {run.run_id[:8]} {what:<20} {run.status.value:<8} {row}")
            held = comparison.asset_materialization.metadata
            own = [r for r in runs if r.tags.get("dagster/backfill") == backfill_id]
            last_end = max((instance.get_run_stats(r.run_id).end_time or 0) for r in own) - launched_at
        print(f"  the backfill's last run ended {last_end:.1f} s after the launch")
        print(f"  last model's summary stored {last_summary - launched_at:.1f} s after the launch")
        print(f"  comparison stored {comparison.timestamp - last_summary:.1f} s after that")
        print(f"  comparison's missing models: {getattr(held.get('missing_models'), 'value', 'n/a')}")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)


def _run_times(instance: dg.DagsterInstance, run_id: str) -> tuple[float, float, float, float]:
    """When the run was created (the backfill daemon submitted it), launched (the run queue
    handed it to the launcher), started (its process had imported the pipeline) and ended."""
    created = instance.get_run_record_by_id(run_id).create_timestamp
    created = (created if created.tzinfo else created.replace(tzinfo=datetime.UTC)).timestamp()
    first: dict[DagsterEventType, float] = {}
    for record in instance.all_logs(run_id):
        event = record.dagster_event
        if event is not None:
            first.setdefault(event.event_type, record.timestamp)
    launched, started = (
        first.get(t, 0.0) for t in (DagsterEventType.RUN_STARTING, DagsterEventType.RUN_START)
    )
    return created, launched, started, instance.get_run_stats(run_id).end_time or 0.0


def _all_assets(url: str) -> list[dg.AssetKey]:
    nodes = graphql(url, "{ assetNodes { assetKey { path } isExecutable } }", {})["assetNodes"]
    # as "Materialize all" does: the assets a run can make (security_probes is recorded by a command)
    return [dg.AssetKey(node["assetKey"]["path"]) for node in nodes if node["isExecutable"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--broken", action="store_true", help="add a model whose agent cannot be imported")
    parser.add_argument("--baseline", help="a checkout of an earlier commit, measured the same way")
    args = parser.parse_args()
    measure(REPO, args.broken, "this checkout")
    if args.baseline:
        measure(Path(args.baseline), args.broken, f"baseline {args.baseline}")
    print(json.dumps({"models": MODELS, "questions": 20}))


if __name__ == "__main__":
    main()
