"""An OTLP/HTTP receiver of the tests' own: what a collector is given, decoded with the
``opentelemetry-proto`` package (no hand parser)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class OtlpReceiver:
    """Takes OTLP/HTTP protobuf exports and keeps each request's path, headers and spans, or
    log records (``/v1/logs``), decoded with ``opentelemetry-proto``."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self._server: ThreadingHTTPServer | None = None

    def __enter__(self) -> OtlpReceiver:
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                spans, logs = [], []
                if self.path.endswith("/v1/logs"):
                    logs = [
                        {
                            "event_name": record.event_name,
                            "trace_id": record.trace_id.hex(),
                            "span_id": record.span_id.hex(),
                            "attributes": {a.key: _value(a.value) for a in record.attributes},
                        }
                        for resource in ExportLogsServiceRequest.FromString(body).resource_logs
                        for scope in resource.scope_logs
                        for record in scope.log_records
                    ]
                else:
                    spans = [
                        {
                            "name": span.name,
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent": span.parent_span_id.hex(),
                            "attributes": {a.key: _value(a.value) for a in span.attributes},
                        }
                        for resource in ExportTraceServiceRequest.FromString(body).resource_spans
                        for scope in resource.scope_spans
                        for span in scope.spans
                    ]
                headers = {k.lower(): v for k, v in self.headers.items()}
                receiver.requests.append(
                    {"path": self.path, "headers": headers, "spans": spans, "logs": logs}
                )
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args) -> None:  # keep test output clean
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def spans(self) -> list[dict]:
        return [span for request in self.requests for span in request["spans"]]

    @property
    def logs(self) -> list[dict]:
        return [record for request in self.requests for record in request["logs"]]

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()


def _value(value):
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None
