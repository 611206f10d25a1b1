"""Benchmark: one evaluation of many cases on one machine, and where its memory goes (issue 58).

The cases are the 500 shared questions repeated under distinct ids (``<id>-r<n>``), so the
knowledge base stays the 4,943 shared passages and only the cases grow. Each size runs
`rag-eval run --dataset FILE --sample N --models ...` on a fresh home in its own process; this
script samples the resident memory of that process and its children from /proc every 50 ms and
files each sample under the stage the command last announced (``[knowledge base] ...``,
``[model 1/2] ...``, ``[comparison] ...``), so the table says which stage reaches the peak.

Reported per size: wall, CPU time (user + system of the command and its children), peak
RSS, peak RSS per stage, eval_report.html's size, the home folder's size, and KB of peak RSS
per case x model.

    .venv/bin/python benchmarks/cases_at_scale.py [--sizes 500,5000,20000]
        [--models extractive-baseline,oracle]
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO.parent / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"
PAGE = os.sysconf("SC_PAGE_SIZE")


def write_cases(rows: list[dict], size: int, path: Path) -> None:
    """``size`` cases: the shared rows in turn, each copy under an id of its own."""
    with path.open("w") as out:
        for n in range(size):
            row = dict(rows[n % len(rows)])
            row["id"] = f"{row['id']}-r{n // len(rows)}"
            out.write(json.dumps(row) + "\n")


def tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and every process below it (read from /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
            rss[int(entry)] = int(Path(f"/proc/{entry}/statm").read_text().split()[1]) * PAGE
        except (OSError, ValueError, IndexError):
            continue  # a process that ended while it was read
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo += children.get(pid, [])
    return total


def _children_cpu() -> float:
    """User + system CPU seconds of this process's ended children."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def measure(size: int, models: str, rows: list[dict], root: Path) -> dict:
    dataset, home = root / f"cases_{size}.jsonl", root / f"home_{size}"
    write_cases(rows, size, dataset)
    command = [
        str(Path(sys.executable).parent / "rag-eval"),
        "--dagster-home",
        str(home),
        "run",
        "--dataset",
        str(dataset),
        "--sample",
        str(size),
        "--models",
        models,
    ]
    started, used_before = time.perf_counter(), _children_cpu()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=root)
    stage = ["start"]
    peaks: dict[str, int] = {}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            used = tree_rss(process.pid)
            peaks[stage[0]] = max(peaks.get(stage[0], 0), used)
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output = []
    for line in process.stdout:  # type: ignore[union-attr]
        output.append(line)
        if line.startswith("[") and line.rstrip().endswith(" ..."):  # "[model 1/2] M: answer, ... ..."
            stage[0] = line.rstrip().removesuffix(" ...").split(":")[0]
    code = process.wait()
    done.set()
    sampler.join()
    wall = time.perf_counter() - started
    cpu = _children_cpu() - used_before  # a loaded machine stretches the wall, less the CPU
    if code != 0:
        raise SystemExit(f"rag-eval run failed at {size} cases:\n{''.join(output[-20:])}")
    report = home / "storage" / "artifacts" / "eval_report.html"
    home_bytes = sum(f.stat().st_size for f in home.rglob("*") if f.is_file())
    n_models = len(models.split(","))
    peak = max(peaks.values())
    return {
        "size": size,
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_gb": peak / 1e9,
        "kb_per_case_model": peak / 1e3 / (size * n_models),
        "report_mb": report.stat().st_size / 1e6,
        "home_mb": home_bytes / 1e6,
        "stages": {name: used / 1e9 for name, used in peaks.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="500,5000,20000")
    parser.add_argument("--models", default="extractive-baseline,oracle")
    parser.add_argument("--dataset", default=str(DATASET))
    args = parser.parse_args()
    rows = [json.loads(line) for line in Path(args.dataset).read_text().splitlines() if line.strip()]
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for size in (int(s) for s in args.sizes.split(",")):
            results.append(measure(size, args.models, rows, Path(folder)))
            print(json.dumps(results[-1]), flush=True)
    n_models = len(args.models.split(","))
    print(
        "\n| cases x models | wall | CPU (user + sys) | peak RSS | KB a case x model | eval_report.html "
        "| home folder |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        print(
            f"| {r['size']:,} x {n_models} | {r['wall_s']:.1f} s | {r['cpu_s']:.1f} s "
            f"| {r['peak_gb']:.2f} GB | "
            f"{r['kb_per_case_model']:.0f} | {r['report_mb']:.1f} MB | {r['home_mb']:.0f} MB |"
        )
    stages = list(dict.fromkeys(name for r in results for name in r["stages"]))
    print("\nPeak RSS by stage (GB)\n")
    print("| stage | " + " | ".join(f"{r['size']:,}" for r in results) + " |")
    print("| --- |" + " --- |" * len(results))
    for name in stages:
        print(f"| {name} | " + " | ".join(f"{r['stages'].get(name, 0):.2f}" for r in results) + " |")


if __name__ == "__main__":
    main()
