"""What an answer model is: one case in, one answer out; and what a provider of them offers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from rag_eval_pipeline.answering.spec import AnswerSpec, CalibrationRole
from rag_eval_pipeline.llm.client import Usage
from rag_eval_pipeline.metrics.diagnosis import AnswerSource
from rag_eval_pipeline.metrics.grounding import VisualAnswer
from rag_eval_pipeline.retrieval.base import RetrievalMode, SearchHit

if TYPE_CHECKING:
    from rag_eval_pipeline.llm.services import LLMServices
    from rag_eval_pipeline.llm.targets import LLMEndpoint


@dataclass(frozen=True)
class AnswerRequest:
    """One case put to an answer model.

    ``reference_answer`` is the ground truth (None while it is still to be written); only the
    calibration model ``oracle`` may read it.
    """

    qid: str
    question: str
    passages: tuple[SearchHit, ...]
    reference_answer: str | None
    repeat: int = 0  # which of an agent's repeated answers to this question
    language: str = "en"  # the case's language (ISO 639-1): the answer is asked for in it
    reference_visual: VisualAnswer | None = None  # the gold images and boxes: the oracle's only
    # a security probe's secret the model is told to keep (in an LLM's system prompt): what an
    # exfiltration probe tries to get out of it; None in an evaluation
    secret: str | None = None


@dataclass(frozen=True)
class ReturnedContext:
    """A context an agent says it answered from: its text, and its id and title when it gives
    them (what reference retrieval metrics are matched on)."""

    text: str
    id: str | None = None
    title: str | None = None


@dataclass(frozen=True)
class AnswerResult:
    """One answer. ``contexts`` are the agent's own (None: the model answered from the passages
    this project retrieved, which are then the ones judged)."""

    answer: str
    model_id: str
    prompt_version: str
    usage: Usage = Usage()
    cost_usd: float | None = 0.0  # offline models cost nothing; None = unknown price
    from_cache: bool = False
    contexts: tuple[ReturnedContext, ...] | None = None
    citations: tuple[int | str, ...] | None = None  # the sources the agent cites (None: none read)
    # the call's latency when it was made (a cached answer's first one; None: not recorded)
    latency_s: float | None = None
    trace: str | None = None  # the agent's own trace of this reply, as it said it (traceparent or id)
    response_id: str | None = None  # the reply's own id (an LLM's message id, an agent's mapped id)
    visual: VisualAnswer | None = None  # images, boxes, heat maps it returned (None: it says none)


class AnswerModel(Protocol):
    """Answers one question from the retrieved passages only (``answer_async`` where it calls a
    model over the network; ``answer`` otherwise)."""

    name: str

    def answer(self, request: AnswerRequest) -> AnswerResult: ...


@runtime_checkable
class PreparedAnswerModel(Protocol):
    """An answer model (a team's agent) that sees every case before any is answered and says
    how many answers each question gets (an agent's repeats; a file's rows), or fails at once
    (a file of answers that does not join the questions); and that closes what its calls
    shared on the stage's loop when they are done."""

    def prepare(self, cases: Sequence[tuple[str, str]]) -> Mapping[str, int]: ...

    async def aclose(self) -> None: ...


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

    def named_spec(self, entry: Any, default_prompt: str | None) -> AnswerSpec:
        """The spec of a named entry of the configuration file (its name is the partition key)."""
        ...

    def notes(self, spec: AnswerSpec) -> list[str]:
        """What the user should know before the run that is not an error (an unversioned agent
        is never cached)."""
        ...

    def problems(self, spec: AnswerSpec) -> list[str]:
        """What stands in the way of this model's calls, known before any work (an agent's
        address or target; an LLM's key is checked by the LLM provider table)."""
        ...


def model_spec(
    provider: AnswerProvider,
    key: str,
    model: str,
    mode: RetrievalMode,
    top_k: int,
    system_prompt: str | None,
    base_url: str | None = None,
    api_key_env: str | None = None,
) -> AnswerSpec:
    """The spec of a model behind this project's retriever and prompt (an offline model or an
    LLM), from a partition key or a named entry."""
    return AnswerSpec(
        partition_key=key,
        provider=provider.name,
        model=model,
        model_id=provider.model_id(model),
        retrieval_mode=mode,
        top_k=top_k,
        prompt_version=provider.prompt_version(model, system_prompt),
        system_prompt=system_prompt,
        calibration=provider.calibration(model),
        source=provider.source(model),
        endpoint=provider.endpoint(model, base_url, api_key_env),
    )


def named_model_spec(provider: AnswerProvider, entry: Any, default_prompt: str | None) -> AnswerSpec:
    """A named model entry (``ModelEntry``): its model, under the provider's prefix when the
    provider would not claim the bare name."""
    model = entry.model if provider.claims(entry.model) else f"{provider.name}:{entry.model}"
    return model_spec(
        provider,
        entry.name,
        model,
        RetrievalMode(entry.retrieval_mode),
        entry.top_k,
        entry.prompt or default_prompt,
        entry.base_url,
        entry.api_key_env,
    )


class BehindOurRetriever:
    """The part of a provider whose models answer behind this project's retriever and prompt
    (offline models, LLMs): named entries read as ``named_model_spec``, and nothing of their own
    to check or say before a run (an LLM's key is checked by the LLM provider table)."""

    def named_spec(self, entry: Any, default_prompt: str | None) -> AnswerSpec:
        return named_model_spec(self, entry, default_prompt)  # type: ignore[arg-type]

    def problems(self, spec: AnswerSpec) -> list[str]:
        return []

    def notes(self, spec: AnswerSpec) -> list[str]:
        return []
