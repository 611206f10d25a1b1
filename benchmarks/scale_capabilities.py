"""Benchmark: the newer capabilities at scale, each at two sizes, with a floor where one exists.

- probes: `rag-eval probe` of `extractive-baseline` over N shared cases x 3 attacks (an
  evaluated instance made first, outside the measure);
- simulation: `rag-eval simulate` of N scripted scenarios x 3 trials against the tests' own
  conversational HTTP agent (``rag_eval_pipeline_tests/trajectories/conversational_agent.py``),
  served by a process of its own; floor: the same agent requests made bare with httpx;
- images: `rag-eval run` over N Pillow-drawn images, a question each with its gold image and
  box, `oracle` and a file of answers whose boxes are shifted (the grounding judge joins); floor:
  each image read, hashed and opened with Pillow, and each answer's IoU, in plain Python;
- events: `rag-eval run` of `extractive-baseline` over N cases with `tracing.evaluation_events`
  to a file (no collector), beside the same run with events off (the baseline);
- kb health: the pure ``health.assess`` over N passages derived from the shared 4,943 (as
  ``benchmarks/scale.py`` derives them) and the 500 shared questions; floor: every passage's
  words read and counted once in plain Python.

Each measure runs in a fresh process; its resident memory and its children's is read from /proc
every 200 ms (the peak is the process tree's high-water mark). "In calls" is the time during
which at least one call to the answer model or the agent was in flight (offline models' ``answer``
and httpx's ``send``, wrapped in the measured process): the stand-ins answer at once, so it is the
calls' own cost, the rest is ours.

    PYTHONPATH=. .venv/bin/python benchmarks/scale_capabilities.py [--only probes,images]
        [--quarter] (the smaller size only)
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]

from benchmarks.cases_at_scale import DATASET, tree_rss, write_cases  # noqa: E402

SIZES = {  # (a quarter, the full size)
    "probes": (125, 500),
    "simulation": (25, 100),
    "images": (500, 2000),
    "events": (5000, 20000),
    "events_off": (5000, 20000),
    "kb_health": (25_000, 100_000),
}
FLOORS = {"simulation", "images", "kb_health"}
TRIALS = 3
OFFLINE_BASELINE = (
    "answer_models:\n  - {name: extractive-baseline, provider: offline, model: extractive-baseline}\n"
)
BOX = 24  # a gold box's side in pixels


class CallClock:
    """Time during which at least one call is in flight (calls overlap under concurrency)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._in_flight = 0
        self._since = 0.0
        self.busy_s = 0.0
        self.calls = 0

    def enter(self) -> None:
        with self._lock:
            if self._in_flight == 0:
                self._since = time.perf_counter()
            self._in_flight += 1
            self.calls += 1

    def leave(self) -> None:
        with self._lock:
            self._in_flight -= 1
            if self._in_flight == 0:
                self.busy_s += time.perf_counter() - self._since

    def wrap(self, owner: type, name: str) -> None:
        original = getattr(owner, name)
        if getattr(original, "__wrapped_by_clock__", False):
            return
        if _is_coroutine(original):

            async def timed_async(*args, **kwargs):
                self.enter()
                try:
                    return await original(*args, **kwargs)
                finally:
                    self.leave()

            timed = functools.wraps(original)(timed_async)
        else:

            def timed_sync(*args, **kwargs):
                self.enter()
                try:
                    return original(*args, **kwargs)
                finally:
                    self.leave()

            timed = functools.wraps(original)(timed_sync)
        timed.__wrapped_by_clock__ = True
        setattr(owner, name, timed)


def _is_coroutine(function) -> bool:
    import inspect

    return inspect.iscoroutinefunction(function)


def clocked_calls() -> CallClock:
    """The answer models' and agents' calls of this process, timed."""
    import httpx

    from rag_eval_pipeline.answering.offline import OFFLINE_ANSWER_MODELS

    clock = CallClock()
    for model in set(OFFLINE_ANSWER_MODELS.values()):
        clock.wrap(model, "answer")
    clock.wrap(httpx.AsyncClient, "send")
    clock.wrap(httpx.Client, "send")
    return clock


def rag_eval_in_process(root: Path, *args: str) -> None:
    from rag_eval_pipeline import cli

    with open(root / "out.txt", "w") as out, contextlib.redirect_stdout(out):
        common = ["--config", str(root / "rag_eval.yaml"), "--dagster-home", str(root / "home")]
        code = cli.main([*common, *args])
    if code != 0:
        raise SystemExit(f"rag-eval {' '.join(args)} exited {code}: {(root / 'out.txt').read_text()[-2000:]}")


# --- setups (outside the measure) and workers (the measure, in a fresh process) ---


def setup_probes(root: Path, size: int) -> None:
    config = f"dataset: {{source: '{DATASET}', sample_size: {size}}}\n"
    config += OFFLINE_BASELINE
    (root / "rag_eval.yaml").write_text(config)
    subprocess.run(
        [sys.executable, "-m", "rag_eval_pipeline.cli", "--config", str(root / "rag_eval.yaml")]
        + ["--dagster-home", str(root / "home"), "run", "--models", "extractive-baseline"],
        check=True,
        capture_output=True,
        cwd=root,
    )


def work_probes(root: Path, size: int) -> dict:
    clock = clocked_calls()
    attacks = "injection,poisoning,exfiltration"
    rag_eval_in_process(
        root, "probe", "--models", "extractive-baseline", "--attacks", attacks, "--sample", str(size)
    )
    return {"calls": clock.calls, "in_calls_s": clock.busy_s}


AGENT_SERVER = """
import sys, time
sys.path[:0] = [{repo!r}]
from rag_eval_pipeline_tests.trajectories import conversational_agent
server, _ = conversational_agent.serve()
print(server.server_address[1], flush=True)
while True:
    time.sleep(3600)
"""


def _scenarios(size: int) -> list[dict]:
    from rag_eval_pipeline_tests.trajectories.test_simulate import GOLDEN_SCENARIOS

    return [
        dict(GOLDEN_SCENARIOS[n % len(GOLDEN_SCENARIOS)], task_id=f"{GOLDEN_SCENARIOS[n % 3]['task_id']}-{n}")
        for n in range(size)
    ]


def setup_simulation(root: Path, size: int) -> None:
    import yaml

    from rag_eval_pipeline_tests.trajectories import conversational_agent

    agent = subprocess.Popen(
        [sys.executable, "-c", AGENT_SERVER.format(repo=str(REPO))],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    port = int(agent.stdout.readline())
    (root / "agent.pid").write_text(str(agent.pid))
    url = f"http://127.0.0.1:{port}/chat"
    (root / "agent.url").write_text(url)
    (root / "scenarios.jsonl").write_text("".join(json.dumps(s) + "\n" for s in _scenarios(size)))
    config = {
        "answer_models": [conversational_agent.entry(url, "1.0")],
        "simulation": {"tool_calls": "$.result.steps[*]", "trials": TRIALS},
    }
    (root / "rag_eval.yaml").write_text(yaml.safe_dump(config))


def work_simulation(root: Path, size: int) -> dict:
    clock = clocked_calls()
    scenarios = str(root / "scenarios.jsonl")
    rag_eval_in_process(root, "simulate", "--scenarios", scenarios, "--agent", "support", "--format", "json")
    return {"calls": clock.calls, "in_calls_s": clock.busy_s}


def floor_simulation(root: Path, size: int) -> dict:
    """The same sessions' agent requests, bare: each scripted user turn but the last (the one that
    says ###STOP###) posted in order, with the history so far."""
    import httpx

    url = (root / "agent.url").read_text()
    clock = CallClock()
    clock.wrap(httpx.Client, "send")
    with httpx.Client(timeout=30) as client:
        for trial in range(TRIALS):
            for scenario in _scenarios(size):
                session, history = f"floor-{scenario['task_id']}-{trial}", []
                for turn in scenario["user_turns"][:-1]:
                    history = [*history, {"role": "user", "content": turn}]
                    body = {"session": session, "message": turn, "history": history, "build": "1.0"}
                    reply = client.post(url, json=body).json()
                    history.append({"role": "assistant", "content": reply["result"]["output"]["text"]})
    return {"calls": clock.calls, "in_calls_s": clock.busy_s}


def _box(n: int) -> list[int]:
    x, y = (n * 7) % (96 - BOX), (n * 5) % (64 - BOX)
    return [x, y, x + BOX, y + BOX]


def setup_images(root: Path, size: int) -> None:
    import yaml
    from PIL import Image, ImageDraw

    docs = root / "docs"
    docs.mkdir()
    captions, questions, served = [], [], []
    for n in range(size):
        name = f"img/{n // 500}/figure-{n}.png"
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        image = Image.new("RGB", (96, 64), (n % 256, 200, 255 - n % 256))
        x0, y0, x1, y1 = _box(n)
        ImageDraw.Draw(image).rectangle((x0, y0, x1 - 1, y1 - 1), fill="red")
        image.save(docs / name)
        captions.append({"file": name, "caption": f"Figure {n}: a red square on a tinted field, plate {n}"})
        questions.append(
            {
                "id": f"q{n}",
                "question": f"Where is the red square of figure {n}, plate {n}?",
                "answer": f"at {x0} {y0}",
                "gold_images": [name],
                "gold_boxes": {name: [_box(n)]},
            }
        )
        shifted = [v + 6 for v in _box(n)]
        served.append(
            {
                "qid": f"q{n}",
                "answer": f"at {x0} {y0}",
                "contexts": [captions[-1]["caption"]],
                "images": [name],
                "boxes": [{"image": name, "box": shifted}],
            }
        )
    (docs / "images.jsonl").write_text("".join(json.dumps(c) + "\n" for c in captions))
    (root / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    (root / "served.jsonl").write_text("".join(json.dumps(s) + "\n" for s in served))
    settings = {
        "dataset": {"kind": "custom", "questions": str(root / "questions.jsonl"), "documents": str(docs)},
        "answer_models": [
            {"name": "oracle", "provider": "offline", "model": "oracle"},
            {"name": "shifted", "provider": "file", "path": str(root / "served.jsonl")},
        ],
        "judges": ["reference"],
    }
    settings["dataset"]["sample_size"] = 0
    (root / "rag_eval.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))


def work_images(root: Path, size: int) -> dict:
    clock = clocked_calls()
    rag_eval_in_process(root, "run", "--models", "oracle,shifted")
    return {"calls": clock.calls, "in_calls_s": clock.busy_s}


def _iou(a: list[int], b: list[int]) -> float:
    width = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    height = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = width * height
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union else 0.0


def floor_images(root: Path, size: int) -> dict:
    from PIL import Image

    docs, sizes = root / "docs", {}
    for caption in map(json.loads, (docs / "images.jsonl").open()):
        path = docs / caption["file"]
        hashlib.sha256(path.read_bytes()).hexdigest()
        with Image.open(path) as image:
            sizes[caption["file"]] = image.size
    scores = []
    for question, served in zip(
        map(json.loads, (root / "questions.jsonl").open()), map(json.loads, (root / "served.jsonl").open())
    ):
        for gold in question["gold_boxes"][question["gold_images"][0]]:
            for predicted in ([gold], [b["box"] for b in served["boxes"]]):  # oracle, shifted
                scores.append(max(_iou(gold, p) for p in predicted))
    return {"mean_iou": sum(scores) / len(scores)}


def _events_setup(root: Path, size: int, events: bool) -> None:
    rows = [json.loads(line) for line in DATASET.open()]
    write_cases(rows, size, root / "cases.jsonl")
    config = f"dataset: {{source: '{root / 'cases.jsonl'}', sample_size: {size}}}\n"
    config += OFFLINE_BASELINE
    if events:
        events_file = root / "events.jsonl"
        config += f"tracing: {{enabled: false, evaluation_events: true, events_file: '{events_file}'}}\n"
    (root / "rag_eval.yaml").write_text(config)


def setup_events(root: Path, size: int) -> None:
    _events_setup(root, size, events=True)


def setup_events_off(root: Path, size: int) -> None:
    _events_setup(root, size, events=False)


def work_events(root: Path, size: int) -> dict:
    clock = clocked_calls()
    rag_eval_in_process(root, "run", "--models", "extractive-baseline")
    records = 0
    if (root / "events.jsonl").exists():
        for line in (root / "events.jsonl").open():
            records += line.count('"gen_ai.evaluation.name"')
    return {"calls": clock.calls, "in_calls_s": clock.busy_s, "event_records": records}


work_events_off = work_events


def _passages(size: int):
    import pandas as pd

    from benchmarks.scale import derived_chunks, source_passages

    base, _ = source_passages()
    frames = [frame for _, frame in derived_chunks(base, size)]
    passages = pd.concat(frames, ignore_index=True)
    passages["language"] = "en"
    for column in ("updated_at", "valid_until", "supersedes"):
        passages[column] = None
    return passages


def setup_kb_health(root: Path, size: int) -> None:
    _passages(size).to_parquet(root / "passages.parquet")


def work_kb_health(root: Path, size: int) -> dict:
    import pandas as pd

    from rag_eval_pipeline.health.assess import HealthSettings, assess
    from rag_eval_pipeline.health.labels import CaseInput

    passages = pd.read_parquet(root / "passages.parquet")
    ids_by_title = dict(zip(passages["title"], passages["passage_id"]))
    cases = []
    for row in map(json.loads, DATASET.open()):
        retrieved = tuple(ids_by_title[t] for t in row["context"]["title"][:4] if t in ids_by_title)
        cases.append(CaseInput(row["id"], row["question"], row["answer"], row["answer"], False, retrieved))
    health = assess(passages, cases, settings=HealthSettings(as_of="2026-12-01"))
    return {"cases": len(health.cases), "documents": len(health.documents), "in_calls_s": 0.0, "calls": 0}


def floor_kb_health(root: Path, size: int) -> dict:
    import pandas as pd

    passages = pd.read_parquet(root / "passages.parquet")
    word = re.compile(r"\w+")
    vocabulary: Counter = Counter()
    for text in passages["passage"]:
        vocabulary.update(set(word.findall(text.lower())))
    return {"terms": len(vocabulary)}


# --- the measure ---


def measured(kind: str, name: str, root: Path, size: int) -> dict:
    """``kind`` (work or floor) of ``name`` in a fresh process: wall, peak RSS of its tree, and
    what it returned."""
    result = root / f"{kind}.json"
    command = [sys.executable, __file__, "--worker", name, "--kind", kind, "--size", str(size)]
    peak, started = 0, time.perf_counter()
    with open(root / f"{kind}.err", "w") as errors:
        process = subprocess.Popen([*command, "--root", str(root)], cwd=root, stderr=errors)
        while process.poll() is None:
            peak = max(peak, tree_rss(process.pid))
            time.sleep(0.2)
    wall = time.perf_counter() - started
    if process.returncode != 0:
        raise SystemExit(f"{name} {kind} at {size} failed: {(root / f'{kind}.err').read_text()[-3000:]}")
    return {**json.loads(result.read_text()), "process_wall_s": wall, "peak_mb": peak / 2**20}


def run_one(name: str, size: int) -> dict:
    root = Path(tempfile.mkdtemp(prefix=f"scale-{name}-{size}-"))
    globals()[f"setup_{name}"](root, size)
    try:
        row = {"name": name, "size": size, **measured("work", name, root, size)}
        if name in FLOORS:
            floor = measured("floor", name, root, size)
            row["floor_s"] = floor["wall_s"]
            row["floor_peak_mb"] = floor["peak_mb"]
    finally:
        if (root / "agent.pid").exists():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(int((root / "agent.pid").read_text()), 15)
    return row


def worker(name: str, kind: str, size: int, root: Path) -> None:
    started = time.perf_counter()
    found = globals()[f"{kind}_{name}"](root, size)
    found["wall_s"] = time.perf_counter() - started
    (root / f"{kind}.json").write_text(json.dumps(found))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated: " + ", ".join(SIZES))
    parser.add_argument("--quarter", action="store_true", help="the smaller size only")
    parser.add_argument("--sizes", help="two sizes instead of the issue's, e.g. 10000,40000")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--kind", default="work", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.kind, args.size, Path(args.root))
        return
    names = args.only.split(",") if args.only else list(SIZES)
    rows = []
    for name in names:
        sizes = [int(n) for n in args.sizes.split(",")] if args.sizes else SIZES[name]
        for size in sizes[:1] if args.quarter else sizes:
            row = run_one(name, size)
            rows.append(row)
            share = row["in_calls_s"] / row["wall_s"] if row["wall_s"] else 0.0
            floor = ""
            if "floor_s" in row:
                floor = f", floor {row['floor_s']:.2f} s (x{row['wall_s'] / row['floor_s']:.1f})"
            print(
                f"{name:<11} {size:>7}: wall {row['wall_s']:.1f} s (process {row['process_wall_s']:.1f} s), "
                f"peak {row['peak_mb']:.0f} MB, in calls {row['in_calls_s']:.2f} s ({share:.1%}, "
                f"{row['calls']} calls){floor}",
                flush=True,
            )
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
