"""Benchmark: the answer stage against the team's agent over HTTP with 0.5 s latency.

100 questions, the agent's `concurrency: 8`, through `rag-eval run` (the candidate_answers
asset's own `seconds` metadata): its wall time against the ideal, 100 x 0.5 / 8 s, and against
the floor of the same calls made bare in the same run (httpx, 8 in flight, no pipeline). Then
the same run again: zero calls to the agent (its answers are cached by version).

    python benchmarks/agent_throughput.py [--cases 100] [--concurrency 8] [--latency 0.5]
"""

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dagster as dg
import httpx

from rag_eval_pipeline import cli

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from rag_eval_pipeline_tests.support.processes import free_port, stop_process_group  # noqa: E402

DEFAULT_DATASET = REPO.parent / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"


async def bare_calls(url: str, questions: list[str], concurrency: int) -> float:
    """The same requests, 8 in flight, straight through httpx: the floor of what is possible."""
    limit = asyncio.Semaphore(concurrency)

    async def one(client: httpx.AsyncClient, question: str) -> None:
        async with limit:
            response = await client.post(url, json={"query": question, "session": "bare"})
            response.raise_for_status()

    started = time.perf_counter()
    async with httpx.AsyncClient(timeout=30) as client:
        await asyncio.gather(*(one(client, q) for q in questions))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--dataset", default=str(DEFAULT_DATASET))
    args = parser.parse_args()
    port = free_port()  # the agent in its own process, as a team's service would be
    agent = subprocess.Popen(
        [sys.executable, "-m", "example_agent", "--port", str(port), "--latency", str(args.latency)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    agent.stdout.readline()  # "example agent at ...": listening
    url = f"http://127.0.0.1:{port}/chat"

    def requests() -> int:
        return httpx.get(f"http://127.0.0.1:{port}/_stats").json()["requests"]

    try:
        measure(args, url, requests)
    finally:
        stop_process_group(agent)


def measure(args: argparse.Namespace, url: str, requests) -> None:
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "rag_eval.yaml"
        config.write_text(
            f"dataset: {{source: '{args.dataset}', sample_size: {args.cases}}}\n"
            "answer_models:\n"
            f"  - {{name: agent, provider: http, url: '{url}', version: bench,\n"
            f"     concurrency: {args.concurrency},\n"
            "     body: {query: '{question}', session: 'eval-{qid}'},\n"
            "     response: {answer: $.data.reply.text,\n"
            "                contexts: '$.data.retrieval.documents[*].doc.body'}}\n"
        )
        home = str(Path(folder) / "home")
        os.environ.pop("DAGSTER_HOME", None)
        seconds = []
        for _ in range(2):
            before = requests()
            assert (
                cli.main(["--config", str(config), "--dagster-home", home, "run", "--models", "agent"]) == 0
            )
            with dg.DagsterInstance.from_config(home) as instance:
                record = instance.fetch_materializations(
                    dg.AssetRecordsFilter(
                        asset_key=dg.AssetKey("candidate_answers"), asset_partitions=["agent"]
                    ),
                    limit=1,
                ).records[0]
            seconds.append(
                (
                    record.asset_materialization.metadata["seconds"].value,
                    requests() - before,
                )
            )
        questions = [q for q in _questions(args.dataset, args.cases)]
        bare = asyncio.run(bare_calls(url, questions, args.concurrency))
    ideal = args.cases * args.latency / args.concurrency
    (stage, calls), (again, calls_again) = seconds
    print(
        f"\nanswer stage, {args.cases} questions, latency {args.latency} s, concurrency {args.concurrency}:"
    )
    print(f"  ideal {ideal:.2f} s; bare httpx calls {bare:.2f} s (ratio {bare / ideal:.3f})")
    print(
        f"  rag-eval's answer stage {stage:.2f} s, {calls} calls: ratio {stage / ideal:.3f} to the ideal, "
        f"{stage / bare:.3f} to bare"
    )
    print(f"  the same run again: {again:.2f} s, {calls_again} calls to the agent")


def _questions(path: str, n: int) -> list[str]:
    import json

    rows = [json.loads(line) for line in Path(path).read_text().splitlines()[:n]]
    return [r["question"] for r in rows]


if __name__ == "__main__":
    main()
