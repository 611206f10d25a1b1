"""The one Definitions object: every asset, check, job, schedule, sensor and resource.

``workspace.yaml`` points here. Settings come from ``rag_eval.yaml`` (see ``config.py``) and reach
every resource through ``SettingsResource``; secrets (and a cluster's address) come from the
environment, bound with ``dg.EnvVar``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import dagster as dg

from rag_eval_pipeline.common.heap import keep_large_blocks_apart
from rag_eval_pipeline.config import ConfigError, Settings, load_settings
from rag_eval_pipeline.defs.assets.elasticsearch import es_judgement_list, eval_results
from rag_eval_pipeline.defs.assets.evaluation import (
    EVALUATION_ASSETS,
    candidate_answers,
    case_traces,
    phoenix_experiment,
)
from rag_eval_pipeline.defs.assets.generation import GENERATION_ASSETS
from rag_eval_pipeline.defs.assets.health import build_kb_health
from rag_eval_pipeline.defs.assets.knowledge import CUSTOM_KNOWLEDGE_ASSETS, HOTPOTQA_KNOWLEDGE_ASSETS
from rag_eval_pipeline.defs.assets.production import build_production
from rag_eval_pipeline.defs.assets.reporting import reporting_assets
from rag_eval_pipeline.defs.assets.review import review_assets, review_queue
from rag_eval_pipeline.defs.assets.shards import candidate_answers_after_shards, case_shard_scores
from rag_eval_pipeline.defs.assets.trajectories import build_trajectories
from rag_eval_pipeline.defs.checks import ASSET_CHECKS
from rag_eval_pipeline.defs.io_manager import ArtifactIOManager
from rag_eval_pipeline.defs.loggers import LOGGERS
from rag_eval_pipeline.defs.names import (
    COMPARISON_JOB,
    EVALUATION_JOB,
    GENERATION_JOB,
    GENERATION_STEPS,
    KNOWLEDGE_BASE_JOB,
    PROFILE_TAG,
    REVIEW_QUEUE_JOB,
    TRIGGER_TAG,
)
from rag_eval_pipeline.defs.partitions import answer_model_partitions
from rag_eval_pipeline.defs.resources import (
    DocumentsResource,
    ElasticsearchResource,
    EvaluationLockResource,
    HistoryResource,
    KnowledgeBaseResource,
    LLMResource,
    MonitoringResource,
    PhoenixResource,
    SettingsResource,
    TracingResource,
)
from rag_eval_pipeline.defs.resources.production import ProductionResource
from rag_eval_pipeline.defs.resources.trajectories import TrajectorySourcesResource
from rag_eval_pipeline.defs.run_config import knowledge_base_run_config
from rag_eval_pipeline.defs.sensors import build_sensors
from rag_eval_pipeline.defs.session_sources import SESSION_SOURCES
from rag_eval_pipeline.llm.providers import ANTHROPIC_KEY_ENV
from rag_eval_pipeline.retrieval.base import Backend


def _bound(variable: str) -> dg.EnvVar | None:
    """An environment variable bound with EnvVar when it is set (unset: the field stays empty and
    whatever needs it says so before a run)."""
    return dg.EnvVar(variable) if variable in os.environ else None


def elasticsearch_resource(settings: Settings) -> ElasticsearchResource | None:
    """The cluster when ``knowledge_base.backend`` is elasticsearch (the one switch): its address
    from the file, else ELASTICSEARCH_URL or ELASTICSEARCH_CLOUD_ID; credentials from
    ELASTICSEARCH_API_KEY, or ELASTICSEARCH_USERNAME and ELASTICSEARCH_PASSWORD."""
    kb = settings.knowledge_base
    if kb.backend is not Backend.ELASTICSEARCH:
        return None
    es = kb.elasticsearch
    url = es.url or _bound("ELASTICSEARCH_URL")
    cloud_id = es.cloud_id or _bound("ELASTICSEARCH_CLOUD_ID")
    if url is None and cloud_id is None:
        raise ConfigError(
            "knowledge_base.backend is elasticsearch but no cluster is named: set ELASTICSEARCH_URL "
            "or knowledge_base.elasticsearch.url"
        )
    fields: dict[str, Any] = {
        "url": url,
        "cloud_id": cloud_id,
        "api_key": _bound("ELASTICSEARCH_API_KEY"),
        "username": _bound("ELASTICSEARCH_USERNAME"),
        "password": _bound("ELASTICSEARCH_PASSWORD"),
        "ca_certs": es.ca_certs or _bound("ELASTICSEARCH_CA_CERTS"),
    }
    return ElasticsearchResource(
        verify_certs=es.verify_certs, **{k: v for k, v in fields.items() if v is not None}
    )


def _jobs(
    knowledge_base_assets: list, evaluation_assets: list, review: list, reporting: list
) -> dict[str, dg.UnresolvedAssetJobDefinition]:
    """The project's jobs by name: what sensors and schedules target is looked up by name."""
    jobs = [
        dg.define_asset_job(
            KNOWLEDGE_BASE_JOB,
            selection=dg.AssetSelection.assets(*knowledge_base_assets),
            description="Sample the questions and (re)build the knowledge base and its index.",
        ),
        dg.define_asset_job(
            EVALUATION_JOB,
            selection=dg.AssetSelection.assets(*evaluation_assets),
            partitions_def=answer_model_partitions,
            description="Answer, judge and summarize one answer-model partition.",
        ),
        dg.define_asset_job(
            COMPARISON_JOB,
            selection=dg.AssetSelection.assets(*review, *reporting),
            description="Across every answer model: read the human labels, measure every judge "
            "against them and correct its means, compare the models, validate the judges against "
            "the reference, write the report and the Prometheus metrics.",
        ),
        dg.define_asset_job(
            REVIEW_QUEUE_JOB,
            selection=dg.AssetSelection.assets(review_queue),
            description="Write a fresh review queue per evaluated answer model.",
        ),
    ]
    return {job.name: job for job in jobs}


def _generation(settings: Settings) -> tuple[list, list]:
    """The generated judgement list and its job, when the file has a generation section (off:
    neither, so the UI's "Materialize all" never has an LLM write questions unasked)."""
    if settings.generation is None:
        return [], []
    job = dg.define_asset_job(
        GENERATION_JOB,
        selection=dg.AssetSelection.assets(*GENERATION_STEPS),
        description="Generate a judgement list from the documents as they are now (the knowledge "
        "base is read, not published), every case checked.",
    )
    return list(GENERATION_ASSETS), [job]


def _schedules(settings: Settings, knowledge_base_job: dg.UnresolvedAssetJobDefinition) -> list:
    """A profile with a cron schedule re-samples and rebuilds on that schedule; the rebuild then
    re-evaluates every answer model with the profile's judges (the knowledge_base_rebuilt sensor
    reads the profile tag)."""
    schedules = []
    for name, profile in sorted(settings.profiles.items()):
        if not profile.schedule:
            continue
        run_config: dict[str, Any] = {}
        if settings.dataset.kind == "hotpotqa":
            run_config = knowledge_base_run_config(
                sample_size=profile.sample_size, selection=profile.selection
            )
        schedules.append(
            dg.ScheduleDefinition(
                name=f"{name}_schedule",
                cron_schedule=profile.schedule,
                job=knowledge_base_job,
                run_config=run_config,
                tags={TRIGGER_TAG: f"schedule:{name}", PROFILE_TAG: name},
                description=f"The '{name}' profile: re-sample, rebuild, re-evaluate every model.",
            )
        )
    return schedules


def _review_schedules(settings: Settings, review_queue_job: dg.UnresolvedAssetJobDefinition) -> list:
    """The review section's schedule, when set: a fresh queue per model (monthly calibration)."""
    if not settings.review.schedule:
        return []
    return [
        dg.ScheduleDefinition(
            name="review_queue_schedule",
            cron_schedule=settings.review.schedule,
            job=review_queue_job,
            tags={TRIGGER_TAG: "schedule:review"},
            default_status=dg.DefaultScheduleStatus.RUNNING,
            description="A fresh review queue per evaluated answer model, for people to label.",
        )
    ]


def llm_resource(settings: Settings, shared: SettingsResource | None = None) -> LLMResource:
    """Every LLM provider, with the two default keys bound through EnvVar when they are set."""
    return LLMResource(
        settings=shared or SettingsResource.from_settings(settings),
        anthropic_api_key=_bound(ANTHROPIC_KEY_ENV),
        openai_api_key=_bound(settings.openai.api_key_env),
    )


def build_resources(settings: Settings) -> dict[str, Any]:
    """Every resource, each taking its settings from the one settings resource."""
    shared = SettingsResource.from_settings(settings)
    return {
        "io_manager": ArtifactIOManager(),
        "settings": shared,
        "knowledge_base": KnowledgeBaseResource(
            settings=shared, elasticsearch=elasticsearch_resource(settings)
        ),
        "llm": llm_resource(settings, shared),
        "documents": DocumentsResource(settings=shared),
        "history": HistoryResource(),
        "monitoring": MonitoringResource(settings=shared),
        "tracing": TracingResource(settings=shared),
        "phoenix": PhoenixResource(settings=shared),
        "evaluation_lock": EvaluationLockResource(),
        "production_sources": ProductionResource(settings=shared),
        "trajectory_sources": TrajectorySourcesResource(settings=shared),
    }


def _simulation():
    """The simulation's assets, imported only where the file defines a simulation (its users,
    scenarios and conversation modules are no part of any other run's start-up)."""
    from rag_eval_pipeline.defs.assets.simulation import build_simulation

    return build_simulation()


def build_definitions(
    settings: Settings | None = None, resources: Mapping[str, Any] | None = None
) -> dg.Definitions:
    """The code location from settings (default: the configuration file found as ``config.py``
    says); tests may replace single resources."""
    settings = settings or load_settings()
    knowledge = list(
        CUSTOM_KNOWLEDGE_ASSETS if settings.dataset.kind == "custom" else HOTPOTQA_KNOWLEDGE_ASSETS
    )
    # re-run with the evaluations when documents change; with production, it reads its samples
    evaluation = [*EVALUATION_ASSETS, build_kb_health(settings.production is not None)]
    if settings.knowledge_base.backend is Backend.ELASTICSEARCH:
        knowledge.append(es_judgement_list)
        evaluation.append(eval_results)
    if settings.tracing.enabled or settings.tracing.evaluation_events:  # off: no asset, no SDK, no cost
        evaluation.append(case_traces)
    if settings.tracing.phoenix.experiments:  # opt-in, like the traces
        evaluation.append(phoenix_experiment)
    # a model's cases split over workers (`rag-eval backfill --shards N`): only where runs go to
    # workers, so the model-by-shard partitions never enter a one-machine "Materialize all"
    shards = [case_shard_scores] if settings.workers is not None else []
    if shards:  # and a model's own run after its shards, so "Materialize all" answers it once
        evaluation = [candidate_answers_after_shards if a is candidate_answers else a for a in evaluation]
    # an agent's trajectories, when the file (or `rag-eval trajectories`) names them: a partition
    # per agent version, never mixed into the answer models' "Materialize all"
    trajectories = build_trajectories() if settings.trajectories is not None else None
    # simulated users talking to the agent, when the file (or `rag-eval simulate`) names them
    simulation = _simulation() if settings.simulation is not None else None
    # people label the sessions of each source defined (traced, simulated) beside the answers
    review = review_assets([s for s in SESSION_SOURCES.values() if getattr(settings, s.section) is not None])
    reporting = reporting_assets(with_simulation=simulation is not None)
    jobs = _jobs(knowledge, evaluation, review, reporting)
    # production traffic, when the file has a production section (off: none of its assets)
    production = build_production(settings) if settings.production is not None else None
    generation_assets, generation_jobs = _generation(settings)
    return dg.Definitions(
        assets=[
            *knowledge,
            *evaluation,
            *reporting,
            *review,
            review_queue,
            *generation_assets,
            *(production.assets if production else []),
            *(trajectories.assets if trajectories else []),
            *(simulation.assets if simulation else []),
            *shards,
        ],
        asset_checks=[
            *ASSET_CHECKS,
            *(production.checks if production else []),
            *(trajectories.checks if trajectories else []),
            *(simulation.checks if simulation else []),
        ],
        jobs=[
            *jobs.values(),
            *generation_jobs,
            *(production.jobs if production else []),
            *(trajectories.jobs if trajectories else []),
            *(simulation.jobs if simulation else []),
        ],
        schedules=[
            *_schedules(settings, jobs[KNOWLEDGE_BASE_JOB]),
            *_review_schedules(settings, jobs[REVIEW_QUEUE_JOB]),
        ],
        sensors=[*build_sensors(jobs, settings), *(production.sensors if production else [])],
        loggers=LOGGERS,
        # a run's steps in one process: a partition run from the UI costs its compute plus a
        # few seconds instead of a process start per step (runs still get a process each)
        executor=dg.in_process_executor if settings.executor == "in_process" else dg.multiprocess_executor,
        resources={**build_resources(settings), **(resources or {})},
    )


@dg.definitions
def defs() -> dg.Definitions:
    """The code location that ``workspace.yaml`` and ``dagster dev`` load: built when loaded,
    never at import, so importing this module reads no configuration file. The processes that
    load it (the UI's run workers and the daemon) keep large blocks apart, as the CLI does."""
    keep_large_blocks_apart()
    return build_definitions()
