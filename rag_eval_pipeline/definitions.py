"""The one Definitions object: every asset, check, job, schedule, sensor and resource.

``workspace.yaml`` points here. Settings come from ``rag_eval.yaml`` (see ``config.py``); the
Elasticsearch switch and secrets come from the environment, bound with ``dg.EnvVar``.
"""

import os
from typing import Any

import dagster as dg

from rag_eval_pipeline.config import Settings, load_settings
from rag_eval_pipeline.defs.assets import (
    candidate_answers,
    case_traces,
    hotpotqa_raw,
    judge_scores,
    judgement_list,
    kb_index,
    kb_passages,
    metric_history,
    metric_summary,
    model_comparison,
    phoenix_experiment,
    user_documents,
)
from rag_eval_pipeline.defs.assets import knowledge_base as published_knowledge_base
from rag_eval_pipeline.defs.checks import ASSET_CHECKS
from rag_eval_pipeline.defs.custom_dataset_assets import custom_judgement_list, custom_kb_passages
from rag_eval_pipeline.defs.elasticsearch_assets import es_judgement_list, eval_results
from rag_eval_pipeline.defs.io_manager import ArtifactIOManager
from rag_eval_pipeline.defs.loggers import LOGGERS
from rag_eval_pipeline.defs.partitions import answer_model_partitions
from rag_eval_pipeline.defs.reporting_assets import (
    eval_report,
    judge_validation,
    paired_comparison,
    prometheus_metrics,
)
from rag_eval_pipeline.defs.resources import (
    AnthropicResource,
    DocumentsResource,
    ElasticsearchResource,
    HistoryResource,
    KnowledgeBaseResource,
    MonitoringResource,
    OpenAICompatibleResource,
    PhoenixResource,
    SettingsResource,
    TracingResource,
)
from rag_eval_pipeline.defs.run_config import knowledge_base_run_config
from rag_eval_pipeline.defs.sensors import PROFILE_TAG, TRIGGER_TAG, build_sensors

EVALUATION_ASSETS = [candidate_answers, judge_scores, metric_summary, metric_history]
REPORTING_ASSETS = [paired_comparison, judge_validation, eval_report, prometheus_metrics]


def _jobs(knowledge_base_assets: list, evaluation_assets: list) -> list:
    return [
        dg.define_asset_job(
            "knowledge_base_job",
            selection=dg.AssetSelection.assets(*knowledge_base_assets),
            description="Sample the questions and (re)build the knowledge base and its index.",
        ),
        dg.define_asset_job(
            "evaluation_job",
            selection=dg.AssetSelection.assets(*evaluation_assets),
            partitions_def=answer_model_partitions,
            description="Answer, judge and summarize one answer-model partition.",
        ),
        dg.define_asset_job(
            "comparison_job",
            selection=dg.AssetSelection.assets(model_comparison, *REPORTING_ASSETS),
            description="Compare every answer model, validate the judges, write the report and "
            "the Prometheus metrics.",
        ),
    ]


def default_knowledge_base(settings: Settings | None = None, **overrides: Any) -> KnowledgeBaseResource:
    """The one switch: Elasticsearch when the file says so or ELASTICSEARCH_URL (or
    ELASTICSEARCH_CLOUD_ID) is set, with ELASTICSEARCH_API_KEY or ELASTICSEARCH_USERNAME and
    ELASTICSEARCH_PASSWORD bound through EnvVar; otherwise the embedded on-disk index."""
    settings = settings or Settings()
    kb = settings.knowledge_base
    es = kb.elasticsearch
    bound: dict[str, Any] = {
        field: dg.EnvVar(variable)
        for field, variable in [
            ("url", "ELASTICSEARCH_URL"),
            ("cloud_id", "ELASTICSEARCH_CLOUD_ID"),
            ("api_key", "ELASTICSEARCH_API_KEY"),
            ("username", "ELASTICSEARCH_USERNAME"),
            ("password", "ELASTICSEARCH_PASSWORD"),
            ("ca_certs", "ELASTICSEARCH_CA_CERTS"),
        ]
        if variable in os.environ
    }
    bound.setdefault("url", es.url) if es.url else None
    bound.setdefault("cloud_id", es.cloud_id) if es.cloud_id else None
    resource: dict[str, Any] = {
        "embedding_model": kb.embedding_model,
        "vector_search": kb.vector_search,
        "es_inference_id": es.inference_id,
        "es_max_error_share": es.max_error_share,
    }
    if es.index_names:
        resource["es_index_names"] = {**KnowledgeBaseResource().es_index_names, **es.index_names}
    if kb.backend == "elasticsearch" and not (bound.get("url") or bound.get("cloud_id")):
        raise ValueError(
            "knowledge_base.backend is elasticsearch but no url: set ELASTICSEARCH_URL or elasticsearch.url"
        )
    if bound.get("url") or bound.get("cloud_id"):
        resource["elasticsearch"] = ElasticsearchResource(
            verify_certs=es.verify_certs, **({"ca_certs": es.ca_certs} if es.ca_certs else {}), **bound
        )
    resource.update({k: v for k, v in overrides.items() if v is not None})
    return KnowledgeBaseResource(**resource)


def default_anthropic(settings: Settings | None = None, **overrides: Any) -> AnthropicResource:
    """The API key is bound through EnvVar when the environment has one; without it the
    definitions still load and offline models run (a Claude model then fails with a clear error)."""
    settings = settings or Settings()
    values: dict[str, Any] = {"concurrency": settings.concurrency, "prices": settings.prices}
    if "ANTHROPIC_API_KEY" in os.environ:
        values["api_key"] = dg.EnvVar("ANTHROPIC_API_KEY")
    values.update({k: v for k, v in overrides.items() if v is not None})
    return AnthropicResource(**values)


def default_openai_compatible(settings: Settings | None = None, **overrides: Any) -> OpenAICompatibleResource:
    """OpenAI-compatible and local models from the configuration file's ``openai`` and ``local``
    sections; the default key variable is bound through EnvVar when the environment has it."""
    settings = settings or Settings()
    openai, local = settings.openai, settings.local
    values: dict[str, Any] = {
        "base_url": openai.base_url,
        "api_key_env": openai.api_key_env,
        "structured_output": openai.structured_output,
        "timeout_s": openai.timeout_s,
        "max_retries": openai.max_retries,
        "concurrency": settings.concurrency,
        "local_n_ctx": local.n_ctx,
        "local_n_parallel": local.n_parallel,
        "local_threads": local.threads,
    }
    if openai.api_key_env in os.environ:
        values["api_key"] = dg.EnvVar(openai.api_key_env)
    values.update({k: v for k, v in overrides.items() if v is not None})
    return OpenAICompatibleResource(**values)


def _schedules(settings: Settings, knowledge_base_job: dg.JobDefinition) -> list:
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


def build_definitions(
    knowledge_base: KnowledgeBaseResource | None = None,
    anthropic: AnthropicResource | None = None,
    openai_compatible: OpenAICompatibleResource | None = None,
    documents: DocumentsResource | None = None,
    monitoring: MonitoringResource | None = None,
    settings: Settings | None = None,
) -> dg.Definitions:
    """The code location from settings (default: the configuration file found as ``config.py``
    says); the CLI and tests may replace single resources."""
    settings = settings or load_settings()
    knowledge_base = knowledge_base or default_knowledge_base(settings)
    if settings.dataset.kind == "custom":
        kb_assets = [
            user_documents,
            custom_kb_passages,
            kb_index,
            custom_judgement_list,
            published_knowledge_base,
        ]
    else:
        kb_assets = [
            hotpotqa_raw,
            user_documents,
            kb_passages,
            kb_index,
            judgement_list,
            published_knowledge_base,
        ]
    eval_assets = list(EVALUATION_ASSETS)
    if knowledge_base.backend_name == "elasticsearch":
        kb_assets.append(es_judgement_list)
        eval_assets.append(eval_results)
    resources: dict[str, Any] = {}
    if settings.tracing.enabled:  # off: no asset, no import of the SDK, no cost
        eval_assets.append(case_traces)
        tracing = settings.tracing
        resources["tracing"] = TracingResource(
            preset=tracing.preset,
            endpoint=tracing.endpoint,
            headers_env=tracing.headers_env,
            service_name=tracing.service_name,
            project=tracing.project,
            sample=tracing.sample,
            flush_timeout_s=tracing.flush_timeout_s,
        )
    if settings.tracing.phoenix.experiments:  # opt-in, like the traces
        eval_assets.append(phoenix_experiment)
        resources["phoenix"] = PhoenixResource(
            url=settings.tracing.phoenix_url(),
            api_key_env=settings.tracing.phoenix.api_key_env,
            project=settings.tracing.project,
        )
    jobs = _jobs(kb_assets, eval_assets)
    dataset = settings.dataset
    return dg.Definitions(
        assets=[*kb_assets, *eval_assets, model_comparison, *REPORTING_ASSETS],
        asset_checks=ASSET_CHECKS,
        jobs=jobs,
        schedules=_schedules(settings, jobs[0]),
        sensors=build_sensors(jobs[0], jobs[1], settings, jobs[2]),
        loggers=LOGGERS,
        # a run's steps in one process: a partition run from the UI costs its compute plus a
        # few seconds instead of a process start per step (runs still get a process each)
        executor=dg.in_process_executor if settings.executor == "in_process" else dg.multiprocess_executor,
        resources={
            "io_manager": ArtifactIOManager(),
            "knowledge_base": knowledge_base,
            "anthropic": anthropic or default_anthropic(settings),
            "openai_compatible": openai_compatible or default_openai_compatible(settings),
            "documents": documents
            or DocumentsResource(
                folder=dataset.documents,
                chunk_words=dataset.chunking.size,
                chunk_overlap=dataset.chunking.overlap,
                max_file_bytes=int(dataset.max_file_mb * 1e6),
            ),
            "settings": SettingsResource.from_settings(settings),
            "history": HistoryResource(),
            "monitoring": monitoring or MonitoringResource(),
            **resources,
        },
    )


defs = build_definitions()
