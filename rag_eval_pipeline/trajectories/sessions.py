"""Sessions rebuilt from an agent's spans, in OpenInference's or OpenTelemetry's GenAI
conventions: a session per conversation key, a turn per root span (the agent's run of one user
message), its tool calls from TOOL / ``execute_tool`` spans in start order. Spans may come in any
order; children take their root's session when they carry none, and the reconstruction report
says how much of the file this accounted for."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rag_eval_pipeline.common.mappings import dotted_value
from rag_eval_pipeline.production.spans import Span
from rag_eval_pipeline.trajectories.traces import LocatedSpan, TraceInputError

# where a span names its conversation, first found wins; the trace id when none does
SESSION_KEYS = (
    "gen_ai.conversation.id",
    "session.id",
    "metadata.session_id",
    "metadata.thread_id",
    "metadata.conversation_id",
)
TRACE_KEY = "trace"
VERSION_KEYS = ("metadata.agent_version", "gen_ai.agent.version", "agent.version")
UNVERSIONED = "unversioned"
TOOL_KIND = "TOOL"
EXECUTE_TOOL = "execute_tool"
REQUIRED_SHARE = 0.95
COUNTED = ("spans", "own_session_key", "reattached", "tool_spans", "tool_spans_with_arguments", "orphans")
# where a tool span says what was called, and with what, first found wins (GenAI, OpenInference)
NAME_KEYS = ("gen_ai.tool.name", "tool.name", "tool_call.function.name")
ARGUMENT_KEYS = (
    "gen_ai.tool.call.arguments",
    "tool_call.function.arguments",
    "input.value",
)  # below this share of spans accounted for, the scores would mislead


def file_of(where: str) -> str:
    """The file of a span's place (``FILE`` or ``FILE, line N``)."""
    return where.split(", line ", 1)[0]


def canonical_json(value: Any) -> str:
    """One text per JSON value: keys sorted, no spaces, Unicode kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def nanoseconds(value: Any) -> int:
    """A span time as nanoseconds since the epoch: OTLP writes nanoseconds, Phoenix ISO text."""
    if value is None or value == "":
        return 0
    if isinstance(value, (int, float)) or (isinstance(value, str) and value.isdigit()):
        return int(value)
    moment = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return int(moment.timestamp() * 1_000_000) * 1000


def session_key(span: Span) -> tuple[str, str] | None:
    """The span's own conversation key and the attribute it came from, if it has one."""
    for key in SESSION_KEYS:
        value = dotted_value(span.attributes, key)
        if value is not None and str(value) != "":
            return str(value), key
    return None


def is_tool(span: Span) -> bool:
    return span.kind == TOOL_KIND or dotted_value(span.attributes, "gen_ai.operation.name") == EXECUTE_TOOL


@dataclass(frozen=True)
class ToolCall:
    """One call of a tool: its name, its arguments as canonical JSON, what it returned or the
    error it raised, and the span it was read from."""

    name: str
    arguments: str
    start: int
    end: int
    span_id: str
    result: str | None = None
    error: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.name, self.arguments


@dataclass(frozen=True)
class Turn:
    """The agent's run on one user message: the root span, the message, the reply and the tool
    calls in the order they started."""

    trace_id: str
    span_id: str
    start: int
    user: str | None
    answer: str | None
    tool_calls: tuple[ToolCall, ...]
    span_ids: tuple[str, ...]


@dataclass(frozen=True)
class Session:
    session_id: str
    key_source: str  # the attribute the key came from, or "trace"
    agent_version: str
    turns: tuple[Turn, ...]
    where: str  # the file (and line) its first turn was read from

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(call for turn in self.turns for call in turn.tool_calls)

    @property
    def span_ids(self) -> tuple[str, ...]:
        return tuple(s for turn in self.turns for s in turn.span_ids)


@dataclass(frozen=True)
class Reconstruction:
    """How completely the spans became sessions: spans with a session key of their own, those
    that took their root's, tool spans with JSON arguments, orphans (a trace whose root is not in
    the file: they belong to no turn)."""

    spans: int = 0
    own_session_key: int = 0
    reattached: int = 0
    tool_spans: int = 0
    tool_spans_with_arguments: int = 0
    orphans: int = 0
    sessions: int = 0
    turns: int = 0
    sessions_by_trace_id: int = 0  # no conversation key anywhere: one session per trace
    files: dict[str, Reconstruction] = field(default_factory=dict)  # the same counts, file by file

    @property
    def session_key_share(self) -> float | None:
        return (self.own_session_key + self.reattached) / self.spans if self.spans else None

    @property
    def tool_arguments_share(self) -> float | None:
        return self.tool_spans_with_arguments / self.tool_spans if self.tool_spans else None

    @property
    def attached_share(self) -> float | None:
        return (self.spans - self.orphans) / self.spans if self.spans else None

    def shortfalls(self, required: float = REQUIRED_SHARE) -> list[str]:
        """Each share below ``required``, in words: what the blocking check fails on."""
        said = []
        for name, share in (
            ("spans with a session key", self.session_key_share),
            ("tool spans with arguments", self.tool_arguments_share),
            ("spans in a turn (not orphans)", self.attached_share),
        ):
            if share is not None and share < required:
                said.append(f"{name}: {share:.1%} < {required:.0%}")
        if not self.spans:
            said.append("no span was read")
        return said

    def as_dict(self) -> dict[str, Any]:
        return {
            "spans": self.spans,
            "own_session_key": self.own_session_key,
            "reattached_through_root": self.reattached,
            "session_key_share": self.session_key_share,
            "tool_spans": self.tool_spans,
            "tool_spans_with_arguments": self.tool_spans_with_arguments,
            "tool_arguments_share": self.tool_arguments_share,
            "orphan_spans": self.orphans,
            "attached_share": self.attached_share,
            "sessions": self.sessions,
            "turns": self.turns,
            "sessions_keyed_by_trace": self.sessions_by_trace_id,
            **(
                {"files": {name: counts.file_dict() for name, counts in self.files.items()}}
                if self.files
                else {}
            ),
        }

    def file_dict(self) -> dict[str, Any]:
        """One file's counts and shares (sessions and turns are the whole read's)."""
        full = self.as_dict()
        return {k: v for k, v in full.items() if k not in ("sessions", "turns", "sessions_keyed_by_trace")}


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else canonical_json(value)


def _message_text(messages: Any, role: str) -> str | None:
    """The last message of ``role`` in GenAI's ``gen_ai.input/output.messages`` (parts of text)."""
    if not isinstance(messages, list):
        return _text(messages)
    for message in reversed(messages):
        if isinstance(message, Mapping) and message.get("role") == role:
            parts = message.get("parts") or []
            texts = [
                str(p.get("content", "")) for p in parts if isinstance(p, Mapping) and p.get("type") == "text"
            ]
            return " ".join(texts) if texts else _text(message.get("content"))
    return None


def _user(root: Span) -> str | None:
    value = dotted_value(root.attributes, "input.value")
    return (
        _text(value)
        if value is not None
        else _message_text(dotted_value(root.attributes, "gen_ai.input.messages"), "user")
    )


def _answer(root: Span) -> str | None:
    value = dotted_value(root.attributes, "output.value")
    if value is not None:
        return _text(value)
    return _message_text(dotted_value(root.attributes, "gen_ai.output.messages"), "assistant")


def _arguments(located: LocatedSpan) -> tuple[Any, bool]:
    """The call's arguments as JSON data and whether the span had any; text that is not JSON is
    an error naming the span (a call whose arguments cannot be compared must not score as one)."""
    span = located.span
    raw = next((v for key in ARGUMENT_KEYS if (v := dotted_value(span.attributes, key)) is not None), None)
    if raw is None:
        return {}, False
    if isinstance(raw, str) and not raw.strip():
        return {}, True  # a tool without parameters, called with nothing
    if isinstance(raw, str):
        try:
            return json.loads(raw), True
        except json.JSONDecodeError as err:
            raise TraceInputError(
                f"{located.where}: span {span.span_id} (tool {_tool_name(span)}): arguments are not "
                f"JSON ({err.msg}): {raw[:80]!r}"
            ) from None
    return raw, True


def _tool_name(span: Span) -> str:
    named = (dotted_value(span.attributes, key) for key in NAME_KEYS)
    return str(next((n for n in named if n), None) or span.name)


def _tool_call(located: LocatedSpan) -> tuple[ToolCall, bool]:
    span = located.span
    arguments, present = _arguments(located)
    result = dotted_value(span.attributes, "gen_ai.tool.call.result")
    if result is None:
        result = dotted_value(span.attributes, "output.value")
    error = span.error or (
        str(dotted_value(span.attributes, "error.type"))
        if dotted_value(span.attributes, "error.type")
        else None
    )
    start = nanoseconds(span.start)
    call = ToolCall(
        _tool_name(span),
        canonical_json(arguments),
        start,
        nanoseconds(span.end) if span.end is not None else start,
        span.span_id,
        _text(result),
        error,
    )
    return call, present


def _version(root: Span) -> str:
    for key in VERSION_KEYS:
        value = dotted_value(root.attributes, key)
        if value is not None and str(value) != "":
            return str(value)
    value = dotted_value(root.resource, "service.version")
    return str(value) if value not in (None, "") else UNVERSIONED


@dataclass
class _Trace:
    members: list[LocatedSpan] = field(default_factory=list)


def _order(span: Span) -> tuple[int, str]:
    return nanoseconds(span.start), span.span_id


def reconstruct(spans: Sequence[LocatedSpan]) -> tuple[list[Session], Reconstruction]:
    """Sessions in the order of their first turn, turns by start, tool calls by start (ties by
    span id, so a shuffled file gives the same sessions). A root's key wins over its children's;
    a child without a key of its own takes its root's (counted as reattached)."""
    traces: dict[str, list[LocatedSpan]] = {}
    for located in spans:
        traces.setdefault(located.span.trace_id, []).append(located)
    turns: dict[str, list[tuple[Turn, str, str]]] = {}
    keys: dict[str, str] = {}
    by_file: dict[str, Counter] = {}
    by_trace = 0
    for trace_id, members in traces.items():
        members.sort(key=lambda m: _order(m.span))
        roots = [m for m in members if not m.span.parent_id]
        calls = {m.span.span_id: _tool_call(m) for m in members if is_tool(m.span)}  # not JSON: fails here
        for m in members:
            counts = by_file.setdefault(file_of(m.where), Counter())
            counts["spans"] += 1
            if m.span.span_id in calls:
                counts["tool_spans"] += 1
                counts["tool_spans_with_arguments"] += calls[m.span.span_id][1]
        if not roots:
            for m in members:
                by_file[file_of(m.where)]["orphans"] += 1
            continue
        root = roots[0]
        found = session_key(root.span) or next(
            (k for m in members if (k := session_key(m.span)) is not None), None
        )
        for m in members:
            own_key = session_key(m.span) is not None
            by_file[file_of(m.where)]["own_session_key" if own_key else "reattached"] += (
                found is not None or own_key
            )
        if found is None:
            session_id, source = trace_id, TRACE_KEY
            by_trace += 1
        else:
            session_id, source = found
        keys.setdefault(session_id, source)
        turn = Turn(
            trace_id,
            root.span.span_id,
            nanoseconds(root.span.start),
            _user(root.span),
            _answer(root.span),
            tuple(call for call, _ in calls.values()),
            tuple(m.span.span_id for m in members),
        )
        turns.setdefault(session_id, []).append((turn, _version(root.span), root.where))
    sessions = []
    for session_id, held in turns.items():
        held.sort(key=lambda t: (t[0].start, t[0].span_id))
        versions = sorted({v for _, v, _ in held})
        sessions.append(
            Session(session_id, keys[session_id], versions[-1], tuple(t for t, _, _ in held), held[0][2])
        )
    sessions.sort(key=lambda s: (s.turns[0].start, s.session_id))
    total = sum(by_file.values(), Counter())
    report = Reconstruction(
        **{name: total[name] for name in COUNTED},
        sessions=len(sessions),
        turns=sum(len(s.turns) for s in sessions),
        sessions_by_trace_id=by_trace,
        files={name: Reconstruction(**{n: c[n] for n in COUNTED}) for name, c in sorted(by_file.items())},
    )
    return sessions, report


def sessions_of_version(sessions: Iterable[Session], version: str) -> list[Session]:
    return [s for s in sessions if s.agent_version == version]
