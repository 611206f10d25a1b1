"""Reading an agent's reply: JSONPaths (``jsonpath-ng``) into its response, compiled once, that
find the answer and the contexts it answered from. A reply the mapping cannot read names the
path that found nothing."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jsonpath_ng.exceptions import JSONPathError
from jsonpath_ng.ext import parse

from rag_eval_pipeline.answering.base import ReturnedContext
from rag_eval_pipeline.answering.visual import VisualMapping, VisualReplyError
from rag_eval_pipeline.common.text import nfc_values
from rag_eval_pipeline.metrics.grounding import VisualAnswer

MISSING = "(nothing found)"
# ``citations: inline``: the answer's own markers, [1] or [2, 3] (1-based into the contexts it returned)
INLINE = "inline"
_MARKERS = re.compile(r"\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\]")

Citation = int | str  # a 1-based index into the returned contexts, or a context's id or title


def inline_citations(answer: str) -> tuple[int, ...]:
    """The numbers of the answer's citation markers, in order: ``[1]``, ``[2, 3]``, ``[1][4]``."""
    return tuple(int(n) for group in _MARKERS.findall(answer) for n in re.split(r"\s*[,;]\s*", group))


def _citation(value: Any) -> Citation:
    """A cited source as found: a JSON number is an index, anything else its text."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return int(value)
    return "" if value is None else str(value)


@dataclass(frozen=True)
class Reply:
    """What one response says: the answer, the contexts it was given from (None: not known) and
    the sources it cites (None: it cites nothing the mapping can read; what needs them is absent)."""

    answer: str
    contexts: tuple[ReturnedContext, ...] | None
    citations: tuple[Citation, ...] | None = None
    trace: str | None = None  # the agent's own trace of the reply (a traceparent or trace id)
    response_id: str | None = None  # the reply's own id, where the mapping names one
    visual: VisualAnswer | None = None  # the images, boxes and heat maps it returned (answering/visual.py)


# the response headers an HTTP agent's reply is read with, kept beside its JSON body under this
# key (and cached with it): a W3C ``traceparent`` response header names the reply's span
REPLY_HEADERS = "__rag_eval_headers__"
TRACEPARENT = "traceparent"
KEPT_HEADERS = (TRACEPARENT,)


def _header(document: Any, name: str) -> str | None:
    """A response header the transport kept beside the body (None: not sent, or not HTTP)."""
    headers = document.get(REPLY_HEADERS) if isinstance(document, dict) else None
    value = headers.get(name) if isinstance(headers, dict) else None
    return str(value) if value else None


class UnreadableReplyError(ValueError):
    """The response is not what the mapping expects: which path found nothing, or what was odd."""


def compile_path(path: str) -> Any:
    """The compiled JSONPath, or a ValueError naming it and where it does not parse."""
    try:
        return parse(path)
    except (JSONPathError, Exception) as err:  # the lexer raises plain exceptions on odd characters
        raise ValueError(f"JSONPath {path!r} does not compile: {err}") from None


def _found(path: Any, document: Any) -> list[Any]:
    return [match.value for match in path.find(document)]


def _texts(values: list[Any]) -> list[str]:
    """Found values as texts; a single list found (``$.contexts`` of a list) is its items."""
    if len(values) == 1 and isinstance(values[0], list | tuple):
        values = list(values[0])
    return ["" if v is None else v if isinstance(v, str) else str(v) for v in values]


@dataclass(frozen=True)
class ResponseMapping:
    """The compiled paths; ``contexts`` None means the agent returns no contexts."""

    answer: tuple[str, Any]
    contexts: tuple[str, Any] | None
    context_ids: tuple[str, Any] | None
    context_titles: tuple[str, Any] | None
    citations: tuple[str, Any] | None = None  # (INLINE, None): the answer's own markers
    trace: tuple[str, Any] | None = None
    visual: VisualMapping = VisualMapping()
    id: tuple[str, Any] | None = None

    @classmethod
    def of(
        cls,
        answer: str,
        contexts: str | None,
        context_ids: str | None,
        context_titles: str | None,
        citations: str | None = None,
        trace: str | None = None,
        visual: VisualMapping | None = None,
        id: str | None = None,
    ) -> ResponseMapping:
        def compiled(path: str | None) -> tuple[str, Any] | None:
            return None if path is None else (path, None if path == INLINE else compile_path(path))

        return cls(
            (answer, compile_path(answer)),
            compiled(contexts),
            compiled(context_ids),
            compiled(context_titles),
            compiled(citations),
            compiled(trace),
            visual or VisualMapping(),
            compiled(id),
        )

    @property
    def returns_contexts(self) -> bool:
        return self.contexts is not None

    def read(self, document: Any) -> Reply:
        """The answer, contexts and citations of one response. Every field but the answer is
        optional in the reply itself: contexts the path finds nothing for are not known (None:
        what needs them is absent, never 0; an empty list is known, and empty), ids or titles it
        finds nothing for are not given (the contexts are matched by what is), citations it finds
        nothing for are none. UnreadableReplyError when the answer path finds nothing, or ids or
        titles are given but do not line up. Every string of the reply is read in NFC."""
        document = nfc_values(document)  # an agent may reply decomposed: the same text, composed
        path, compiled = self.answer
        answers = _found(compiled, document)
        if not answers or answers[0] is None:
            raise UnreadableReplyError(f"response mapping: answer path {path} found nothing in the response")
        answer = answers[0] if isinstance(answers[0], str) else str(answers[0])
        try:
            visual = self.visual.read(document)
        except VisualReplyError as err:
            raise UnreadableReplyError(f"response mapping: {err}") from None
        return Reply(
            answer,
            self._contexts(document),
            self._citations(document, answer),
            trace=self._one(self.trace, document) or _header(document, TRACEPARENT),
            visual=visual,
            response_id=self._one(self.id, document),
        )

    @staticmethod
    def _one(field: tuple[str, Any] | None, document: Any) -> str | None:
        """A single value the reply says (its trace, its id); None: not mapped, or not in it."""
        if field is None:
            return None
        found = _found(field[1], document)
        return None if not found or found[0] is None else str(found[0])

    def _contexts(self, document: Any) -> tuple[ReturnedContext, ...] | None:
        if self.contexts is None:
            return None
        found = _found(self.contexts[1], document)
        if not found or found == [None]:
            return None
        texts = _texts(found)
        ids = self._aligned(self.context_ids, document, len(texts))
        titles = self._aligned(self.context_titles, document, len(texts))
        return tuple(ReturnedContext(t, i, n) for t, i, n in zip(texts, ids, titles, strict=True))

    def _citations(self, document: Any, answer: str) -> tuple[Citation, ...] | None:
        """The cited sources: the answer's markers (``inline``), or what the path finds (a list
        of ids, titles or indices); None when not mapped, or when the reply has no such field."""
        if self.citations is None:
            return None
        if self.citations[0] == INLINE:
            return inline_citations(answer)
        found = _found(self.citations[1], document)
        if not found or found == [None]:
            return None
        values = list(found[0]) if len(found) == 1 and isinstance(found[0], list | tuple) else found
        return tuple(_citation(v) for v in values)

    @staticmethod
    def _aligned(field: tuple[str, Any] | None, document: Any, count: int) -> list[str | None]:
        found = [] if field is None else _found(field[1], document)
        if field is None or not found or found == [None]:  # not mapped, or not in this reply
            return [None] * count
        values = _texts(found)
        if len(values) != count:
            raise UnreadableReplyError(
                f"response mapping: {field[0]} found {len(values)} values for {count} contexts"
            )
        return list(values)

    def preview(self, document: Any) -> list[tuple[str, str, str]]:
        """(field, path, what it extracted or ``MISSING``) for every mapped field."""
        rows = []
        for field in ("answer", "contexts", "context_ids", "context_titles", "citations", "trace", "id"):
            mapped = getattr(self, field)
            if mapped is None:
                rows.append((field, "(not mapped)", ""))
                continue
            if mapped[0] == INLINE:
                rows.append((field, INLINE, repr(list(self.read(document).citations or ()))))
                continue
            values = _found(mapped[1], document)
            shown = MISSING if not values else repr(values[0] if field == "answer" else _texts(values))
            rows.append((field, mapped[0], shown))
        return rows + self.visual.preview(document)


def as_document(value: Any) -> Any:
    """What a Python agent returned, as JSON-like data the mapping reads (and the cache keeps):
    mappings and lists as they are, a pydantic model or dataclass as its fields, another object
    as its public attributes."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): as_document(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [as_document(v) for v in value]
    if hasattr(value, "model_dump"):
        return as_document(value.model_dump())
    if hasattr(value, "__dataclass_fields__"):
        return {name: as_document(getattr(value, name)) for name in value.__dataclass_fields__}
    attributes = (
        {k: v for k, v in vars(value).items() if not k.startswith("_")} if hasattr(value, "__dict__") else {}
    )
    if "page_content" in attributes:  # a LangChain Document: its text is the context
        attributes["text"] = attributes["page_content"]
    return as_document(attributes) if attributes else str(value)
