"""Run the whole graph through a persistent Dagster instance: what `rag-eval run` does.

Every materialization is a real run in the instance, so runs, partitions and lineage show in the
UI afterwards (`dagster dev` with the same DAGSTER_HOME).
"""

import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
import pandas as pd

from rag_eval_pipeline.answering.registry import AnswerRegistry
from rag_eval_pipeline.defs.partitions import ANSWER_MODEL_PARTITIONS
from rag_eval_pipeline.defs.resources import SettingsResource
from rag_eval_pipeline.defs.run_config import evaluation_run_config, knowledge_base_run_config

DEFAULT_DAGSTER_HOME = ".dagster_home"
DEFAULT_MODELS = ("extractive-baseline", "oracle", "null")


def resolve_dagster_home(explicit: str | None = None) -> Path:
    """DAGSTER_HOME from the argument, then the environment, then ./.dagster_home (created)."""
    home = Path(explicit or os.environ.get("DAGSTER_HOME") or DEFAULT_DAGSTER_HOME).resolve()
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():  # defaults: SQLite run, event and schedule storage inside the home
        config.write_text(
            "# Dagster instance settings (https://docs.dagster.io/deployment/oss/dagster-yaml).\n"
            "# Defaults: SQLite run, event and schedule storage inside this folder.\n"
            "# Telemetry is off because evaluations often run offline; set true to help Dagster.\n"
            "telemetry:\n  enabled: false\n"
        )
    return home


def open_instance(dagster_home: str | None = None) -> dg.DagsterInstance:
    home = resolve_dagster_home(dagster_home)
    os.environ["DAGSTER_HOME"] = str(home)  # so runs launched from here and the UI share it
    return dg.DagsterInstance.get()


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


def _console_logs(verbose: bool) -> dict:
    """INFO shows the assets' own lines (per-case progress counts, skipped files, warnings)
    and hides Dagster's step events, which --verbose adds back (DEBUG)."""
    return {"loggers": {"console": {"config": {"log_level": "DEBUG" if verbose else "INFO"}}}}


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
    finally:
        logging.disable(logging.NOTSET)


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
) -> RunReport:
    """Register the models, rebuild the knowledge base, evaluate each model, compare them all."""
    settings: SettingsResource = defs.resources["settings"]  # type: ignore[assignment]
    for judge in judges or ():
        settings.judge_registry().resolve(judge)  # an unknown judge fails before any work
    started = time.perf_counter()
    new = add_models(instance, models, settings.answer_registry())
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
        knowledge_base_run_config(str(Path(dataset).resolve()) if dataset else None, sample, selection, seed),
    )
    judge_config = evaluation_run_config(judges)
    for number, model in enumerate(models, start=1):
        stage(
            f"[model {number}/{len(models)}] {model}: answer, judge, summarize",
            "evaluation_job",
            judge_config,
            partition=model,
        )
    stage("[comparison] all answer models", "comparison_job", {})
    comparison = load_asset(defs, instance, "model_comparison")
    return RunReport(comparison, time.perf_counter() - started, steps)


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
