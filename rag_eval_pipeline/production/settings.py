"""The ``production:`` section of ``rag_eval.yaml``: where the agent's real interactions are read
from (a folder of logs, a Phoenix project, files of exported spans), how many are scored a day,
with which judges, against which thresholds and within which budget. Validated once here."""

from __future__ import annotations

import datetime as dt
import functools
import operator
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator, model_validator

from rag_eval_pipeline.answering.agents.mapping import compile_path
from rag_eval_pipeline.common.settings import Strict
from rag_eval_pipeline.metrics.budgets import Budget, budgets_of
from rag_eval_pipeline.metrics.gated import Budgeted, Gated
from rag_eval_pipeline.metrics.settings import Gate, ThresholdSettings

DEFAULT_THRESHOLDS = {"faithfulness": 0.8}  # the staged strategy's production bar
USERS = "users"  # the judge id of users' feedback in a day's summary, its thresholds and the trend
THUMBS_DOWN_RATE = "thumbs_down_rate"
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


def kinds_union(models: tuple[type[Strict], ...]) -> Any:
    """One concern's kinds as one field type of the configuration file, told apart by their
    ``kind``. A new kind is its model, an entry of its concern's tuple here, and a row of the
    concern's table of readers (``sources.SOURCE_KINDS``, ``feedback_sources.FEEDBACK_KINDS``)."""
    return Annotated[functools.reduce(operator.or_, models), Field(discriminator="kind")]


def kind_tag(model: type[Strict]) -> str:
    """The ``kind`` a configuration file names a kind's model by."""
    return str(model.model_fields["kind"].default)


SOURCE_SETTINGS = (LogsSource, PhoenixSource, SpansSource)
SOURCE_TAGS = tuple(kind_tag(s) for s in SOURCE_SETTINGS)  # logs, phoenix, spans
ProductionSource = kinds_union(SOURCE_SETTINGS)


class ProductionFilters(Strict):
    """Which interactions may be sampled: every one by default."""

    agent_versions: list[str] | None = Field(default=None, description="keep these agent versions only")
    user_feedback: list[str] | None = Field(default=None, description="keep these feedback values only")
    metadata: dict[str, str | list[str]] = Field(
        default_factory=dict, description="keep rows whose metadata has these values"
    )


# thumbs and common categorical labels read on [0, 1]; a label not here is a named problem
DEFAULT_FEEDBACK_LABELS = {
    "true": 1.0,
    "false": 0.0,
    "up": 1.0,
    "down": 0.0,
    "thumbs_up": 1.0,
    "thumbs_down": 0.0,
    "thumbsup": 1.0,
    "thumbsdown": 0.0,
    "positive": 1.0,
    "negative": 0.0,
    "good": 1.0,
    "bad": 0.0,
    "like": 1.0,
    "dislike": 0.0,
    "helpful": 1.0,
    "not_helpful": 0.0,
    "correct": 1.0,
    "incorrect": 0.0,
    "yes": 1.0,
    "no": 0.0,
    "\N{THUMBS UP SIGN}": 1.0,
    "\N{THUMBS DOWN SIGN}": 0.0,
}


class FeedbackScale(Strict):
    """How a feedback value reads on [0, 1]: a number from ``range`` (stars 1-5: ``[1, 5]``, a
    1 is 0 and a 5 is 1), a boolean as 1 / 0, a categorical label through ``labels`` (matched
    without case, spaces or dashes). A number outside the range or an unknown label is a named
    problem, never clipped or guessed."""

    range: tuple[float, float] = Field(default=(0.0, 1.0), description="numbers: [worst, best]")
    labels: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_FEEDBACK_LABELS))

    @model_validator(mode="after")
    def _ordered(self) -> FeedbackScale:
        low, high = self.range
        if not low < high:
            raise ValueError(f"range: {list(self.range)} is not [worst, best] with worst < best")
        wrong = {k: v for k, v in self.labels.items() if not 0 <= v <= 1}
        if wrong:
            raise ValueError(f"labels read on [0, 1], got {wrong}")
        return self


class FieldFeedback(Strict):
    """The interactions' own feedback: each production source's ``user_feedback`` field (a log
    column or JSONPath, a span attribute): a value, or an object with a value (``score``,
    ``value``, ``rating``, ``thumbs``) and a ``comment``."""

    kind: Literal["field"] = "field"
    scale: FeedbackScale | None = Field(default=None, description="unset: the section's scale")


class LangfuseFeedback(Strict):
    """Langfuse score records exported to a file (a JSON list, ``{"data": [...]}``, or one per
    line): ``name``, ``value`` (``stringValue`` for categorical), ``dataType`` (NUMERIC, BOOLEAN,
    CATEGORICAL), ``traceId`` / ``observationId`` / ``sessionId``, ``comment``, ``timestamp``."""

    kind: Literal["langfuse"] = "langfuse"
    path: str
    names: list[str] | None = Field(default=None, description="the score names that are feedback; null: all")
    exclude_sources: list[str] = Field(
        default_factory=lambda: ["EVAL"], description="Langfuse score sources that are not users (evaluators)"
    )
    scale: FeedbackScale | None = None


class PhoenixFeedback(Strict):
    """Phoenix span annotations: from an export file (``{"data": [...]}`` as Phoenix's REST API
    lists and takes them, a list, or one per line) or from a Phoenix project (``url`` and
    ``project``; the annotations on the interactions' root spans). ``result.score`` or
    ``result.label`` is the value, ``result.explanation`` the comment."""

    kind: Literal["phoenix_annotations"] = "phoenix_annotations"
    path: str | None = None
    url: str | None = None
    project: str | None = None
    api_key_env: str = "PHOENIX_API_KEY"
    names: list[str] | None = Field(
        default=None, description="the annotation names that are feedback; null: all"
    )
    annotator_kinds: list[str] = Field(default_factory=lambda: ["HUMAN"], description="whose annotations")
    scale: FeedbackScale | None = None

    @model_validator(mode="after")
    def _one_place(self) -> PhoenixFeedback:
        if (self.path is None) == (self.url is None or self.project is None):
            raise ValueError("phoenix_annotations: either path (an export file) or url and project")
        return self


FEEDBACK_SETTINGS = (FieldFeedback, LangfuseFeedback, PhoenixFeedback)
FeedbackSource = kinds_union(FEEDBACK_SETTINGS)


class FeedbackSettings(Strict):
    """Users' feedback as evidence: where it is kept, how its values read on [0, 1], which of
    several on one interaction counts, what counts as a thumbs-down, and the day's limit on
    thumbs-down."""

    sources: list[FeedbackSource] = Field(default_factory=lambda: [FieldFeedback()])
    scale: FeedbackScale = FeedbackScale()
    keep: Literal["latest", "all"] = Field(
        default="latest",
        description="several on one interaction: the latest counts (latest), or their mean does (all)",
    )
    negative_below: float = Field(default=0.5, gt=0, le=1, description="a value below it is a thumbs-down")
    max_negative_rate: float | None = Field(
        default=None, ge=0, le=1, description="a day whose thumbs-down share of feedback is above it fails"
    )
    session_key: str = Field(
        default="session_id", description="the metadata key that names an interaction's session"
    )


class ProductionSettings(Gated, Budgeted):
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
    feedback: FeedbackSettings | None = Field(
        default=None, description="users' feedback: read, joined, set against the judges (docs/production.md)"
    )

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, zone: str) -> str:
        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"timezone {zone!r} is not an IANA time zone (e.g. UTC, Europe/Paris)") from None
        return zone

    @model_validator(mode="after")
    def _sources_named_once(self) -> ProductionSettings:
        names = [source_name(s) for s in self.sources]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"production.sources: the same source twice: {', '.join(repeated)}")
        return self

    def gates(self) -> list[Gate]:
        """The thresholds, and the limit on the users' thumbs-down rate (``feedback``) as one
        more, so the day's check, `production run` and the trend hold it as they hold any."""
        gates = super().gates()
        if self.feedback is not None and self.feedback.max_negative_rate is not None:
            gates.append(Gate(THUMBS_DOWN_RATE, self.feedback.max_negative_rate, USERS))
        return gates

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
