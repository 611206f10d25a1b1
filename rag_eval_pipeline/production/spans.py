"""Interactions from an agent's traces, in OpenInference's conventions: one per trace, its
question and answer from the root span's ``input.value`` / ``output.value``, its contexts from
the retriever spans' ``retrieval.documents``. Spans arrive as Phoenix's REST API returns them
(flattened attributes) or as OTLP/JSON (``resourceSpans``, key-value attributes); both become one
``Span`` here, with attributes as nested data the JSONPaths of ``SpanFields`` read."""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

from rag_eval_pipeline.answering.agents.mapping import compile_path
from rag_eval_pipeline.production.interactions import (
    InteractionError,
    ReadInteractions,
    interaction,
    parse_timestamp,
)
from rag_eval_pipeline.production.settings import SpanFields

RETRIEVER = "RETRIEVER"


@dataclass(frozen=True)
class Span:
    """What an interaction is read from: ids, the start, the span kind and the attributes
    (nested: ``retrieval.documents.0.document.content`` is ``{"retrieval": {"documents": [...]}}``)."""

    trace_id: str
    span_id: str
    parent_id: str | None
    start: Any  # ISO text (Phoenix) or nanoseconds since the epoch (OTLP)
    attributes: dict[str, Any]
    resource: dict[str, Any] = field(default_factory=dict)
    name: str = ""
    end: Any = None
    error: str | None = None  # the status message (or "error") of a span whose status is ERROR

    @property
    def kind(self) -> str | None:
        kind = self.attributes.get("openinference", {})
        return kind.get("span", {}).get("kind") if isinstance(kind, dict) else None


def _decoded(value: Any) -> Any:
    """An attribute's value, with JSON objects and arrays stored as text read as data (the
    OpenInference ``metadata`` attribute, a document's ``metadata``)."""
    if isinstance(value, str) and value[:1] in ("{", "[") and value[-1:] in ("}", "]"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def nested(flat: Mapping[str, Any]) -> dict[str, Any]:
    """Dotted keys as nested mappings, numeric parts as list positions; a value already nested
    (Phoenix may return either) is merged as it is."""
    root: dict[str, Any] = {}
    for key in sorted(flat, key=lambda k: k.count(".")):
        parts = key.split(".")
        node: Any = root
        for part in parts[:-1]:
            child = node.get(part) if isinstance(node, dict) else None
            if not isinstance(child, dict):
                child = {}
                if isinstance(node, dict):
                    node[part] = child
            node = child
        if isinstance(node, dict):
            value = _decoded(flat[key])
            if isinstance(node.get(parts[-1]), dict) and isinstance(value, dict):
                node[parts[-1]].update(value)
            else:
                node[parts[-1]] = value
    return _lists(root)


def _lists(node: Any) -> Any:
    """Mappings whose keys are all positions become lists, in order."""
    if isinstance(node, dict):
        node = {k: _lists(v) for k, v in node.items()}
        if node and all(k.isdigit() for k in node):
            return [node[k] for k in sorted(node, key=int)]
        return node
    if isinstance(node, list):
        return [_lists(v) for v in node]
    return node


def _hex_id(value: Any) -> str:
    """A trace or span id as lower-case hex: OTLP/JSON writes hex, protobuf's JSON mapping base64."""
    text = str(value or "")
    if len(text) in (16, 32) and all(c in "0123456789abcdefABCDEF" for c in text):
        return text.lower()
    try:
        return base64.b64decode(text, validate=True).hex()
    except (binascii.Error, ValueError):
        return text


def _any_value(value: Mapping[str, Any]) -> Any:
    """An OTLP/JSON ``AnyValue``."""
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "arrayValue" in value:
        return [_any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return {kv["key"]: _any_value(kv.get("value", {})) for kv in value["kvlistValue"].get("values", [])}
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def _key_values(pairs: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    return {kv["key"]: _any_value(kv.get("value") or {}) for kv in pairs or []}


def _otlp_error(status: Any) -> str | None:
    """An OTLP status's message when its code is ERROR (2, or ``STATUS_CODE_ERROR`` in JSON)."""
    if not isinstance(status, Mapping) or status.get("code") not in (2, "2", "STATUS_CODE_ERROR"):
        return None
    return str(status.get("message") or "error")


def otlp_spans(export: Mapping[str, Any]) -> Iterator[Span]:
    """The spans of one OTLP/JSON export (``{"resourceSpans": [...]}``)."""
    for resource_spans in export.get("resourceSpans", []) or []:
        resource = nested(_key_values((resource_spans.get("resource") or {}).get("attributes", [])))
        for scope in resource_spans.get("scopeSpans", []) or resource_spans.get(
            "instrumentationLibrarySpans", []
        ):
            for span in scope.get("spans", []) or []:
                parent = span.get("parentSpanId")
                yield Span(
                    _hex_id(span.get("traceId")),
                    _hex_id(span.get("spanId")),
                    _hex_id(parent) if parent else None,
                    span.get("startTimeUnixNano"),
                    nested(_key_values(span.get("attributes", []))),
                    resource,
                    str(span.get("name") or ""),
                    span.get("endTimeUnixNano"),
                    _otlp_error(span.get("status")),
                )


def phoenix_spans(spans: Iterable[Mapping[str, Any]]) -> Iterator[Span]:
    """Spans as Phoenix's REST API returns them (``context``, ``parent_id``, ``start_time``)."""
    for span in spans:
        context = span.get("context") or {}
        attributes = nested(span.get("attributes") or {})
        if span.get("span_kind") and not isinstance(attributes.get("openinference"), dict):
            attributes["openinference"] = {"span": {"kind": span["span_kind"]}}
        yield Span(
            str(context.get("trace_id") or span.get("trace_id") or ""),
            str(context.get("span_id") or span.get("span_id") or ""),
            span.get("parent_id") or None,
            span.get("start_time"),
            attributes,
            name=str(span.get("name") or ""),
            end=span.get("end_time"),
            error=str(span.get("status_message") or "error") if span.get("status_code") == "ERROR" else None,
        )


def spans_of_document(document: Any) -> Iterator[Span]:
    """The spans of one parsed file or line: an OTLP export, Phoenix's ``{"data": [...]}``, or
    a list of either."""
    if isinstance(document, list):
        for item in document:
            yield from spans_of_document(item) if isinstance(item, dict) and "resourceSpans" in item else ()
        yield from phoenix_spans(i for i in document if isinstance(i, dict) and "resourceSpans" not in i)
    elif isinstance(document, dict) and "resourceSpans" in document:
        yield from otlp_spans(document)
    elif isinstance(document, dict) and isinstance(document.get("data"), list):
        yield from phoenix_spans(document["data"])


def _first(path: Any, document: Any) -> Any:
    if path is None:
        return None
    found = [m.value for m in path.find(document)]
    return found[0] if found else None


def _documents(span: Span) -> list[Mapping[str, Any]]:
    documents = span.attributes.get("retrieval", {})
    documents = documents.get("documents") if isinstance(documents, dict) else None
    return [d.get("document", d) for d in documents or [] if isinstance(d, dict)]


def _title(document: Mapping[str, Any]) -> str | None:
    metadata = document.get("metadata")
    if isinstance(metadata, dict) and metadata.get("title") is not None:
        return str(metadata["title"])
    return None


class _Fields:
    def __init__(self, fields: SpanFields) -> None:
        self.paths = {
            name: compile_path(getattr(fields, name))
            for name in ("agent_version", "user_feedback", "metadata")
            if getattr(fields, name) is not None
        }

    def read(self, root: Span) -> dict[str, Any]:
        values = {}
        for name, path in self.paths.items():
            value = _first(path, root.attributes)
            if value is None and name == "agent_version":  # the service's own version, if it says
                value = _first(compile_path("service.version"), root.resource)
            values[name] = value
        return values


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _duration(span: Span, zone: ZoneInfo) -> float | None:
    """The span's own duration in seconds (None: its end is not known, or not after its start)."""
    if span.start in (None, "") or span.end in (None, ""):
        return None
    if str(span.start).isdigit() and str(span.end).isdigit():  # OTLP's nanoseconds, kept exact
        seconds = (int(span.end) - int(span.start)) / 1e9
    else:
        try:
            seconds = (parse_timestamp(span.end, zone) - parse_timestamp(span.start, zone)).total_seconds()
        except InteractionError:
            return None
    return seconds if seconds >= 0 else None


def interactions_of_spans(
    spans: Iterable[Span], source: str, fields: SpanFields, zone: ZoneInfo, where: str = ""
) -> ReadInteractions:
    """One interaction per trace that has a root span; a root without a question or an answer is
    named by its span id (the rest are kept). Contexts are the retriever spans' documents in
    the order the spans started; a trace without a retriever span has no known contexts."""
    by_trace: dict[str, list[Span]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    reader = _Fields(fields)
    rows, problems = [], []
    for trace_id, members in by_trace.items():
        roots = [s for s in members if not s.parent_id]
        if not roots:
            continue  # a trace whose root is not here (yet): nothing to read
        root = roots[0]
        retrievers = sorted((s for s in members if s.kind == RETRIEVER), key=lambda s: str(s.start))
        documents = [d for s in retrievers for d in _documents(s)]
        known = bool(retrievers)
        try:
            rows.append(
                interaction(
                    source=source,
                    location=f"{where}span {root.span_id}",
                    question=_first(compile_path("input.value"), root.attributes),
                    answer=_first(compile_path("output.value"), root.attributes),
                    timestamp=root.start,
                    zone=zone,
                    contexts=[str(d.get("content") or "") for d in documents] if known else None,
                    context_ids=[None if _missing(d.get("id")) else str(d["id"]) for d in documents]
                    if known
                    else None,
                    context_titles=[_title(d) for d in documents] if known else None,
                    trace_id=trace_id,
                    span_id=root.span_id,
                    latency_s=_duration(root, zone),
                    **reader.read(root),
                )
            )
        except InteractionError as err:
            problems.append(f"{source}: {where}span {root.span_id} (trace {trace_id}): {err}")
    return ReadInteractions.of(rows, problems)
