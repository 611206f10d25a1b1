"""``trajectories:`` in ``rag_eval.yaml``: where an agent's traces and the reference are, which
LLM judges read the sessions, and the thresholds the trajectory summary is held to."""

from __future__ import annotations

from pydantic import Field

from rag_eval_pipeline.common.settings import Strict
from rag_eval_pipeline.metrics.gated import Gated
from rag_eval_pipeline.metrics.settings import ThresholdSettings


class PhoenixTraces(Strict):
    """A Phoenix project whose spans are read beside the files (its REST API, paged)."""

    url: str = "http://127.0.0.1:6006"
    project: str
    api_key_env: str = "PHOENIX_API_KEY"


class TrajectorySettings(Gated):
    traces: list[str] = Field(
        default_factory=list,
        description="OTLP/JSON files or folders of them (an export per file or per line)",
    )
    phoenix: PhoenixTraces | None = None
    reference: str | None = Field(default=None, description="JSONL: a task per line (docs/trajectories.md)")
    judges: list[str] = Field(
        default_factory=list,
        description="LLM judges of each session: goal completion, turn relevancy, knowledge retention",
    )
    trajectory_judge: bool = Field(
        default=False, description="also ask the judges whether the tool calls were the right ones"
    )
    required_share: float = Field(
        default=0.95,
        ge=0,
        le=1,
        description="the reconstruction check fails below this share of spans placed in a session",
    )
    thresholds: dict[str, float | ThresholdSettings] = Field(
        default_factory=dict, description="[JUDGE/]METRIC: e.g. match_strict: 0.8, pass^2: 0.5"
    )

