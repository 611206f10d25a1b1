"""Benchmark: evaluation runs launched as the UI launches them, through `dagster dev`'s webserver
and daemon, with a run's steps in one process (the default) and, as the baseline in the same
run, a process per step (`executor: multiprocess`).

For each executor: an instance evaluated by `rag-eval run` (35 questions, three offline models),
`dagster dev` on a free port, then through GraphQL (the UI's own API) a one-partition backfill
and a three-partition backfill of the evaluation assets. Prints the wall time from launch to the
last run's success, the runs' own durations, the compute of the steps inside them, and for the
three-partition backfill how long after its last run ended the comparison (`model_comparison`,
refreshed by the reports sensor) was stored, and launch to a readable comparison.

    python benchmarks/ui_launched_runs.py [--only in_process]
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import dagster as dg

from rag_eval_pipeline.instance.backfill import daemon_running

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO.parent / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"
EVALUATION_ASSETS = ["candidate_answers", "judge_scores", "metric_summary", "metric_history"]
MODELS = ["extractive-baseline", "oracle", "null"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def graphql(url: str, query: str, variables: dict) -> dict:
    body = json.dumps({"query": query, "variables": variables}).encode()
    request = urllib.request.Request(f"{url}/graphql", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())["data"]


def wait_for_webserver(url: str, timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/server_info", timeout=2)
            return
        except OSError:
            time.sleep(0.5)  # still starting
    raise TimeoutError(url)


def backfill(url: str, home: Path, partitions: list[str]) -> tuple[float, list[float], float, float]:
    """Launch, then wait for one successful run per partition: (wall s, run durations s, step
    compute s summed, the monotonic time of the launch)."""
    with dg.DagsterInstance.from_config(str(home)) as instance:
        before = {r.run_id for r in instance.get_runs()}
    started = time.monotonic()
    launched = graphql(
        url,
        """mutation($params: LaunchBackfillParams!) { launchPartitionBackfill(backfillParams: $params) {
             __typename ... on PythonError { message } } }""",
        {
            "params": {
                "partitionNames": partitions,
                "assetSelection": [{"path": [a]} for a in EVALUATION_ASSETS],
            }
        },
    )["launchPartitionBackfill"]
    assert launched["__typename"] == "LaunchBackfillSuccess", launched
    while True:
        with dg.DagsterInstance.from_config(str(home)) as instance:
            runs = [
                r for r in instance.get_runs() if r.run_id not in before and r.tags.get("dagster/backfill")
            ]
            done = [r for r in runs if r.status == dg.DagsterRunStatus.SUCCESS]
            failed = [r for r in runs if r.status == dg.DagsterRunStatus.FAILURE]
            assert not failed, f"run {failed[0].run_id} failed"
            if len(done) == len(partitions):
                wall = time.monotonic() - started
                stats = [instance.get_run_stats(r.run_id) for r in done]
                compute = sum(
                    (s.end_time or 0) - (s.start_time or 0)
                    for r in done
                    for s in instance.get_run_step_stats(r.run_id)
                )
                return wall, [s.end_time - s.start_time for s in stats], compute, started
        time.sleep(0.5)


def comparison_after(home: Path, launched: float, timeout_s: float = 300) -> tuple[float, float]:
    """Wait for a model_comparison stored after the latest evaluation run ended: (seconds from
    that run's end to the comparison, seconds from the backfill's launch to it)."""
    key = dg.AssetKey("model_comparison")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with dg.DagsterInstance.from_config(str(home)) as instance:
            runs = [r for r in instance.get_runs() if r.tags.get("dagster/backfill")]
            last_end = max(instance.get_run_stats(r.run_id).end_time or 0 for r in runs)
            records = instance.fetch_materializations(key, limit=1).records
            if records and records[0].timestamp > last_end:
                late = records[0].timestamp - last_end
                return late, time.monotonic() - launched - (time.time() - records[0].timestamp)
        time.sleep(0.5)
    raise TimeoutError("no comparison after the backfill")


def wait_for_daemon(home: Path, timeout_s: float = 120) -> None:
    """Until the daemon that launches backfill runs has beaten for this instance."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with dg.DagsterInstance.from_config(str(home)) as instance:
            if daemon_running(instance):
                return
        time.sleep(0.5)  # not beating yet: poll again
    raise TimeoutError("the Dagster daemon did not start")


def measure(executor: str) -> dict:
    root = Path(tempfile.mkdtemp(prefix=f"ui-bench-{executor}-"))
    config = root / "rag_eval.yaml"
    config.write_text(f"executor: {executor}\n")
    env = {**os.environ, "RAG_EVAL_CONFIG": str(config), "DAGSTER_HOME": str(root / "home")}
    rag_eval = Path(sys.executable).with_name("rag-eval")
    subprocess.run(
        [
            str(rag_eval),
            "--dagster-home",
            str(root / "home"),
            "run",
            "--dataset",
            str(DATASET),
            "--models",
            ",".join(MODELS),
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "dagster", "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for_webserver(url)
        wait_for_daemon(root / "home")
        one = backfill(url, root / "home", ["oracle"])
        three = backfill(url, root / "home", MODELS)
        late, readable = comparison_after(root / "home", three[3])
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:  # a sensor's run still finishing: stop it all
            os.killpg(server.pid, signal.SIGKILL)
    for label, (wall, durations, compute, _) in (("1 partition", one), ("3 partitions", three)):
        runs = ", ".join(f"{d:.1f}" for d in durations)
        print(f"| {executor} | {label} | {wall:.1f} | {runs} | {compute:.1f} |", flush=True)
    print(
        f"|   {executor}: comparison stored {late:.1f} s after the last evaluation run ended; "
        f"launch to a readable comparison {readable:.1f} s |",
        flush=True,
    )
    return {"one": one, "three": three}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["in_process", "multiprocess"], help="one executor, no ratio")
    args = parser.parse_args()
    print("| executor | backfill | wall s (launch to last success) | run durations s | step compute s |")
    print("|---|---|---|---|---|", flush=True)
    if args.only:
        measure(args.only)
        return
    results = {executor: measure(executor) for executor in ("multiprocess", "in_process")}
    base, new = results["multiprocess"], results["in_process"]
    print(
        f"\nratio in_process / multiprocess: 1 partition {new['one'][0] / base['one'][0]:.2f}, "
        f"3 partitions {new['three'][0] / base['three'][0]:.2f}"
    )


if __name__ == "__main__":
    main()
