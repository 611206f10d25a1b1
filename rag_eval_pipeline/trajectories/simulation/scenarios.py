"""Scenarios of simulated conversations: a user with a persona, a goal, what they may reveal when
asked, optionally a script of their messages, and what counts as success. One JSON object per
line, validated line by line: every bad line is one error naming file and line, and the good
lines still run."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rag_eval_pipeline.common.text import nfc_values, read_named_file
from rag_eval_pipeline.language.table import UnknownLanguageError, language
from rag_eval_pipeline.trajectories.reference import ExpectedCall, ExpectedTurn, MatchMode, Task

DEFAULT_MAX_TURNS = 10


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Success(_Strict):
    """What the session must reach, every criterion given: the tool calls expected (the
    trajectories' reference format), phrases the agent's final reply must hold as written
    (``reply_contains``; ``reply_contains_any_form``: in any form of their words), never in a
    negated clause, and a rubric an LLM judge answers yes or no on the transcript (the way to
    ask for a meaning)."""

    expected_tool_calls: tuple[ExpectedCall, ...] | None = None
    match_mode: MatchMode = MatchMode.UNORDERED
    forbidden_tools: tuple[str, ...] = ()
    reply_contains: tuple[str, ...] | None = None
    reply_contains_any_form: tuple[str, ...] | None = None
    rubric: str | None = None

    @model_validator(mode="after")
    def _something(self) -> Success:
        markers = self.reply_contains or self.reply_contains_any_form
        if self.expected_tool_calls is None and not markers and not self.rubric:
            raise ValueError(
                "success needs expected_tool_calls, reply_contains, reply_contains_any_form or rubric"
            )
        return self

    @field_validator("reply_contains", "reply_contains_any_form", mode="before")
    @classmethod
    def _one_or_many(cls, strings: Any) -> Any:
        return [strings] if isinstance(strings, str) else strings  # one phrase, as other tools write it

    @field_validator("reply_contains", "reply_contains_any_form")
    @classmethod
    def _not_blank(cls, strings: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if strings is not None and any(not s.strip() for s in strings):
            raise ValueError("a reply_contains string is blank")
        return strings


class Scenario(_Strict):
    """One simulated user and their task; ``user_turns`` makes the user scripted."""

    task_id: str = Field(min_length=1)
    persona: str = ""
    goal: str = Field(min_length=1)
    known_info: dict[str, Any] | str = Field(default_factory=dict)  # tau-bench's plain string too
    user_turns: tuple[str, ...] | None = None
    max_turns: int = Field(default=DEFAULT_MAX_TURNS, ge=1, le=100)
    language: str = "en"
    success: Success
    line: int = Field(default=0, exclude=True)

    @field_validator("goal")
    @classmethod
    def _goal_said(cls, goal: str) -> str:
        if not goal.strip():
            raise ValueError("goal is blank")
        return goal

    @field_validator("language")
    @classmethod
    def _known_language(cls, code: str) -> str:
        try:
            language(code)
        except UnknownLanguageError as err:
            raise ValueError(str(err)) from None
        return code

    @field_validator("user_turns")
    @classmethod
    def _scripted(cls, turns: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if turns is not None and not turns:
            raise ValueError("user_turns is empty: leave it out for a simulated user")
        return turns

    def session_id(self, trial: int) -> str:
        """The session of one trial: the agent sees it as ``{session}``."""
        return f"{self.task_id}-trial-{trial}"

    def task(self, trials: int) -> Task:
        """The scenario as a task of the trajectories' reference (its trials as sessions)."""
        calls = self.success.expected_tool_calls or ()
        return Task(
            task_id=self.task_id,
            session_ids=tuple(self.session_id(t) for t in range(1, trials + 1)),
            turns=(ExpectedTurn(expected_tool_calls=calls),),
            expected_outcome=self.goal,
            match_mode=self.success.match_mode,
            forbidden_tools=self.success.forbidden_tools,
        )


class ScenarioFileError(ValueError):
    """A scenarios file that cannot be read at all (missing, not text, no line at all)."""


@dataclass(frozen=True)
class ReadScenarios:
    scenarios: list[Scenario]
    errors: list[str]  # one line per bad line: file, line, what is wrong


def _first_error(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "missing":
        return f"{where} is missing"
    return f"{where}: {message}" if where else message


# tau-bench's task fields -> ours: what its tasks mean is what a scenario says (its instruction is
# the user's goal, its actions the expected tool calls, its outputs what the reply must hold)
TAU_BENCH_FIELDS = ("instruction", "actions", "outputs")


def from_tau_bench(row: dict[str, Any]) -> dict[str, Any]:
    """A tau-bench task (``id``, ``instruction``, ``known_info``, ``actions`` with ``kwargs``,
    ``outputs``) as a scenario; a row that is not one is returned as it is. Its ``user_id`` and
    ``unknown_info`` have no field here: the user is told only ``known_info``."""
    if "goal" in row or not any(k in row for k in TAU_BENCH_FIELDS):
        return row
    calls = [
        {"name": a.get("name"), "arguments": a.get("kwargs", a.get("arguments", {}))}
        for a in row.get("actions") or []
        if isinstance(a, dict)
    ]
    success: dict[str, Any] = {}
    if row.get("actions") is not None:
        success["expected_tool_calls"] = calls
    if row.get("outputs"):
        success["reply_contains"] = row["outputs"]
    task_id = row.get("task_id", row.get("id"))
    scenario = {"task_id": task_id, "goal": row.get("instruction"), "success": success}
    for kept in ("persona", "known_info", "user_turns", "max_turns", "language"):
        if kept in row:
            scenario[kept] = row[kept]
    return scenario


def _rows(path: Path, text: str) -> list[tuple[str, Any, str | None]]:
    """The file's rows in order, each with where it stands (``line N``, or ``item N`` of a file
    that is one JSON array, as tau-bench writes its tasks) and, for a line that is not JSON, the
    error that says so."""
    stripped = text.lstrip("\ufeff").strip()
    if stripped.startswith("["):
        try:
            items = json.loads(stripped)
        except json.JSONDecodeError as err:
            said = f"{path}: a JSON array that does not parse ({err.msg}, line {err.lineno})"
            return [("file", None, said)]
        if isinstance(items, list):
            return [(f"item {n}", nfc_values(item), None) for n, item in enumerate(items, start=1)]
    rows: list[tuple[str, Any, str | None]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append((f"line {number}", nfc_values(json.loads(line)), None))  # a \u escape may spell NFD
        except json.JSONDecodeError as err:
            rows.append((f"line {number}", None, f"{path}, line {number}: not JSON ({err.msg})"))
    return rows


def read_scenarios(path: Path) -> ReadScenarios:
    """Every valid scenario of the file, in order, and an error line per line that is not one
    (not JSON, no goal, no success, a task id already used): the others still run. A file that
    is one JSON array is read item by item, and tau-bench's tasks as scenarios (``from_tau_bench``)."""
    # UTF-8, a BOM accepted, NFC by the rows below
    text = read_named_file(path, "give the scenarios, one JSON object per line", ScenarioFileError)
    scenarios: list[Scenario] = []
    errors: list[str] = []
    seen: dict[str, str] = {}
    for where, row, unreadable in _rows(path, text):
        if unreadable is not None:
            errors.append(unreadable)
            continue
        if not isinstance(row, dict):
            errors.append(f"{path}, {where}: not a scenario (a JSON object per line)")
            continue
        number = int(where.split()[-1])
        try:
            scenario = Scenario.model_validate({**from_tau_bench(row), "line": number})
        except ValidationError as err:
            errors.append(f"{path}, {where}: {_first_error(err)}")
            continue
        if scenario.task_id in seen:
            errors.append(f"{path}, {where}: task {scenario.task_id} is already on {seen[scenario.task_id]}")
            continue
        seen[scenario.task_id] = where
        scenarios.append(scenario)
    if not scenarios and not errors:
        raise ScenarioFileError(f"{path}: no scenario in it")
    return ReadScenarios(scenarios, errors)
