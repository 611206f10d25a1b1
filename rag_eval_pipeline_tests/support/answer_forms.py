"""A labelled set of answers as agents write them, built from the shared HotpotQA sample: for
each question, the reference answer said in many natural forms (labelled right) and wrong
answers in the same forms, the reference named only to be rejected, hedges that list it among
other candidates, pasted passages that contain it (labelled wrong). What the answer-equivalence
rule of ``metrics/equivalence.py`` is measured on (the tests and benchmarks/answer_equivalence.py);
``seed`` picks which forms each question gets, so the tests and the benchmark see other sets."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

RIGHT_FORMS = (
    "{T}",
    "{t}.",
    "The answer is {T}.",
    "{T}, according to the passages.",
    "According to {g1} and {g2}, the answer is {T}.",
    "Based on the retrieved documents, it is {T}.",
    "{T} is the answer, as the {g1} passage states.",
    'The answer to "{Q}" is {T}.',
    "I believe the answer is {T} [1][2].",
    "{T}. This is stated in the {g2} article.",
    "Answer: {T} (source: {g1}).",
    "{Q} {T}.",
    "It's {T}.",
    "Sure! The answer is **{T}**.",
    "{T}\n\nSources: [1] {g1}, [2] {g2}",
    "{T} (see {g1}).",
)
WRONG_FORMS = (
    "{W}",
    "The answer is {W}.",
    "{W}, according to the passages.",
    "The answer is {W}, not {T}.",
    "It is not {T}.",
    "It could be {T}, {W}, or {V}.",
    "Either {T} or {W}.",
    "{T}, but the passages also suggest {W}.",
    "Probably {W}, though I am not sure.",
    "{T} is incorrect; the answer is {W}.",
    "Rather than {T}, it was {W}.",
    "Maybe {T} or maybe {W}.",
    "{T} and {W}.",
    "Not {T}.",
    "{W}, although some say {T}.",
    "I'm not sure; {T}?",
)
YES_RIGHT = (
    "Yes.",
    "Yes, they are.",
    "Yes, according to the passages.",
    "The answer is yes.",
    "yes",
    "Both do, so yes.",
)
YES_WRONG = (
    "No.",
    "No, they are not.",
    "The answer is no.",
    "no",
    "Neither does, so no.",
    "No, neither does.",
)


@dataclass(frozen=True)
class LabelledAnswer:
    qid: str
    question: str
    truth: str
    answer: str
    sources: tuple[str, ...]  # titles of the contexts the answer had
    right: bool
    form: str


def _candidates(row: dict, truth: str) -> list[str]:
    """Wrong answers from the question's own context: its titles that are neither gold nor the
    truth (each a real entity of the same question), shortest first."""
    gold = set(row["supporting_facts"]["title"])
    titles = [t.split(" (")[0] for t in row["context"]["title"] if t not in gold]
    return [t for t in dict.fromkeys(titles) if t.lower() != truth.lower() and truth.lower() not in t.lower()]


def _pasted(row: dict) -> str:
    """The gold passages pasted whole: they hold the truth, and say far more."""
    by_title = dict(zip(row["context"]["title"], row["context"]["sentences"]))
    return " ".join("".join(by_title[t]) for t in dict.fromkeys(row["supporting_facts"]["title"]))


def labelled_answers(
    path: Path, questions: int = 500, seed: int = 0, forms_each: int = 4
) -> list[LabelledAnswer]:
    """About ``forms_each`` right and as many wrong answers per question (forms drawn with
    ``seed``), pasted passages where they hold the truth, and yes/no cases made from the
    comparison questions (the sample has no yes/no answer of its own)."""
    rng = random.Random(seed)
    rows = [json.loads(line) for line in path.read_text().splitlines()[:questions]]
    out: list[LabelledAnswer] = []
    for row in rows:
        truth, question = row["answer"], row["question"]
        gold = list(dict.fromkeys(row["supporting_facts"]["title"]))
        others = _candidates(row, truth)
        if len(others) < 2 or len(gold) < 2:
            continue
        values = {"T": truth, "t": truth.lower(), "Q": question, "g1": gold[0], "g2": gold[1]}
        values |= {"W": others[0], "V": others[1]}
        # the contexts the answer had: the gold passages and two others (what a citation names)
        sources = (*gold, *[t for t in row["context"]["title"] if t not in gold][:2])
        for form in rng.sample(RIGHT_FORMS, forms_each):
            out.append(LabelledAnswer(row["id"], question, truth, form.format(**values), sources, True, form))
        for form in rng.sample(WRONG_FORMS, forms_each):
            out.append(
                LabelledAnswer(row["id"], question, truth, form.format(**values), sources, False, form)
            )
        pasted = _pasted(row)
        if truth.lower() in pasted.lower():
            out.append(LabelledAnswer(row["id"], question, truth, pasted, sources, False, "pasted passages"))
        if row["type"] == "comparison":
            yes_no = "yes" if rng.random() < 0.5 else "no"
            asked = f"Is it true that {truth} is the answer to this: {question}"
            right, wrong = (YES_RIGHT, YES_WRONG) if yes_no == "yes" else (YES_WRONG, YES_RIGHT)
            for form in rng.sample(right, 2):
                out.append(LabelledAnswer(row["id"], asked, yes_no, form, sources, True, f"yes/no: {form}"))
            for form in rng.sample(wrong, 2):
                out.append(LabelledAnswer(row["id"], asked, yes_no, form, sources, False, f"yes/no: {form}"))
    return out
