"""A scripted support agent of the tests' own: six tasks, three trials each, two turns a
session, with the faults a trajectory evaluation must tell apart (a wrong argument, an extra
call, a missing call, reordered calls, a wrong tool, parallel calls, a failing tool, a forbidden
tool). Its runs are written as OTLP/JSON in OpenInference's conventions and in OpenTelemetry's
GenAI conventions, the session id on root spans only and the spans shuffled, with the reference
file the evaluation reads."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SECOND = 1_000_000_000
BASE = 1_780_000_000 * SECOND
VERSION = "support-agent-2.1"


@dataclass(frozen=True)
class Call:
    name: str
    arguments: dict[str, Any]
    result: str = "ok"
    error: str | None = None
    parallel: bool = False  # starts half-way through the previous call (runs beside it)


@dataclass(frozen=True)
class TurnRun:
    user: str
    answer: str
    calls: tuple[Call, ...] = ()


@dataclass(frozen=True)
class SessionRun:
    session_id: str
    task_id: str
    turns: tuple[TurnRun, ...]


@dataclass
class Task:
    task_id: str
    users: tuple[str, str]
    expected: tuple[tuple[dict, ...], tuple[dict, ...]]
    trials: list[tuple[tuple[Call, ...], tuple[Call, ...]]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    gave_up: tuple[int, ...] = ()  # trials whose last reply says the agent could not finish


def _tasks() -> list[Task]:
    refund = Call("issue_refund", {"order_id": "A100", "amount": 25})
    lookup_a = Call("lookup_order", {"order_id": "A100"}, "order A100: shipped, 25 EUR")
    t1 = Task(
        "refund",
        ("Where is my order A100?", "Please refund it."),
        (
            ({"name": "lookup_order", "arguments": {"order_id": "A100"}},),
            ({"name": "issue_refund", "arguments": {"order_id": "A100", "amount": 25}},),
        ),
        [((lookup_a,), (refund,))] * 3,
    )
    sku1, sku2 = (
        Call("check_inventory", {"sku": "SKU-1"}, "12"),
        Call("check_inventory", {"sku": "SKU-2"}, "0"),
    )
    t2 = Task(
        "stock",
        ("Is SKU-1 in stock?", "And SKU-2?"),
        (
            ({"name": "check_inventory", "arguments": {"sku": "SKU-1"}},),
            ({"name": "check_inventory", "arguments": {"sku": "SKU-2"}},),
        ),
        [
            ((sku1,), (sku2,)),
            ((sku1, sku1), (sku2,)),  # an extra, identical call
            ((sku1,), (Call("check_inventory", {"sku": "SKU-3"}, "4"),)),  # a wrong argument
        ],
        gave_up=(3,),
    )
    lookup_b = Call("lookup_order", {"order_id": "B7"}, "order B7: delivered")
    t3 = Task(
        "email",
        ("Send me the status of order B7 by mail.", "Thanks, that is all."),
        (
            (
                {"name": "lookup_order", "arguments": {"order_id": "B7"}},
                {"name": "send_email", "arguments": {"to": "a@b.c"}, "arg_match": "subset"},
            ),
            (),
        ),
        [
            ((lookup_b, Call("send_email", {"to": "a@b.c", "subject": "Your order B7"})), ()),
            ((lookup_b,), ()),  # the mail is never sent: a missing call
            ((lookup_b, Call("send_email", {"to": "a@b.c", "subject": "Re", "cc": "desk@b.c"})), ()),
        ],
    )
    search = Call("search_kb", {"query": "refund policy"}, "refunds within 30 days")
    lookup_c = Call("lookup_order", {"order_id": "C3"}, "order C3: 10 EUR")
    t4 = Task(
        "policy",
        ("Can I return order C3?", "Refund it then."),
        (
            (
                {"name": "search_kb", "arguments": {"query": "returns"}, "arg_match": "ignore"},
                {"name": "lookup_order", "arguments": {"order_id": "C3"}},
            ),
            ({"name": "issue_refund", "arguments": {"order_id": "C3", "amount": 10}},),
        ),
        [
            ((search, lookup_c), (Call("issue_refund", {"order_id": "C3", "amount": 10}),)),
            ((lookup_c, search), (Call("issue_refund", {"order_id": "C3", "amount": 10}),)),  # reordered
            ((search, lookup_c), (Call("create_ticket", {"order_id": "C3"}),)),  # a wrong tool
        ],
        {"match_mode": "unordered"},
        gave_up=(3,),
    )
    x, y = Call("check_inventory", {"sku": "X"}, "3"), Call("check_inventory", {"sku": "Y"}, "5")
    lookup_e = Call("lookup_order", {"order_id": "E5"}, "order E5: packed")
    t5 = Task(
        "parallel",
        ("Are X and Y both in stock?", "Then where is order E5?"),
        (
            (
                {"name": "check_inventory", "arguments": {"sku": "X"}},
                {"name": "check_inventory", "arguments": {"sku": "Y"}},
            ),
            ({"name": "lookup_order", "arguments": {"order_id": "E5"}},),
        ),
        [
            ((x, Call("check_inventory", {"sku": "Y"}, "5", parallel=True)), (lookup_e,)),
            ((y, Call("check_inventory", {"sku": "X"}, "3", parallel=True)), (lookup_e,)),  # parallel
            ((y, x), (lookup_e,)),  # one after the other, in the wrong order
        ],
    )
    lookup_d = Call("lookup_order", {"order_id": "D4"}, "order D4: cancelled")
    mail = Call("send_email", {"to": "x@y.z", "subject": "Done"})
    t6 = Task(
        "account",
        ("What happened to order D4?", "Mail me a confirmation."),
        (
            ({"name": "lookup_order", "arguments": {"order_id": "D4"}},),
            ({"name": "send_email", "arguments": {"to": "x@y.z", "subject": "Done"}},),
        ),
        [
            ((lookup_d,), (mail,)),
            ((Call("lookup_order", {"order_id": "D4"}, "", error="timeout"), lookup_d), (mail,)),
            ((lookup_d,), (mail, Call("delete_account", {"user": "x@y.z"}))),  # a forbidden tool
        ],
        {"forbidden_tools": ["delete_account"]},
    )
    return [t1, t2, t3, t4, t5, t6]


GAVE_UP = "Sorry, I could not finish that."


def runs(prefix: str = "", perfect: bool = False) -> tuple[list[SessionRun], list[dict[str, Any]]]:
    """The 18 sessions and the reference's rows; ``perfect``: every trial as the first (the one
    without a fault), for a version that fixed them; ``prefix`` starts every session id."""
    sessions, reference = [], []
    for task in _tasks():
        ids = []
        trials = [task.trials[0]] * len(task.trials) if perfect else task.trials
        for trial, (first, second) in enumerate(trials, start=1):
            session_id = f"{prefix}{task.task_id}-{trial}"
            ids.append(session_id)
            gave_up = trial in task.gave_up and not perfect
            turns = tuple(
                TurnRun(user, GAVE_UP if gave_up and number == 2 else f"Done: {user.lower()}", calls)
                for number, (user, calls) in enumerate(zip(task.users, (first, second)), start=1)
            )
            sessions.append(SessionRun(session_id, task.task_id, turns))
        reference.append(
            {
                "task_id": task.task_id,
                "session_ids": ids,
                "turns": [
                    {"user": user, "expected_tool_calls": list(calls)}
                    for user, calls in zip(task.users, task.expected)
                ],
                "expected_outcome": f"done: {' '.join(task.users).lower()}",
                **task.extra,
            }
        )
    return sessions, reference


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": str(value)}


def _attributes(attributes: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _value(v)} for k, v in attributes.items() if v is not None]


class _Ids:
    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def trace(self) -> str:
        return f"{self.random.getrandbits(128):032x}"

    def span(self) -> str:
        return f"{self.random.getrandbits(64):016x}"


def _span(trace: str, span: str, parent: str | None, name: str, start: int, end: int, attributes, error=None):
    row = {
        "traceId": trace,
        "spanId": span,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": _attributes(attributes),
        "status": {"code": 2, "message": error} if error else {"code": 1},
    }
    if parent:
        row["parentSpanId"] = parent
    return row


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def spans(
    sessions: list[SessionRun], convention: str, seed: int = 7, version: str = VERSION
) -> list[dict[str, Any]]:
    """The sessions' spans in ``openinference`` or ``genai`` conventions: per turn a root agent
    span (the only one with the session id), an LLM span and a span per tool call."""
    ids, rows = _Ids(seed), []
    for number, session in enumerate(sessions):
        for turn_number, turn in enumerate(session.turns):
            trace, root = ids.trace(), ids.span()
            start = BASE + (number * 100 + turn_number * 10) * SECOND
            end = start + 9 * SECOND
            if convention == "openinference":
                attributes = {
                    "openinference.span.kind": "AGENT",
                    "session.id": session.session_id,
                    "input.value": turn.user,
                    "output.value": turn.answer,
                    "metadata": json.dumps({"agent_version": version}),
                }
                name = "support_agent"
            else:
                attributes = {
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": "support",
                    # on the span too: Phoenix's span API does not return the resource's service.version
                    "gen_ai.agent.version": version,
                    "gen_ai.conversation.id": session.session_id,
                    "gen_ai.input.messages": _messages("user", turn.user),
                    "gen_ai.output.messages": _messages("assistant", turn.answer),
                }
                name = "invoke_agent support"
            rows.append(_span(trace, root, None, name, start, end, attributes))
            llm = (
                {"openinference.span.kind": "LLM"}
                if convention == "openinference"
                else {"gen_ai.operation.name": "chat"}
            )
            rows.append(
                _span(trace, ids.span(), root, "chat", start + SECOND // 10, start + SECOND // 2, llm)
            )
            at = start + SECOND
            for call in turn.calls:
                call_start = at - SECOND // 2 if call.parallel else at
                arguments = json.dumps(call.arguments)
                if convention == "openinference":
                    attributes = {
                        "openinference.span.kind": "TOOL",
                        "tool.name": call.name,
                        "input.value": arguments,
                        "output.value": call.result,
                    }
                    name = call.name
                else:
                    attributes = {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": call.name,
                        "gen_ai.tool.call.arguments": arguments,
                        "gen_ai.tool.call.result": call.result,
                        "error.type": "ToolError" if call.error else None,
                    }
                    name = f"execute_tool {call.name}"
                rows.append(
                    _span(
                        trace,
                        ids.span(),
                        root,
                        name,
                        call_start,
                        call_start + SECOND * 3 // 4,
                        attributes,
                        call.error,
                    )
                )
                at = call_start + SECOND
    random.Random(seed).shuffle(rows)
    return rows


def export(
    rows: list[dict[str, Any]], convention: str, version: str = VERSION, project: str | None = None
) -> dict[str, Any]:
    resource = {"service.name": "support-agent", "openinference.project.name": project}
    if convention == "genai":
        resource["service.version"] = version
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _attributes(resource)},
                "scopeSpans": [{"scope": {"name": f"support-agent.{convention}"}, "spans": rows}],
            }
        ]
    }


def write_files(
    folder: Path,
    convention: str = "openinference",
    version: str = VERSION,
    prefix: str = "",
    perfect: bool = False,
    seed: int = 7,
) -> tuple[Path, Path]:
    """The traces (one OTLP/JSON export) and the reference (JSONL) of the 18 sessions."""
    folder.mkdir(parents=True, exist_ok=True)
    sessions, reference = runs(prefix, perfect)
    traces = folder / f"traces-{convention}.json"
    document = export(spans(sessions, convention, seed, version), convention, version)
    traces.write_text(json.dumps(document), encoding="utf-8")
    ref = folder / "reference.jsonl"
    ref.write_text("".join(json.dumps(row) + "\n" for row in reference), encoding="utf-8")
    return traces, ref
