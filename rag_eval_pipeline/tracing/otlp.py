"""Case traces and evaluation events out over OTLP/HTTP with the OpenTelemetry SDK and its
exporters (no hand-written protocol): to Phoenix, Langfuse or any collector, the events also to
a file as OTLP/JSON lines. A collector that is down costs at most one bounded flush; what it did
not take is counted, and the evaluation never fails for it."""

from __future__ import annotations

import base64
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.sdk.trace.sampling import TraceIdRatioBased
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, Status, StatusCode, TraceFlags, format_span_id, format_trace_id

from rag_eval_pipeline.tracing.cases import SpanSpec
from rag_eval_pipeline.tracing.events import EVENT_NAME, EvaluationEvent

PHOENIX_DEFAULT = "http://127.0.0.1:6006/v1/traces"
LANGFUSE_PATH = "/api/public/otel/v1/traces"


class TracingConfigError(ValueError):
    pass


@dataclass(frozen=True)
class OtlpTarget:
    """Where traces go and with which headers, resolved once from the configuration file and
    the environment."""

    endpoint: str
    headers: dict[str, str]
    service_name: str
    project: str
    sample: float = 1.0
    flush_timeout_s: float = 5.0
    events_endpoint: str | None = None  # said outright; else the traces' collector's /v1/logs

    @property
    def logs_endpoint(self) -> str:
        """Where evaluation events go: the OTLP logs path beside the traces' (``/v1/logs`` for
        ``/v1/traces``), unless said outright."""
        if self.events_endpoint:
            return self.events_endpoint
        base = self.endpoint.rstrip("/")
        return base.removesuffix("/v1/traces") + "/v1/logs"


def resolve_target(
    preset: str,
    endpoint: str | None,
    headers_env: Mapping[str, str],
    service_name: str,
    project: str,
    sample: float,
    flush_timeout_s: float,
    environ: Mapping[str, str] = os.environ,
    events_endpoint: str | None = None,
) -> OtlpTarget:
    """``otlp``: the endpoint, else ``OTEL_EXPORTER_OTLP_ENDPOINT`` + ``/v1/traces``; headers from
    the named variables and ``OTEL_EXPORTER_OTLP_HEADERS``. ``phoenix``: its local default.
    ``langfuse``: ``LANGFUSE_HOST`` + its OTLP path, Basic auth from ``LANGFUSE_PUBLIC_KEY`` and
    ``LANGFUSE_SECRET_KEY``."""
    headers = {name: environ[variable] for name, variable in headers_env.items() if variable in environ}
    for pair in filter(None, environ.get("OTEL_EXPORTER_OTLP_HEADERS", "").split(",")):
        name, _, value = pair.partition("=")
        headers.setdefault(name.strip(), value.strip())
    if preset == "langfuse":
        missing = [v for v in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY") if not environ.get(v)]
        if missing:
            raise TracingConfigError(
                f"tracing preset langfuse needs {' and '.join(missing)} in the environment"
            )
        host = (environ.get("LANGFUSE_HOST") or "https://cloud.langfuse.com").rstrip("/")
        endpoint = endpoint or host + LANGFUSE_PATH
        token = base64.b64encode(
            f"{environ['LANGFUSE_PUBLIC_KEY']}:{environ['LANGFUSE_SECRET_KEY']}".encode()
        ).decode()
        headers["Authorization"] = f"Basic {token}"
    elif preset == "phoenix":
        endpoint = endpoint or PHOENIX_DEFAULT
    elif endpoint is None:
        base = environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        if not base:
            raise TracingConfigError(
                "tracing is on but has no endpoint: set tracing.endpoint, OTEL_EXPORTER_OTLP_ENDPOINT, "
                "or a preset (phoenix, langfuse)"
            )
        endpoint = base.rstrip("/") + "/v1/traces"
    return OtlpTarget(endpoint, headers, service_name, project, sample, flush_timeout_s, events_endpoint)


class _CountingExporter(SpanExporter):
    """The OTLP exporter, counting what it delivered and what it dropped."""

    def __init__(self, inner: SpanExporter) -> None:
        self._inner = inner
        self.exported = 0
        self.dropped = 0
        self.last_error: str | None = None

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            result = self._inner.export(spans)
        except Exception as err:  # a collector that is down must never fail the evaluation
            result, self.last_error = SpanExportResult.FAILURE, f"{type(err).__name__}: {err}"
        if result is SpanExportResult.SUCCESS:
            self.exported += len(spans)
        else:
            self.dropped += len(spans)
            self.last_error = self.last_error or "the collector refused or did not answer"
        return result

    def shutdown(self) -> None:
        self._inner.shutdown()


@dataclass(frozen=True)
class ExportReport:
    cases: int
    spans_exported: int
    spans_dropped: int
    error: str | None
    trace_ids: dict[str, str]  # qid -> trace id (hex), to find a case in the backend
    # each trace's root span as (trace id, span id) in hex, in the order given; None: not sampled
    roots: list[tuple[str, str] | None] = field(default_factory=list)


def export_traces(
    traces: Sequence[SpanSpec], qids: Sequence[str], target: OtlpTarget, batch_spans: int = 1024
) -> ExportReport:
    """Emits each case trace with its spans laid end to end from now backwards over their
    recorded durations, in batches through the SDK's OTLP exporter. The spans are finished
    records (``ReadableSpan``), built directly rather than through a live tracer: they describe
    work already done, and skipping the tracer's per-span bookkeeping is most of the cost of
    tracing an offline run. After the first failed batch the rest are counted as dropped, not
    tried: a collector that is down costs one bounded export."""
    exporter = _CountingExporter(
        OTLPSpanExporter(endpoint=target.endpoint, headers=target.headers, timeout=target.flush_timeout_s)
    )
    resource = Resource.create(
        {"service.name": target.service_name, "openinference.project.name": target.project}
    )
    scope = InstrumentationScope("rag_eval_pipeline")
    sampler = TraceIdRatioBased(target.sample)
    ids = RandomIdGenerator()
    flags = TraceFlags(TraceFlags.SAMPLED)
    batch: list[ReadableSpan] = []
    trace_ids = {}
    roots: list[tuple[str, str] | None] = []
    cases = 0

    def span(name, trace_id, parent, attributes, start, end, error):
        context = SpanContext(trace_id, ids.generate_span_id(), is_remote=False, trace_flags=flags)
        status = Status(StatusCode.ERROR, error[:200]) if error else Status(StatusCode.UNSET)
        batch.append(
            ReadableSpan(
                name,
                context,
                parent,
                resource,
                attributes,
                status=status,
                start_time=start,
                end_time=end,
                instrumentation_scope=scope,
            )
        )
        return context

    def send() -> None:
        if exporter.dropped:  # the collector already failed once: do not wait on it again
            exporter.dropped += len(batch)
        else:
            exporter.export(batch)
        batch.clear()

    for qid, spec in zip(qids, traces):
        trace_id = ids.generate_trace_id()
        if not sampler.should_sample(None, trace_id, spec.name).decision.is_sampled():
            roots.append(None)
            continue
        cases += 1
        end = time.time_ns()
        start = end - int(max(spec.duration_s, 0.001) * 1e9)
        root = span(spec.name, trace_id, None, spec.attributes, start, end, spec.error)
        trace_ids[qid] = format_trace_id(trace_id)
        roots.append((format_trace_id(trace_id), format_span_id(root.span_id)))
        cursor = start
        for child in spec.children:
            child_end = min(cursor + int(max(child.duration_s, 0.0005) * 1e9), end)
            span(child.name, trace_id, root, child.attributes, cursor, child_end, child.error)
            cursor = child_end
        if len(batch) >= batch_spans:
            send()
    if batch:
        send()
    exporter.shutdown()
    return ExportReport(cases, exporter.exported, exporter.dropped, exporter.last_error, trace_ids, roots)


@dataclass(frozen=True)
class EventReport:
    """What became of the evaluation events: sent to the collector, dropped (it was down or
    refused), written to the file, and the first error."""

    events: int
    exported: int
    dropped: int
    written: int
    error: str | None


def _log_records(events: Sequence[EvaluationEvent], service_name: str, project: str) -> list:
    """The events as the SDK's finished log records (``ReadableLogRecord``), each in the context
    of its parent span so the record carries that span's trace and span id. Built directly, not
    emitted through a ``LoggerProvider`` and its ``BatchLogRecordProcessor``, as the spans are:
    they record work already done, and the batching and the one bounded failure are ours (the
    processor would retry every batch in the background and wait on each at exit)."""
    from opentelemetry._logs import LogRecord
    from opentelemetry.sdk._logs import ReadableLogRecord
    from opentelemetry.trace import NonRecordingSpan, set_span_in_context

    resource = Resource.create({"service.name": service_name, "openinference.project.name": project})
    scope = InstrumentationScope("rag_eval_pipeline")
    now = time.time_ns()
    records = []
    for event in events:
        context = None
        if event.parent is not None:
            parent = SpanContext(
                int(event.parent.trace_id, 16),
                int(event.parent.span_id or "0", 16),  # 0: the trace alone, under no span
                is_remote=True,
                trace_flags=TraceFlags(TraceFlags.SAMPLED),
            )
            context = set_span_in_context(NonRecordingSpan(parent))
        record = LogRecord(
            timestamp=now,
            observed_timestamp=now,
            context=context,
            attributes=event.attributes,
            event_name=EVENT_NAME,
        )
        records.append(ReadableLogRecord(record, resource, scope))
    return records


def otlp_json(records: Sequence) -> dict:
    """One OTLP/JSON export request (``{"resourceLogs": [...]}``) of the records: the protobuf
    the exporter sends, in the JSON mapping OTLP specifies (ids as hex, enums as integers)."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs

    document = MessageToDict(encode_logs(records), use_integers_for_enums=True)
    for resource_logs in document.get("resourceLogs", []):
        for scope_logs in resource_logs.get("scopeLogs", []):
            for record in scope_logs.get("logRecords", []):
                for key in ("traceId", "spanId"):  # protobuf's JSON writes bytes as base64
                    if record.get(key):
                        record[key] = base64.b64decode(record[key]).hex()
    return document


def export_events(
    events: Sequence[EvaluationEvent],
    target: OtlpTarget | None,
    file: Path | None = None,
    batch_records: int = 512,
    collector_down: str | None = None,
    service_name: str = "rag-eval-pipeline",
    project: str = "rag-eval",
) -> EventReport:
    """Sends the events through the SDK's OTLP/HTTP log exporter to ``target``'s logs endpoint
    (None: no collector) and appends them to ``file`` as OTLP/JSON lines, a request a line. As
    with traces, after the first failed batch the rest are counted as dropped, not tried; a
    ``collector_down`` reason (the traces' export already failed on the same collector) drops
    them all without a second wait. The file is written whatever the collector did."""
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.sdk._logs.export import LogRecordExportResult

    if target is not None:
        service_name, project = target.service_name, target.project
    records = _log_records(events, service_name, project)
    exported = dropped = written = 0
    error = collector_down
    exporter = (
        OTLPLogExporter(endpoint=target.logs_endpoint, headers=target.headers, timeout=target.flush_timeout_s)
        if target is not None and collector_down is None
        else None
    )
    lines = []
    for start in range(0, len(records), batch_records):
        batch = records[start : start + batch_records]
        if file is not None:
            lines.append(json.dumps(otlp_json(batch), separators=(",", ":")))
        if target is None:
            continue
        if exporter is None or dropped:  # down, or already failed once: do not wait on it again
            dropped += len(batch)
            continue
        try:
            result = exporter.export(batch)
        except Exception as err:  # a collector that is down must never fail the evaluation
            result, error = LogRecordExportResult.FAILURE, f"{type(err).__name__}: {err}"
        if result is LogRecordExportResult.SUCCESS:
            exported += len(batch)
        else:
            dropped += len(batch)
            error = error or "the collector refused or did not answer"
    if exporter is not None:
        exporter.shutdown()
    if file is not None and lines:
        file.parent.mkdir(parents=True, exist_ok=True)
        with file.open("a", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
        written = len(records)
    return EventReport(len(records), exported, dropped, written, error)
