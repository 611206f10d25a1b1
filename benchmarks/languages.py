"""Benchmark: the test material's lists (Chinese, Spanish, Japanese: ten documents and ten
questions each; Korean, Arabic, Hindi, German: six each; no language set), one mixed run
through the command line (``--each``: and one run per language), and what detection and
analysis cost.

Prints the per-language means of the oracle, the extractive baseline and two agents answering in
sentences (right ones, wrong ones), then detection's and each analyzer's time.

    PYTHONPATH=. .venv/bin/python benchmarks/languages.py [--languages ko,ar,hi,de] [--each]
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rag_eval_pipeline.language.analysis import analyzer
from rag_eval_pipeline.language.detect import resolve_languages
from rag_eval_pipeline_tests.support.languages import BY_LANGUAGE, write_project


def run(languages: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="rag-eval-languages-") as folder:
        config = write_project(Path(folder), languages)
        started = time.perf_counter()
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "rag_eval_pipeline.cli",
                "--config",
                str(config),
                "--dagster-home",
                str(Path(folder) / "home"),
                "run",
            ],
            capture_output=True,
            text=True,
            cwd=folder,
            check=True,
        )
        cases = sum(len(BY_LANGUAGE[code]) for code in languages)
        print(
            f"{','.join(languages)}: one run, {cases} cases x 5 models: {time.perf_counter() - started:.1f} s"
        )
        if len(languages) > 1:
            print(run.stdout[run.stdout.index("By language") : run.stdout.index("Paired")])
        else:
            print(run.stdout[run.stdout.index("| answer_model") : run.stdout.index("Paired")])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--languages", default=",".join(sorted(BY_LANGUAGE)), help="codes, comma-separated")
    parser.add_argument("--each", action="store_true", help="also one run per language")
    args = parser.parse_args()
    chosen = args.languages.split(",")
    run(chosen)
    if args.each:
        for code in chosen:
            run([code])
    texts = [f"{c.question}\n{c.answer}" for cases in BY_LANGUAGE.values() for c in cases]
    started = time.perf_counter()
    resolve_languages(texts)  # Lingua loads each script's models when a text of it first comes
    first = time.perf_counter() - started
    started = time.perf_counter()
    found = resolve_languages(texts * 100)
    rest = (time.perf_counter() - started) / len(found)
    print(f"detection: {first:.2f} s for the first 30 texts (models loaded), then {rest * 1e6:.0f} us a case")
    for code, cases in sorted(BY_LANGUAGE.items()):
        documents = [c.document for c in cases] * 50
        analyzer(code).terms(documents[0])
        started = time.perf_counter()
        for document in documents:
            analyzer(code).terms(document)
        per = (time.perf_counter() - started) / len(documents)
        print(f"{code}: index terms {per * 1e6:.0f} us a document of {len(cases[0].document)} characters")


if __name__ == "__main__":
    main()
