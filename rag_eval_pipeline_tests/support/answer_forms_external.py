"""Answer-form sets in ~40 languages written by an engineer who never read the offline
correctness rule (``data/answer_forms_external/``): each line a question, its reference answer,
a sentence of a document holding it (``passage``), and answers as people write them: ``right``
ones (inflected as the sentence needs) and ones the rule must not credit (``wrong``,
``negated``, ``hedged``, ``listed``). ``seen`` was the development set; ``unseen`` was opened
once the rule was final, run once and reported unfitted (benchmarks/README.md); ``own`` are the
rule's author's examples. Read by ``benchmarks/answer_forms.py`` and the tests."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rag_eval_pipeline.metrics.reference import correctness

SETS = Path(__file__).resolve().parents[1] / "data" / "answer_forms_external"
KINDS = ("right", "wrong", "negated", "hedged", "listed")


@dataclass(frozen=True)
class Form:
    """One answer of a set: ``kind`` is one of ``KINDS``; only a right one may be credited."""

    language: str
    question: str
    truth: str
    passage: str
    kind: str
    answer: str

    @property
    def right(self) -> bool:
        return self.kind == "right"

    def correctness(self) -> float | None:
        return correctness(
            self.answer, self.truth, question=self.question, language=self.language, passages=[self.passage]
        )


def forms(name: str) -> list[Form]:
    """Every answer of the set ``name`` (own, seen, unseen, hidden78c/d/e), in file order."""
    found: list[Form] = []
    for line in (SETS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        for kind in KINDS:
            found += [
                Form(row["language"], row["question"], row["truth"], row["passage"], kind, answer)
                for answer in row.get(kind, ())
            ]
    return found


@dataclass(frozen=True)
class Figures:
    """Per language: the share of right answers credited, of the others credited (wrong,
    negated, hedged, listed: should be 0), and of each absent (not judged), with the counts."""

    language: str
    right_credited: float
    wrong_credited: float
    right_absent: float
    wrong_absent: float
    rights: int
    wrongs: int


def figures(scored: Iterable[tuple[Form, float | None]]) -> list[Figures]:
    by_language: dict[str, list[tuple[Form, float | None]]] = {}
    for form, score in scored:
        by_language.setdefault(form.language, []).append((form, score))
    out = []
    for code, pairs in by_language.items():
        right = [s for f, s in pairs if f.right]
        wrong = [s for f, s in pairs if not f.right]
        out.append(
            Figures(
                code,
                _share(right, lambda s: s == 1.0),
                _share(wrong, lambda s: s == 1.0),
                _share(right, lambda s: s is None),
                _share(wrong, lambda s: s is None),
                len(right),
                len(wrong),
            )
        )
    return out


def _share(values: Sequence[float | None], test) -> float:  # type: ignore[no-untyped-def]
    return sum(1 for v in values if test(v)) / len(values) if values else float("nan")
