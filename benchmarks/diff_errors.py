"""How often `rag-eval diff --fail-on-regression` blocks a pull request that changed nothing, and
whether it blocks one that made retrieval worse.

Two real evaluations of the shared data (the extractive baseline reading 6 passages, then 2):
1. False alarms: the null of no change, made from the real scores by swapping each case's two
   evaluations at random (every metric and judge of a case together, so the metrics' own
   correlation is kept): the share of simulated pull requests the gate fails, against its level;
   and the share that any tag row flags (shown, not gated) for comparison.
2. The real change: the gate on k6 -> k2, and on each sample size, the share of random subsets of
   the cases on which it fails (its power at that size).

    python benchmarks/diff_errors.py [--simulations 300] [--sample 0]
"""

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"
WIDE, NARROW = "baseline@bm25-k6", "baseline@bm25-k2"


def _evaluations(home: Path, sample: int):
    import dagster as dg

    from rag_eval_pipeline import cli
    from rag_eval_pipeline.defs.evaluations import InstanceRecords, load_evaluation, pin

    arguments = ["--dagster-home", str(home), "run", "--dataset", str(SHARED), "--sample", str(sample)]
    assert cli.main([*arguments, "--models", f"{WIDE},{NARROW}"]) == 0
    records = InstanceRecords(dg.DagsterInstance.from_config(str(home)))
    return load_evaluation(records, pin(records, WIDE)), load_evaluation(records, pin(records, NARROW))


def _swapped(before, after, rng):
    """The two evaluations with each case's sides swapped with probability 1/2."""
    keys = ["qid", "repeat", "judge_id"]
    a = before.scores.set_index(keys).sort_index()
    b = after.scores.set_index(keys).reindex(a.index)[a.columns]
    qids = a.index.get_level_values("qid")
    unique = qids.unique()
    mask = qids.isin(unique[rng.random(len(unique)) < 0.5])
    left, right = a.copy(), b.copy()
    left.loc[mask] = b.loc[mask].to_numpy()
    right.loc[mask] = a.loc[mask].to_numpy()
    return replace(before, scores=left.reset_index()), replace(after, scores=right.reset_index())


def _subset(evaluation, qids):
    return replace(evaluation, scores=evaluation.scores[evaluation.scores["qid"].isin(qids)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=300)
    parser.add_argument("--sample", type=int, default=0, help="questions (0: all 500)")
    args = parser.parse_args()
    import numpy as np
    import pandas as pd

    from rag_eval_pipeline.metrics.diff import DiffSpec, diff_evaluations
    from rag_eval_pipeline.reporting.markdown import to_markdown

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        before, after = _evaluations(Path(folder) / "home", args.sample)
    spec = DiffSpec(draws=2000)  # Monte Carlo p-values only where exact enumeration is too large
    real = diff_evaluations(before, after, spec)
    cases, worse = before.scores["qid"].nunique(), len(real.significant_regressions())
    print(f"k6 -> k2 on {cases} cases: {worse} metrics worse")
    rng = np.random.default_rng(7)
    gated = tagged = 0
    for _ in range(args.simulations):
        a, b = _swapped(before, after, rng)
        diff = diff_evaluations(a, b, spec)
        gated += not diff.significant_regressions().empty
        tagged += not diff.worse_tags().empty
    n = args.simulations
    se = (0.05 * 0.95 / n) ** 0.5
    print(
        f"\nFalse alarms under no change ({n} simulated pull requests; level 0.05, simulation SE {se:.3f}):"
    )
    print(
        to_markdown(
            pd.DataFrame(
                [{"gate fails (overall family)": gated / n, "a tag row flags (not gated)": tagged / n}]
            )
        )
    )
    qids = before.scores["qid"].unique()
    rows = []
    for size in (25, 50, 100, 200):
        fails = 0
        trials = max(20, n // 3)
        for _ in range(trials):
            chosen = set(rng.choice(qids, size=size, replace=False))
            fails += (
                not diff_evaluations(_subset(before, chosen), _subset(after, chosen), spec)
                .significant_regressions()
                .empty
            )
        rows.append({"cases": size, "trials": trials, "gate fails on k6 -> k2": fails / trials})
    print("\nThe real change (retrieval k 6 -> 2) on random subsets:")
    print(to_markdown(pd.DataFrame(rows)))
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
