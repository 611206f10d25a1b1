"""How often a paired verdict is wrong, and how often a real difference is found.

1. False verdicts: families of equal models (every pair of 2, 3 or 6 models on 35 cases, scores on
   the judges' 0 / 0.5 / 1 scale), the share of families with at least one 'better' verdict,
   with the raw p-values (the baseline, before the change) and with Holm's adjustment.
2. Power: two models on n cases of 0/1 outcomes, the better one right on `difference` more of
   them (40% of the cases discordant); the share of comparisons that call it better, beside the
   number of cases `rag-eval plan` asks for at 80% power.

    python benchmarks/comparison_errors.py [--families 2000] [--trials 1000]
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag_eval_pipeline.metrics.simulation import Draws, false_verdict_rate, power  # noqa: E402
from rag_eval_pipeline.metrics.statistics import cases_needed  # noqa: E402
from rag_eval_pipeline.reporting.markdown import to_markdown  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", type=int, default=2000)
    parser.add_argument("--trials", type=int, default=1000)
    args = parser.parse_args()
    import pandas as pd

    started = time.perf_counter()
    rows = []
    for models in (2, 3, 6):
        raw = false_verdict_rate(models, 35, Draws(args.families, seed=models), adjust=False)
        holm = false_verdict_rate(models, 35, Draws(args.families, seed=models), adjust=True)
        rows.append(
            {"models": models, "pairs": models * (models - 1) // 2, "raw p (before)": raw, "Holm": holm}
        )
    print(f"False 'better' verdicts among equal models, n = 35, {args.families} families each:")
    print(to_markdown(pd.DataFrame(rows)))

    rows = []
    for difference in (0.05, 0.10, 0.15, 0.20, 0.30):
        row = {"difference": difference}
        for n in (20, 35, 50, 100, 150, 300):
            row[f"n={n}"] = power(difference, n, Draws(args.trials, seed=n))
        planned = cases_needed(difference, 0.4)  # the share of cases on which the models differ
        row["plan (80%)"] = planned
        row["power at plan"] = power(difference, planned, Draws(args.trials, seed=planned))
        rows.append(row)
    print(f"\nPower to call the better model better (40% of cases discordant, {args.trials} trials):")
    print(to_markdown(pd.DataFrame(rows), float_format="{:.2f}"))
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
