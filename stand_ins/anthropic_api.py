"""A small Messages-API server on 127.0.0.1 for testing the real `anthropic` SDK.

Each test scripts it: a queue of replies served first (errors with retry-after, malformed tool
input, latency), then a responder that simulates a model from the request itself. The default
responder answers with the best-ranked passage's title and judges with simple lexical rules, so
scores vary with the inputs and are never hard-coded.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from rag_eval_pipeline.metrics import reference
from stand_ins.images import VISION_TOOLS, anthropic_images, image_tokens, vision_verdict, without_image_data


@dataclass
class Reply:
    """A scripted reply. ``trickle_s``: the headers at once, then the body one byte at a time
    this far apart (a server whose every byte restarts the SDK's timeout); with ``endless`` a
    chunked body that never ends. Both stop when the client hangs up (or after ``limit_s``)."""

    status: int = 200
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    trickle_s: float = 0.0
    endless: bool = False
    limit_s: float = 120.0


def send_reply(
    handler: BaseHTTPRequestHandler, reply: Reply, payload: bytes, kind: str = "application/json"
) -> None:
    """Write ``reply`` on ``handler``'s connection: at once, trickled, or endless."""
    handler.send_response(reply.status)
    handler.send_header("content-type", kind)
    if reply.endless:
        handler.send_header("transfer-encoding", "chunked")
    else:
        handler.send_header("content-length", str(len(payload)))
    for key, value in reply.headers.items():
        handler.send_header(key, value)
    handler.end_headers()
    try:
        if reply.endless:
            deadline = time.monotonic() + reply.limit_s
            while time.monotonic() < deadline:
                handler.wfile.write(b"1\r\n \r\n")
                handler.wfile.flush()
                time.sleep(reply.trickle_s or 0.2)
            return
        if not reply.trickle_s:
            handler.wfile.write(payload)
            return
        deadline = time.monotonic() + reply.limit_s
        for byte in payload:
            if time.monotonic() > deadline:
                return
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            time.sleep(reply.trickle_s)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the client gave up: what a deadline is for


Responder = Callable[[dict[str, Any]], Reply]


def error_reply(status: int, kind: str, retry_after: float | None = None) -> Reply:
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    return Reply(status, {"type": "error", "error": {"type": kind, "message": f"simulated {kind}"}}, headers)


def message(model: str, content: list[dict[str, Any]], usage: dict[str, int]) -> dict[str, Any]:
    tool = any(block["type"] == "tool_use" for block in content)
    return {
        "id": f"msg_{uuid.uuid4().hex[:16]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if tool else "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }


def tool_reply(request: dict[str, Any], tool_input: Any, usage: dict[str, int] | None = None) -> Reply:
    name = request["tool_choice"]["name"]
    block = {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:12]}", "name": name, "input": tool_input}
    return Reply(200, message(request["model"], [block], usage or {"input_tokens": 10, "output_tokens": 5}))


def text_reply(request: dict[str, Any], text: str, usage: dict[str, int] | None = None) -> Reply:
    return Reply(
        200,
        message(
            request["model"],
            [{"type": "text", "text": text}],
            usage or {"input_tokens": 10, "output_tokens": 5},
        ),
    )


def _tag(text: str, name: str) -> str:
    match = re.search(rf"<{name}>(.*?)</{name}>", text, re.S)
    return match.group(1).strip() if match else ""


def _passages(text: str) -> list[tuple[str, str]]:
    body = _tag(text, "passages") or text.split("Question:")[0]
    return [
        (m.group(1), m.group(2).strip())
        for m in re.finditer(r"\[\d+\] ([^\n]*)\n(.*?)(?=\n\n\[\d+\] |\Z)", body, re.S)
    ]


def mentions(text: str, truth: str) -> bool:
    """Whether the normalised truth stands in the text (passages of any length)."""
    gold = reference.normalize_answer(truth)
    return bool(gold) and f" {gold} " in f" {reference.normalize_answer(text)} "


def _user_text(request: dict[str, Any]) -> str:
    content = request["messages"][0]["content"]
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)


def _states(claim: str, passage: str) -> bool:
    """The lexical rule the simulated model checks a claim with: every content word in the text."""
    return (reference.faithfulness_lexical(claim, [passage]) or 0.0) == 1.0


def _claims(answer: str, passages: list[tuple[str, str]], citations: str) -> list[dict[str, Any]]:
    """Each sentence of the answer (its [n] markers removed) as a claim, checked lexically against
    every passage and against the first passage the answer cites."""
    cited = [int(n) for n in re.findall(r"\[(\d+)\]", citations)]
    plain = re.sub(r"\s*\[\d+(?:\s*[,;]\s*\d+)*\]", "", answer)
    found = []
    for claim in (s.strip() for s in re.split(r"(?<=[.!?])\s+", plain)):
        if not claim:
            continue
        stating = next((n for n, (_, p) in enumerate(passages, start=1) if _states(claim, p)), 0)
        source = cited[0] if cited and cited[0] <= len(passages) else 0
        found.append(
            {
                "claim": claim,
                "supported": int(stating > 0),
                "passage": stating,
                "cited": source,
                "citation_supports": int(source > 0 and _states(claim, passages[source - 1][1])),
                "reason": "lexical",
            }
        )
    return found


def _session_verdicts(text: str) -> dict[str, Any]:
    """A conversation judged by lexical rules: the goal is done when the replies hold all of
    the expected outcome's words; a reply is relevant when it shares a word with its message;
    knowledge is kept unless a reply asks again ("which"); the trajectory is right without a
    failed or repeated call."""
    users = re.findall(r"<user>(.*?)</user>", text, re.S)
    agents = re.findall(r"<agent>(.*?)</agent>", text, re.S)
    calls = re.findall(r'<tool_call name="([^"]*)">(.*?) -> (.*?)</tool_call>', text, re.S)
    outcome = set(reference.content_tokens(_tag(text, "expected_outcome")))
    replies = set(reference.content_tokens(" ".join(agents)))
    share = len(outcome & replies) / len(outcome) if outcome else 1.0

    def verdict(score: float, reason: str) -> dict[str, Any]:
        return {"score": score, "reason": reason}

    relevancy = [
        verdict(
            float(bool(set(reference.content_tokens(u)) & set(reference.content_tokens(a)))), "shared words"
        )
        for u, a in zip(users, agents)
    ]
    repeated = len(calls) != len({(name, arguments) for name, arguments, _ in calls})
    failed = any(result.startswith("error:") for _, _, result in calls)
    verdicts = {
        "goal_completion": verdict(
            1.0 if share == 1 else 0.5 if share >= 0.5 else 0.0, f"{share:.0%} of the outcome"
        ),
        "turn_relevancy": relevancy,
        "knowledge_retention": verdict(
            0.0 if any("which" in a.lower() for a in agents) else 1.0, "no question again"
        ),
    }
    if "Judge trajectory_quality: yes" in text:
        verdicts["trajectory_quality"] = verdict(0.5 if repeated or failed else 1.0, "calls checked")
    return verdicts


SIMULATED_USER_MARK = "You are playing a user"
GREETINGS = (
    "Hi, I need help with a {topic}.",
    "Hello, I would like a {topic} please.",
    "Good day, can you help me with a {topic}?",
)


def _system_text(request: dict[str, Any]) -> str:
    system = request.get("system", "")
    if isinstance(system, str):
        return system
    return "".join(b.get("text", "") for b in system if isinstance(b, dict))


def simulated_user_message(request: dict[str, Any]) -> str:
    """A user with a goal, played by rules over the system prompt: a greeting naming the goal's
    topic (chosen by the trial's seed, so trials differ), a fact of known_info when the agent
    asks for it, then thanks and ###STOP### once the agent's reply holds every known fact."""
    system = _system_text(request)
    goal, written = _tag(system, "goal"), _tag(system, "known_info") or "{}"
    # known_info as an object (JSON) or as tau-bench's plain string: one fact, said when asked
    known = json.loads(written) if written.startswith("{") else {"details": written}
    seed = int(re.search(r'<variation seed="(\d+)"', system).group(1))  # type: ignore[union-attr]
    values = {str(v).lower() for v in known.values()}
    words = [w for w in reference.content_tokens(goal) if w not in values]
    if len(request["messages"]) == 1:  # the opening: nothing said yet
        return GREETINGS[seed % len(GREETINGS)].format(topic=words[1] if len(words) > 1 else words[0])
    last = request["messages"][-1]["content"]
    last = last if isinstance(last, str) else " ".join(b.get("text", "") for b in last)
    if "?" not in last and all(str(v).lower() in last.lower() for v in known.values()):
        return "Thank you, that is all. ###STOP###"
    if not written.startswith("{"):  # the plain string: all of it, when the agent asks anything
        return f"{written}." if "?" in last else "###STOP###"
    asked = set(reference.content_tokens(last))
    for key, value in known.items():
        if set(key.lower().split("_")) & asked:
            return f"My {key.replace('_', ' ')} is {value}."
    return "###STOP###"


class SimulatedModel:
    """Answers and judges from the request alone, with token usage and prompt-cache accounting."""

    def __init__(self) -> None:
        self._cached_prefixes: set[str] = set()
        self._lock = threading.Lock()

    def usage(self, request: dict[str, Any], output: str) -> dict[str, int]:
        cached = [
            b["text"] for b in request.get("system", []) if isinstance(b, dict) and b.get("cache_control")
        ]
        prefix = "".join(cached)
        with self._lock:
            hit = prefix in self._cached_prefixes
            self._cached_prefixes.add(prefix)
        prefix_tokens = len(prefix) // 4
        messages = without_image_data(json.dumps(request["messages"]))  # an image costs its pixels
        images = image_tokens(anthropic_images(request)[0])
        return {
            "input_tokens": max(
                1,
                (len(messages) + len(json.dumps(request.get("system", "")))) // 4 - prefix_tokens + images,
            ),
            "output_tokens": max(1, len(output) // 4),
            "cache_creation_input_tokens": 0 if hit or not prefix else prefix_tokens,
            "cache_read_input_tokens": prefix_tokens if hit and prefix else 0,
        }

    def __call__(self, request: dict[str, Any]) -> Reply:
        text = _user_text(request)
        tool = (request.get("tool_choice") or {}).get("name")
        if tool is None and SIMULATED_USER_MARK in _system_text(request):
            said = simulated_user_message(request)
            return text_reply(request, said, self.usage(request, said))
        if tool is None:
            passages = _passages(text)
            answer = passages[0][0] if passages else "unknown"
            return text_reply(request, answer, self.usage(request, answer))
        if tool in VISION_TOOLS:  # it sees the images' pixels (stand_ins/images.py)
            output = vision_verdict(tool, text, anthropic_images(request)[0])
        else:
            output = self.judge(tool, text)
        return tool_reply(request, output, self.usage(request, json.dumps(output)))

    def judge(self, tool: str, text: str) -> dict[str, Any]:
        truth, answer = _tag(text, "ground_truth"), _tag(text, "answer")
        passages = _passages(text)
        joined = " ".join(p for _, p in passages)
        in_context = mentions(joined, truth) if truth else False
        faithful = reference.faithfulness_lexical(answer, [joined])
        faithfulness = 1.0 if faithful is None or faithful == 1.0 else (0.5 if faithful >= 0.5 else 0.0)
        if tool == "record_correctness":
            return {"correctness": reference.correctness(answer, truth), "correctness_rationale": "Compared."}
        if tool == "record_grounding":  # no ground truth here: relevance from the question's words
            question = set(reference.content_tokens(_tag(text, "question")))
            overlap = len(question & set(reference.content_tokens(joined))) / max(1, len(question))
            return {
                "faithfulness": faithfulness,
                "faithfulness_rationale": "Checked each word against the passages.",
                "context_relevance": 1.0 if overlap >= 0.8 else (0.5 if overlap >= 0.4 else 0.0),
                "context_relevance_rationale": "Looked for the question's words in the passages.",
            }
        if tool == "record_scores":
            return {
                "correctness": reference.correctness(answer, truth),
                "correctness_rationale": "Compared with the ground truth.",
                "faithfulness": faithfulness,
                "faithfulness_rationale": "Checked each word against the passages.",
                "context_relevance": 1.0 if in_context else 0.0,
                "context_relevance_rationale": "Looked for the ground truth in the passages.",
            }
        if tool == "record_statements":
            return {"statements": [s for s in re.split(r"(?<=[.!?])\s+", answer) if s]}
        if tool == "record_verdicts":
            statements = re.findall(r"^- (.*)$", _tag(text, "statements"), re.M) or [truth]
            return {
                "verdicts": [
                    {
                        "statement": s,
                        "verdict": int((reference.faithfulness_lexical(s, [joined]) or 0) == 1.0),
                        "reason": "lexical",
                    }
                    for s in statements
                ]
            }
        if tool == "record_passage_verdicts":
            return {
                "verdicts": [
                    {"passage": n, "useful": int(mentions(p, truth)), "reason": "lexical"}
                    for n, (_, p) in enumerate(passages, start=1)
                ]
            }
        if tool == "record_answer_claims":
            return {"claims": _claims(answer, passages, _tag(text, "citations"))}
        if tool == "record_reference_claims":
            return {"claims": [{"claim": truth, "stated": int(mentions(answer, truth))}]}
        if tool == "record_questions":
            return {
                "questions": [f"What is {answer}?", f"Which is {answer}?"],
                "noncommittal": int(reference.is_abstention(answer)),
            }
        if tool == "record_session_verdicts":
            return _session_verdicts(text)
        if tool == "record_rubric_verdict":  # every content word of the rubric in the agent's replies
            rubric = set(reference.content_tokens(_tag(text, "rubric")))
            replies = set(
                reference.content_tokens(" ".join(re.findall(r"<assistant>(.*?)</assistant>", text, re.S)))
            )
            return {"passed": bool(rubric) and rubric <= replies, "reason": "lexical"}
        raise ValueError(f"the simulated model has no behaviour for tool {tool}")


class FakeAnthropic:
    """``with FakeAnthropic() as server:`` then point the SDK at ``server.url``."""

    def __init__(self, responder: Responder | None = None, latency_s: float = 0.0) -> None:
        self.responder = responder or SimulatedModel()
        self.latency_s = latency_s
        self.script: deque[Reply | Callable[[dict[str, Any]], Reply]] = deque()
        self.requests: list[dict[str, Any]] = []
        self.replies: list[int] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        # Message Batches: id -> {"entries": [(custom_id, params)], "polls": int}
        self.batches: dict[str, dict[str, Any]] = {}
        self.batch_polls_until_ended = 2
        self.batch_errored_ids: set[str] = set()

    def _batch_object(self, batch_id: str) -> dict[str, Any]:
        batch = self.batches[batch_id]
        ended = batch["polls"] >= self.batch_polls_until_ended
        total = len(batch["entries"])
        errored = sum(1 for custom_id, _ in batch["entries"] if custom_id in self.batch_errored_ids)
        return {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else total,
                "succeeded": total - errored if ended else 0,
                "errored": errored if ended else 0,
                "canceled": 0,
                "expired": 0,
            },
            "created_at": "2026-11-30T00:00:00Z",
            "expires_at": "2026-12-01T00:00:00Z",
            "ended_at": "2026-11-30T00:01:00Z" if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.url}/v1/messages/batches/{batch_id}/results" if ended else None,
        }

    def _batch_results(self, batch_id: str) -> str:
        lines = []
        for custom_id, params in self.batches[batch_id]["entries"]:
            if custom_id in self.batch_errored_ids:
                result = {
                    "type": "errored",
                    "error": {"type": "error", "error": {"type": "api_error", "message": "simulated"}},
                }
            else:
                result = {"type": "succeeded", "message": self.responder(params).body}
            lines.append(json.dumps({"custom_id": custom_id, "result": result}))
        return "\n".join(lines) + "\n"

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def queue(self, *replies: Reply | Callable[[dict[str, Any]], Reply]) -> None:
        """Serve these, in order, before the responder."""
        self.script.extend(replies)

    def reset_counts(self) -> None:
        with self._lock:
            self.requests.clear()
            self.replies.clear()
            self.max_in_flight = 0

    def _handle(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            scripted = self.script.popleft() if self.script else None
        _, bad_image = anthropic_images(request)  # validated as the API does, before any model
        try:
            if bad_image is not None:
                reply = Reply(
                    400, {"type": "error", "error": {"type": "invalid_request_error", "message": bad_image}}
                )
            elif scripted is None:
                reply = self.responder(request)
            elif callable(scripted):
                reply = scripted(request)
            else:
                reply = scripted
            time.sleep(self.latency_s + reply.delay_s)  # the simulated model's latency
        finally:
            with self._lock:
                self.in_flight -= 1
        with self._lock:
            self.replies.append(reply.status)
        return reply

    def __enter__(self) -> FakeAnthropic:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                path = self.path.split("?")[0].rstrip("/")
                if path == "/v1/messages/batches":
                    batch_id = f"msgbatch_{uuid.uuid4().hex[:12]}"
                    with fake._lock:
                        fake.batches[batch_id] = {
                            "entries": [(r["custom_id"], r["params"]) for r in body["requests"]],
                            "polls": 0,
                        }
                    reply = Reply(200, fake._batch_object(batch_id))
                elif path != "/v1/messages":
                    reply = error_reply(404, "not_found_error")
                else:
                    reply = fake._handle(body)
                send_reply(self, reply, json.dumps(reply.body if reply.body is not None else {}).encode())

            def do_GET(self) -> None:  # noqa: N802
                parts = self.path.split("?")[0].rstrip("/").split("/")
                if len(parts) >= 5 and parts[3] == "batches" and parts[4] in fake.batches:
                    batch_id = parts[4]
                    if len(parts) == 6 and parts[5] == "results":
                        self._send(200, fake._batch_results(batch_id).encode(), {}, "application/binary")
                        return
                    with fake._lock:
                        fake.batches[batch_id]["polls"] += 1
                    self._send(200, json.dumps(fake._batch_object(batch_id)).encode(), {})
                    return
                self._send(404, json.dumps(error_reply(404, "not_found_error").body).encode(), {})

            def _send(
                self, status: int, payload: bytes, headers: dict[str, str], kind: str = "application/json"
            ) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(payload)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

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


class UnstableJudges(SimulatedModel):
    """The simulated model, except that a judge model of ``shares`` re-draws each axis of a
    share of its STRICT verdicts at random (0, 0.5 or 1): a judge whose scores change between
    runs with nothing changed. Seeded, so a test's draws repeat; every other model is stable."""

    def __init__(self, shares: dict[str, float], seed: int = 0) -> None:
        super().__init__()
        self.shares = shares
        self._random = random.Random(seed)

    def __call__(self, request: dict[str, Any]) -> Reply:
        reply = super().__call__(request)
        share = self.shares.get(request.get("model", ""), 0.0)
        tool = (request.get("tool_choice") or {}).get("name")
        if not share or tool != "record_scores":
            return reply
        assert reply.body is not None
        body = dict(reply.body)
        content = [dict(block) for block in body["content"]]
        for block in content:
            if block.get("type") == "tool_use":
                verdict = dict(block["input"])
                with self._lock:
                    for axis in ("correctness", "faithfulness", "context_relevance"):
                        if self._random.random() < share:
                            verdict[axis] = self._random.choice([0.0, 0.5, 1.0])
                block["input"] = verdict
        body["content"] = content
        return replace(reply, body=body)


def lenient_correctness(answer: str, truth: str) -> float:
    """A lenient reviewer's correctness: 1 when the answer shares a content word with the truth."""
    shared = set(reference.content_tokens(answer)) & set(reference.content_tokens(truth))
    return 1.0 if shared else 0.0


class ExampleFollower(SimulatedModel):
    """The simulated model, except that a STRICT verdict follows the examples its prompt shows:
    where most examples were scored above what its own rule gives them (lenient reviewers), it
    scores correctness as they do (``lenient_correctness``). Without examples, or with
    ``follows=False`` (a model that ignores them), it scores as the simulated model does."""

    def __init__(self, follows: bool = True) -> None:
        super().__init__()
        self.follows = follows

    def __call__(self, request: dict[str, Any]) -> Reply:
        reply = super().__call__(request)
        if not self.follows or (request.get("tool_choice") or {}).get("name") != "record_scores":
            return reply
        system = "".join(b.get("text", "") for b in request.get("system", []) if isinstance(b, dict))
        shown = re.findall(
            r"<answer>(.*?)</answer><people_scored metric=\"correctness\">([0-9.]+)</people_scored>",
            system,
            re.S,
        )
        truths = re.findall(r"<ground_truth>(.*?)</ground_truth><answer>", system, re.S)
        above = sum(
            float(given) > reference.correctness(answer, truth)
            for (answer, given), truth in zip(shown, truths)
        )
        if not shown or above * 2 <= len(shown):
            return reply
        text = _user_text(request)
        assert reply.body is not None
        body = dict(reply.body)
        content = [dict(block) for block in body["content"]]
        for block in content:
            if block.get("type") == "tool_use":
                lenient = lenient_correctness(_tag(text, "answer"), _tag(text, "ground_truth"))
                block["input"] = {**block["input"], "correctness": lenient}
        body["content"] = content
        return replace(reply, body=body)
