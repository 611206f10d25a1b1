"""Benchmark: the report as a reader clicks it, in headless Chromium at 1,440 x 900, on a 500 x 5
report (five offline models) and optionally on a home you give (the 20,000 x 2 one of the
report-at-scale test). Measured with performance.now() in the page (the median of REPEATS fresh
loads):

- usable: the page's load event, or the end of its last long task if later; and its longest
  main-thread task (a PerformanceObserver on "longtask");
- next page, a sort by correctness, a filter by model and by case-id prefix (from typing stopped
  to rows drawn, the 80 ms debounce included), "go to a case": each from the event to the table
  drawn and the next frame, over every row of the report;
- the baseline in the same page: a filter that scans every row's text (model, judge, id, question,
  diagnosis) on each keystroke, as the table did on its page before the index.

    PYTHONPATH=. .venv/bin/python benchmarks/report_case_search.py [--home HOME]
"""

import argparse
import contextlib
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO.parent / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"
MODELS = {
    "oracle": "oracle",
    "null": "null",
    "extractive-baseline": "extractive-baseline",
    "baseline": "baseline",
    "baseline-k2": "extractive-baseline",
}
REPEATS = 5

# the baseline: every row's text built and searched, as a filter without an index would
_FULL_SCAN = """(q) => { const t0 = performance.now(), d = caseData; let shown = 0;
  for (let i = 0; i < d.m.length; i++) {
    const text = (d.models[d.m[i]] + ' ' + d.judges[d.j[i]] + ' ' + d.qids[d.q[i]] + ' ' +
      d.questions[d.q[i]] + ' ' + d.diagnoses[d.d[i]]).toLowerCase();
    if (text.includes(q)) shown++; }
  return performance.now() - t0; }"""
# the indexed filter's own work (no debounce, no drawing): what replaced the scan
_INDEXED = """(q) => { const t0 = performance.now(); matching(q); return performance.now() - t0; }"""


def evaluated_home(folder: Path) -> Path:
    models = "".join(
        f"  - {{name: '{name}', provider: offline, model: '{model}'"
        + (", top_k: 2" if "-k2" in name else "")
        + "}\n"
        for name, model in MODELS.items()
    )
    config = folder / "rag_eval.yaml"
    config.write_text(f"dataset: {{source: '{DATASET}', sample_size: 500}}\nanswer_models:\n{models}")
    rag_eval = str(Path(sys.executable).with_name("rag-eval"))
    home = folder / "home"
    subprocess.run(
        [rag_eval, "--config", str(config), "--dagster-home", str(home), "run"], check=True, cwd=folder
    )
    return home


def measure(report: Path) -> dict[str, float]:
    from rag_eval_pipeline_tests.support.report_page import LOAD_FIGURES, interaction_times, open_report
    from rag_eval_pipeline_tests.support.ui import browser_context

    times: dict[str, list[float]] = {}
    with contextlib.ExitStack() as stack:
        page = browser_context(stack).new_page()
        page.set_viewport_size({"width": 1440, "height": 900})
        for _ in range(REPEATS):
            open_report(page, report.as_uri())  # each from a fresh page
            loaded = page.evaluate(LOAD_FIGURES)
            ids = page.evaluate("caseData.qids")
            model = page.evaluate("caseData.models.at(-1)")
            found = {
                "usable": loaded["usable_ms"],
                "longest main-thread task": loaded["longest_task_ms"],
                **interaction_times(page, model, ids[len(ids) // 2][:8], ids[len(ids) // 3]),
                "model filter, indexed work": page.evaluate(_INDEXED, model),
                "model filter, full scan (baseline)": page.evaluate(_FULL_SCAN, model),
            }
            for what, ms in found.items():
                times.setdefault(what, []).append(ms)
    return {what: statistics.median(ms) for what, ms in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", help="an evaluated home (default: a 500 x 5 run in a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        home = Path(args.home) if args.home else evaluated_home(Path(folder))
        found = measure(home / "storage" / "artifacts" / "eval_report.html")
    for what, ms in found.items():
        print(f"{what:>24}: {ms:8.1f} ms (median of {REPEATS})")
    ratio = found["model filter, full scan (baseline)"] / max(found["model filter, indexed work"], 0.1)
    print(f"full scan / indexed filter: {ratio:.1f}x")


if __name__ == "__main__":
    main()
