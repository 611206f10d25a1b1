"""Benchmark: a case found in the report, in headless Chromium at 1,440 px, on a 500 x 5 report
(five offline models, three pages of 1,000 rows) and optionally on a home you give (the 20,000 x
2 one of the report-at-scale test). Measured with performance.now() in the page:

- a case id typed in the filter (its rows on every page, through the report's case index);
- "go to a case" (the same, from the jump field);
- a word in the filter (the 1,000-row page shown);
- the baseline in the same page: the filter as it was before the index, `innerText` of each of the
  1,000 rows read and its display set in turn (a layout forced per row).

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

# the filter before the case index, as it was: innerText of every row, its display set in turn
_OLD_FILTER = """(q) => { const t0 = performance.now(); let shown = 0;
  document.querySelectorAll('#cases tbody tr').forEach(r => { const v = r.innerText.toLowerCase().includes(q);
    r.style.display = v ? '' : 'none'; if (v) shown++; });
  document.body.offsetHeight; const ms = performance.now() - t0;
  document.querySelectorAll('#cases tbody tr').forEach(r => { r.style.display = ''; });
  return ms; }"""
_WORD = """(q) => { const t0 = performance.now(); const f = document.getElementById('case-filter');
  f.value = q; f.dispatchEvent(new Event('input')); document.body.offsetHeight;
  const ms = performance.now() - t0; f.value = ''; f.dispatchEvent(new Event('input')); return ms; }"""


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
    from rag_eval_pipeline_tests.support.ui import TIMED_CASE_SEARCH, browser_context

    times: dict[str, list[float]] = {
        "case id in the filter": [],
        "go to a case": [],
        "word filter": [],
        "old filter": [],
    }
    with contextlib.ExitStack() as stack:
        page = browser_context(stack).new_page()
        page.set_viewport_size({"width": 1440, "height": 900})
        for _ in range(REPEATS):
            page.goto(report.as_uri())  # each search from a fresh page: its pages not yet loaded
            ids = page.evaluate("Object.keys(caseIndex).sort()")
            times["old filter"].append(page.evaluate(_OLD_FILTER, "baseline-k2"))
            times["word filter"].append(page.evaluate(_WORD, "baseline-k2"))
            times["case id in the filter"].append(
                page.evaluate(TIMED_CASE_SEARCH, ["case-filter", "input", ids[-1]])
            )
            page.goto(report.as_uri())
            times["go to a case"].append(
                page.evaluate(TIMED_CASE_SEARCH, ["case-jump", "change", ids[len(ids) // 2]])
            )
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
    print(f"old filter / word filter: {found['old filter'] / found['word filter']:.1f}x")


if __name__ == "__main__":
    main()
