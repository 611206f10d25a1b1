"""What an answer model is, and how a partition key names an answer configuration."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from rag_eval_pipeline.llm.client import Usage
from rag_eval_pipeline.retrieval.base import SearchHit

RETRIEVAL_MODES = ("bm25", "semantic", "hybrid", "two_hop")
DEFAULT_RETRIEVAL_MODE = "bm25"
DEFAULT_TOP_K = 4
_SUFFIX = re.compile(r"^(?P<mode>[a-z0-9_]+)-k(?P<k>[0-9]+)$")


@dataclass(frozen=True)
class AnswerConfig:
    """An answer-model partition: which model answers, with which retrieval mode and top-k.

    Partition keys read ``MODEL`` or ``MODEL@MODE-kK``, e.g. ``oracle`` or
    ``extractive-baseline@bm25-k4``; a bare model name uses bm25 and k = 4.
    """

    model: str
    retrieval_mode: str = DEFAULT_RETRIEVAL_MODE
    top_k: int = DEFAULT_TOP_K

    @classmethod
    def parse(cls, key: str) -> AnswerConfig:
        model, sep, suffix = key.strip().partition("@")
        if not model:
            raise ValueError(f"answer configuration '{key}' names no model")
        if not sep:
            return cls(model=model)
        match = _SUFFIX.match(suffix)
        if not match:
            raise ValueError(f"answer configuration '{key}': expected MODEL@MODE-kK, e.g. {model}@bm25-k4")
        mode, k = match["mode"], int(match["k"])
        if mode not in RETRIEVAL_MODES:
            raise ValueError(
                f"answer configuration '{key}': unknown retrieval mode '{mode}' "
                f"(known: {', '.join(RETRIEVAL_MODES)})"
            )
        if k < 1:
            raise ValueError(f"answer configuration '{key}': top-k must be at least 1")
        return cls(model=model, retrieval_mode=mode, top_k=k)

    @property
    def key(self) -> str:
        return f"{self.model}@{self.retrieval_mode}-k{self.top_k}"


@dataclass(frozen=True)
class AnswerRequest:
    """One case put to an answer model.

    ``reference_answer`` is the ground truth; only the calibration model ``oracle`` may read it.
    """

    qid: str
    question: str
    passages: tuple[SearchHit, ...]
    reference_answer: str


@dataclass(frozen=True)
class AnswerResult:
    answer: str
    model_id: str
    prompt_version: str
    usage: Usage = Usage()
    cost_usd: float | None = 0.0  # offline models cost nothing; None = unknown price
    from_cache: bool = False


class AnswerModel(Protocol):
    """Answers one question from the retrieved passages only."""

    name: str

    def answer(self, request: AnswerRequest) -> AnswerResult: ...
