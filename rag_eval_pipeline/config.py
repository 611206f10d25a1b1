"""One configuration file, ``rag_eval.yaml``, read by the CLI, the Dagster definitions and
``dagster dev`` alike. Validated with pydantic; secrets stay in the environment.

Where it is found: ``--config PATH``, else ``$RAG_EVAL_CONFIG``, else ``./rag_eval.yaml`` if it
exists, else the built-in defaults (the bundled HotpotQA sample, offline models, reference judge).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rag_eval_pipeline.answering.spec import check_name
from rag_eval_pipeline.metrics.statistics import (
    MIN_CASES,
    MONTE_CARLO_DRAWS,
    SIGNIFICANCE,
    IntervalMethod,
)
from rag_eval_pipeline.retrieval.base import DEFAULT_RETRIEVAL_MODE, DEFAULT_TOP_K, RetrievalMode
from rag_eval_pipeline.retrieval.vector_index import VectorSearch

CONFIG_ENV = "RAG_EVAL_CONFIG"
DEFAULT_CONFIG_FILE = "rag_eval.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChunkingSettings(_Strict):
    size: int = Field(default=200, ge=0, description="words per chunk of a longer document; 0 = never")
    overlap: int = Field(default=40, ge=0)


class DatasetSettings(_Strict):
    kind: Literal["hotpotqa", "custom"] = "hotpotqa"
    source: str = Field(
        default="bundled",
        description="hotpotqa: 'bundled' (500 questions shipped in the package), 'hub', or a local file",
    )
    sample_size: int | None = Field(default=35, ge=0, description="questions to evaluate; 0 = all")
    selection: Literal["first", "random"] = "first"
    seed: int = 0
    questions: str | None = Field(default=None, description="custom: JSONL / CSV / parquet judgement list")
    documents: str = Field(default="data/documents", description="folder of the user's documents")
    chunking: ChunkingSettings = ChunkingSettings()
    max_file_mb: float = Field(default=5.0, gt=0, description="larger document files are skipped, named")

    @model_validator(mode="after")
    def _custom_needs_questions(self) -> DatasetSettings:
        if self.kind == "custom" and not self.questions:
            raise ValueError("dataset.kind custom needs dataset.questions (a judgement list file)")
        return self


class ElasticsearchSettings(_Strict):
    url: str | None = None
    cloud_id: str | None = None
    verify_certs: bool = True
    ca_certs: str | None = None
    index_names: dict[str, str] = Field(default_factory=dict)
    inference_id: str | None = None
    max_error_share: float = Field(default=0.0, ge=0, le=1)


class KnowledgeBaseSettings(_Strict):
    backend: Literal["embedded", "elasticsearch"] = "embedded"
    scope: Literal["sample", "all"] = Field(
        default="sample",
        description="sample: the paragraphs of the evaluated questions (as in the Elastic "
        "LLM-as-a-judge article); all: of every question of the file (harder, and the same "
        "knowledge base whatever the sample size)",
    )
    embedding_model: str | None = None
    vector_search: VectorSearch = Field(
        default=VectorSearch.EXACT,
        description="embedded vectors: exact, or hnsw (approximate, the [ann] extra) past a few "
        "hundred thousand passages",
    )
    elasticsearch: ElasticsearchSettings = ElasticsearchSettings()

    @model_validator(mode="after")
    def _vectors_to_search(self) -> KnowledgeBaseSettings:
        if self.vector_search is not VectorSearch.EXACT and not self.embedding_model:
            raise ValueError(f"vector_search: {self.vector_search} needs an embedding_model (e.g. minilm)")
        return self


class AnswerModelSettings(_Strict):
    """A named answer configuration: the partition key is its name."""

    name: str
    provider: str = Field(description="a registered answer provider: offline, anthropic, openai, local")
    model: str
    base_url: str | None = Field(
        default=None, description="openai: the server's API root, e.g. http://localhost:8000/v1"
    )
    api_key_env: str | None = Field(
        default=None,
        description="openai: the variable holding its key (default OPENAI_API_KEY; none for local servers)",
    )
    retrieval_mode: RetrievalMode = DEFAULT_RETRIEVAL_MODE
    top_k: int = Field(default=DEFAULT_TOP_K, ge=1)
    prompt: str | None = Field(default=None, description="replaces the answer system prompt")

    @field_validator("name")
    @classmethod
    def _safe_name(cls, name: str) -> str:
        return check_name(name)

    @field_validator("provider")
    @classmethod
    def _registered_provider(cls, provider: str) -> str:
        from rag_eval_pipeline.answering.registry import provider_names  # the registry imports this module

        if provider not in provider_names():
            raise ValueError(f"unknown provider '{provider}' (registered: {', '.join(provider_names())})")
        return provider

    @model_validator(mode="after")
    def _endpoint_only_for_openai(self) -> AnswerModelSettings:
        if (self.base_url or self.api_key_env) and self.provider != "openai":
            raise ValueError(f"answer model '{self.name}': base_url and api_key_env are for provider openai")
        return self


class RubricMetricSettings(_Strict):
    """An LLM-scored metric declared here (e.g. the RAGAS article's style consistency)."""

    name: str
    kind: Literal["rubric"] = "rubric"
    instructions: str
    allowed_scores: list[float] = Field(default=[0.0, 0.5, 1.0], min_length=2)
    model: str = "claude-sonnet-4-6"


class PythonMetricSettings(_Strict):
    """A pure Python metric ``(case) -> score | None`` named by ``module:function``."""

    name: str
    kind: Literal["python"] = "python"
    callable: str


class ProfileSettings(_Strict):
    """Overrides for one stage (dev, pr, nightly) of the Elastic LLM-as-a-judge article's staged
    strategy."""

    sample_size: int | None = None
    selection: Literal["first", "random"] | None = None
    judges: list[str] | None = None
    schedule: str | None = Field(default=None, description="cron: materialize on a schedule")


BUILTIN_PROFILES = {
    "dev": {"sample_size": 30},
    "pr": {"sample_size": 150},
    "nightly": {"sample_size": 50, "selection": "random", "schedule": "0 3 * * *"},
}


class StatisticsSettings(_Strict):
    """How means and comparisons are reported (see "Reading the numbers" in the README)."""

    interval_method: IntervalMethod = IntervalMethod.CLOPPER_PEARSON
    significance_level: float = Field(default=SIGNIFICANCE, gt=0, lt=1)
    min_cases: int = Field(default=MIN_CASES, ge=1, description="fewer scored cases: no conclusion")
    monte_carlo_draws: int = Field(default=MONTE_CARLO_DRAWS, ge=1000)


class OpenAISettings(_Strict):
    """Defaults of ``openai:<model>`` answer models and judges (a named answer model may point
    at another server)."""

    base_url: str | None = Field(default=None, description="None: OPENAI_BASE_URL, else api.openai.com")
    api_key_env: str = Field(default="OPENAI_API_KEY", description="the variable holding the key")
    structured_output: Literal["auto", "json_schema", "tools", "text"] = Field(
        default="auto",
        description="how judges get JSON: auto tries json_schema, then tools, then text",
    )
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=4, ge=0)


class LocalLLMSettings(_Strict):
    """The llama.cpp server a run starts for ``local:<model>`` (the ``[local]`` extra)."""

    n_ctx: int = Field(default=8192, ge=512, description="context tokens, shared by the slots")
    n_parallel: int = Field(default=2, ge=1, description="requests decoded side by side")
    threads: int | None = Field(default=None, ge=1, description="None: every core")


class PhoenixExperimentSettings(_Strict):
    """The judgement list as a Phoenix dataset, each answer model as an experiment over it
    (opt-in; needs the ``[phoenix]`` extra)."""

    experiments: bool = False
    url: str | None = Field(
        default=None,
        description="Phoenix's base URL; None: the tracing endpoint's host with preset phoenix, "
        "else http://127.0.0.1:6006",
    )
    api_key_env: str = Field(default="PHOENIX_API_KEY", description="variable holding the API key, if any")


class TracingSettings(_Strict):
    """One trace per case and answer model over OTLP/HTTP (off by default; no cost when off)."""

    enabled: bool = False
    preset: Literal["otlp", "phoenix", "langfuse"] = Field(
        default="otlp",
        description="otlp: endpoint or OTEL_EXPORTER_OTLP_ENDPOINT; phoenix: 127.0.0.1:6006; "
        "langfuse: LANGFUSE_HOST with Basic auth from LANGFUSE_PUBLIC_KEY / LANGFUSE_SECRET_KEY",
    )
    endpoint: str | None = Field(default=None, description="the OTLP/HTTP traces URL, e.g. .../v1/traces")
    headers_env: dict[str, str] = Field(
        default_factory=dict, description="header name -> the environment variable holding its value"
    )
    service_name: str = "rag-eval-pipeline"
    project: str = Field(default="rag-eval", description="Phoenix project (openinference.project.name)")
    sample: float = Field(default=1.0, gt=0, le=1, description="share of cases traced")
    flush_timeout_s: float = Field(default=5.0, gt=0, description="at most this long waiting for a collector")
    phoenix: PhoenixExperimentSettings = PhoenixExperimentSettings()

    def phoenix_url(self) -> str:
        """Where datasets and experiments go: said outright, else where the traces go when
        that is Phoenix, else Phoenix's local default."""
        if self.phoenix.url:
            return self.phoenix.url.rstrip("/")
        if self.preset == "phoenix" and self.endpoint:
            return self.endpoint.removesuffix("/v1/traces").rstrip("/")
        return "http://127.0.0.1:6006"


class Settings(_Strict):
    dataset: DatasetSettings = DatasetSettings()
    knowledge_base: KnowledgeBaseSettings = KnowledgeBaseSettings()
    answer_models: list[AnswerModelSettings] = Field(default_factory=list)
    judges: list[str] = Field(default_factory=lambda: ["reference"])
    thresholds: dict[str, float] = Field(default_factory=dict)
    max_judge_error_share: float = Field(default=0.1, ge=0, le=1)
    concurrency: int = Field(default=8, ge=1)
    executor: Literal["in_process", "multiprocess"] = Field(
        default="in_process",
        description="how a run executes its steps: in one process (a partition run costs its compute "
        "plus a few seconds), or a process per step (Dagster's default; isolates steps)",
    )
    prices: dict[str, list[float]] = Field(default_factory=dict)
    custom_metrics: list[RubricMetricSettings | PythonMetricSettings] = Field(default_factory=list)
    profiles: dict[str, ProfileSettings] = Field(
        default_factory=dict,
        validate_default=True,
        description="dev, pr and nightly are built in; a profile here overrides one",
    )
    statistics: StatisticsSettings = StatisticsSettings()
    openai: OpenAISettings = OpenAISettings()
    local: LocalLLMSettings = LocalLLMSettings()
    tracing: TracingSettings = TracingSettings()

    @field_validator("thresholds")
    @classmethod
    def _scores_are_shares(cls, thresholds: dict[str, float]) -> dict[str, float]:
        wrong = {k: v for k, v in thresholds.items() if not 0 <= v <= 1}
        if wrong:
            raise ValueError(f"thresholds are scores between 0 and 1, got {wrong}")
        return thresholds

    @field_validator("profiles", mode="before")
    @classmethod
    def _builtin_profiles(cls, profiles: Any) -> Any:
        """The built-in profiles, each replaced by a profile of the same name in the file."""
        if not isinstance(profiles, dict):
            return profiles
        return {**BUILTIN_PROFILES, **profiles}

    def answer_model(self, name: str) -> AnswerModelSettings | None:
        return next((m for m in self.answer_models if m.name == name), None)

    def with_profile(self, profile: str | None) -> Settings:
        """These settings with one profile's overrides applied."""
        if not profile:
            return self
        if profile not in self.profiles:
            raise ConfigError(
                f"unknown profile '{profile}'; defined: {', '.join(sorted(self.profiles)) or 'none'}"
            )
        chosen = self.profiles[profile]
        dataset = self.dataset.model_copy(
            update={
                k: v
                for k, v in {"sample_size": chosen.sample_size, "selection": chosen.selection}.items()
                if v is not None
            }
        )
        return self.model_copy(update={"dataset": dataset, "judges": chosen.judges or self.judges})


class ConfigError(ValueError):
    """The configuration file is missing or invalid; the message names the file and the field."""


def config_path(explicit: str | None = None) -> Path | None:
    if explicit:
        return Path(explicit)
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV])
    default = Path(DEFAULT_CONFIG_FILE)
    return default if default.is_file() else None


def validation_problems(err: ValidationError) -> str:
    """Each problem as ``field.path: what is wrong``, without pydantic's "Value error, " prefix
    (our validators' messages are written for the user already)."""
    problems = []
    for e in err.errors():
        where = ".".join(str(p) for p in e["loc"])
        message = e["msg"].removeprefix("Value error, ")
        problems.append(f"{where}: {message}" if where else message)
    return "; ".join(problems)


def load_settings(path: str | Path | None = None) -> Settings:
    """The validated settings of the file at ``path`` (or found as described above)."""
    found = config_path(str(path) if path else None)
    if found is None:
        return Settings()
    if not found.is_file():
        raise ConfigError(f"configuration file not found: {found}")
    try:
        raw: Any = yaml.safe_load(found.read_text()) or {}
    except yaml.YAMLError as err:
        raise ConfigError(f"{found}: not valid YAML: {err}") from err
    try:
        settings = Settings.model_validate(raw)
    except ValidationError as err:
        raise ConfigError(f"{found}: {validation_problems(err)}") from err
    base = found.resolve().parent  # relative paths in the file are relative to the file
    dataset = settings.dataset
    updates: dict[str, Any] = {}
    if dataset.source not in ("hub", "bundled") and not Path(dataset.source).is_absolute():
        updates["source"] = str(base / dataset.source)
    if dataset.questions and not Path(dataset.questions).is_absolute():
        updates["questions"] = str(base / dataset.questions)
    if not Path(dataset.documents).is_absolute():
        updates["documents"] = str(base / dataset.documents)
    return settings.model_copy(update={"dataset": dataset.model_copy(update=updates)})


EXAMPLE_CONFIG = """\
# rag_eval.yaml: one file for the CLI, the Dagster definitions and `dagster dev`.
# Secrets stay in the environment: ANTHROPIC_API_KEY, OPENAI_API_KEY, ELASTICSEARCH_API_KEY (or
# _USERNAME and _PASSWORD). Relative paths are relative to this file.

dataset:
  kind: hotpotqa            # hotpotqa, or custom (your questions and documents)
  source: bundled           # hotpotqa: 'bundled' (500 questions shipped in the package, no
                            # network), 'hub' (the full split), or a local file
  sample_size: 35
  selection: first          # first N, or random N (with seed)
  seed: 0
  # custom datasets:
  # questions: data/questions.jsonl   # question, answer, optional id, relevant_ids or relevant_titles, tags
  documents: data/documents # .md / .txt files and JSONL / parquet of {title, passage}
  chunking: {size: 200, overlap: 40}  # words; longer documents are split (0 = keep them whole)
  max_file_mb: 5            # larger document files are skipped and named

knowledge_base:
  backend: embedded         # or elasticsearch (then set ELASTICSEARCH_URL or elasticsearch.url)
  scope: sample             # sample: passages of the evaluated questions; all: of the whole file
  embedding_model: null     # minilm (ONNX, the [semantic] extra) for the semantic and hybrid modes
  vector_search: exact      # or hnsw: an approximate graph (the [ann] extra), for 100k+ passages
  elasticsearch:
    url: null
    index_names:
      knowledge_base: hotpot-knowledge-base
      judgement_list: hotpot-judgement-list
      eval_results: eval-results
    inference_id: null      # an inference endpoint for semantic_text (Elastic Cloud)

# Named answer configurations; each name becomes an answer-model partition.
answer_models:
  - {name: extractive-baseline, provider: offline, model: extractive-baseline}
  - {name: oracle, provider: offline, model: oracle}
  - {name: "null", provider: offline, model: "null"}
  # - {name: haiku-hybrid, provider: anthropic, model: claude-haiku-4-5, retrieval_mode: hybrid, top_k: 4}
  # - {name: gpt-4o-mini, provider: openai, model: gpt-4o-mini}
  # - {name: my-vllm, provider: openai, model: Qwen/Qwen2.5-7B-Instruct, base_url: "http://localhost:8000/v1"}
  # - {name: smollm2, provider: local, model: smollm2}   # pip install 'rag-eval-pipeline[local]'

judges: [reference]         # add claude-sonnet-4-6 (STRICT rubric), ragas:claude-sonnet-4-6,
                            # openai:gpt-4o, strict:local:smollm2 ...
thresholds: {}              # e.g. {faithfulness: 0.7}: blocking checks, and `rag-eval gate` defaults
max_judge_error_share: 0.1
concurrency: 8
executor: in_process        # a run's steps in one process; multiprocess: a process per step
prices: {}                  # model: [input, output, cache write, cache read] USD per million tokens

openai:                     # openai:<model> answer models and judges
  base_url: null            # null: OPENAI_BASE_URL, else api.openai.com; any compatible server
  api_key_env: OPENAI_API_KEY   # not needed by local servers
  structured_output: auto   # judges' JSON: json_schema, else tools, else text (auto tries in order)

local:                      # local:<model>: a llama.cpp server the run starts on 127.0.0.1
  n_ctx: 8192
  n_parallel: 2             # requests decoded side by side
  threads: null             # null: every core

tracing:                    # one trace per case to Phoenix, Langfuse or any OTLP collector
  enabled: false            # pip install 'rag-eval-pipeline[tracing]'
  preset: otlp              # otlp (endpoint or OTEL_EXPORTER_OTLP_ENDPOINT), phoenix, langfuse
  endpoint: null
  headers_env: {}           # e.g. {x-api-key: MY_COLLECTOR_KEY}
  project: rag-eval
  sample: 1.0
  flush_timeout_s: 5
  phoenix:                  # pip install 'rag-eval-pipeline[phoenix]'
    experiments: false      # the judgement list as a dataset, each answer model an experiment
    url: null               # null: the endpoint's host with preset phoenix, else 127.0.0.1:6006
    api_key_env: PHOENIX_API_KEY

statistics:
  interval_method: clopper_pearson   # or wilson, percentile, bca (README: "Reading the numbers")
  significance_level: 0.05  # paired verdicts: exact sign-flip test below this, interval excludes 0
  min_cases: 10             # fewer scored cases: "too few cases to conclude", and gates fail

custom_metrics: []
  # - name: style_consistency
  #   kind: rubric
  #   instructions: Is the answer one short, plain sentence in the tone of the ground truth?
  #   allowed_scores: [0, 0.5, 1]
  #   model: claude-sonnet-4-6
  # - name: answer_length_ok
  #   kind: python
  #   callable: my_package.metrics:answer_length_ok   # (case) -> float | None

# The Elastic LLM-as-a-judge article's staged strategy: `rag-eval run --profile dev`. These three
# are built in (same values); a profile here replaces the built-in one of its name.
profiles:
  dev: {sample_size: 30}
  pr: {sample_size: 150}
  nightly: {sample_size: 50, selection: random, schedule: "0 3 * * *"}
"""
