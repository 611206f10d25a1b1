"""The ``production:`` section of ``rag_eval.yaml``: where the agent's real interactions are read
from (a folder of logs, a Phoenix project, files of exported spans), how many are scored a day,
with which judges, against which thresholds and within which budget. Validated once here."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator, model_validator

from rag_eval_pipeline.answering.agents.mapping import compile_path
from rag_eval_pipeline.common.settings import Strict
from rag_eval_pipeline.metrics.budgets import Budget, budgets_of
from rag_eval_pipeline.metrics.settings import Gate, ThresholdSettings, checked_thresholds, gates_of

DEFAULT_THRESHOLDS = {"faithfulness": 0.8}  # the staged strategy's production bar
DEFAULT_START_DATE = "2026-01-01"


def _compiles(path: str | None) -> str | None:
    if path is not None:
        compile_path(path)  # a ValueError naming the path and where it does not parse
    return path


class LogColumns(Strict):
    """Where each field is in a row of a log: a column name, or a JSONPath into the row
    (``retrieved[*].content``). The first four are required of every row; a path for an
    optional field that finds nothing leaves that field absent."""

    question: str = "question"
    answer: str = "answer"
    contexts: str | None = Field(default="contexts", description="the texts the agent answered from")
    timestamp: str = "timestamp"
    context_ids: str | None = None
    context_titles: str | None = None
    trace_id: str | None = "trace_id"
    user_feedback: str | None = "user_feedback"
    agent_version: str | None = "agent_version"
    metadata: str | None = Field(default="metadata", description="an object of further fields to filter on")
    latency_s: str | None = Field(default="latency_s", description="seconds the agent took (budgets)")
    cost_usd: str | None = Field(default="cost_usd", description="dollars the interaction cost (budgets)")

    @field_validator("*")
    @classmethod
    def _path_compiles(cls, path: str | None) -> str | None:
        return _compiles(path)


class LogsSource(Strict):
    """A folder (or one file) of interaction logs: JSONL or parquet rows, read through ``columns``."""

    kind: Literal["logs"] = "logs"
    path: str
    columns: LogColumns = LogColumns()


class SpanFields(Strict):
    """Where the optional fields are among a trace's root-span attributes (OpenInference puts
    user metadata in ``metadata``, a JSON object): JSONPaths into the attributes, then into
    the resource's (``service.version``)."""

    agent_version: str | None = "metadata.agent_version"
    user_feedback: str | None = "metadata.user_feedback"
    metadata: str | None = "metadata"

    @field_validator("*")
    @classmethod
    def _path_compiles(cls, path: str | None) -> str | None:
        return _compiles(path)


class PhoenixSource(Strict):
    """A Phoenix project: the root spans of the agent's traces through Phoenix's REST API,
    question and answer from ``input.value`` / ``output.value``, contexts from its retriever
    spans' ``retrieval.documents`` (OpenInference)."""

    kind: Literal["phoenix"] = "phoenix"
    url: str = "http://127.0.0.1:6006"
    project: str
    api_key_env: str = Field(default="PHOENIX_API_KEY", description="variable holding the API key, if any")
    fields: SpanFields = SpanFields()


class SpansSource(Strict):
    """Files of exported spans in the same shape: OTLP/JSON (``resourceSpans``, one export per
    file or per line) or Phoenix's span JSON (``{"data": [spans]}`` or a list of spans)."""

    kind: Literal["spans"] = "spans"
    path: str
    fields: SpanFields = SpanFields()


SOURCE_SETTINGS = (LogsSource, PhoenixSource, SpansSource)
SOURCE_TAGS = tuple(s.model_fields["kind"].default for s in SOURCE_SETTINGS)  # logs, phoenix, spans
ProductionSource = Annotated[LogsSource | PhoenixSource | SpansSource, Field(discriminator="kind")]


class ProductionFilters(Strict):
    """Which interactions may be sampled: every one by default."""

    agent_versions: list[str] | None = Field(default=None, description="keep these agent versions only")
    user_feedback: list[str] | None = Field(default=None, description="keep these feedback values only")
    metadata: dict[str, str | list[str]] = Field(
        default_factory=dict, description="keep rows whose metadata has these values"
    )


class ProductionSettings(Strict):
    """Score a seeded random sample of each day's real traffic with reference-free judges,
    hold each day to thresholds, and watch the trend."""

    sources: list[ProductionSource] = Field(min_length=1)
    sample_per_day: int = Field(default=50, ge=1, description="interactions scored per day, at most")
    seed: int = Field(default=0, description="the same seed draws the same sample of the same day")
    stratify_by_agent_version: bool = Field(
        default=True, description="several versions live: each sampled in proportion to its traffic"
    )
    filters: ProductionFilters = ProductionFilters()
    judges: list[str] | None = Field(
        default=None, description="reference-free judges; unset: the file's judges, each without a reference"
    )
    thresholds: dict[str, float | ThresholdSettings] = Field(
        default_factory=lambda: dict(DEFAULT_THRESHOLDS),
        description="[agent_version:V/][JUDGE/]METRIC: a score, or {min, bound: lower}; a day below fails",
    )
    budgets: dict[str, float] = Field(
        default_factory=dict,
        description="[agent_version:V/]FIGURE: the most an interaction may take or cost, as the "
        "evaluation's budgets (latency_p50_s, latency_p95_s, latency_max_s; cost_per_case_usd, cost_max_usd)",
    )
    daily_budget_usd: float | None = Field(
        default=None, gt=0, description="LLM dollars a day may spend; the calls past it are not made"
    )
    start_date: dt.date = Field(
        default=dt.date.fromisoformat(DEFAULT_START_DATE), description="the first day partition"
    )
    timezone: str = Field(default="UTC", description="whose midnight ends a day; naive timestamps are in it")
    sensor_interval_s: int = Field(
        default=60, ge=10, description="how often the sources are read for new rows"
    )

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, zone: str) -> str:
        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"timezone {zone!r} is not an IANA time zone (e.g. UTC, Europe/Paris)") from None
        return zone

    @field_validator("thresholds")
    @classmethod
    def _gates_parse(cls, thresholds: dict[str, float | ThresholdSettings]) -> dict:
        return dict(checked_thresholds(thresholds))

    @model_validator(mode="after")
    def _sources_named_once(self) -> ProductionSettings:
        names = [source_name(s) for s in self.sources]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"production.sources: the same source twice: {', '.join(repeated)}")
        return self

    @field_validator("budgets")
    @classmethod
    def _budgets_read(cls, budgets: dict[str, float]) -> dict[str, float]:
        budgets_of(budgets)  # the key's grammar and the figure's name, said now
        return budgets

    def gates(self) -> list[Gate]:
        return gates_of(self.thresholds)

    def budgets_held(self) -> list[Budget]:
        """The day's budgets, each resolved once (``metrics.budgets``, as the evaluation's)."""
        return budgets_of(self.budgets)

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)


def source_name(source: LogsSource | PhoenixSource | SpansSource) -> str:
    """How a source is named in problems, metadata and the row's provenance."""
    if isinstance(source, PhoenixSource):
        return f"phoenix:{source.url.rstrip('/')}/{source.project}"
    return f"{source.kind}:{source.path}"
