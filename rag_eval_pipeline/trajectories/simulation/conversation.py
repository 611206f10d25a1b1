"""One simulated conversation, turn by turn: the user says something, the agent answers (its
reply read with the entry's JSONPaths, its tool calls with the simulation's), until the user
writes ``###STOP###``, the turns run out, the agent fails or times out, or the user repeats a
message verbatim (a loop). The reason it ended is kept, and the session is a trajectories
session, so every figure of ``rag-eval trajectories`` reads it."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from rag_eval_pipeline.answering.agents.calls import AgentCallError, ConversationTurn
from rag_eval_pipeline.answering.agents.mapping import ResponseMapping, UnreadableReplyError, compile_path
from rag_eval_pipeline.llm.client import FatalLLMError, LLMCallError
from rag_eval_pipeline.trajectories.sessions import Session, ToolCall, Turn, canonical_json
from rag_eval_pipeline.trajectories.simulation.scenarios import Scenario
from rag_eval_pipeline.trajectories.simulation.users import Message, SimulatedUser, leaks_goal

SIMULATION_KEY = "simulation"  # a simulated session's key source (a traced one names its attribute)


class StopReason(str, Enum):
    USER_STOP = "user_stop"  # ###STOP###, or a script that ran out: the only way to succeed
    MAX_TURNS = "max_turns"
    AGENT_ERROR = "agent_error"
    AGENT_TIMEOUT = "agent_timeout"
    LOOP = "loop"  # the user repeated a message verbatim
    SIMULATOR_ERROR = "simulator_error"


# failures of the simulated user, not of the agent: counted apart, out of the agent's figures
SIMULATOR_STOPS = (StopReason.LOOP, StopReason.SIMULATOR_ERROR)
GOAL_LEAK = "goal_leak"

AgentCall = Callable[[ConversationTurn], Awaitable[tuple[Any, bool]]]


@dataclass(frozen=True)
class ReplyReader:
    """The agent's reply as the conversation needs it: the answer (the entry's mapping) and the
    tool calls (a JSONPath to objects with ``name`` and ``arguments``; None: it reports none)."""

    mapping: ResponseMapping
    tool_calls: str | None = None

    def calls(self, document: Any) -> list[tuple[str, Any, Any]]:
        if self.tool_calls is None:
            return []
        found = [m.value for m in compile_path(self.tool_calls).find(document)]
        if len(found) == 1 and isinstance(found[0], list):
            found = found[0]
        calls = []
        for item in found:
            if not isinstance(item, dict):
                continue
            name = item.get("name") or item.get("tool")
            arguments = next((item[k] for k in ("arguments", "args", "input") if k in item), {})
            if isinstance(arguments, str):
                with contextlib.suppress(json.JSONDecodeError):  # text that is not JSON: compared as text
                    arguments = json.loads(arguments) if arguments.strip() else {}
            if name:
                calls.append((str(name), arguments, item.get("result")))
        return calls


@dataclass
class SimulatedSession:
    """A conversation as it went: the session (turns and tool calls), the transcript (the
    user's closing words included), why it ended, and the calls it made or found cached."""

    scenario: Scenario
    trial: int
    session: Session
    transcript: tuple[Message, ...]
    stop_reason: StopReason
    detail: str = ""
    goal_leak: bool = False
    counts: dict[str, int] = field(default_factory=dict)
    calls_from: str = "reply"  # where its tool calls were read: the replies, or the agent's spans

    @property
    def simulator_fault(self) -> str | None:
        """What the simulated user did wrong, if anything (the session then is not the agent's)."""
        if self.stop_reason in SIMULATOR_STOPS:
            return self.stop_reason.value
        return GOAL_LEAK if self.goal_leak else None

    @property
    def final_reply(self) -> str | None:
        return self.session.turns[-1].answer if self.session.turns else None


def _turn(
    session_id: str, number: int, user: str, answer: str | None, calls: list[tuple[str, Any, Any]]
) -> Turn:
    start = number * 1_000_000
    tool_calls = tuple(
        ToolCall(
            name,
            canonical_json(arguments),
            start + 10 * (i + 1),
            start + 10 * (i + 1) + 1,  # one after the other: calls a reply lists did not overlap
            f"{session_id}/turn-{number}/call-{i + 1}",
            None if result is None else (result if isinstance(result, str) else canonical_json(result)),
        )
        for i, (name, arguments, result) in enumerate(calls)
    )
    return Turn("", f"{session_id}/turn-{number}", start, user, answer, tool_calls, ())


async def converse(
    scenario: Scenario,
    trial: int,
    user: SimulatedUser,
    agent: AgentCall,
    reader: ReplyReader,
    agent_version: str,
    where: str,
) -> SimulatedSession:
    """One trial of one scenario, to its end. An error every call would share (a key, an agent
    that cannot be reached) is raised; any other ends this session only, with its reason."""
    session_id = scenario.session_id(trial)
    history: list[Message] = []
    turns: list[Turn] = []
    counts = {"agent_calls": 0, "agent_cached": 0, "user_calls": 0, "user_cached": 0}
    said: set[str] = set()
    leak = False
    reason, detail = StopReason.MAX_TURNS, ""
    while True:
        try:
            said_next = await user.next_turn(scenario, trial, history)
        except FatalLLMError:
            raise
        except LLMCallError as err:
            reason, detail = StopReason.SIMULATOR_ERROR, str(err)[:300]
            break
        if said_next.from_cache is not None:
            counts["user_cached" if said_next.from_cache else "user_calls"] += 1
        if said_next.cut_off and not said_next.stopped:
            reason = StopReason.SIMULATOR_ERROR
            detail = "the simulated user's message was cut off at its token limit (it rambled)"
            break
        if said_next.stopped:
            if said_next.text:
                history.append(Message("user", said_next.text))  # the closing words, kept
            reason = StopReason.USER_STOP
            break
        text = said_next.text
        if not text:
            reason, detail = StopReason.SIMULATOR_ERROR, "the simulated user wrote an empty message"
            break
        if len(turns) >= scenario.max_turns:
            reason, detail = StopReason.MAX_TURNS, f"{scenario.max_turns} turns without {'###STOP###'}"
            break
        if text in said:
            reason, detail = StopReason.LOOP, f"the user repeated a message: {text[:80]!r}"
            break
        if not turns:
            leak = leaks_goal(scenario, text)
        said.add(text)
        history.append(Message("user", text))
        asked = ConversationTurn(session_id, text, tuple(m.as_chat() for m in history))
        try:
            document, cached = await agent(asked)
            reply = reader.mapping.read(document)
            calls = reader.calls(document)
        except (AgentCallError, UnreadableReplyError) as err:
            timed_out = getattr(err, "timed_out", False)
            reason = StopReason.AGENT_TIMEOUT if timed_out else StopReason.AGENT_ERROR
            detail = f"turn {len(turns) + 1}: {err}"[:300]
            break
        counts["agent_cached" if cached else "agent_calls"] += 1
        turns.append(_turn(session_id, len(turns) + 1, text, reply.answer, calls))
        history.append(Message("assistant", reply.answer))
    session = Session(session_id, SIMULATION_KEY, agent_version, tuple(turns), where)
    return SimulatedSession(scenario, trial, session, tuple(history), reason, detail, leak, counts)


async def converse_all(
    scenarios: Sequence[Scenario],
    trials: int,
    start: Callable[[Scenario, int], Awaitable[SimulatedSession]],
    concurrency: int,
    on_done: Callable[[int, int], None] = lambda done, total: None,
) -> list[SimulatedSession]:
    """Every trial of every scenario, ``concurrency`` conversations at once (the turns of one
    are in order), in scenario then trial order; progress reported as they finish."""
    limit = asyncio.Semaphore(concurrency)
    jobs = [(s, t) for s in scenarios for t in range(1, trials + 1)]
    done = 0

    async def one(scenario: Scenario, trial: int) -> SimulatedSession:
        nonlocal done
        async with limit:
            result = await start(scenario, trial)
        done += 1
        on_done(done, len(jobs))
        return result

    return list(await asyncio.gather(*(one(s, t) for s, t in jobs)))
