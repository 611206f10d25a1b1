"""LLM judges of a whole session: did the agent reach the user's goal, was each reply relevant
to its turn, did it keep what earlier turns established, and (optionally) were its tool calls
the right ones. Two pure halves around one call per session: ``render_request`` and
``parse_verdicts``; the prompt is a versioned constant."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from rag_eval_pipeline.judges.engine import InvalidJudgeOutput, JudgeCaller, parse_tool_output, rubric_request
from rag_eval_pipeline.llm.client import FatalLLMError, LLMCallError, LLMResponse, Tool
from rag_eval_pipeline.trajectories.reference import Task
from rag_eval_pipeline.trajectories.sessions import Session

SESSION_PROMPT_VERSION = "session-v1"
TRAJECTORY_VERDICT = "trajectory_quality"
TOOL_NAME = "record_session_verdicts"
Score = float

SESSION_RUBRIC = """You judge a conversation between a user and a support agent that can call tools.
Score each criterion 0, 0.5 or 1 and give a one-sentence reason.
- goal_completion: by the end, did the agent do what the user asked (the expected outcome, when
  given, says what done means)? 1 done, 0.5 partly, 0 not done.
- turn_relevancy: for every turn in order, 1 when the agent's reply addresses that turn's message,
  0 when it does not.
- knowledge_retention: did the agent keep what earlier turns established (names, orders, choices)
  instead of asking again or contradicting it? 1 kept, 0.5 slips, 0 lost.
- trajectory_quality (only when asked): were the tool calls the right ones, with the right
  arguments, without needless or repeated calls? 1 right, 0.5 partly, 0 wrong."""


class Verdict(BaseModel):
    model_config = ConfigDict(extra="ignore")
    score: float = Field(description="0, 0.5 or 1")
    reason: str = ""

    def model_post_init(self, __context: object) -> None:
        if self.score not in (0, 0.5, 1):
            raise ValueError(f"score must be 0, 0.5 or 1, got {self.score}")


class SessionVerdicts(BaseModel):
    model_config = ConfigDict(extra="ignore")
    goal_completion: Verdict
    turn_relevancy: list[Verdict]
    knowledge_retention: Verdict
    trajectory_quality: Verdict | None = None


def _tool(with_trajectory: bool) -> Tool:
    verdict = {
        "type": "object",
        "properties": {"score": {"type": "number", "enum": [0, 0.5, 1]}, "reason": {"type": "string"}},
        "required": ["score", "reason"],
    }
    properties = {
        "goal_completion": verdict,
        "turn_relevancy": {"type": "array", "items": verdict},
        "knowledge_retention": verdict,
    }
    if with_trajectory:
        properties[TRAJECTORY_VERDICT] = verdict
    return Tool(
        TOOL_NAME,
        "Record the verdicts on the conversation.",
        {"type": "object", "properties": properties, "required": list(properties)},
    )


def render_conversation(session: Session, task: Task | None, with_trajectory: bool) -> str:
    """The conversation as the judge reads it: each turn's message, tool calls and reply."""
    lines = []
    if task is not None and task.expected_outcome:
        lines.append(f"<expected_outcome>{task.expected_outcome}</expected_outcome>")
    for number, turn in enumerate(session.turns, start=1):
        lines.append(f'<turn number="{number}">')
        lines.append(f"<user>{turn.user or ''}</user>")
        for call in turn.tool_calls:
            outcome = f"error: {call.error}" if call.error else (call.result or "")
            lines.append(f'<tool_call name="{call.name}">{call.arguments} -> {outcome}</tool_call>')
        lines.append(f"<agent>{turn.answer or ''}</agent>")
        lines.append("</turn>")
    lines.append(
        f"Turns: {len(session.turns)}. Judge trajectory_quality: {'yes' if with_trajectory else 'no'}."
    )
    return "\n".join(lines)


def render_request(model: str, session: Session, task: Task | None, with_trajectory: bool):
    return rubric_request(
        model,
        SESSION_RUBRIC,
        render_conversation(session, task, with_trajectory),
        1024,
        _tool(with_trajectory),
    )


def parse_verdicts(response: LLMResponse, turns: int, with_trajectory: bool) -> SessionVerdicts:
    verdicts = parse_tool_output(response, SessionVerdicts)
    if len(verdicts.turn_relevancy) != turns:
        raise InvalidJudgeOutput(
            f"turn_relevancy has {len(verdicts.turn_relevancy)} verdicts for {turns} turns"
        )
    if with_trajectory and verdicts.trajectory_quality is None:
        raise InvalidJudgeOutput("trajectory_quality is missing")
    return verdicts


async def judge_session(
    caller: JudgeCaller, session: Session, task: Task | None, with_trajectory: bool
) -> dict[str, object]:
    """A row of the session's scores (absent, with the error, when the judge could not answer)."""
    request = render_request(caller.model, session, task, with_trajectory)
    row: dict[str, object] = {
        "session_id": session.session_id,
        "task_id": task.task_id if task is not None else None,
        "expected_outcome": task.expected_outcome if task is not None else None,
    }
    try:
        verdicts = await caller.ask(request, lambda r: parse_verdicts(r, len(session.turns), with_trajectory))
    except FatalLLMError:
        raise  # a key or model that is wrong fails every session alike: the step says so once
    except (InvalidJudgeOutput, LLMCallError) as err:
        return {**row, "status": "judge_error", "error": str(err)[:300]}
    relevancy = [v.score for v in verdicts.turn_relevancy]
    row.update(
        status="ok",
        error=None,
        goal_completion=verdicts.goal_completion.score,
        turn_relevancy=sum(relevancy) / len(relevancy) if relevancy else None,
        knowledge_retention=verdicts.knowledge_retention.score,
        reasons="; ".join(
            f"{name}: {v.reason}"
            for name, v in (
                ("goal", verdicts.goal_completion),
                ("retention", verdicts.knowledge_retention),
                *((("trajectory", verdicts.trajectory_quality),) if verdicts.trajectory_quality else ()),
            )
        ),
    )
    if with_trajectory and verdicts.trajectory_quality is not None:
        row[TRAJECTORY_VERDICT] = verdicts.trajectory_quality.score
    return row


async def judge_sessions(
    sessions: Sequence[Session],
    tasks: dict[str, Task],
    make_caller: Callable[[], JudgeCaller],
    with_trajectory: bool,
    concurrency: int,
    on_done: Callable[[int, int], None] = lambda done, total: None,
    close: Callable[[], Awaitable[None]] | None = None,
) -> list[dict[str, object]]:
    """Every session judged, ``concurrency`` at a time, progress reported as they finish; then
    ``close`` (the client's connections, before the event loop ends)."""
    limit = asyncio.Semaphore(concurrency)
    done = 0

    async def one(session: Session) -> dict[str, object]:
        nonlocal done
        caller = make_caller()
        async with limit:
            row = await judge_session(caller, session, tasks.get(session.session_id), with_trajectory)
        done += 1
        on_done(done, len(sessions))
        return {
            **row,
            "input_tokens": caller.usage.input_tokens,
            "output_tokens": caller.usage.output_tokens,
            "cost_usd": caller.cost,
        }

    try:
        return list(await asyncio.gather(*(one(s) for s in sessions)))
    finally:
        if close is not None:
            await close()
