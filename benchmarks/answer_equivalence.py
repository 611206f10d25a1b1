"""Benchmark: how well `correctness` reads answers as agents write them. A labelled set of
answers in many forms (``rag_eval_pipeline_tests/support/answer_forms.py``: the reference said in
16 natural forms, wrong answers in the same forms, negations, hedges, pasted passages), built
from the shared 500 questions, scored by the rule; baselines in the same run: the official exact
match, and token F1 at 0.5, taken as verdicts. Prints precision and recall of "credited" against
the labels, and the forms each rule gets wrong most.

    .venv/bin/python benchmarks/answer_equivalence.py [--seed N]
"""

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag_eval_pipeline.metrics.reference import correctness, exact_match, f1  # noqa: E402
from rag_eval_pipeline_tests.support import SHARED_HOTPOTQA  # noqa: E402
from rag_eval_pipeline_tests.support.answer_forms import labelled_answers  # noqa: E402

RULES = {
    "correctness (the rule)": lambda a: (
        correctness(a.answer, a.truth, question=a.question, sources=a.sources) == 1.0
    ),
    "exact match (official)": lambda a: exact_match(a.answer, a.truth) == 1.0,
    "token F1 >= 0.5": lambda a: f1(a.answer, a.truth) >= 0.5,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    answers = labelled_answers(SHARED_HOTPOTQA, seed=args.seed)
    forms = len({a.form for a in answers})
    print(f"{len(answers)} labelled answers in {forms} forms ({sum(a.right for a in answers)} right)\n")
    print("| rule | precision | recall | false credits | missed |")
    print("|---|---|---|---|---|")
    wrong_by_rule = {}
    for name, rule in RULES.items():
        tp = fp = fn = 0
        wrong = Counter()
        for answer in answers:
            credited = rule(answer)
            tp += credited and answer.right
            fp += credited and not answer.right
            fn += (not credited) and answer.right
            if credited != answer.right:
                wrong[answer.form] += 1
        precision = tp / (tp + fp) if tp + fp else float("nan")
        print(f"| {name} | {precision:.3f} | {tp / (tp + fn):.3f} | {fp} | {fn} |")
        wrong_by_rule[name] = wrong
    for name, wrong in wrong_by_rule.items():
        shown = "; ".join(f"{form!r} {count}" for form, count in wrong.most_common(3)) or "none"
        print(f"\n{name}, forms most often wrong: {shown}")
    print(f"\n{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
