"""Benchmark: the offline correctness on answers as people write them in fifteen languages
(``rag_eval_pipeline_tests/support/answer_forms_languages.py``): per language, the share of
right answers credited (correctness 1.0), the share of wrong, negated, hedged and listed ones
refused (below 1.0), and their mean correctness; for the development set the rule was checked
against and for the held-out set written before it ran. Prints a table per set, and every
answer the rule gets wrong with its reason.

    .venv/bin/python benchmarks/answer_forms.py [--set development|held-out|both] [--quiet]
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag_eval_pipeline.language.table import language  # noqa: E402
from rag_eval_pipeline.metrics.equivalence import says_answer  # noqa: E402
from rag_eval_pipeline.metrics.reference import correctness  # noqa: E402
from rag_eval_pipeline_tests.support.answer_forms_languages import (  # noqa: E402
    DEVELOPMENT,
    HELD_OUT,
    LANGUAGES,
    forms,
)


def table(name: str, questions, quiet: bool) -> None:
    scored = [
        (f, correctness(f.answer, f.truth, question=f.question, language=f.language))
        for f in forms(questions)
    ]
    print(f"\n{name}: {len(scored)} answers, {len({f.question for f, _ in scored})} questions\n")
    print("| language | right credited | wrong refused | wrong mean correctness | answers |")
    print("|---|---|---|---|---|")
    for code in LANGUAGES:
        right = [s for f, s in scored if f.language == code and f.right]
        wrong = [s for f, s in scored if f.language == code and not f.right]
        print(
            f"| {language(code).name} ({code}) | {sum(s == 1.0 for s in right) / len(right):.2f} "
            f"| {sum(s < 1.0 for s in wrong) / len(wrong):.2f} | {sum(wrong) / len(wrong):.2f} "
            f"| {len(right)} + {len(wrong)} |"
        )
    if not quiet:
        for f, s in scored:
            if (s == 1.0) != f.right:
                reason = says_answer(f.answer, f.truth, f.question, (), f.language).reason
                print(f"  {f.language} {f.kind:8} {s:.1f} {f.answer!r} ({f.truth}): {reason}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=("development", "held-out", "both"), default="both")
    parser.add_argument("--quiet", action="store_true", help="the tables only")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.set in ("development", "both"):
        table("development set", DEVELOPMENT, args.quiet)
    if args.set in ("held-out", "both"):
        table("held-out set", HELD_OUT, args.quiet)
    print(f"\n{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
