"""The reference of a trajectory evaluation: per task, the sessions that are its trials and, turn
by turn, the tool calls expected, each with how its arguments must match. One JSON object per
line; a line that does not parse names file and line."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rag_eval_pipeline.common.text import nfc_values, read_named_file
from rag_eval_pipeline.trajectories.sessions import canonical_json


class ArgMatch(str, Enum):
    """How a call's arguments must match an expected call's: ``exact`` (the same JSON),
    ``subset`` (every expected key with the same value; more keys allowed), ``ignore`` (any)."""

    EXACT = "exact"
    SUBSET = "subset"
    IGNORE = "ignore"


class MatchMode(str, Enum):
    """What counts as a task's success in pass^k: the session's calls against the expected ones."""

    STRICT = "strict"
    UNORDERED = "unordered"
    SUBSET = "subset"
    SUPERSET = "superset"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExpectedCall(_Strict):
    name: str = Field(min_length=1)
    arguments: Any = Field(default_factory=dict)
    arg_match: ArgMatch = ArgMatch.EXACT

    @field_validator("arguments", mode="before")
    @classmethod
    def _decoded(cls, arguments: Any) -> Any:
        """Arguments written as JSON text (as the spans carry them) are the same arguments."""
        if isinstance(arguments, str) and arguments.strip()[:1] in ("{", "["):
            try:
                return json.loads(arguments)
            except json.JSONDecodeError:
                raise ValueError(f"arguments are text that is not JSON: {arguments[:60]!r}") from None
        return arguments

    @property
    def canonical_arguments(self) -> str:
        return canonical_json(self.arguments)


class ExpectedTurn(_Strict):
    user: str | None = None
    expected_tool_calls: tuple[ExpectedCall, ...] = ()


class Task(_Strict):
    """One task of the reference: its trials (session ids) and what each turn should call."""

    task_id: str = Field(min_length=1)
    session_ids: tuple[str, ...] = Field(min_length=1)
    turns: tuple[ExpectedTurn, ...] = ()
    expected_outcome: str | None = None
    match_mode: MatchMode = MatchMode.STRICT
    forbidden_tools: tuple[str, ...] = ()
    line: int = Field(default=0, exclude=True)

    @field_validator("session_ids")
    @classmethod
    def _distinct(cls, ids: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(ids)) != len(ids):
            raise ValueError("a session is listed twice among the trials")
        return ids

    @property
    def expected_calls(self) -> tuple[ExpectedCall, ...]:
        return tuple(call for turn in self.turns for call in turn.expected_tool_calls)


class ReferenceError(ValueError):
    """A reference that cannot be used, in one line with file and line."""


def _first_error(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]


def read_reference(path: Path) -> list[Task]:
    """Every task of the file, in order. A line that is not JSON or not a task, a task id or a
    session listed twice: an error naming file and line."""
    # UTF-8, a BOM accepted, NFC by the rows below
    holds = "give the trajectories' reference, one task per line"
    lines = read_named_file(path, holds, ReferenceError).splitlines()
    tasks: list[Task] = []
    seen_tasks: dict[str, int] = {}
    seen_sessions: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = nfc_values(json.loads(line))  # a \u escape may spell NFD
        except json.JSONDecodeError as err:
            raise ReferenceError(f"{path}, line {number}: not JSON ({err.msg})") from None
        try:
            task = Task.model_validate({**row, "line": number} if isinstance(row, dict) else row)
        except ValidationError as err:
            raise ReferenceError(f"{path}, line {number}: {_first_error(err)}") from None
        if task.task_id in seen_tasks:
            raise ReferenceError(
                f"{path}, line {number}: task {task.task_id} is already on line {seen_tasks[task.task_id]}"
            )
        for session_id in task.session_ids:
            if session_id in seen_sessions:
                raise ReferenceError(
                    f"{path}, line {number}: session {session_id} is already a trial on line "
                    f"{seen_sessions[session_id]}"
                )
            seen_sessions[session_id] = number
        seen_tasks[task.task_id] = number
        tasks.append(task)
    if not tasks:
        raise ReferenceError(f"{path}: no task in it")
    return tasks


def unknown_sessions(tasks: list[Task], known: set[str], path: Path) -> list[str]:
    """A line per session the reference names that no trace holds (file and line)."""
    return [
        f"{path}, line {task.line}: session {session_id} of task {task.task_id} is in no trace"
        for task in tasks
        for session_id in task.session_ids
        if session_id not in known
    ]
