"""Benchmark: the real local judge on a busy machine. The same small run (`rag-eval run --models
oracle --sample 4 --judges reference,local:smollm2`, a fresh home each time, so no cached call)
on a quiet machine and with one core kept busy by another process (what a CI worker beside
another, or a user's other job, does), with the server on every core, on one thread
(`local.threads: 1`) and on the cores free when it starts (the default). Interleaved, median
of two; prints each figure and its ratio to the same setting when quiet.

    .venv/bin/python benchmarks/local_llm_contention.py [--dataset PATH] [--repeats 2]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATASET = REPO.parent / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"
CLI = [sys.executable, "-m", "rag_eval_pipeline.cli"]
SETTINGS = {
    "every core": f"local:\n  threads: {os.cpu_count()}\n",
    "one thread": "local:\n  threads: 1\n",
    "the free cores (the default)": "local:\n  threads: null\n",
}
HOG = "while True: pass"  # one core's worth of someone else's work


def _run(folder: Path, text: str, dataset: str) -> float:
    home = tempfile.mkdtemp(dir=folder)
    config = Path(home).with_suffix(".yaml")
    config.write_text(text)
    command = [*CLI, "--config", str(config), "--dagster-home", home, "run", "--dataset", dataset]
    command += ["--models", "oracle", "--sample", "4", "--judges", "reference,local:smollm2"]
    start = time.perf_counter()
    subprocess.run(command, check=False, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default=str(DEFAULT_DATASET))
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    times: dict[tuple[str, bool], list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.repeats):
            for busy in (False, True):
                hog = subprocess.Popen([sys.executable, "-c", HOG]) if busy else None
                try:
                    for name, text in SETTINGS.items():
                        seconds = _run(Path(folder), text, args.dataset)
                        times.setdefault((name, busy), []).append(seconds)
                finally:
                    if hog:
                        hog.kill()
                        hog.wait()
    print(f"{'server setting':28s} {'quiet s':>8s} {'one core busy s':>16s} {'ratio':>6s}")
    for name in SETTINGS:
        quiet, busy = (statistics.median(times[(name, b)]) for b in (False, True))
        print(f"{name:28s} {quiet:8.1f} {busy:16.1f} {busy / quiet:6.2f}")


if __name__ == "__main__":
    main()
