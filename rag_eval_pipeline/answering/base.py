"""What an answer model is: one case in, one answer out; and what a provider of them offers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from rag_eval_pipeline.llm.client import Usage
from rag_eval_pipeline.metrics.diagnosis import AnswerSource
from rag_eval_pipeline.retrieval.base import SearchHit

if TYPE_CHECKING:
    from rag_eval_pipeline.answering.spec import AnswerSpec, CalibrationRole
    from rag_eval_pipeline.llm.services import LLMServices
    from rag_eval_pipeline.llm.targets import LLMEndpoint


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
    """Answers one question from the retrieved passages only (``answer_async`` where it calls a
    model over the network; ``answer`` otherwise)."""

    name: str

    def answer(self, request: AnswerRequest) -> AnswerResult: ...


class AnswerProvider(Protocol):
    """A family of answer models (offline, Anthropic, ...): which model names it claims, how it
    names them, their prompt version and calibration role, and how to build one. Registered once
    in ``answering/registry.py``."""

    name: str

    def claims(self, model: str) -> bool:
        """Whether a bare model name (a partition key without a configuration entry) is its own."""
        ...

    def model_id(self, model: str) -> str: ...

    def prompt_version(self, model: str, system_prompt: str | None) -> str: ...

    def calibration(self, model: str) -> CalibrationRole: ...

    def source(self, model: str) -> AnswerSource:
        """Where the model's answers come from: written (it could answer from memory), copied
        from the retrieved passages, or the calibration bounds'."""
        ...

    def endpoint(self, model: str, base_url: str | None, api_key_env: str | None) -> LLMEndpoint | None:
        """Where the model's calls go (None: it makes none); ``base_url`` and ``api_key_env``
        come from a named entry of the configuration file."""
        ...

    def build(self, spec: AnswerSpec, services: LLMServices) -> AnswerModel: ...

    def problems(self, spec: AnswerSpec) -> list[str]:
        """What stands in the way of this model's calls, known before any work (an agent's
        address or target; an LLM's key is checked by the LLM provider table)."""
        ...
