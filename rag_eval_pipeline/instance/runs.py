"""Run the whole graph through a persistent Dagster instance: what `rag-eval run` does.

Every materialization is a real run in the instance, so runs, partitions and lineage show in the
UI afterwards (`dagster dev` with the same DAGSTER_HOME). Each evaluation is pinned to the
knowledge base its own rebuild published, whatever another run made live meanwhile.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
import pandas as pd
from upath import UPath

from rag_eval_pipeline.common.heap import return_freed_heap
from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.data.case_shards import CaseShard
from rag_eval_pipeline.data.hotpotqa import BUNDLED, HUB
from rag_eval_pipeline.data.knowledge_base import REFERENCE_PENDING
from rag_eval_pipeline.defs.assets.shards import register_shards, shard_partition_key
from rag_eval_pipeline.defs.loggers import PROGRESS_LOGGER
from rag_eval_pipeline.defs.names import (
    ARTIFACTS,
    CANDIDATE_ANSWERS,
    CASE_SHARD_SCORES,
    CLI_HOST_TAG,
    CLI_PID_TAG,
    COMPARED_BY_TAG,
    COMPARISON_JOB,
    EVALUATION_JOB,
    JUDGE_SCORES,
    JUDGEMENT_LIST,
    KB_INDEX,
    KNOWLEDGE_BASE_JOB,
    KNOWLEDGE_BASE_RUN_TAG,
    METRIC_SUMMARY,
    MODEL_COMPARISON,
    PAIRED_COMPARISON,
    PARTITION_TAG,
)
from rag_eval_pipeline.defs.partitions import (
    BLOCKED_BY_CHECKS,
    add_models,
    recorded_failure,
    run_failure_reason,
)
from rag_eval_pipeline.defs.resources import SettingsResource
from rag_eval_pipeline.defs.run_config import (
    evaluation_run_config,
    knowledge_base_run_config,
    shard_run_config,
)
from rag_eval_pipeline.health.assess import forget_readings
from rag_eval_pipeline.instance import backfill
from rag_eval_pipeline.instance.errors import one_line, root_cause
from rag_eval_pipeline.instance.lineage import load_asset, load_materialization, load_snapshot_asset
from rag_eval_pipeline.instance.preflight import PreflightError, preflight_problems
from rag_eval_pipeline.instance.sqlite_storage import connections_kept
from rag_eval_pipeline.judges.registry import judging_line
from rag_eval_pipeline.language.detect import release_models
from rag_eval_pipeline.llm.targets import LLMEndpoint
from rag_eval_pipeline.metrics.blind_retrieval import said_once
from rag_eval_pipeline.metrics.comparison import paired_comparisons
from rag_eval_pipeline.metrics.freshness import judgement_list_version
from rag_eval_pipeline.metrics.summary import (
    absence_reasons,
    compare_models,
    failure_reasons,
    language_breakdown,
)
from rag_eval_pipeline.storage.snapshots import SnapshotStore, UnreadableLivePointerError


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
    knowledge_base_run: str | None = None  # the rebuild this run's evaluations are pinned to
    notes: list[str] = field(default_factory=list)  # what the user should know about the run
    # what this command's own evaluation runs stored, whatever other runs stored since
    own_comparison: pd.DataFrame = field(default_factory=pd.DataFrame)
    own_paired: pd.DataFrame = field(default_factory=pd.DataFrame)
    # per model: (failed answer calls, cases, the reasons with their counts, most common first)
    failures: dict[str, tuple[int, int, list[tuple[str, int]]]] = field(default_factory=dict)
    # this command's models' means per language, where the cases are in several
    own_by_language: pd.DataFrame = field(default_factory=pd.DataFrame)
    # each model's retrieval warnings, each once naming the models it concerns
    warnings: list[str] = field(default_factory=list)


def dataset_source(dataset: str | None) -> str | None:
    """A --dataset value as the asset's source: the named sources as they are, a path absolute
    (runs may start elsewhere)."""
    if dataset is None or dataset in (BUNDLED, HUB):
        return dataset
    return str(Path(dataset).resolve())


def console_logs(verbose: bool) -> dict:
    """A progress line per stage (and warnings) by default; --verbose shows Dagster's own
    console log with every step event and stack trace instead."""
    if verbose:
        return {"loggers": {"console": {"config": {"log_level": "DEBUG"}}}}
    return {"loggers": {PROGRESS_LOGGER: {}}}


def cli_tags() -> dict[str, str]:
    """The tags of a run this process executes: the next command can tell when it was killed."""
    return {CLI_PID_TAG: str(os.getpid()), CLI_HOST_TAG: socket.gethostname()}


def compared_afterwards() -> dict[str, str]:
    """The tag of the runs of a command that compares every model itself once they end: the
    refresh sensor leaves that comparison to it instead of making one between its runs."""
    return {COMPARED_BY_TAG: f"{os.getpid()}@{socket.gethostname()}"}


def run_in_process(
    job: dg.JobDefinition, instance: dg.DagsterInstance, **options
) -> dg.ExecuteInProcessResult:
    """Every run a command executes itself: its hundreds of events over one connection per
    database (``instance.sqlite_storage``), closed when it ends."""
    with connections_kept(instance):
        return job.execute_in_process(instance=instance, **options)


def run_partition(
    job: dg.JobDefinition,
    instance: dg.DagsterInstance,
    partition_key: str,
    verbose: bool,
    tags: dict[str, str] | None = None,
) -> dg.ExecuteInProcessResult:
    """One partition's run of a job this command executes, tagged as its own; a failed step or a
    blocking check is left in the result for the command to report, never raised."""
    return run_in_process(
        job,
        instance,
        partition_key=partition_key,
        run_config=console_logs(verbose),
        raise_on_error=False,
        tags={**cli_tags(), **(tags or {})},
    )


def execute(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    job_name: str,
    run_config: dict,
    partition_key: str | None,
    verbose: bool,
    tags: dict[str, str] | None = None,
    assets: Sequence[str] | None = None,
) -> tuple[str, list[StepTiming]]:
    """One run of a job (or of ``assets`` of it) in this process, tagged as this command's."""
    result = run_in_process(
        defs.resolve_job_def(job_name),
        instance,
        run_config={**run_config, **console_logs(verbose)},
        partition_key=partition_key,
        raise_on_error=True,
        tags={**cli_tags(), **(tags or {})},
        asset_selection=[dg.AssetKey(a) for a in assets] if assets else None,
    )
    return result.run_id, [
        StepTiming(job_name, partition_key, s.step_key, (s.end_time or 0) - (s.start_time or 0))
        for s in instance.get_run_step_stats(result.run_id)
    ]


def live_knowledge_base_run(instance: dg.DagsterInstance) -> str | None:
    """The run whose index is live now (None when none is, or the pointer is unreadable)."""
    try:
        return SnapshotStore(UPath(instance.storage_directory()) / ARTIFACTS).live().get(KB_INDEX)
    except UnreadableLivePointerError:
        return None


def run_evaluation(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    models: Sequence[str],
    dataset: str | None = None,
    sample: int | None = 35,
    selection: str | None = None,
    seed: int | None = None,
    judges: Sequence[str] | None = ("reference",),
    judge_repeats: int | None = None,
    jury: str | None = None,
    verbose: bool = False,
    echo: Callable[[str], None] = print,
    as_backfill: bool = False,
    shards: int = 1,
    llm_missing: Callable[[LLMEndpoint], str | None] = lambda endpoint: None,
    cluster_problem: Callable[[], str | None] = lambda: None,
) -> RunReport:
    """Check what can be checked, register the models, rebuild the knowledge base, evaluate each
    model on it, compare them all. Bad input raises before any run starts (PreflightError, or
    the registries' errors for unknown names). ``as_backfill``: the models' partitions go to the
    instance's daemon as one backfill (in this process when no daemon is running, said once);
    ``shards`` above 1 first answers and judges each model's cases as that many shard runs."""
    settings: Settings = _settings(defs)
    judging = (list(judges) if judges else None, judge_repeats, jury)
    _check_and_register(settings, instance, models, dataset, judging, echo, llm_missing, cluster_problem)
    stages = _Stages(defs, instance, verbose, echo)
    kb_run = _rebuild_knowledge_base(stages, settings, dataset, sample, selection, seed)
    # every evaluation of this command reads this rebuild, and is compared by it
    pinned = {KNOWLEDGE_BASE_RUN_TAG: kb_run, **compared_afterwards()}
    evaluated, failed = _evaluate_models(
        stages, models, evaluation_run_config(*judging), pinned, as_backfill, shards
    )
    forget_readings()  # every model is assessed: the report does not carry the knowledge base's reading
    stages.run("[comparison] all answer models", COMPARISON_JOB, {}, tags=pinned)
    with connections_kept(instance):  # the report's dozen queries over one connection, not one each
        return _report(stages, settings, kb_run, evaluated, failed)


class _Stages:
    """The runs of one command, each said as it starts and ends, their step timings kept."""

    def __init__(self, defs: dg.Definitions, instance: dg.DagsterInstance, verbose: bool, echo):
        self.defs, self.instance, self.verbose, self.echo = defs, instance, verbose, echo
        self.steps: list[StepTiming] = []
        self.started = time.perf_counter()

    def run(self, label: str, job: str, run_config: dict, partition: str | None = None, tags=None) -> str:
        t0 = time.perf_counter()
        self.echo(f"{label} ...")
        run_id, timings = execute(self.defs, self.instance, job, run_config, partition, self.verbose, tags)
        self.steps.extend(timings)
        return_freed_heap()  # what the job's steps freed goes back before the next job's peak
        self.echo(f"{label}: done in {time.perf_counter() - t0:.1f}s")
        return run_id


def _check_and_register(
    settings: Settings,
    instance: dg.DagsterInstance,
    models: Sequence[str],
    dataset: str | None,
    judging: tuple[list[str] | None, int | None, str | None],
    echo: Callable[[str], None],
    llm_missing: Callable[[LLMEndpoint], str | None],
    cluster_problem: Callable[[], str | None],
) -> None:
    """Every problem found before a run starts (raised together), then the models registered."""
    resource = SettingsResource.from_settings(settings)
    registry = resource.answer_registry()
    answer_specs = [registry.resolve(model) for model in models]
    resolved = resource.judging(*judging)
    judge_specs = list(resolved.specs)
    problems = preflight_problems(
        settings, dataset, registry, answer_specs, judge_specs, llm_missing, cluster_problem
    )
    if problems:
        raise PreflightError(problems)
    for spec in answer_specs:
        for note in registry.notes(spec):
            echo(f"note: {note}")
    said = judging_line(resolved)
    if said:
        echo(said)
    new = add_models(instance, list(models), registry.resolve)
    if new:
        echo(f"registered answer models: {', '.join(new)}")


def _rebuild_knowledge_base(
    stages: _Stages,
    settings: Settings,
    dataset: str | None,
    sample: int | None,
    selection: str | None,
    seed: int | None,
) -> str:
    """The rebuild this command's evaluations read, with what the user should know of its cases."""
    instance, echo = stages.instance, stages.echo
    try:
        SnapshotStore(UPath(instance.storage_directory()) / ARTIFACTS).live()
    except UnreadableLivePointerError as err:  # repaired by the rebuild below: said, not silent
        echo(f"warning: {str(err).split(': `rag-eval run`')[0]}: this run's rebuild writes it anew")
    kb_run = stages.run(
        "[knowledge base] sample, passages, index, judgement list",
        KNOWLEDGE_BASE_JOB,
        knowledge_base_run_config(dataset_source(dataset), sample, selection, seed),
    )
    release_models()  # the languages are told; the evaluations below detect none (0.4 GB)
    # what was asked for: --sample, or a size the configuration sets (not the default's)
    configured = "sample_size" in settings.dataset.model_fields_set
    asked = sample if sample is not None else settings.dataset.sample_size if configured else None
    judgement = load_snapshot_asset(instance, kb_run, JUDGEMENT_LIST)
    cases = len(judgement)
    echo(f"judgement list: {cases} cases, version {judgement_list_version(judgement)}")
    if asked and asked > cases:
        echo(f"note: {asked} questions were asked for, the dataset has {cases}: all {cases} are evaluated")
    pending = int(judgement[REFERENCE_PENDING].sum()) if REFERENCE_PENDING in judgement else 0
    if pending:
        echo(
            f"note: {pending} of {cases} cases have no reference answer yet (reference_pending): what "
            "needs one (correctness, exact match, F1) is absent for them, never 0"
        )
    return kb_run


def _evaluate_models(
    stages: _Stages,
    models: Sequence[str],
    judge_config: dict,
    pinned: dict[str, str],
    as_backfill: bool,
    shards: int = 1,
) -> tuple[dict[str, str], dict[str, str]]:
    """Each model evaluated on the pinned rebuild, as a backfill the daemon runs or here one
    after another: the run that evaluated each, and each failed model's one-line reason."""
    instance, echo = stages.instance, stages.echo
    failed: dict[str, str] = {}
    evaluated: dict[str, str] = {}
    if as_backfill and not backfill.daemon_running(instance):
        echo(
            "no Dagster daemon is running for this instance (start `rag-eval ui` on this "
            "instance, or a deployment's daemon): evaluating in this process"
        )
        as_backfill = False
    if as_backfill:
        if shards > 1:
            failed.update(_evaluate_shards(stages, models, judge_config, pinned, shards))
            models = [model for model in models if model not in failed]
            if not models:
                return evaluated, failed
        t0 = time.perf_counter()
        assets = sorted(stages.defs.resolve_job_def(EVALUATION_JOB).asset_layer.selected_asset_keys)
        backfill_id = backfill.submit(
            stages.defs, instance, assets, models, judge_config, f"rag-eval: {', '.join(models)}", pinned
        )
        echo(f"[backfill {backfill_id}] {len(models)} partitions submitted; the daemon launches their runs")
        outcomes = backfill.follow(instance, backfill_id, models, echo)
        failed.update(
            {
                m: f"backfill run {o.status}"
                + (f": {run_failure_reason(instance, o.run_ids[-1])}" if o.run_ids else "")
                for m, o in outcomes.items()
                if o.status != "SUCCESS"
            }
        )
        evaluated.update({m: o.run_ids[-1] for m, o in outcomes.items() if o.status == "SUCCESS"})
        echo(f"[backfill {backfill_id}]: done in {time.perf_counter() - t0:.1f}s")
        return evaluated, failed
    for number, model in enumerate(models, start=1):
        label = f"[model {number}/{len(models)}] {model}: answer, judge, summarize"
        try:
            evaluated[model] = stages.run(label, EVALUATION_JOB, judge_config, partition=model, tags=pinned)
        except Exception as err:  # one model's failure must not cost the others their evaluation
            failed[model] = _failure_line(instance, model, root_cause(err))
            echo(f"{label}: FAILED ({failed[model]})")
    return evaluated, failed


def _failure_line(instance: dg.DagsterInstance, model: str, cause: BaseException) -> str:
    """Why a model's run in this process failed, in one line: a failed check's own words (a
    model that could not answer at all, a gate), not Dagster's count of failed checks; else the
    error that stopped it."""
    if type(cause).__name__ == BLOCKED_BY_CHECKS:
        runs = instance.get_runs(dg.RunsFilter(tags={PARTITION_TAG: model}), limit=1)
        if runs:
            return recorded_failure(instance, model, runs[0].run_id) or run_failure_reason(
                instance, runs[0].run_id
            )
    return f"{type(cause).__name__}: {one_line(cause)}"


def _evaluate_shards(
    stages: _Stages, models: Sequence[str], judge_config: dict, pinned: dict[str, str], count: int
) -> dict[str, str]:
    """Each model's cases as ``count`` shard runs of one backfill, which the workers take at once;
    the models whose shards did not all succeed, each with its first failed shard's reason (the
    others go on to their own run, which reads the shards' answers and verdicts from the cache)."""
    instance, echo = stages.instance, stages.echo
    keys = register_shards(instance, count)
    partitions = {shard_partition_key(model, CaseShard.parse(key)): model for model in models for key in keys}
    t0 = time.perf_counter()
    backfill_id = backfill.submit(
        stages.defs,
        instance,
        [dg.AssetKey(CASE_SHARD_SCORES)],
        list(partitions),
        shard_run_config(judge_config),
        f"rag-eval shards: {', '.join(models)} in {count} shards each",
        pinned,
    )
    echo(f"[shards {backfill_id}] {len(partitions)} shard runs submitted ({count} per model)")
    outcomes = backfill.follow(instance, backfill_id, list(partitions), echo)
    failed: dict[str, str] = {}
    for partition, outcome in outcomes.items():
        model = partitions[partition]
        if outcome.status != "SUCCESS" and model not in failed:
            why = run_failure_reason(instance, outcome.run_ids[-1]) if outcome.run_ids else outcome.status
            failed[model] = f"shard {partition.split('|')[-1]} {outcome.status}: {why}"
            echo(f"[shards] {model}: not summarized, {failed[model]}; a re-run resumes from the cache")
    echo(f"[shards {backfill_id}]: done in {time.perf_counter() - t0:.1f}s")
    return failed


def _report(
    stages: _Stages, settings: Settings, kb_run: str, evaluated: dict[str, str], failed: dict[str, str]
) -> RunReport:
    """What the command prints: every model's comparison, and what its own runs stored."""
    instance = stages.instance
    notes = []
    live = live_knowledge_base_run(instance)
    if live is not None and live != kb_run:
        notes.append(
            f"another run ({live[:8]}) published a newer knowledge base while this one ran; this "
            f"run evaluated on its own rebuild ({kb_run[:8]}), so its results show as stale there"
        )
    own_summaries = {
        m: load_materialization(instance, METRIC_SUMMARY, m, run) for m, run in evaluated.items()
    }
    own_scores = {m: load_materialization(instance, JUDGE_SCORES, m, run) for m, run in evaluated.items()}
    notes += said_once({m: absence_reasons(summary) for m, summary in own_summaries.items()})
    failures = {}
    for model, scores in own_scores.items():
        reasons = failure_reasons(scores)
        if reasons:
            answers = scores.drop_duplicates([c for c in ("qid", "repeat") if c in scores])
            failures[model] = (sum(count for _, count in reasons), len(answers), reasons)
    statistics = settings.statistics
    paired = load_asset(instance, PAIRED_COMPARISON)
    own_paired = (
        paired  # the comparison run read exactly these runs' scores: not computed twice
        if _compared_only(instance, evaluated)
        else paired_comparisons(
            own_scores, statistics.significance_level, statistics.monte_carlo_draws, statistics.min_cases
        )
    )
    return RunReport(
        load_asset(instance, MODEL_COMPARISON),
        time.perf_counter() - stages.started,
        stages.steps,
        failed,
        paired,
        kb_run,
        notes,
        compare_models(own_summaries),
        own_paired,
        failures,
        language_breakdown(own_summaries),
        said_once({model: _retrieval_warnings(instance, model) for model in evaluated}),
    )


RETRIEVAL_WARNING = "retrieval_warning"  # the metadata key the answer and summary assets say it under


def _retrieval_warnings(instance: dg.DagsterInstance, model: str) -> list[str]:
    """The retrieval warnings a model's latest answers and summary recorded."""
    said = []
    for asset in (CANDIDATE_ANSWERS, METRIC_SUMMARY):
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[model]), limit=1
        ).records
        metadata = records[0].asset_materialization.metadata if records else {}
        value = metadata.get(RETRIEVAL_WARNING)
        if value is not None:
            said.append(str(getattr(value, "value", value)))
    return said


def _compared_only(instance: dg.DagsterInstance, evaluated: dict[str, str]) -> bool:
    """Whether the models with scores are exactly this command's, each latest from its own run:
    then the comparison (run after them) read nothing else."""
    key = dg.AssetKey(JUDGE_SCORES)
    if not evaluated or set(instance.get_materialized_partitions(key)) != set(evaluated):
        return False
    for model, run_id in evaluated.items():
        latest = instance.fetch_materializations(
            dg.AssetRecordsFilter(key, asset_partitions=[model]), limit=1
        ).records
        if not latest or latest[0].run_id != run_id:
            return False
    return True


def _settings(defs: dg.Definitions) -> Settings:
    resource = defs.resources["settings"]
    if not isinstance(resource, SettingsResource):
        raise TypeError("the definitions' settings resource is not a SettingsResource")
    return resource.settings
