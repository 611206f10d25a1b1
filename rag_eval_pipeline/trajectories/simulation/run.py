"""What the simulation's assets call: every trial of every scenario against the agent, and the
rubric's judge over the transcripts; each bound in how many calls run at once and closing its
clients before the event loop ends."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from rag_eval_pipeline.answering.agents.calls import CachedAgent, ConversationTurn
from rag_eval_pipeline.answering.agents.mapping import UnreadableReplyError
from rag_eval_pipeline.judges.engine import InvalidJudgeOutput, JudgeCaller
from rag_eval_pipeline.llm.client import FatalLLMError, LLMCallError
from rag_eval_pipeline.trajectories.simulation.conversation import (
    ReplyReader,
    SimulatedSession,
    converse,
    converse_all,
)
from rag_eval_pipeline.trajectories.simulation.scenarios import Scenario
from rag_eval_pipeline.trajectories.simulation.success import parse_rubric_verdict, render_rubric_request
from rag_eval_pipeline.trajectories.simulation.tables import transcript_of
from rag_eval_pipeline.trajectories.simulation.users import SimulatedUser


async def simulate(
    scenarios: Sequence[Scenario],
    trials: int,
    user_for: Callable[[Scenario], SimulatedUser],
    agent: CachedAgent,
    reader: ReplyReader,
    agent_version: str,
    where: Callable[[Scenario], str],
    concurrency: int,
    on_done: Callable[[int, int], None] = lambda done, total: None,
    close: Sequence[Callable[[], Awaitable[None]]] = (),
) -> list[SimulatedSession]:
    """Every conversation, in scenario then trial order."""

    def usable(document: Any) -> bool:
        try:
            reader.mapping.read(document)
        except UnreadableReplyError:
            return False
        return True

    async def call(turn: ConversationTurn) -> tuple[Any, bool]:
        return await agent.converse(turn, usable)

    async def start(scenario: Scenario, trial: int) -> SimulatedSession:
        return await converse(
            scenario, trial, user_for(scenario), call, reader, agent_version, where(scenario)
        )

    try:
        return await converse_all(scenarios, trials, start, concurrency, on_done)
    finally:
        await agent.aclose()
        for closing in close:
            await closing()


async def judge_rubrics(
    sessions: pd.DataFrame,
    scenarios: Mapping[str, Scenario],
    make_caller: Callable[[], JudgeCaller],
    concurrency: int,
    close: Callable[[], Awaitable[None]] | None = None,
) -> dict[str, tuple[bool | None, str]]:
    """The rubric's verdict on each session whose scenario has one: (passed, reason), or
    (None, the error) when the judge gave no valid verdict (the success is then not measured)."""
    limit = asyncio.Semaphore(concurrency)

    async def one(row: dict[str, Any]) -> tuple[str, tuple[bool | None, str]]:
        rubric = scenarios[row["task_id"]].success.rubric
        assert rubric is not None
        caller = make_caller()
        request = render_rubric_request(caller.model, rubric, transcript_of(row))
        async with limit:
            try:
                verdict = await caller.ask(request, parse_rubric_verdict)
            except FatalLLMError:
                raise
            except (InvalidJudgeOutput, LLMCallError) as err:
                return row["session_id"], (None, f"judge error: {str(err)[:200]}")
        return row["session_id"], (verdict.passed, verdict.reason)

    rows = [r for r in sessions.to_dict("records") if scenarios[r["task_id"]].success.rubric]
    try:
        return dict(await asyncio.gather(*(one(r) for r in rows)))
    finally:
        if close is not None:
            await close()
