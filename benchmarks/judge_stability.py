"""Benchmark: how steady judges are, measured by the pipeline itself (`rag-eval run` with
--judge-repeats 3 and a jury) on one answer model's cases, for

- the tests' Messages-API stand-in: a stable judge (claude-sonnet-4-6) and one that re-draws 40% of
  its verdicts' axes at random (claude-haiku-4-5), with their jury;
- the real local SmolLM2-135M judge (strict:local:smollm2 on llama.cpp) at temperature 0 and 0.7.

Prints each judge's flip rate per axis with its exact interval, the jury's alpha, the calls made
and the wall time of the first and of a second (cached) run.

    PYTHONPATH=. python benchmarks/judge_stability.py [--cases 12]
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import dagster as dg

from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.definitions import build_definitions
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.instance.runs import run_evaluation
from stand_ins.anthropic_api import FakeAnthropic, UnstableJudges

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO.parent / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"
MODEL = "extractive-baseline"


def figures(settings: dict, judges: list[str], cases: int, jury: bool) -> None:
    defs = build_definitions(Settings.model_validate(settings))
    with dg.instance_for_test(temp_dir=tempfile.mkdtemp()) as instance:
        timings = []
        for _ in range(2):
            started = time.perf_counter()
            run_evaluation(
                defs, instance, [MODEL], dataset=str(DATASET), sample=cases, judges=judges,
                judge_repeats=3, jury="median" if jury else None, echo=lambda _: None,
            )  # fmt: skip
            timings.append(time.perf_counter() - started)
        summary = load_asset(instance, "metric_summary", MODEL)
        overall = summary[summary["group"] == "all"]
        shown = overall[overall["metric"].str.endswith(("_flip_rate", "_juror_alpha"))]
        for row in shown.itertuples():
            interval = f" [{row.ci_low:.2f}, {row.ci_high:.2f}]" if row.metric.endswith("_flip_rate") else ""
            print(f"  {row.judge_id:<22} {row.metric:<32} {row.mean:.3f}{interval} (n={row.n})")
        print(f"  first run {timings[0]:.1f} s, second (cached) {timings[1]:.1f} s")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=12)
    parser.add_argument("--skip-local", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("ANTHROPIC_API_KEY", "stand-in")
    print(f"stand-in judges, {args.cases} cases of {MODEL}, 3 re-scores each:")
    with FakeAnthropic(UnstableJudges({"claude-haiku-4-5": 0.4}, seed=7)) as server:
        figures(
            {"anthropic": {"base_url": server.url}},
            ["reference", "claude-sonnet-4-6", "claude-haiku-4-5"], args.cases, jury=True,
        )  # fmt: skip
        print(f"  calls to the stand-in: {len(server.requests)}")
    if not args.skip_local:
        for temperature in (None, 0.7):
            print(f"strict:local:smollm2 (SmolLM2-135M on llama.cpp), temperature {temperature or 0}:")
            figures(
                {"judge_temperature": temperature},
                ["reference", "strict:local:smollm2"],
                args.cases,
                jury=False,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
