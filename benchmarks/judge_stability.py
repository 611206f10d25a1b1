"""Benchmark: how steady judges are, measured by the pipeline itself (`rag-eval run` with
--judge-repeats 3 and a jury) on one answer model's cases, for

- the tests' Messages-API stand-in: a stable judge (claude-sonnet-4-6) and one that re-draws 40% of
  its verdicts' axes at random (claude-haiku-4-5), with their jury;
- the real local SmolLM2-135M judge (strict:local:smollm2 on llama.cpp) at temperature 0 and 0.7,
  and `rag-eval judges align` of it to a lenient reviewer's labels.

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


def local_alignment(cases: int) -> None:
    """`rag-eval judges align strict:local:smollm2` against a lenient reviewer's labels (the
    stand-ins' ``lenient_correctness``) of every case of two models."""
    import json

    from rag_eval_pipeline import cli
    from rag_eval_pipeline.instance.home import open_instance
    from stand_ins.anthropic_api import lenient_correctness

    folder = Path(tempfile.mkdtemp())
    (folder / "rag_eval.yaml").write_text("review:\n  folder: review\n")
    base = ["--dagster-home", str(folder / "home"), "--config", str(folder / "rag_eval.yaml")]
    models = ["extractive-baseline", "oracle"]
    judge = "strict:local:smollm2"
    run = ["run", "--dataset", str(DATASET), "--sample", str(cases), "--models", ",".join(models)]
    assert cli.main([*base, *run, "--judges", f"reference,{judge}"]) == 0
    instance = open_instance(str(folder / "home"))
    truth = load_asset(instance, "judgement_list").set_index("qid")["answer"]
    labels = []
    for model in models:
        assert (
            cli.main([*base, "review", "export", "--model", model, "--n", str(cases), "--name", model]) == 0
        )
        answers = load_asset(instance, "candidate_answers", model).set_index("qid")["answer"]
        for line in (folder / "review" / f"{model}.jsonl").read_text().splitlines():
            row = json.loads(line)
            if row["metric"] == "correctness":
                label = lenient_correctness(str(answers[row["qid"]]), str(truth[row["qid"]]))
                labels.append(
                    {**row, "label": label, "reviewer": "ana", "note": "", "labelled_at": "2026-12-02"}
                )
    (folder / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    assert cli.main([*base, "review", "import", str(folder / "labels.jsonl")]) == 0
    started = time.perf_counter()
    cli.main([*base, "judges", "align", judge])
    print(f"  align: {time.perf_counter() - started:.1f} s")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=12)
    parser.add_argument("--skip-local", action="store_true")
    parser.add_argument("--align-only", action="store_true", help="only the local judge's alignment")
    args = parser.parse_args()
    os.environ.setdefault("ANTHROPIC_API_KEY", "stand-in")
    if args.align_only:
        print(f"strict:local:smollm2 aligned to a lenient reviewer, {args.cases} cases x 2 models:")
        local_alignment(args.cases)
        return 0
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
