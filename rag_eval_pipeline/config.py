"""One configuration file, ``rag_eval.yaml``, read by the CLI, the Dagster definitions and
``dagster dev`` alike. Validated with pydantic; secrets stay in the environment.

Where it is found: ``--config PATH``, else ``$RAG_EVAL_CONFIG``, else ``./rag_eval.yaml`` if it
exists, else the built-in defaults (the bundled HotpotQA sample, offline models, reference judge).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator

from rag_eval_pipeline.answering.entries import ENTRY_TAGS, AnswerModelSettings
from rag_eval_pipeline.answering.spec import DEFAULT_MODELS
from rag_eval_pipeline.common.secrets import Redactor
from rag_eval_pipeline.common.settings import Strict
from rag_eval_pipeline.common.text import FileEncodingError, read_text
from rag_eval_pipeline.data.settings import DatasetSettings
from rag_eval_pipeline.generation.settings import GenerationSettings
from rag_eval_pipeline.judges.settings import (
    JUDGE_REPEATS_FIELD,
    JUDGE_TEMPERATURE_FIELD,
    JURY_FIELD,
    JudgeRepeats,
    JuryMode,
    PythonMetricSettings,
    RubricMetricSettings,
    checked_repeats,
)
from rag_eval_pipeline.language.table import language
from rag_eval_pipeline.llm.providers import ANTHROPIC_KEY_ENV
from rag_eval_pipeline.llm.settings import (
    AnthropicSettings,
    CacheSettings,
    LLMSettings,
    LocalLLMSettings,
    OpenAISettings,
)
from rag_eval_pipeline.metrics.gated import Budgeted, Gated
from rag_eval_pipeline.metrics.reference import DEFAULT_ABSTENTION_PATTERNS, AbstentionPolicy
from rag_eval_pipeline.metrics.settings import (
    StatisticsSettings,
    ThresholdSettings,
)
from rag_eval_pipeline.production.settings import SOURCE_TAGS, ProductionSettings
from rag_eval_pipeline.reporting.settings import MonitoringSettings, UISettings
from rag_eval_pipeline.retrieval.base import Backend
from rag_eval_pipeline.retrieval.settings import (
    KnowledgeBaseSettings,
)
from rag_eval_pipeline.review.settings import ReviewSettings
from rag_eval_pipeline.security.settings import SecuritySettings
from rag_eval_pipeline.storage.settings import StorageSettings, WorkerSettings
from rag_eval_pipeline.tracing.settings import TracingSettings
from rag_eval_pipeline.trajectories.settings import TrajectorySettings
from rag_eval_pipeline.trajectories.simulation.settings import SimulationSettings

if TYPE_CHECKING:  # built when asked for: reading a configuration imports no answer model
    from rag_eval_pipeline.answering.registry import AnswerRegistry

CONFIG_ENV = "RAG_EVAL_CONFIG"
# secrets read from fixed variables: Langfuse's keys, Elasticsearch's credentials
ALWAYS_SECRET = (
    "LANGFUSE_PUBLIC_KEY",
    "LANGFUSE_SECRET_KEY",
    "ELASTICSEARCH_API_KEY",
    "ELASTICSEARCH_PASSWORD",
)
DEFAULT_CONFIG_FILE = "rag_eval.yaml"


class ProfileSettings(Strict):
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


class Settings(Gated, Budgeted):
    dataset: DatasetSettings = DatasetSettings()
    knowledge_base: KnowledgeBaseSettings = KnowledgeBaseSettings()
    answer_models: list[AnswerModelSettings] = Field(default_factory=list)
    judges: list[str] = Field(default_factory=lambda: ["reference"])
    judge_repeats: JudgeRepeats = JUDGE_REPEATS_FIELD
    jury: JuryMode | None = JURY_FIELD
    judge_temperature: float | None = JUDGE_TEMPERATURE_FIELD
    judge_prompts: dict[str, str] = Field(
        default_factory=dict,
        description="pin a STRICT judge's prompt version: base (its own) or one `rag-eval judges align` "
        "adopted; unpinned, a judge uses the newest adopted",
    )
    thresholds: dict[str, float | ThresholdSettings] = Field(
        default_factory=dict,
        description="[tag:|type:|level:GROUP/][JUDGE/]METRIC: a score, or {min: score, bound: lower}",
    )
    budgets: dict[str, float] = Field(
        default_factory=dict,
        description="[tag:|type:|level:|language:GROUP/]FIGURE: the most a case may take or cost "
        "(latency_p50_s, latency_p95_s, latency_max_s in seconds; cost_per_case_usd, cost_max_usd)",
    )
    max_judge_error_share: float = Field(default=0.1, ge=0, le=1)
    max_error_rate: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description="`rag-eval gate` fails when more than this share of the answer calls failed "
        "(a failure is not a decline: its case has no scores)",
    )
    concurrency: int = Field(default=8, ge=1)
    max_answer_chars: int = Field(
        default=20_000,
        ge=100,
        description="answers longer than this are stored cut (the cut recorded): a model or agent "
        "that answers with megabytes must not fill reports, prompts and memory",
    )
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
    abstention_patterns: list[str] = Field(
        default_factory=lambda: list(DEFAULT_ABSTENTION_PATTERNS),
        description="regular expressions over the normalised answer (lower case, no punctuation "
        "or articles), matched at its start: the answers that decline to answer",
    )
    abstention_patterns_by_language: dict[str, list[str]] = Field(
        default_factory=dict,
        description="a language's own abstention patterns (over its answer in lower case without "
        "punctuation), replacing its defaults: {zh: ['不知道', ...]}",
    )
    anthropic: AnthropicSettings = AnthropicSettings()
    openai: OpenAISettings = OpenAISettings()
    local: LocalLLMSettings = LocalLLMSettings()
    cache: CacheSettings = CacheSettings()
    tracing: TracingSettings = TracingSettings()
    monitoring: MonitoringSettings = MonitoringSettings()
    ui: UISettings = UISettings()
    review: ReviewSettings = ReviewSettings()
    storage: StorageSettings = StorageSettings()
    production: ProductionSettings | None = Field(
        default=None, description="score a daily sample of real traffic (README: Production sampling)"
    )
    generation: GenerationSettings | None = Field(
        default=None, description="a judgement list written from the documents (README: No questions yet?)"
    )
    workers: WorkerSettings | None = Field(
        default=None,
        description="runs on Celery workers over Redis (docs/deployment.md); null: on this machine",
    )
    security: SecuritySettings = Field(default_factory=lambda: SecuritySettings())
    trajectories: TrajectorySettings | None = Field(
        default=None, description="an agent's tool calls and sessions, from its traces (docs/trajectories.md)"
    )
    simulation: SimulationSettings | None = Field(
        default=None,
        description="simulated users talking to the agent, scored with pass^k (docs/trajectories.md)",
    )

    @field_validator("abstention_patterns")
    @classmethod
    def _patterns_compile(cls, patterns: list[str]) -> list[str]:
        return _compiling(patterns)

    def secret_variables(self) -> list[str]:
        """Every environment variable this configuration reads a secret from: the API keys, the
        agents' secret headers, the collectors' tokens, the instance's database URL."""
        names = [ANTHROPIC_KEY_ENV, self.openai.api_key_env, *ALWAYS_SECRET]
        names += [self.tracing.phoenix.api_key_env, self.storage.postgres_url_env]
        if self.workers is not None:  # a broker URL may carry a password
            names.append(self.workers.broker_env)
        names += list(self.tracing.headers_env.values())
        for entry in self.answer_models:
            names += list(getattr(entry, "headers_env", {}).values())
            names += [getattr(entry, "api_key_env", None) or ""]
        if self.production is not None:
            names += [getattr(source, "api_key_env", "") for source in self.production.sources]
            if self.production.feedback is not None:
                names += [getattr(s, "api_key_env", "") for s in self.production.feedback.sources]
        if self.trajectories is not None and self.trajectories.phoenix is not None:
            names.append(self.trajectories.phoenix.api_key_env)
        return sorted({name for name in names if name})

    def redactor(self, environ: Mapping[str, str] = os.environ) -> Redactor:
        """What masks this configuration's secrets in everything stored, logged or printed."""
        return Redactor.of_variables(self.secret_variables(), environ)

    @field_validator("abstention_patterns_by_language")
    @classmethod
    def _languages_known(cls, by_language: dict[str, list[str]]) -> dict[str, list[str]]:
        checked = {}
        for code, patterns in by_language.items():
            checked[language(code).code] = _compiling(patterns)
        return checked

    def abstention(self) -> AbstentionPolicy:
        return AbstentionPolicy(
            tuple(self.abstention_patterns),
            {code: tuple(patterns) for code, patterns in self.abstention_patterns_by_language.items()},
        )

    @field_validator("judge_repeats")
    @classmethod
    def _repeats(cls, repeats: JudgeRepeats) -> JudgeRepeats:
        return checked_repeats(repeats)

    @field_validator("custom_metrics")
    @classmethod
    def _own_names(
        cls, metrics: list[RubricMetricSettings | PythonMetricSettings]
    ) -> list[RubricMetricSettings | PythonMetricSettings]:
        """A custom metric named like a built-in judge would silently be that judge."""
        from rag_eval_pipeline.judges.registry import builtin_judge_kind  # the judges, when there are some

        for metric in metrics:
            kind = builtin_judge_kind(metric.name)
            if kind is not None:
                raise ValueError(
                    f"custom metric '{metric.name}' is the name of a built-in {kind} judge: rename it"
                )
        names = [m.name for m in metrics]
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if duplicated:
            raise ValueError(f"custom metric names must be unique: {', '.join(duplicated)}")
        return metrics

    @field_validator("profiles", mode="before")
    @classmethod
    def _builtin_profiles(cls, profiles: Any) -> Any:
        """The built-in profiles, each replaced by a profile of the same name in the file."""
        if not isinstance(profiles, dict):
            return profiles
        return {**BUILTIN_PROFILES, **profiles}

    def answer_model(self, name: str) -> AnswerModelSettings | None:
        return next((m for m in self.answer_models if m.name == name), None)

    def answer_registry(self) -> AnswerRegistry:
        """Every answer model and agent by name; LLM answer models over the team's own documents
        get a neutral default prompt (the HotpotQA one speaks of Wikipedia)."""
        from rag_eval_pipeline.answering.chat import NEUTRAL_SYSTEM_PROMPT
        from rag_eval_pipeline.answering.registry import AnswerRegistry
        from rag_eval_pipeline.retrieval.base import RetrievalMode

        neutral = NEUTRAL_SYSTEM_PROMPT if self.dataset.kind == "custom" else None
        rerank = self.knowledge_base.rerank.spec()
        return AnswerRegistry(self.answer_models, neutral, {RetrievalMode.RERANK: rerank.identity})

    def configured_models(self) -> list[str]:
        """The answer models a run evaluates when none are named: the file's, else the defaults
        (none of the file's entries may be evaluated: then none). An agent entry's ``evaluate``
        decides; unset, the agent the simulation talks to is not a model to evaluate on the
        judgement list (a support desk answers customers, not HotpotQA's questions)."""
        if not self.answer_models:
            return list(DEFAULT_MODELS)
        simulated = self.simulation.agent if self.simulation is not None else None
        return [m.name for m in self.answer_models if self.evaluates(m.name, simulated)]

    def evaluates(self, name: str, simulated: str | None = None) -> bool:
        """Whether the file's entry ``name`` is an answer model to evaluate (see configured_models)."""
        entry = self.answer_model(name)
        chosen = getattr(entry, "evaluate", None)
        return chosen if chosen is not None else name != simulated

    def llm(self) -> LLMSettings:
        """The sections the LLM provider table reads."""
        return LLMSettings(
            anthropic=self.anthropic,
            openai=self.openai,
            local=self.local,
            cache=self.cache,
            concurrency=self.concurrency,
        )

    def with_overrides(
        self,
        embedding_model: str | None = None,
        elasticsearch_url: str | None = None,
        concurrency: int | None = None,
        refresh: bool = False,
    ) -> Settings:
        """These settings with one command's flags applied (``rag-eval run --embedding-model``,
        ``--elasticsearch``, ``--concurrency``, ``--refresh``): the flags reach every resource
        by the same route as the file."""
        knowledge_base = self.knowledge_base
        if embedding_model:
            knowledge_base = knowledge_base.model_copy(update={"embedding_model": embedding_model})
        if elasticsearch_url:
            es = knowledge_base.elasticsearch.model_copy(update={"url": elasticsearch_url})
            knowledge_base = knowledge_base.model_copy(
                update={"backend": Backend.ELASTICSEARCH, "elasticsearch": es}
            )
        updates: dict[str, Any] = {"knowledge_base": knowledge_base}
        if concurrency:
            updates["concurrency"] = concurrency
        if refresh:
            updates["cache"] = self.cache.model_copy(update={"refresh": True})
        return Settings.model_validate(self.model_copy(update=updates).model_dump())

    def with_judgement_list(
        self, path: str, sample_size: int | None = None, documents: str | None = None
    ) -> Settings:
        """These settings evaluating a judgement list of this project's format (``rag-eval run
        --dataset FILE``, e.g. a promoted or generated one) over the configured documents (or
        ``documents``) and the passages its cases carry: every case unless ``sample_size`` says
        otherwise (a pinned regression set is run whole)."""
        dataset = self.dataset.model_copy(
            update={
                "kind": "custom",
                "questions": str(Path(path).resolve()),
                "sample_size": sample_size or 0,
                **({"documents": str(Path(documents).resolve())} if documents else {}),
            }
        )
        return self.model_copy(update={"dataset": dataset})

    def with_documents(self, documents: str, questions: str) -> Settings:
        """These settings over a folder of documents whose questions are still to be written
        (`rag-eval generate` writes ``questions``): the knowledge base is the folder's documents,
        the generation section this file's or the defaults."""
        over_documents = self.with_judgement_list(questions, documents=documents)
        return over_documents.model_copy(update={"generation": self.generation or GenerationSettings()})

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


def _compiling(patterns: list[str]) -> list[str]:
    """The abstention patterns, each checked to be a regular expression."""
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as err:
            raise ValueError(f"abstention pattern {pattern!r} is not a regular expression: {err}") from None
    return patterns


class ConfigError(ValueError):
    """The configuration file is missing or invalid; the message names the file and the field."""


def config_path(explicit: str | None = None) -> Path | None:
    if explicit:
        return Path(explicit)
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV])
    default = Path(DEFAULT_CONFIG_FILE)
    return default if default.is_file() else None


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The settings models an annotation can hold (through Optional, lists, dicts and unions)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models_in(arg)]


def _nearest_key(loc: tuple[Any, ...]) -> str | None:
    """For a key the settings do not have, the closest key they have at the same place (a typo:
    ``source`` for ``sources``), or None."""
    models: list[type[BaseModel]] = [Settings]
    for part in loc[:-1]:
        fields = [m.model_fields[part] for m in models if isinstance(part, str) and part in m.model_fields]
        if fields:  # an index, a union's tag or a dict's key leaves the models as they are
            models = [m for f in fields for m in _models_in(f.annotation)]
    known = sorted({name for m in models for name in m.model_fields})
    close = difflib.get_close_matches(str(loc[-1]), known, n=1, cutoff=0.6)
    return close[0] if close else None


def validation_problems(err: ValidationError) -> str:
    """Each problem as ``field.path: what is wrong``, without pydantic's "Value error, " prefix
    (our validators' messages are written for the user already); a mistyped key names the key
    meant, and a key it leaves missing is not said twice."""
    errors = err.errors()
    problems = []
    meant = set()
    for e in errors:
        if e["type"] == "extra_forbidden" and (nearest := _nearest_key(tuple(e["loc"]))):
            meant.add((*e["loc"][:-1], nearest))
    for e in errors:
        if e["type"] == "missing" and tuple(e["loc"]) in meant:
            continue
        # the tag of a named answer model's entry type (model, http, ...) or of a production
        # source's kind is not a field
        loc = [
            p
            for i, p in enumerate(e["loc"])
            if not (i >= 2 and e["loc"][i - 2] == "answer_models" and p in ENTRY_TAGS)
            and not (i >= 2 and e["loc"][i - 2] == "sources" and p in SOURCE_TAGS)
        ]
        where = ".".join(str(p) for p in loc)
        message = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden" and (nearest := _nearest_key(tuple(e["loc"]))):
            message = f"unknown key (did you mean '{nearest}'?)"
        problems.append(f"{where}: {message}" if where else message)
    return "; ".join(problems)


def _yaml_problem(err: yaml.YAMLError) -> str:
    """A YAML error in one line: where (line and column) and what, without the echoed source."""
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return f"{where}{problem}"


def load_settings(path: str | Path | None = None) -> Settings:
    """The validated settings of the file at ``path`` (or found as described above)."""
    found = config_path(str(path) if path else None)
    if found is None:
        return Settings()
    if not found.is_file():
        raise ConfigError(f"configuration file not found: {found}")
    settings = _validated(found, _read_yaml(found))
    return _paths_from(settings, found.resolve().parent)  # relative paths are relative to the file


def _read_yaml(found: Path) -> dict:
    """The file's YAML as a mapping of sections, or its one-line error."""
    try:
        raw: Any = yaml.safe_load(read_text(found)) or {}  # UTF-8, a BOM accepted, in NFC
    except yaml.YAMLError as err:
        raise ConfigError(f"{found}: not valid YAML: {_yaml_problem(err)}") from None
    except RecursionError:
        raise ConfigError(f"{found}: nested too deeply to be a configuration file") from None
    except FileEncodingError as err:  # no dataset.encoding for the file that would say it
        raise ConfigError(str(FileEncodingError(found, err.found, settable=False, line=err.line))) from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{found}: expected settings (a mapping of sections), got a {type(raw).__name__}")
    return raw


def _validated(found: Path, raw: dict) -> Settings:
    try:
        return Settings.model_validate(raw)
    except ValidationError as err:
        raise ConfigError(f"{found}: {validation_problems(err)}") from None
    except RecursionError:
        raise ConfigError(f"{found}: nested too deeply to be a configuration file") from None


def _paths_from(settings: Settings, base: Path) -> Settings:
    """The settings with every relative path of the file made absolute from ``base``."""
    dataset = settings.dataset
    updates: dict[str, Any] = {}
    if dataset.source not in ("hub", "bundled") and not Path(dataset.source).is_absolute():
        updates["source"] = str(base / dataset.source)
    if dataset.questions and not Path(dataset.questions).is_absolute():
        updates["questions"] = str(base / dataset.questions)
    if not Path(dataset.documents).is_absolute():
        updates["documents"] = str(base / dataset.documents)
    review = settings.review
    if not Path(review.folder).is_absolute():
        review = review.model_copy(update={"folder": str(base / review.folder)})
    storage = settings.storage
    if storage.folder and not Path(storage.folder).is_absolute():
        storage = storage.model_copy(update={"folder": str(base / storage.folder)})
    trajectories = settings.trajectories
    if trajectories is not None:
        trajectories = trajectories.model_copy(
            update={
                "traces": [str(base / p) for p in trajectories.traces],  # an absolute path stays itself
                "reference": str(base / trajectories.reference) if trajectories.reference else None,
            }
        )
    simulation = settings.simulation
    if simulation is not None:
        simulation = simulation.model_copy(
            update={
                "scenarios": str(base / simulation.scenarios) if simulation.scenarios else None,
                "traces": [str(base / p) for p in simulation.traces],
            }
        )
    return settings.model_copy(
        update={
            "dataset": dataset.model_copy(update=updates),
            "review": review,
            "storage": storage,
            "production": _production_paths(settings.production, base),
            "trajectories": trajectories,
            "simulation": simulation,
        }
    )


def _production_paths(production: ProductionSettings | None, base: Path) -> ProductionSettings | None:
    """The production section with its sources' and feedback exports' relative paths made absolute."""
    if production is None:
        return None
    sources = [
        s.model_copy(update={"path": str(base / s.path)})
        if hasattr(s, "path") and not Path(s.path).is_absolute()
        else s
        for s in production.sources
    ]
    production = production.model_copy(update={"sources": sources})
    if production.feedback is not None:  # export files of feedback, as the sources' paths
        kept = [
            s.model_copy(update={"path": str(base / s.path)})
            if getattr(s, "path", None) and not Path(s.path).is_absolute()
            else s
            for s in production.feedback.sources
        ]
        production = production.model_copy(
            update={"feedback": production.feedback.model_copy(update={"sources": kept})}
        )
    return production


EXAMPLE_CONFIG_FILE = Path(__file__).resolve().parent / "rag_eval.example.yaml"


def example_config() -> str:
    """The commented configuration `rag-eval init` writes: every setting with its default."""
    return EXAMPLE_CONFIG_FILE.read_text()
