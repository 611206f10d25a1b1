"""Benchmark: what holding the LLM limit costs per call, the instance's pool on PostgreSQL (every
machine of a deployment) against the slot files of one machine, measured in the same run.

One answer stage of N Claude calls through the real anthropic SDK to the tests' Messages-API
server (latency L s), concurrency C, each call holding its slot: with no shared limit, with slot
files, and with the instance's pool on PostgreSQL (a fresh database on --pg-url's server). Prints
each wall time and its ratio to the unlimited stage, and the ideal, ceil(N / C) x L.

    python benchmarks/deployment_limits.py --pg-url postgresql://postgres@127.0.0.1:5432/postgres
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg2

from rag_eval_pipeline.instance.home import InstanceStorage, open_instance
from rag_eval_pipeline.limits.in_flight import run_bounded
from rag_eval_pipeline.limits.pools import InstancePool
from rag_eval_pipeline.limits.slot_files import SharedSlots
from rag_eval_pipeline.llm.anthropic_client import AnthropicClient
from rag_eval_pipeline.llm.cache import CachedClient
from rag_eval_pipeline.llm.client import LLMRequest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from stand_ins.anthropic_api import FakeAnthropic  # noqa: E402


def _database(server: str) -> str:
    name = f"bench_{uuid.uuid4().hex[:8]}"
    connection = psycopg2.connect(server)
    connection.autocommit = True
    connection.cursor().execute(f'CREATE DATABASE "{name}"')
    connection.close()
    return server.rsplit("/", 1)[0] + f"/{name}"


def _stage(url: str, calls: int, concurrency: int, shared) -> float:
    inner = AnthropicClient("bench-key", url, timeout_s=30, max_retries=2)
    client = CachedClient(inner, None, max_in_flight=concurrency, shared=shared)
    requests = [
        LLMRequest("claude-haiku-4-5", ({"role": "user", "content": f"question {n} {uuid.uuid4()}"},))
        for n in range(calls)
    ]
    started = time.perf_counter()
    run_bounded(requests, client.complete, concurrency, close=inner.aclose)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pg-url", required=True, help="a PostgreSQL server (a database is created on it)")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()

    os.environ["DAGSTER_PG_URL"] = _database(args.pg_url)
    with tempfile.TemporaryDirectory() as folder, FakeAnthropic(latency_s=args.latency) as server:
        instance = open_instance(str(Path(folder) / "home"), InstanceStorage("DAGSTER_PG_URL", required=True))
        run_id = str(uuid.uuid4())  # the claims' run (freed below, as the run's end frees them)
        limits = {
            "none": None,
            "slot files": SharedSlots(Path(folder) / "slots", args.concurrency),
            "instance pool (PostgreSQL)": InstancePool(
                instance, "bench_llm", args.concurrency, run_id, "llm call"
            ),
        }
        ideal = math.ceil(args.calls / args.concurrency) * args.latency
        timings = {
            name: _stage(server.url, args.calls, args.concurrency, shared) for name, shared in limits.items()
        }
        assert server.max_in_flight <= args.concurrency
        instance.event_log_storage.free_concurrency_slots_for_run(run_id)
        instance.dispose()
    print(
        f"{args.calls} calls, concurrency {args.concurrency}, latency {args.latency} s; ideal {ideal:.2f} s"
    )
    print("| limit held | wall (s) | ratio to none | per call overhead (ms) |")
    print("|---|---|---|---|")
    for name, seconds in timings.items():
        overhead = (seconds - timings["none"]) / args.calls * args.concurrency * 1000
        print(f"| {name} | {seconds:.2f} | {seconds / timings['none']:.2f} | {overhead:.1f} |")


if __name__ == "__main__":
    main()
