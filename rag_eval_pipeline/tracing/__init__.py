"""Case traces for Phoenix, Langfuse and any OpenTelemetry collector: built from the stored
tables (``cases``, pure) and sent over OTLP/HTTP (``otlp``, the SDK adapter)."""
