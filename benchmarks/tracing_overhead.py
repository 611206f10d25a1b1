"""Benchmark: what tracing costs. `rag-eval run` in fresh instances, tracing off (the baseline, in
the same run) and on, sending every case to a real Phoenix started here:

- offline: all 500 shared questions, three offline models (1,500 traces, 6,000 spans);
- Claude: 35 questions, haiku answering and the STRICT judge, against the tests' Messages-API
  server with 0.2 s latency (35 traces per model, 4 spans each).

Each run is timed three ways: tracing off (the baseline), on with a collector in another process
that discards what it gets (what tracing costs the evaluation itself), and on with the real
Phoenix on the same two cores (which adds Phoenix's own ingestion).
They alternate ``--repeat`` times (default 3) and medians are compared. Each Phoenix run gets a
fresh Phoenix, stopped after it: Phoenix goes on ingesting for a while after a run (about 6.5 ms
of CPU a span here), and that backlog must not slow the next run, traced or not.

    python benchmarks/tracing_overhead.py [--phoenix PATH_TO_phoenix] [--repeat N]
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from stand_ins.anthropic_api import FakeAnthropic  # noqa: E402

DATASET = REPO.parent / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"
RAG_EVAL = str(Path(sys.executable).with_name("rag-eval"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_phoenix(executable: str) -> tuple[subprocess.Popen, str]:
    folder = tempfile.mkdtemp(prefix="phoenix-bench-")
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": folder,
        "PHOENIX_PORT": str(port),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    process = subprocess.Popen(
        [executable, "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(240):
        try:
            urllib.request.urlopen(f"{url}/healthz", timeout=2)
            return process, url
        except OSError:
            time.sleep(0.5)  # still starting
    raise TimeoutError("phoenix did not start")


def run(args: list[str], tracing: dict | None, env: dict | None = None) -> float:
    root = Path(tempfile.mkdtemp(prefix="tracing-bench-"))
    config = root / "rag_eval.yaml"
    config.write_text(json.dumps({"tracing": {"enabled": True, **tracing}} if tracing else {}))
    started = time.perf_counter()
    subprocess.run(
        [RAG_EVAL, "--config", str(config), "--dagster-home", str(root / "home"), "run", *args],
        check=True,
        capture_output=True,
        env={**os.environ, **(env or {})},
    )
    return time.perf_counter() - started


DISCARDING_COLLECTOR = """
import http.server, sys
class Discard(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Discard).serve_forever()
"""


def start_discarding_collector() -> tuple[subprocess.Popen, str]:
    """An OTLP/HTTP endpoint in its own process that takes every request and keeps nothing:
    what tracing costs the evaluation itself, without a backend's ingestion on the same cores."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", DISCARDING_COLLECTOR, str(port)])
    for _ in range(100):
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return process, f"http://127.0.0.1:{port}/v1/traces"
        time.sleep(0.1)
    raise TimeoutError("the discarding collector did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phoenix", default=str(REPO / ".ci" / "phoenix" / "venv" / "bin" / "phoenix"))
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    discarding, discarding_url = start_discarding_collector()

    def medians(args: list[str], project: str, env: dict | None = None) -> tuple[float, float, float]:
        off, discarded, ingested = [], [], []
        for _ in range(options.repeat):
            off.append(run(args, None, env))
            discarded.append(run(args, {"endpoint": discarding_url}, env))
            phoenix, phoenix_url = start_phoenix(options.phoenix)  # fresh: no backlog of the last run
            try:
                tracing = {"preset": "phoenix", "endpoint": f"{phoenix_url}/v1/traces", "project": project}
                ingested.append(run(args, tracing, env))
            finally:
                phoenix.terminate()
                phoenix.wait(timeout=60)
        return statistics.median(off), statistics.median(discarded), statistics.median(ingested)

    def row(label: str, times: tuple[float, float, float]) -> str:
        off, discarded, ingested = times
        return (
            f"| {label} | {off:.1f} | {discarded:.1f} | {discarded / off:.2f} "
            f"| {ingested:.1f} | {ingested / off:.2f} |"
        )

    offline = ["--dataset", str(DATASET), "--sample", "500", "--models", "extractive-baseline,oracle,null"]
    claude = [
        "--dataset",
        str(DATASET),
        "--sample",
        "35",
        "--models",
        "haiku",
        "--judges",
        "reference,claude-sonnet-4-6",
    ]
    try:
        print(
            "| run | tracing off s | on, collector that discards s | ratio "
            "| on, Phoenix on the same cores s | ratio |"
        )
        print("|---|---|---|---|---|---|", flush=True)
        print(row("offline, 500 questions x 3 models", medians(offline, "bench-offline")), flush=True)
        with FakeAnthropic(latency_s=0.2) as server:
            env = {"ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": server.url}
            times = medians(claude, "bench-claude", env)
        print(row("Claude stand-in, 35 questions, answer + STRICT", times))
    finally:
        discarding.terminate()
        discarding.wait(timeout=60)


if __name__ == "__main__":
    main()
