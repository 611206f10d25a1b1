"""Benchmark: what tracing costs. `rag-eval run` in fresh instances, tracing off (the baseline, in
the same run) and on, sending every case to a real Phoenix started here:

- offline: all 500 shared questions, three offline models (1,500 traces, 6,000 spans);
- Claude: 35 questions, haiku answering and the STRICT judge, against the tests' Messages-API
  server with 0.2 s latency (35 traces per model, 4 spans each).

    python benchmarks/tracing_overhead.py [--phoenix PATH_TO_phoenix]
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from rag_eval_pipeline_tests.fake_anthropic import FakeAnthropic  # noqa: E402

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phoenix", default=str(REPO / ".ci" / "phoenix" / "venv" / "bin" / "phoenix"))
    options = parser.parse_args()
    phoenix, url = start_phoenix(options.phoenix)
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
        print("| run | tracing off s | tracing on s | on / off |")
        print("|---|---|---|---|", flush=True)
        off = run(offline, None)
        on = run(offline, {"preset": "phoenix", "endpoint": f"{url}/v1/traces", "project": "bench-offline"})
        print(f"| offline, 500 questions x 3 models | {off:.1f} | {on:.1f} | {on / off:.2f} |", flush=True)
        with FakeAnthropic(latency_s=0.2) as server:
            env = {"ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": server.url}
            off = run(claude, None, env)
            on = run(
                claude, {"preset": "phoenix", "endpoint": f"{url}/v1/traces", "project": "bench-claude"}, env
            )
        print(
            f"| Claude stand-in, 35 questions, answer + STRICT | {off:.1f} | {on:.1f} | {on / off:.2f} |"
        )
    finally:
        phoenix.terminate()
        phoenix.wait(timeout=60)


if __name__ == "__main__":
    main()
