"""Benchmark: how fast every touch is. In one run: `rag-eval --help`, an argument error,
`rag-eval models list`, `rag-eval explain` of a stored case, `plan` and `diff` of two stored
evaluations (each a fresh process, median of five), the offline run of 500 questions x 3
models (three runs, each on a new home), and its compute floor, each run followed by one (a
pair shares the machine's moment): the same work in plain Python in one fresh process (BM25
over the passages, the three offline answers, the official EM/F1, context relevance,
Clopper-Pearson intervals, parquet out), imports included.
Prints each figure and the ratio of the run to the floor, in wall and in CPU time (user +
system: what a shared, loaded machine stretches least).

    .venv/bin/python benchmarks/fast_commands.py [--dataset PATH]
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATASET = REPO.parent / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"
CLI = [sys.executable, "-m", "rag_eval_pipeline.cli"]

FLOOR = r"""
import json, re, string, sys, time
from collections import Counter
import bm25s, numpy as np, pandas as pd
from scipy.special import betaincinv

rows = [json.loads(line) for line in open(sys.argv[1])]
passages = {}
for row in rows:
    for title, sentences in zip(row["context"]["title"], row["context"]["sentences"]):
        passages.setdefault(title, "".join(sentences))
titles = list(passages)
retriever = bm25s.BM25()
def tokens(texts):
    return bm25s.tokenize(texts, stopwords="en", show_progress=False)
retriever.index(tokens(list(passages.values())), show_progress=False)
hits, _ = retriever.retrieve(tokens([r["question"] for r in rows]), k=4, show_progress=False)

punctuation = set(string.punctuation)
def normalize(text):
    text = "".join(ch for ch in text.lower() if ch not in punctuation)
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())
def f1(prediction, truth):
    p, g = normalize(prediction).split(), normalize(truth).split()
    same = sum((Counter(p) & Counter(g)).values())
    return 0.0 if same == 0 else 2 * (same / len(p)) * (same / len(g)) / (same / len(p) + same / len(g))
def interval(values):
    n, s = len(values), float(np.sum(values))
    low = 0.0 if s <= 0 else betaincinv(s, n - s + 1, 0.025)
    high = 1.0 if s >= n else betaincinv(s + 1, n - s, 0.975)
    return float(np.mean(values)), low, high

table = []
for model in ("extractive-baseline", "oracle", "null"):
    for row, found in zip(rows, hits):
        retrieved = [titles[i] for i in found]
        first = passages[retrieved[0]].split(". ")[0]
        answer = {"oracle": row["answer"], "null": "unknown", "extractive-baseline": first}[model]
        gold = set(row["supporting_facts"]["title"])
        relevance = 1.0 if gold <= set(retrieved) else 0.5 if gold & set(retrieved) else 0.0
        exact = float(normalize(answer) == normalize(row["answer"]))
        table.append({"model": model, "qid": row["id"], "em": exact, "f1": f1(answer, row["answer"]),
                      "relevance": relevance})
frame = pd.DataFrame(table)
metrics = ("em", "f1", "relevance")
summary = [(m, k, *interval(g[k].to_numpy())) for m, g in frame.groupby("model") for k in metrics]
frame.to_parquet(sys.argv[2])
pd.DataFrame(summary, columns=["model", "metric", "mean", "low", "high"]).to_parquet(sys.argv[3])
"""


def timed(command: list[str], runs: int = 5, cwd: str | None = None) -> float:
    """The median wall time of ``runs`` fresh processes (their output thrown away)."""
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def _children_cpu() -> float:
    """User + system CPU seconds of this process's ended children."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _cpu_and_wall(command: list[str], cwd: str) -> tuple[float, float]:
    """One process's CPU time (user + system; what a loaded machine stretches least) and wall."""
    started, used = time.perf_counter(), _children_cpu()
    subprocess.run(command, check=True, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return _children_cpu() - used, time.perf_counter() - started


def _offline_run(folder: str, home: str, dataset: str) -> tuple[float, float]:
    """One 500 x 3 offline run on a new home (the last one's stays for the reading commands)."""
    shutil.rmtree(home, ignore_errors=True)
    return _cpu_and_wall([*CLI, "--dagster-home", home, "run", "--dataset", dataset, "--sample", "0"], folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=str(DEFAULT_DATASET))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rag-eval-fast-") as folder:
        home = str(Path(folder) / "home")
        outputs = [f"{folder}/cases.parquet", f"{folder}/summary.parquet"]
        floor = [sys.executable, "-c", FLOOR, args.dataset, *outputs]
        # run and floor alternate, so that a busy moment of the machine slows a pair, not one side
        pairs = [(_offline_run(folder, home, args.dataset), _cpu_and_wall(floor, folder)) for _ in range(3)]
        run_seconds = statistics.median(run[1] for run, _ in pairs)
        floor_seconds = statistics.median(floor_run[1] for _, floor_run in pairs)
        pair_ratio = statistics.median(run[1] / floor_run[1] for run, floor_run in pairs)
        run_cpu = statistics.median(run[0] for run, _ in pairs)
        floor_cpu = statistics.median(floor_run[0] for _, floor_run in pairs)
        cpu_ratio = statistics.median(run[0] / floor_run[0] for run, floor_run in pairs)
        qid = __import__("json").loads(Path(args.dataset).read_text().splitlines()[0])["id"]
        figures = {
            "rag-eval --help": timed([*CLI, "--help"], cwd=folder),
            "an argument error (run --sample ten)": timed([*CLI, "run", "--sample", "ten"], cwd=folder),
            "rag-eval models list": timed([*CLI, "--dagster-home", home, "models", "list"], cwd=folder),
            "rag-eval explain (a stored case)": timed(
                [*CLI, "--dagster-home", home, "explain", qid, "--model", "oracle"], cwd=folder
            ),
            "rag-eval plan --difference 0.1": timed([*CLI, "plan", "--difference", "0.1"], cwd=folder),
            "rag-eval diff null oracle (two stored)": timed(
                [*CLI, "--dagster-home", home, "diff", "null", "oracle"], cwd=folder
            ),
        }
    for what, seconds in figures.items():
        print(f"{what:45s} {seconds:6.2f} s (median of 5)")
    print(f"{'500 x 3 offline run (rag-eval run)':45s} {run_seconds:6.2f} s (median of 3)")
    print(f"{'its compute floor (plain Python, one process)':45s} {floor_seconds:6.2f} s (median of 3)")
    print(f"ratio run / floor: {run_seconds / floor_seconds:.1f} (the pairs' median ratio: {pair_ratio:.1f})")
    print(f"CPU time (user + sys): run {run_cpu:.2f} s, floor {floor_cpu:.2f} s (medians of 3)")
    print(f"CPU ratio run / floor: {run_cpu / floor_cpu:.1f} (the pairs' median ratio: {cpu_ratio:.1f})")
    print(f"bytecode of rag_eval_pipeline cached: {_bytecode_cached()}")


def _bytecode_cached() -> bool:
    """Whether the package's modules import from bytecode: an editable install under
    PYTHONDONTWRITEBYTECODE compiles every module in every process (about 0.4 s for a run)."""
    package = REPO / "rag_eval_pipeline"
    return any(package.glob("__pycache__/*.pyc")) or not os.environ.get("PYTHONDONTWRITEBYTECODE")


if __name__ == "__main__":
    main()
