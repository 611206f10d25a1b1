"""The agent: TF-IDF retrieval of the top 3 paragraphs, then the sentence sharing most words
with the question as the answer ("unknown" when none shares any)."""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

TOP_K = 3
_WORD = re.compile(r"[a-z0-9]+")
_STOP = set(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "by",
        "with",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "did",
        "does",
        "do",
        "that",
        "this",
        "these",
        "those",
        "it",
        "its",
        "as",
        "his",
        "her",
        "their",
        "there",
    ]
)
DEFAULT_DATA = (
    Path(__file__).resolve().parents[1]
    / "rag_eval_pipeline"
    / "data"
    / "samples"
    / ("hotpotqa_dev_distractor_500.jsonl")
)


def _terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


@dataclass(frozen=True)
class Paragraph:
    id: str
    title: str
    sentences: tuple[str, ...]

    @property
    def text(self) -> str:
        return "".join(self.sentences)


class Agent:
    """Every distinct paragraph of the file, indexed once."""

    def __init__(self, data: str | Path) -> None:
        paragraphs: dict[str, Paragraph] = {}
        for line in Path(data).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            for title, sentences in zip(row["context"]["title"], row["context"]["sentences"]):
                if title not in paragraphs:
                    paragraphs[title] = Paragraph(f"kb-{len(paragraphs):05d}", title, tuple(sentences))
        self.paragraphs = list(paragraphs.values())
        self._postings: dict[str, list[tuple[int, float]]] = {}  # term -> (paragraph, log(1 + tf))
        for row, paragraph in enumerate(self.paragraphs):
            for term, count in Counter(_terms(f"{paragraph.title} {paragraph.text}")).items():
                self._postings.setdefault(term, []).append((row, math.log1p(count)))
        self._idf = {t: math.log(len(self.paragraphs) / len(p)) for t, p in self._postings.items()}

    def retrieve(self, question: str) -> list[tuple[Paragraph, float]]:
        scores: dict[int, float] = {}
        for term in set(_terms(question)):
            for row, weight in self._postings.get(term, ()):
                scores[row] = scores.get(row, 0.0) + self._idf[term] * weight
        ranked = sorted(scores.items(), key=lambda item: (-round(item[1], 6), self.paragraphs[item[0]].id))
        return [(self.paragraphs[row], round(score, 6)) for row, score in ranked[:TOP_K] if score > 0]

    def retrieve_beyond(self, question: str) -> list[tuple[Paragraph, float]]:
        """The paragraphs ranked just below the top ones (what a buggy build reads from)."""
        returned = {p.id for p, _ in self.retrieve(question)}
        scores: dict[int, float] = {}
        for term in set(_terms(question)):
            for row, weight in self._postings.get(term, ()):
                scores[row] = scores.get(row, 0.0) + self._idf[term] * weight
        ranked = sorted(scores.items(), key=lambda item: (-round(item[1], 6), self.paragraphs[item[0]].id))
        beyond = [(self.paragraphs[r], s) for r, s in ranked if self.paragraphs[r].id not in returned]
        return beyond[:TOP_K]

    def reply(self, question: str, buggy: bool = False) -> dict:
        """The answer, the paragraphs it was given from (text, id, title, score) and the ones it
        cites (1-based into them: the paragraph its sentence came from, and its top-ranked one;
        none when it answers "unknown"). A ``buggy`` build answers from the paragraph ranked
        just below the ones it returns: what it says is in none of the contexts it served (a
        faithfulness bug to be caught)."""
        found = self.retrieve(question)
        source = self.retrieve_beyond(question) if buggy else found
        terms = set(_terms(question))
        best, overlap, origin = "unknown", 0, None
        for paragraph, _ in source:
            for sentence in paragraph.sentences:
                shared = len(terms & set(_terms(sentence)))
                if shared > overlap:
                    best, overlap, origin = sentence.strip(), shared, paragraph
        returned = [p.id for p, _ in found]
        cited = [] if origin is None else [origin.id, *returned[:1]]
        return {
            "answer": best,
            "contexts": [p.text for p, _ in found],
            "context_ids": returned,
            "context_titles": [p.title for p, _ in found],
            "scores": [s for _, s in found],
            # what it cites, 1-based into its contexts (a buggy build cites what it returned first)
            "citations": [returned.index(c) + 1 for c in dict.fromkeys(cited) if c in returned],
        }


@lru_cache(maxsize=4)
def _agent(data: str) -> Agent:
    return Agent(data)


def default_agent() -> Agent:
    """The agent over ``$EXAMPLE_AGENT_DATA``, else the HotpotQA sample bundled beside it."""
    return _agent(os.environ.get("EXAMPLE_AGENT_DATA", str(DEFAULT_DATA)))


def answer(question: str) -> dict:
    """The agent as a Python callable: ``target: example_agent:answer``."""
    return default_agent().reply(question)


async def answer_async(question: str) -> dict:
    """The same agent, asynchronous: ``target: example_agent:answer_async``."""
    return default_agent().reply(question)
