"""Case traces out over OTLP/HTTP with the OpenTelemetry SDK and its exporter (no hand-written
protocol): to Phoenix, Langfuse or any collector. A collector that is down costs at most one
bounded flush; the spans it did not take are counted, and the evaluation never fails for it."""

from __future__ import annotations

import base64
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.sdk.trace.sampling import TraceIdRatioBased
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, Status, StatusCode, TraceFlags, format_trace_id

from rag_eval_pipeline.tracing.cases import SpanSpec

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


def resolve_target(
    preset: str,
    endpoint: str | None,
    headers_env: Mapping[str, str],
    service_name: str,
    project: str,
    sample: float,
    flush_timeout_s: float,
    environ: Mapping[str, str] = os.environ,
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
    return OtlpTarget(endpoint, headers, service_name, project, sample, flush_timeout_s)


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
            continue
        cases += 1
        end = time.time_ns()
        start = end - int(max(spec.duration_s, 0.001) * 1e9)
        root = span(spec.name, trace_id, None, spec.attributes, start, end, spec.error)
        trace_ids[qid] = format_trace_id(trace_id)
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
    return ExportReport(cases, exporter.exported, exporter.dropped, exporter.last_error, trace_ids)
