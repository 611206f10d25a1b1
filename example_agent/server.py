"""The agent behind HTTP, in its own nested JSON shape:

    POST /chat  {"query": "...", "session": "..."}
    -> {"data": {"reply": {"text": "...", "cites": [{"doc_id": "..."}, ...]},
                 "retrieval": {"documents": [{"doc": {"id": "...", "title": "...", "body": "..."},
                                              "score": 1.7}, ...]}},
        "meta": {"session": "...", "reply_id": "resp_..."}}

Traced (``traced``), it answers as an OpenTelemetry-instrumented service does: a W3C
``traceparent`` response header naming the span it answered in (ids derived from the question,
so a test knows them: ``trace_of``).

For tests and benchmarks it can be slowed (``latency_s``) and told to misbehave for a session:
POST /_faults {"eval-<qid>": ["429", "500", "hang", "html", "no_answer", "401"], "*": [...]} makes
that session's next requests fail in that order ("*": every session); GET /_stats counts the
requests; POST /_reset forgets both."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from example_agent.agent import Agent, default_agent

FAULT_REPLIES = {
    "429": (429, "application/json", b'{"error": "rate limited"}', {"Retry-After": "1"}),
    "500": (500, "application/json", b'{"error": "internal error"}', {}),
    "401": (401, "application/json", b'{"error": "invalid token"}', {}),
    "html": (200, "text/html", b"<html><body><h1>Maintenance</h1>We will be back soon.</body></html>", {}),
    "no_answer": (200, "application/json", b'{"data": {"status": "thinking"}}', {}),
}


def trace_of(question: str) -> tuple[str, str]:
    """The (trace id, span id) a traced agent reports for ``question``, in hex."""
    digest = hashlib.sha256(question.encode()).hexdigest()
    return digest[:32], digest[32:48]


def reply_id_of(question: str) -> str:
    """The id the agent gives its reply to ``question`` (``meta.reply_id``)."""
    return "resp_" + hashlib.sha256(question.encode()).hexdigest()[48:64]


class AgentService:
    """The agent, its fault plan and its request counts, shared by the handler threads."""

    def __init__(
        self, agent: Agent, latency_s: float = 0.0, hang_s: float = 30.0, traced: bool = False
    ) -> None:
        self.agent = agent
        self.latency_s = latency_s
        self.hang_s = hang_s
        self.traced = traced
        self.requests: Counter[str] = Counter()  # by session
        self.faults: dict[str, list[str]] = {}
        self.lock = threading.Lock()

    def next_fault(self, session: str) -> str | None:
        with self.lock:
            self.requests[session] += 1
            for key in (session, "*"):
                if self.faults.get(key):
                    return self.faults[key].pop(0)
        return None

    def reply(self, question: str, session: str) -> dict:
        found = self.agent.reply(question)
        documents = [
            {"doc": {"id": i, "title": t, "body": text}, "score": s}
            for text, i, t, s in zip(
                found["contexts"], found["context_ids"], found["context_titles"], found["scores"]
            )
        ]
        cites = [{"doc_id": found["context_ids"][n - 1]} for n in found["citations"]]
        return {
            "data": {
                "reply": {"text": found["answer"], "cites": cites},
                "retrieval": {"documents": documents},
            },
            "meta": {"session": session, "reply_id": reply_id_of(question)},
        }


def make_handler(service: AgentService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out at once, not 40 ms apart

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _send(self, status: int, kind: str, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, value: object, headers: dict[str, str] | None = None) -> None:
            self._send(status, "application/json", json.dumps(value).encode(), headers)

        def _body(self) -> dict:
            length = int(self.headers.get("Content-Length") or 0)
            return json.loads(self.rfile.read(length) or b"{}")

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            if self.path == "/_stats":
                with service.lock:
                    self._json(
                        200,
                        {"requests": sum(service.requests.values()), "by_session": dict(service.requests)},
                    )
            else:
                self._json(404, {"error": "not found"})

        def do_POST(self) -> None:  # noqa: N802
            body = self._body()
            if self.path == "/_faults":
                with service.lock:
                    for session, faults in body.items():
                        service.faults.setdefault(session, []).extend(faults)
                self._json(200, {"ok": True})
                return
            if self.path == "/_reset":
                with service.lock:
                    service.requests.clear()
                    service.faults.clear()
                self._json(200, {"ok": True})
                return
            if self.path != "/chat":
                self._json(404, {"error": "not found"})
                return
            session = str(body.get("session", ""))
            fault = service.next_fault(session)
            if fault == "hang":
                time.sleep(service.hang_s)
                self._json(504, {"error": "gave up"})
                return
            if fault is not None:
                self._send(*FAULT_REPLIES[fault])
                return
            if service.latency_s:
                time.sleep(service.latency_s)
            question = body.get("query")
            if not isinstance(question, str) or not question.strip():
                self._json(400, {"error": "query must be a non-empty string"})
                return
            trace, span = trace_of(question)
            headers = {"traceparent": f"00-{trace}-{span}-01"} if service.traced else None
            self._json(200, service.reply(question, session), headers)

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # a backlog of 5 drops connections opened together (a 1 s retry)


def serve(
    port: int,
    latency_s: float = 0.0,
    hang_s: float = 30.0,
    agent: Agent | None = None,
    traced: bool = False,
) -> ThreadingHTTPServer:
    """The service on 127.0.0.1:``port`` (0: a free one), in a background thread."""
    service = AgentService(agent or default_agent(), latency_s, hang_s, traced)
    server = _Server(("127.0.0.1", port), make_handler(service))
    server.service = service  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
