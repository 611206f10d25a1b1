"""Case traces for Phoenix, Langfuse and any OpenTelemetry collector: built from the stored
tables (``cases``, pure) and sent over OTLP/HTTP (``otlp``, the SDK adapter)."""

from rag_eval_pipeline.tracing.cases import SpanSpec, TraceContext, build_case_traces

__all__ = ["SpanSpec", "TraceContext", "build_case_traces"]
