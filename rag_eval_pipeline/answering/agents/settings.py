"""The team's own agent as a named answer model of the configuration file: behind an HTTP
endpoint (``provider: http``), as a Python callable (``provider: python``) or as a file of the
answers it already gave (``provider: file``). Each entry is validated once here: its JSONPaths
compile, its URL parses, its target reads ``module:function``."""

from __future__ import annotations

import re
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator

from rag_eval_pipeline.answering.agents.mapping import INLINE, ResponseMapping, compile_path
from rag_eval_pipeline.answering.settings import FILE, HTTP, PYTHON, NamedEntry
from rag_eval_pipeline.answering.visual import VisualMapping
from rag_eval_pipeline.common.settings import Strict

_TARGET = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class MappingSettings(Strict):
    """Where each field of a reply is found: a JSONPath into the agent's response (or into a row
    of an answers file). ``contexts`` may be left out only for an agent that returns none; the
    retrieval metrics are then absent (not 0)."""

    answer: str = "$.answer"
    contexts: str | None = Field(default="$.contexts", description="the texts the agent answered from")
    context_ids: str | None = Field(
        default=None, description="their ids: matched against passage and document ids"
    )
    context_titles: str | None = Field(default=None, description="their titles: matched against gold titles")
    citations: str | None = Field(
        default=None,
        description="the sources the answer cites: a JSONPath to a list of context ids, titles or "
        "1-based indices into the contexts, or 'inline' for markers such as [1] or [2, 3] in the answer",
    )

    trace: str | None = Field(
        default=None,
        description="the agent's own trace of this reply: a JSONPath to a W3C traceparent "
        "(00-<trace id>-<span id>-01) or a trace id; its evaluation events go under that span "
        "(unmapped or not found: an HTTP agent's traceparent response header)",
    )
    id: str | None = Field(
        default=None,
        description="the reply's own id (a JSONPath): its evaluation events carry it as gen_ai.response.id",
    )

    # what it looked at (answering/visual.py): ranked image ids, [{image, box, score?}], {image: heat map}
    images: str | None = Field(default="$.images", description="the image ids it retrieved or used, ranked")
    boxes: str | None = Field(default="$.boxes", description="regions it points at: [{image, box, score?}]")
    heatmaps: str | None = Field(
        default="$.heatmaps", description="{image id: path or data URI of a grayscale PNG of its size}"
    )

    @field_validator(
        "answer",
        "contexts",
        "context_ids",
        "context_titles",
        "citations",
        "trace",
        "id",
        "images",
        "boxes",
        "heatmaps",
    )
    @classmethod
    def _compiles(cls, path: str | None) -> str | None:
        if path is not None and path != INLINE:
            compile_path(path)  # a ValueError naming the path and where it does not parse
        return path

    @property
    def matches_by_text(self) -> bool:
        return self.contexts is not None and self.context_ids is None and self.context_titles is None

    def compiled(self) -> ResponseMapping:
        return ResponseMapping.of(
            self.answer,
            self.contexts,
            self.context_ids,
            self.context_titles,
            self.citations,
            trace=self.trace,
            visual=VisualMapping.of(self.images, self.boxes, self.heatmaps),
            id=self.id,
        )


class AgentEntry(NamedEntry):
    """What every agent under test has: a build ``version`` (part of the cache key and of the
    results' identity: a new version is asked again, an unversioned agent is never cached) and
    ``repeats`` (each question asked N times, each answer judged)."""

    version: str | None = Field(
        default=None,
        description="the agent build under test: answers are cached by (name, version, question); "
        "unset: never cached",
    )
    repeats: int = Field(default=1, ge=1, le=20, description="answers per question, each judged")
    evaluate: bool | None = Field(
        default=None,
        description="a partition evaluated on the judgement list: unset, yes, except the agent "
        "the simulation talks to",
    )


class IngestSettings(Strict):
    """How security probes add documents to an agent's own index, then remove them: an HTTP
    endpoint (``url``: POST ``{"documents": [{id, title, text, language}]}`` adds, DELETE
    ``{"ids": [...]}`` removes) or a Python callable (``target``, ``module:function``, called
    as ``function("add", documents)`` then ``function("remove", documents)`` in the probing
    process: it must change the store the agent reads, not one process's memory)."""

    url: str | None = None
    target: str | None = None
    timeout_s: float = Field(default=60.0, gt=0, description="seconds one add or remove may take")

    @field_validator("url")
    @classmethod
    def _parses(cls, url: str | None) -> str | None:
        if url is not None and (urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname):
            raise ValueError(f"ingest url {url!r} is not an http(s) URL with a host")
        return url

    @field_validator("target")
    @classmethod
    def _module_function(cls, target: str | None) -> str | None:
        if target is not None and not _TARGET.match(target):
            raise ValueError(f"ingest target {target!r}: expected module:function, e.g. my_app.index:ingest")
        return target

    @model_validator(mode="after")
    def _one_way(self) -> IngestSettings:
        if (self.url is None) == (self.target is None):
            raise ValueError("ingest: give url (an HTTP endpoint) or target (a Python callable), one of them")
        return self


class CalledAgentEntry(AgentEntry):
    """An agent called for each question: its calls in flight, per-attempt timeout and retries;
    ``ingest``, how security probes plant documents in its own index (not part of its identity:
    its answers do not depend on it)."""

    concurrency: int = Field(default=4, ge=1, description="calls in flight to this agent")
    timeout_s: float = Field(default=60.0, gt=0, description="seconds one attempt may take, whole")
    max_retries: int = Field(
        default=2, ge=0, description="retries on 429, 5xx, timeouts and lost connections"
    )
    response: MappingSettings = Field(default_factory=MappingSettings)
    ingest: IngestSettings | None = Field(
        default=None, description="security probes: how documents are added to and removed from its index"
    )

    def mapping(self) -> MappingSettings:
        return self.response


class HttpAgentEntry(CalledAgentEntry):
    """The agent behind an HTTP endpoint: ``body`` is a JSON template in which ``{question}``,
    ``{qid}`` and ``{passages}`` (the passages given to it, title and text: security probes
    give them; an evaluation gives none) are replaced inside strings (a GET sends it as query
    parameters); each header of ``headers_env`` is read from the named environment variable
    when the run starts."""

    provider: Literal["http"] = HTTP
    url: str
    method: Literal["POST", "GET", "PUT"] = "POST"
    body: Any = Field(default_factory=lambda: {"question": "{question}"})
    headers: dict[str, str] = Field(default_factory=dict, description="headers that are not secret")
    headers_env: dict[str, str] = Field(default_factory=dict, description="header -> environment variable")

    @field_validator("url")
    @classmethod
    def _parses(cls, url: str) -> str:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"url {url!r} is not an http(s) URL with a host, e.g. http://127.0.0.1:8080/chat"
            )
        try:
            parts.port  # noqa: B018 (a port outside 0-65535 raises here)
        except ValueError as err:
            raise ValueError(f"url {url!r}: {err}") from None
        return url

    @field_validator("headers_env")
    @classmethod
    def _variables(cls, headers: dict[str, str]) -> dict[str, str]:
        for header, variable in headers.items():
            if not _ENV_NAME.match(variable):
                raise ValueError(
                    f"headers_env: {variable!r} (for {header}) is not an environment variable name"
                )
        return headers

    @model_validator(mode="after")
    def _get_sends_parameters(self) -> HttpAgentEntry:
        if self.method == "GET" and not isinstance(self.body, dict):
            raise ValueError("a GET sends its body as query parameters: give body as a mapping")
        return self


class PythonAgentEntry(CalledAgentEntry):
    """The agent as a Python callable, ``module:function`` (sync or async), called with the
    question (and ``passages=`` when it takes them: security probes give them); it returns a
    mapping or an object with ``answer``, ``contexts`` and optionally ``context_ids`` and
    ``context_titles`` (or other names, through ``response``)."""

    provider: Literal["python"] = PYTHON
    target: str
    response: MappingSettings = Field(
        default_factory=lambda: MappingSettings(
            answer="$.answer",
            contexts="$.contexts",
            context_ids="$.context_ids",
            context_titles="$.context_titles",
            citations="$.citations",
        )
    )

    @field_validator("target")
    @classmethod
    def _module_function(cls, target: str) -> str:
        if not _TARGET.match(target):
            raise ValueError(f"target {target!r}: expected module:function, e.g. my_app.rag:answer")
        return target


class FileColumns(MappingSettings):
    """Where each field is in a row of an answers file: a column name, or a JSONPath into the
    row (``retrieved[*].content``); ``qid`` or ``question`` joins the row to the judgement list."""

    qid: str | None = "qid"
    question: str | None = "question"
    answer: str = "answer"
    contexts: str | None = "contexts"
    images: str | None = "images"
    boxes: str | None = "boxes"
    heatmaps: str | None = "heatmaps"

    @field_validator("qid", "question")
    @classmethod
    def _key_compiles(cls, path: str | None) -> str | None:
        if path is not None:
            compile_path(path)
        return path

    @model_validator(mode="after")
    def _joinable(self) -> FileColumns:
        if self.qid is None and self.question is None:
            raise ValueError("columns: give qid or question, to join each row to its question")
        return self


class AnswersFileEntry(AgentEntry):
    """Answers the agent already gave (exported from logs or traces): JSONL, CSV or parquet,
    joined to the judgement list by ``qid`` or exact question text. Several rows of one question
    are its repeats. Every question needs a row, and every row a question, unless ``partial``."""

    provider: Literal["file"] = FILE
    path: str
    columns: FileColumns = Field(default_factory=FileColumns)
    partial: bool = Field(
        default=False, description="allow questions without answers and answers without questions"
    )

    def mapping(self) -> MappingSettings:
        return self.columns

    @model_validator(mode="after")
    def _no_repeats(self) -> AnswersFileEntry:
        if self.repeats != 1:
            raise ValueError("a file's repeats are its rows: several rows of one question; leave repeats out")
        return self
