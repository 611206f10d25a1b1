"""The team's own agent as answer providers of the registry: ``http``, ``python`` and ``file``.
Each resolves its configuration entry into an ``AnswerSpec`` (no retrieval of ours: the agent
retrieves), says what is wrong before any work, and builds the answerer a run calls."""

from __future__ import annotations

import functools
import json
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rag_eval_pipeline.answering.agents.answers_file import AnswersFile, AnswersFileError
from rag_eval_pipeline.answering.agents.calls import AgentCache, CachedAgent, Transport
from rag_eval_pipeline.answering.agents.check import check_file, check_http, check_python
from rag_eval_pipeline.answering.agents.http import HttpTransport
from rag_eval_pipeline.answering.agents.http import takes_passages as body_takes_passages
from rag_eval_pipeline.answering.agents.mapping import ResponseMapping, UnreadableReplyError
from rag_eval_pipeline.answering.agents.python_target import PythonTransport, TargetNotFoundError, load_target
from rag_eval_pipeline.answering.agents.python_target import takes_passages as target_takes_passages
from rag_eval_pipeline.answering.agents.settings import (
    FILE,
    HTTP,
    PYTHON,
    AgentEntry,
    AnswersFileEntry,
    CalledAgentEntry,
    HttpAgentEntry,
    PythonAgentEntry,
)
from rag_eval_pipeline.answering.base import AnswerModel, AnswerRequest, AnswerResult
from rag_eval_pipeline.answering.spec import AnswerSpec, CalibrationRole
from rag_eval_pipeline.common.secrets import NO_SECRETS
from rag_eval_pipeline.llm.services import CallCount, LLMServices
from rag_eval_pipeline.metrics.diagnosis import AnswerSource

AGENT_CACHE_FOLDER = "agent_cache"


def _identity(entry: AgentEntry, extra: Mapping[str, Any] | None = None) -> str:
    """What the agent's answers depend on, as stable JSON: the entry without the settings that
    only pace the calls (concurrency, timeout, retries), without its name and whether it is
    evaluated on the judgement list."""
    fields = entry.model_dump(
        exclude={"name", "concurrency", "timeout_s", "max_retries", "ingest", "evaluate"}
    )
    return json.dumps({**fields, **(extra or {})}, sort_keys=True, default=str)


class AgentAnswerer:
    """Asks the agent (through the cache) and reads its reply with the mapping: the answer and
    the contexts it answered from, which are the ones judged."""

    def __init__(
        self,
        spec: AnswerSpec,
        entry: CalledAgentEntry,
        agent: CachedAgent,
        takes_passages: Callable[[], bool] = lambda: False,
    ) -> None:
        self.name = spec.partition_key
        self.model_id = spec.model_id
        self._spec = spec
        self._entry = entry
        self._agent = agent
        # whether a request's passages (a security probe's) are sent to it: asked the first time
        # a request carries passages, so an evaluation never imports a Python agent in this process
        self._takes_passages = functools.cache(takes_passages)
        self.mapping: ResponseMapping = entry.response.compiled()

    def _readable(self, document: Any) -> bool:
        try:
            self.mapping.read(document)
        except UnreadableReplyError:
            return False
        return True

    def prepare(self, cases: Sequence[tuple[str, str]]) -> dict[str, int]:
        return {qid: self._entry.repeats for qid, _ in cases}

    async def aclose(self) -> None:
        await self._agent.aclose()

    def answer(self, request: AnswerRequest) -> AnswerResult:
        raise TypeError("an agent is asked asynchronously: use answer_async")

    async def answer_async(self, request: AnswerRequest) -> AnswerResult:
        passages = (
            [{"title": hit.title, "text": hit.passage} for hit in request.passages]
            if request.passages and self._takes_passages()
            else None
        )
        document, cached, latency = await self._agent.document(
            request.qid, request.question, request.repeat, self._readable, passages
        )
        reply = self.mapping.read(document)
        return AnswerResult(
            answer=reply.answer,
            model_id=self.model_id,
            prompt_version=self._spec.prompt_version,
            cost_usd=None,  # the agent's own spending is not reported to us: unknown, not free
            from_cache=cached,
            latency_s=latency,
            trace=reply.trace,
            response_id=reply.response_id,
            contexts=reply.contexts,
            citations=reply.citations,
            visual=reply.visual,
        )

    @property
    def counter(self) -> CallCount:
        return self._agent.counter


class FileAnswerer:
    """Serves the file's rows as answers; a question without a row (``partial``) fails its case."""

    def __init__(self, spec: AnswerSpec, answers: AnswersFile) -> None:
        self.name = spec.partition_key
        self.model_id = spec.model_id
        self._spec = spec
        self._answers = answers
        self._rows: dict[str, list[dict[str, Any]]] = {}
        self.mapping = answers.mapping
        self.counter = CallCount()

    def prepare(self, cases: Sequence[tuple[str, str]]) -> dict[str, int]:
        self._rows = self._answers.join(cases)
        return {qid: max(1, len(rows)) for qid, rows in self._rows.items()}

    async def aclose(self) -> None:
        """Nothing was opened: the answers were read with the file."""

    def answer(self, request: AnswerRequest) -> AnswerResult:
        rows = self._rows.get(request.qid) or []
        if request.repeat >= len(rows):
            raise LookupError(f"no answer in {self._answers.path} for this question (partial: true)")
        reply = self.mapping.read(rows[request.repeat])
        return AnswerResult(
            answer=reply.answer,
            model_id=self.model_id,
            prompt_version=self._spec.prompt_version,
            cost_usd=None,
            from_cache=True,  # served before: no call now
            contexts=reply.contexts,
            citations=reply.citations,
            visual=reply.visual,
        )


class _AgentProvider:
    """What the three agent providers share: they claim no bare name (an agent is always a
    named entry), answer with their own retrieval, are measured (not calibration models) and
    write their answers (they may answer from memory)."""

    name: str
    entry_type: type[AgentEntry]

    def claims(self, model: str) -> bool:
        return False

    def model_id(self, model: str) -> str:
        return model

    def prompt_version(self, model: str, system_prompt: str | None) -> str:
        return "agent"

    def calibration(self, model: str) -> CalibrationRole:
        return CalibrationRole.MEASURED

    def source(self, model: str) -> AnswerSource:
        return AnswerSource.GENERATIVE

    def endpoint(self, model: str, base_url: str | None, api_key_env: str | None) -> None:
        return None

    def identity_extra(self, entry: Any) -> dict[str, Any]:
        return {}

    def named_spec(self, entry: Any, default_prompt: str | None = None) -> AnswerSpec:
        version = entry.version
        return AnswerSpec(
            partition_key=entry.name,
            provider=self.name,
            model=entry.name,
            model_id=f"{entry.name}@{version}" if version else entry.name,
            retrieval_mode=None,  # the agent retrieves
            top_k=None,
            prompt_version=f"agent-{version}" if version else "agent-unversioned",
            calibration=CalibrationRole.MEASURED,
            source=AnswerSource.GENERATIVE,
            agent=entry,
            agent_identity=_identity(entry, self.identity_extra(entry)),
        )

    def notes(self, spec: AnswerSpec) -> list[str]:
        entry = spec.agent
        if isinstance(entry, CalledAgentEntry) and entry.version is None:
            return [
                f"agent {spec.partition_key} has no version: its answers are not cached, so every run "
                "asks every question again (give it version: to cache them)"
            ]
        return []


class _CalledProvider(_AgentProvider, ABC):
    """An agent the evaluation calls (over HTTP, or in process): each says how it is reached."""

    @abstractmethod
    def transport(self, entry: Any) -> Transport: ...

    @abstractmethod
    def takes_passages(self, entry: Any) -> bool:
        """Whether the agent takes its passages from the caller (security probes give them)."""

    def build(self, spec: AnswerSpec, services: LLMServices) -> AnswerModel:
        entry = spec.agent
        assert isinstance(entry, CalledAgentEntry), spec
        cache = (
            AgentCache(services.cache_root / AGENT_CACHE_FOLDER, entry.name, entry.version)
            if entry.version is not None and services.cache_root is not None
            else None
        )
        counter = services.counter(f"agent {spec.partition_key}")
        transport = self.transport(entry)
        redact = getattr(transport, "redact", NO_SECRETS)  # what its own secret headers echo
        agent = CachedAgent(transport, cache, entry.concurrency, services.refresh, counter, redact)
        return AgentAnswerer(spec, entry, agent, functools.partial(self.takes_passages, entry))


class HttpAgentProvider(_CalledProvider):
    name = HTTP
    entry_type = HttpAgentEntry

    def _secret_headers(self, entry: HttpAgentEntry) -> tuple[dict[str, str], list[str]]:
        headers, missing = {}, []
        for header, variable in entry.headers_env.items():
            value = os.environ.get(variable)
            if value is None:
                missing.append(variable)
            else:
                headers[header] = value
        return headers, missing

    def transport(self, entry: HttpAgentEntry) -> Transport:
        headers, _ = self._secret_headers(entry)
        return HttpTransport(entry, headers)

    def takes_passages(self, entry: HttpAgentEntry) -> bool:
        return body_takes_passages(entry.body)

    def check(self, spec: AnswerSpec, question: str) -> tuple[str, bool]:
        headers, _ = self._secret_headers(spec.agent)
        return check_http(spec.agent, headers, question)

    def problems(self, spec: AnswerSpec) -> list[str]:
        entry = spec.agent
        assert isinstance(entry, HttpAgentEntry), spec
        _, missing = self._secret_headers(entry)
        return [
            f"agent {spec.partition_key} needs {variable} (for its {header} header): export it"
            for header, variable in entry.headers_env.items()
            if variable in missing
        ]


class PythonAgentProvider(_CalledProvider):
    name = PYTHON
    entry_type = PythonAgentEntry

    def transport(self, entry: PythonAgentEntry) -> Transport:
        return PythonTransport(entry.target, entry.timeout_s, entry.concurrency)

    def takes_passages(self, entry: PythonAgentEntry) -> bool:
        return target_takes_passages(entry.target)

    def check(self, spec: AnswerSpec, question: str) -> tuple[str, bool]:
        return check_python(spec.agent, question)

    def problems(self, spec: AnswerSpec) -> list[str]:
        entry = spec.agent
        assert isinstance(entry, PythonAgentEntry), spec
        try:
            load_target(entry.target)
        except TargetNotFoundError as err:
            return [f"agent {spec.partition_key}: {err}"]
        return []


class AnswersFileProvider(_AgentProvider):
    name = FILE
    entry_type = AnswersFileEntry

    def identity_extra(self, entry: AnswersFileEntry) -> dict[str, Any]:
        """The file as written (size and modification time, cheap on every resolve): a new
        export is a new answer set, and results read from the old one are stale."""
        path = Path(entry.path)
        if not path.is_file():
            return {"file": "missing"}
        stat = path.stat()
        return {"file": f"{stat.st_size}-{stat.st_mtime_ns}"}

    def problems(self, spec: AnswerSpec) -> list[str]:
        entry = spec.agent
        assert isinstance(entry, AnswersFileEntry), spec
        if not Path(entry.path).is_file():
            return [f"answers file of {spec.partition_key} not found: {entry.path}"]
        try:
            AnswersFile(entry)
        except AnswersFileError as err:
            return [str(err)]
        return []

    def notes(self, spec: AnswerSpec) -> list[str]:
        entry = spec.agent
        assert isinstance(entry, AnswersFileEntry), spec
        try:
            unread = AnswersFile(entry).unread_columns()
        except AnswersFileError:
            return []
        if not unread:
            return []
        return [f"{spec.partition_key}: columns of {entry.path} that no mapping reads: {', '.join(unread)}"]

    def build(self, spec: AnswerSpec, services: LLMServices) -> AnswerModel:
        entry = spec.agent
        assert isinstance(entry, AnswersFileEntry), spec
        return FileAnswerer(spec, AnswersFile(entry))

    def check(self, spec: AnswerSpec, question: str) -> tuple[str, bool]:
        return check_file(spec.agent)


AGENT_PROVIDERS = (HttpAgentProvider(), PythonAgentProvider(), AnswersFileProvider())
AGENT_PROVIDERS_BY_NAME = {provider.name: provider for provider in AGENT_PROVIDERS}


def agent_takes_passages(spec: AnswerSpec) -> bool:
    """Whether the agent ``spec`` names takes its passages from the caller."""
    provider = AGENT_PROVIDERS_BY_NAME.get(spec.provider)
    return isinstance(provider, _CalledProvider) and provider.takes_passages(spec.agent)


def check_agent(spec: AnswerSpec, question: str) -> tuple[str, bool]:
    """One call to the agent ``spec`` names, as a field-mapping preview, and whether a run could
    read a reply from it."""
    return AGENT_PROVIDERS_BY_NAME[spec.provider].check(spec, question)


class NotConversationalError(ValueError):
    """An agent entry that cannot be talked to turn by turn (a file of answers it gave)."""


def holds_conversations(entry: AgentEntry) -> bool:
    """Whether the entry's provider calls the agent (so it can be talked to turn by turn)."""
    return isinstance(AGENT_PROVIDERS_BY_NAME.get(entry.provider), _CalledProvider)


def conversation_agent(entry: AgentEntry, services: LLMServices) -> tuple[CachedAgent, ResponseMapping]:
    """The agent of ``entry`` as a partner in conversations (its transport behind the cache,
    keyed by version, session and history) and the mapping its replies are read with."""
    provider = AGENT_PROVIDERS_BY_NAME.get(entry.provider)
    if not isinstance(provider, _CalledProvider) or not isinstance(entry, CalledAgentEntry):
        raise NotConversationalError(
            f"agent {entry.name} ({entry.provider}) cannot hold a conversation: give an http or python agent"
        )
    cache = (
        AgentCache(services.cache_root / AGENT_CACHE_FOLDER, entry.name, entry.version)
        if entry.version is not None and services.cache_root is not None
        else None
    )
    transport = provider.transport(entry)
    redact = getattr(transport, "redact", NO_SECRETS)
    counter = services.counter(f"agent {entry.name}")
    agent = CachedAgent(transport, cache, entry.concurrency, services.refresh, counter, redact)
    return agent, entry.response.compiled()
