"""Measured coverage of the interval methods at nominal 95%, per sample size.

    .venv/bin/python benchmarks/interval_coverage.py

Samples of n scores are drawn from known 0/1 and 0/0.5/1 distributions (see
``rag_eval_pipeline/metrics/coverage.py``); a method's coverage is the share of samples whose
interval contains the true mean. Printed: the lowest coverage over the distributions (and which),
and the mean, for Clopper-Pearson (the default), Wilson and the percentile bootstrap (the old
default), side by side in one run.
"""

import time

from rag_eval_pipeline.metrics.coverage import coverage_table
from rag_eval_pipeline.reporting.markdown import to_markdown


def main() -> None:
    import pandas as pd

    started = time.perf_counter()
    table = pd.DataFrame(coverage_table(samples=4000))
    print(to_markdown(table))
    print(f"\n{time.perf_counter() - started:.1f}s")


if __name__ == "__main__":
    main()
