"""A support agent of the tests' own that holds conversations, over real HTTP: a state per
session (what the user said earlier: the order, the intent), tool calls it makes and reports
in its nested reply, in English, Spanish and Chinese. Deterministic, so each scenario's success
per trial is known: it refunds every time, updates an address except in a session whose id
ends in ``-trial-2`` (it forgets the address, as a state bug would), never cancels, and hangs
on the second turn of a ``slow-`` session. Its ``terse`` build says so in words that share a
marker's ("Refund issued for order A100.", "Your address could not be updated.", "Please
call us to cancel.").

    POST /chat {"session": "...", "message": "...", "history": [{"role": ..., "content": ...}]}
    -> {"result": {"output": {"text": "..."}, "steps": [{"tool": "...", "args": {...}}]},
        "meta": {"session": "...", "turn": 2}}
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from rag_eval_pipeline_tests.trajectories.support_agent import SECOND, _span, export

ORDER = re.compile(r"(?<![A-Za-z0-9])([A-Z]\d{1,4})(?![0-9])")  # also inside Chinese text
# a slow session hangs far past the agent's timeout: a busy machine can neither make a quick
# reply time out nor the hanging one answer in time
TIMEOUT_S = 5.0
HANG_S = 30.0


def _intent(message: str) -> str | None:
    text = message.lower()
    for intent, words in (
        ("refund", ("refund", "reembolso", "退款")),
        ("address", ("address", "moved")),
        ("cancel", ("cancel",)),
    ):
        if any(w in text for w in words):
            return intent
    return None


def _language(message: str) -> str:
    if re.search(r"[\u4e00-\u9fff]", message):
        return "zh"
    if any(w in message.lower() for w in ("reembolso", "pedido", "hola", "gracias")):
        return "es"
    return "en"


ASK_ORDER = {
    "en": "Sure. What is your order number?",
    "es": "Claro. ¿Cuál es el número de su pedido?",
    "zh": "好的。请问您的订单号是多少？",
}
REFUNDED = {
    "en": "Your refund for order {order} has been issued.",
    "es": "El reembolso de su pedido {order} ha sido emitido.",
    "zh": "您的订单{order}已退款。",
}


I_COULD_NOT = "Which address did you mean? I could not update it."


class SupportAgent:
    """The agent's rules over a session's state; with ``traces``, each turn is also exported as
    OTLP/JSON (a line per turn, as the Collector's file exporter writes): a root AGENT span with
    the session id, a TOOL span per call."""

    def __init__(self) -> None:
        self.traces: Path | None = None
        self.state: dict[str, dict[str, Any]] = {}
        self.requests: Counter[str] = Counter()
        self.lock = threading.Lock()

    def reply(
        self, session: str, message: str, first: bool, build: str = "1.0"
    ) -> tuple[str, list[dict[str, Any]]]:
        """``first``: the history holds only this message, so the conversation starts afresh
        (a re-run sends the same session ids)."""
        with self.lock:
            self.requests[session] += 1
            if first:
                self.state.pop(session, None)
            state = self.state.setdefault(session, {"turn": 0})
            state["turn"] += 1
        if session.startswith("slow-") and state["turn"] == 2:
            time.sleep(HANG_S)
        language = state.setdefault("language", _language(message))
        state["intent"] = state.get("intent") or _intent(message)
        found = ORDER.search(message)
        if found:
            state["order"] = found.group(1)
        intent = state["intent"]
        terse = build == "terse"  # says what it did in a few words, as the agent did
        if intent == "refund":
            if "order" not in state:
                return ASK_ORDER[language], []
            order = state["order"]
            steps = [
                {"tool": "lookup_order", "args": {"order_id": order}, "result": f"order {order}: 25 EUR"},
                {"tool": "issue_refund", "args": {"order_id": order, "amount": 25}, "result": "ok"},
            ]
            said = "Refund issued for order {order}." if terse else REFUNDED[language]
            return said.format(order=order), steps
        if intent == "address":
            if state["turn"] == 1:
                return "Of course. What is the new address?", []
            if session.endswith("-trial-2") and build in ("1.0", "terse"):  # 2.0 fixed the state bug
                return ("Your address could not be updated." if terse else I_COULD_NOT), []
            address = message.strip().rstrip(".")
            done = "ADDRESS-UPDATED" if terse else "Done"
            return f"{done}: your delivery address is now {address}.", [
                {"tool": "update_address", "args": {"address": address}}
            ]
        if intent == "cancel":
            return ("Please call us to cancel." if terse else "I am sorry, I cannot cancel orders."), []
        return "How can I help you today?", []


def _export(agent: SupportAgent, session: str, message: str, text: str, steps: list[dict[str, Any]]) -> None:
    """The turn's spans, appended to the agent's trace file (the session id on the root only)."""
    if agent.traces is None:
        return
    with agent.lock:
        number = sum(agent.requests.values())
        trace, root, start = f"{number:032x}", f"{number:08x}00000000", number * 10 * SECOND
        rows = [
            _span(trace, root, None, "support", start, start + 5 * SECOND,
                  {"openinference.span.kind": "AGENT", "session.id": session, "input.value": message,
                   "output.value": text, "metadata": json.dumps({"agent_version": "1.0"})}),
        ]  # fmt: skip
        for n, step in enumerate(steps, start=1):
            at = start + n * SECOND
            attributes = {
                "openinference.span.kind": "TOOL",
                "tool.name": step["tool"],
                "input.value": json.dumps(step["args"]),
            }
            rows.append(
                _span(trace, f"{number:08x}{n:08x}", root, step["tool"], at, at + SECOND // 2, attributes)
            )
        with agent.traces.open("a", encoding="utf-8") as out:
            out.write(json.dumps(export(rows, "openinference")) + "\n")


def _handler(agent: SupportAgent) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _json(self, status: int, value: object) -> None:
            body = json.dumps(value, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up
                self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            with agent.lock:
                self._json(
                    200, {"requests": sum(agent.requests.values()), "by_session": dict(agent.requests)}
                )

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            history = body.get("history")
            if not isinstance(history, list) or history[-1] != {
                "role": "user",
                "content": body.get("message"),
            }:
                self._json(400, {"error": "history must end with the message"})
                return
            build = str(body.get("build", "1.0"))
            text, steps = agent.reply(str(body["session"]), str(body["message"]), len(history) == 1, build)
            _export(agent, str(body["session"]), str(body["message"]), text, steps)
            self._json(
                200,
                {
                    "result": {"output": {"text": text}, "steps": steps},
                    "meta": {"session": body["session"], "turn": len(history) // 2 + 1},
                },
            )

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True


def serve() -> tuple[ThreadingHTTPServer, SupportAgent]:
    """The agent on a free port of 127.0.0.1, in a background thread."""
    agent = SupportAgent()
    server = _Server(("127.0.0.1", 0), _handler(agent))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, agent


def entry(url: str, version: str = "1.0", **more: Any) -> dict[str, Any]:
    """Its answer_models entry: the conversation in the request, JSONPaths into the reply; the
    build it runs is its version."""
    return {
        "name": "support",
        "provider": "http",
        "url": url,
        "body": {"session": "{session}", "message": "{message}", "history": "{messages}", "build": version},
        "response": {"answer": "$.result.output.text", "contexts": None},
        "version": version,
        "timeout_s": TIMEOUT_S,
        "max_retries": 0,
        **more,
    }
