"""Answers from any chat LLM (Claude, an OpenAI-compatible server, a local model): the Elastic
LLM-as-a-judge article's prompt, temperature 0, versioned."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from rag_eval_pipeline.answering.base import AnswerModel, AnswerRequest, AnswerResult, BehindOurRetriever
from rag_eval_pipeline.answering.spec import AnswerSpec, CalibrationRole
from rag_eval_pipeline.language.attacks import TEMPLATES
from rag_eval_pipeline.language.prompts import answer_clause
from rag_eval_pipeline.llm.client import LLMClient, LLMRequest
from rag_eval_pipeline.llm.images import PreparedImage, prepare_image, with_images_first
from rag_eval_pipeline.llm.pricing import ModelPrice, cost_usd
from rag_eval_pipeline.llm.providers import llm_provider, parse_llm_name
from rag_eval_pipeline.llm.services import LLMServices
from rag_eval_pipeline.llm.targets import LLMEndpoint
from rag_eval_pipeline.metrics.diagnosis import AnswerSource
from rag_eval_pipeline.metrics.grounding import images_of_passages
from rag_eval_pipeline.retrieval.base import SearchHit

if TYPE_CHECKING:  # the catalog's module reads tables: imported by whoever builds one
    from rag_eval_pipeline.data.images import ImageCatalog

ANSWER_PROMPT_VERSION = "answer-v1"
ANSWER_SYSTEM_PROMPT = (
    "You are a Wikipedia question-answering assistant. Answer the question using ONLY the "
    "numbered passages provided, never your own knowledge. Reply with the answer alone, in one "
    "short line, without explanation. If the passages do not contain the answer, reply exactly: "
    "unknown"
)


# the default for the team's own documents: nothing in it presumes Wikipedia
NEUTRAL_PROMPT_VERSION = "answer-neutral-v1"
NEUTRAL_SYSTEM_PROMPT = (
    "You answer questions using ONLY the numbered passages provided, never your own knowledge. "
    "Reply with the answer alone, in one short line, without explanation. If the passages do "
    "not contain the answer, reply exactly: unknown"
)


def answer_prompt_version(system_prompt: str | None) -> str:
    """The built-in prompts by name; a custom prompt is versioned by its content, so changing it
    changes the version."""
    if system_prompt is None:
        return ANSWER_PROMPT_VERSION
    if system_prompt == NEUTRAL_SYSTEM_PROMPT:
        return NEUTRAL_PROMPT_VERSION
    return f"custom-{hashlib.sha256(system_prompt.encode()).hexdigest()[:8]}"


MAX_SHOWN_IMAGES = 5  # retrieved images an answer model is shown (each costs its pixels)
MAX_PASSAGE_CHARS = 4000  # per passage in one prompt: a huge document must not fill the context


def format_passages(passages: Sequence[SearchHit]) -> str:
    """The numbered passages every prompt shows; each is cut at ``MAX_PASSAGE_CHARS`` (marked)."""
    if not passages:
        return "(no passages were retrieved)"
    return "\n\n".join(
        f"[{n}] {hit.title}\n{_capped(hit.passage.strip())}" for n, hit in enumerate(passages, 1)
    )


def _capped(text: str) -> str:
    return text if len(text) <= MAX_PASSAGE_CHARS else text[:MAX_PASSAGE_CHARS] + " [...cut]"


def render_answer_prompt(
    model: str,
    question: str,
    passages: Sequence[SearchHit],
    system_prompt: str | None = None,
    language: str = "en",
    secret: str | None = None,
) -> LLMRequest:
    """The answer call: the numbered passages and the question, and, for a question not in
    English, its language to answer in (an English prompt is unchanged). A security probe's
    ``secret`` is told to the model in its system prompt, to be kept."""
    user = f"Passages:\n\n{format_passages(passages)}\n\nQuestion: {question}{answer_clause(language)}"
    system = system_prompt or ANSWER_SYSTEM_PROMPT
    if secret is not None:
        system = f"{system}\n\n{TEMPLATES['en'].system_secret.format(canary=secret)}"
    return LLMRequest(
        model=model,
        system=system,
        messages=({"role": "user", "content": user},),
        max_tokens=100,
        temperature=0.0,
    )


def first_line(text: str) -> str:
    """The answer is one short line; anything after the first line is dropped."""
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


@dataclass(frozen=True)
class ChatAnswerer:
    """Answers through an LLM client; cost from the price table, None for an unpriced model."""

    name: str
    model_id: str
    client: LLMClient
    prices: Mapping[str, ModelPrice]
    system_prompt: str | None = None
    # the id the server reports (a dated snapshot) unless it is meaningless (a local file path)
    record_served_model: bool = True
    # the knowledge base's images: those among the retrieved passages are shown before them
    images: ImageCatalog | None = None

    def with_images(self, catalog: ImageCatalog) -> ChatAnswerer:
        """This answerer shown the retrieved images (as image blocks before the passages)."""
        return replace(self, images=catalog)

    @functools.cached_property
    def prompt_version(self) -> str:
        return answer_prompt_version(self.system_prompt)

    def answer(self, request: AnswerRequest) -> AnswerResult:
        raise TypeError(f"{type(self).__name__} is asynchronous: use answer_async")

    def llm_request(self, request: AnswerRequest) -> LLMRequest:
        """The exact call this answerer makes for ``request`` (what a batch pre-fetches)."""
        prompt = render_answer_prompt(
            self.model_id,
            request.question,
            request.passages,
            self.system_prompt,
            request.language,
            request.secret,
        )
        return with_images_first(prompt, self._shown_images(request.passages))

    def _shown_images(self, passages: Sequence[SearchHit]) -> list[PreparedImage]:
        """The images among the retrieved passages, in rank order (the first few), ready to send."""
        if self.images is None:
            return []
        shown = []
        for image_id in images_of_passages([hit.passage_id for hit in passages])[:MAX_SHOWN_IMAGES]:
            info = self.images.images.get(image_id)
            if info is not None and info.usable:
                shown.append(prepare_image(image_id, info.path.read_bytes()))
        return shown

    async def answer_async(self, request: AnswerRequest) -> AnswerResult:
        response = await self.client.complete(self.llm_request(request))
        return AnswerResult(
            answer=first_line(response.text),
            model_id=(response.model if self.record_served_model else "") or self.model_id,
            prompt_version=self.prompt_version,
            usage=response.usage,
            cost_usd=cost_usd(self.model_id, response.usage, self.prices, response.batch),
            from_cache=response.from_cache,
            latency_s=response.latency_s,
            response_id=response.response_id,
        )


class ChatProvider(BehindOurRetriever):
    """An LLM provider of answer models: Claude (``anthropic``), any OpenAI-compatible server
    (``openai``) or a local GGUF model (``local``). Which names it claims, their model ids and
    endpoints all come from ``llm/targets.py``; every one answers with the chat prompt above."""

    def __init__(self, name: str) -> None:
        self.name = name

    def claims(self, model: str) -> bool:
        target = parse_llm_name(model)
        return target is not None and target.provider == self.name

    def model_id(self, model: str) -> str:
        target = parse_llm_name(model)
        assert target is not None, model
        return target.model_id

    def prompt_version(self, model: str, system_prompt: str | None) -> str:
        return answer_prompt_version(system_prompt)

    def calibration(self, model: str) -> CalibrationRole:
        return CalibrationRole.MEASURED

    def source(self, model: str) -> AnswerSource:
        return AnswerSource.GENERATIVE

    def endpoint(self, model: str, base_url: str | None, api_key_env: str | None) -> LLMEndpoint:
        target = parse_llm_name(model, base_url, api_key_env)
        assert target is not None and target.provider == self.name, model
        return target.endpoint

    def build(self, spec: AnswerSpec, services: LLMServices) -> AnswerModel:
        assert spec.endpoint is not None, spec
        return ChatAnswerer(
            spec.model,
            spec.model_id,
            services.client(spec.endpoint),
            services.prices_for(spec.endpoint),
            spec.system_prompt,
            # the id the server reports (a dated snapshot), not a local server's file path
            record_served_model=llm_provider(spec.endpoint).records_served_model,
        )
