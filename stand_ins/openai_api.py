"""A small OpenAI-compatible Chat Completions server on 127.0.0.1 for fault injection against the
real `openai` SDK (the real llama.cpp server covers the happy path).

Like ``fake_anthropic``: a queue of scripted replies first (errors with retry-after, malformed
JSON, output cut at max_tokens), then the same simulated model, which answers and judges from the
request itself. ``refuse`` lists the structured-output ways it answers with HTTP 400, as servers
without JSON-schema or tool support do.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from rag_eval_pipeline.metrics import reference
from stand_ins.anthropic_api import Reply, SimulatedModel, _tag, send_reply
from stand_ins.images import VISION_TOOLS, image_tokens, openai_images, vision_verdict, without_image_data


def openai_error(status: int, message: str = "simulated", retry_after: float | None = None) -> Reply:
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    return Reply(status, {"error": {"message": message, "type": "simulated", "code": status}}, headers)


def completion(
    model: str,
    content: str | None,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str = "stop",
    usage: tuple[int, int] = (20, 5),
) -> Reply:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return Reply(
        200,
        {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": 1796000000,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
        },
    )


def structured_way(request: dict[str, Any]) -> str | None:
    if "response_format" in request:
        return "json_schema"
    if "tools" in request:
        return "tools"
    return None


def _schema_name(request: dict[str, Any]) -> str | None:
    if "response_format" in request:
        return request["response_format"]["json_schema"]["name"]
    if "tool_choice" in request:
        return request["tool_choice"]["function"]["name"]
    system = next((m["content"] for m in request["messages"] if m["role"] == "system"), "")
    if "matching this JSON schema" in system:  # text mode: the judge's tool names appear in it
        for name in (
            "record_scores",
            "record_statements",
            "record_verdicts",
            "record_passage_verdicts",
            "record_score",
        ):
            if name in system or f'"{name}"' in system:
                return name
        return "record_scores"
    return None


class SimulatedChatModel:
    """The Messages-API simulated model, spoken in Chat Completions."""

    def __init__(self) -> None:
        self._model = SimulatedModel()

    def __call__(self, request: dict[str, Any]) -> Reply:
        user = next(m["content"] for m in request["messages"] if m["role"] == "user")
        if isinstance(user, list):  # images before the text: the text parts are the prompt
            user = "\n".join(
                p.get("text", "") for p in user if isinstance(p, dict) and p.get("type") == "text"
            )
        name = _schema_name(request)
        images = openai_images(request)[0]
        tokens = (len(without_image_data(json.dumps(request["messages"]))) // 4 + image_tokens(images), 0)
        if name is None:
            answer = self._model({"messages": [{"role": "user", "content": user}], "model": request["model"]})
            text = answer.body["content"][0]["text"]  # type: ignore[index]
            return completion(request["model"], text, usage=(tokens[0], max(1, len(text) // 4)))
        if name == "record_score":  # a rubric metric: 1 when the answer is the ground truth
            truth, answer = _tag(user, "ground_truth"), _tag(user, "answer")
            verdict = {"score": reference.correctness(answer, truth), "rationale": "Compared with the truth."}
        elif name in VISION_TOOLS:  # it sees the images' pixels (stand_ins/images.py)
            verdict = vision_verdict(name, user, images)
        else:
            verdict = self._model.judge(name, user)
        output = json.dumps(verdict)
        usage = (tokens[0], max(1, len(output) // 4))
        if "tools" in request:
            call = {
                "id": f"call_{uuid.uuid4().hex[:8]}",
                "type": "function",
                "function": {"name": name, "arguments": output},
            }
            return completion(request["model"], None, [call], "tool_calls", usage)
        return completion(request["model"], output, usage=usage)


class FakeOpenAI:
    """``with FakeOpenAI() as server:`` then point the SDK at ``server.url`` (ends in /v1)."""

    def __init__(self, responder: Callable[[dict[str, Any]], Reply] | None = None) -> None:
        self.responder = responder or SimulatedChatModel()
        self.script: deque[Reply | Callable[[dict[str, Any]], Reply]] = deque()
        self.refuse: set[str] = set()
        self.requests: list[dict[str, Any]] = []
        self.replies: list[int] = []
        self.authorizations: list[str | None] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def queue(self, *replies: Reply | Callable[[dict[str, Any]], Reply]) -> None:
        self.script.extend(replies)

    def _handle(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(request)
            scripted = self.script.popleft() if self.script else None
        way = structured_way(request)
        _, bad_image = openai_images(request)  # validated as the API does
        if bad_image is not None:
            reply = openai_error(400, bad_image)
        elif way in self.refuse:
            reply = openai_error(400, f"this server does not support {way}")
        elif scripted is None:
            reply = self.responder(request)
        else:
            reply = scripted(request) if callable(scripted) else scripted
        with self._lock:
            self.replies.append(reply.status)
        return reply

    def __enter__(self) -> FakeOpenAI:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.authorizations.append(self.headers.get("authorization"))
                if self.path.split("?")[0].rstrip("/") != "/v1/chat/completions":
                    reply = openai_error(404, "no such route")
                else:
                    reply = fake._handle(body)
                send_reply(self, reply, json.dumps(reply.body or {}).encode())

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
