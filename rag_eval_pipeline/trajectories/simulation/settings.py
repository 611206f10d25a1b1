"""``simulation:`` in ``rag_eval.yaml`` (the `rag-eval simulate` options write it): the scenarios,
the agent under test (a named http or python entry of ``answer_models``), the trials, the model
playing the user, the rubric's judge, where the agent's reply lists its tool calls, and the
thresholds the summary is held to."""

from __future__ import annotations

from pydantic import Field, field_validator

from rag_eval_pipeline.answering.agents.mapping import compile_path
from rag_eval_pipeline.metrics.gated import Gated
from rag_eval_pipeline.metrics.settings import ThresholdSettings

SCRIPTED = "scripted"  # the user of scenarios with user_turns: their script, no model


class SimulationSettings(Gated):
    scenarios: str | None = Field(
        default=None, description="JSONL: a scenario per line (docs/trajectories.md)"
    )
    agent: str | None = Field(default=None, description="the agent under test: a named http or python entry")
    trials: int = Field(
        default=3, ge=1, le=50, description="conversations per scenario (pass^k for k up to it)"
    )
    user: str = Field(
        default=SCRIPTED,
        description="the simulated user of scenarios without user_turns: an LLM name (claude-haiku-4-5, "
        "openai:<model>, local:<model>); scripted: only scripted scenarios",
    )
    judge: str | None = Field(default=None, description="the LLM that answers a scenario's rubric yes or no")
    session_judges: list[str] = Field(
        default_factory=list,
        description="LLM judges of each session, as for trajectories: goal completion (the goal as the "
        "expected outcome), turn relevancy, knowledge retention",
    )
    tool_calls: str | None = Field(
        default=None,
        description="JSONPath to the tool calls in the agent's reply (objects with name and arguments)",
    )
    traces: list[str] = Field(
        default_factory=list,
        description="OTLP/JSON files or folders the agent exports: its tool calls read from its spans "
        "(the session id on them), matched by session",
    )
    concurrency: int = Field(default=4, ge=1, description="conversations at once")
    thresholds: dict[str, float | ThresholdSettings] = Field(
        default_factory=dict, description="[JUDGE/]METRIC: e.g. task_success: 0.8, pass^2: 0.5"
    )

    @field_validator("tool_calls")
    @classmethod
    def _compiles(cls, path: str | None) -> str | None:
        if path is not None:
            compile_path(path)
        return path

